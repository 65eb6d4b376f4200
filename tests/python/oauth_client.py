"""The official MCP Python client logging in by itself: from a bare 401 it reads the protected
resource metadata, finds the authorization server (oidc-provider), registers, gets a token for
our resource with PKCE (the user's login and consent scripted against the provider's own
pages), lists and calls tools; a call that needs a scope the token lacks makes it step up and
succeed. Prints `ok <check>` per check and `done` at the end.

    oauth_client.py --url http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:9/callback"


def ok(name: str, detail: object = "") -> None:
    print(f"ok {name} {detail}".rstrip(), flush=True)


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class User:
    """The user at the browser: signs in as `ada` and consents, on the provider's own pages."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.logins = 0
        self.scopes: list[str] = []

    async def redirect(self, url: str) -> None:
        self.logins += 1
        self.scopes.append(parse_qs(urlparse(url).query).get("scope", [""])[0])
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as browser:
            response = await browser.get(url)
            for _ in range(12):
                location = response.headers.get("location")
                if location and location.startswith(REDIRECT):
                    query = parse_qs(urlparse(location).query)
                    if "error" in query:
                        raise RuntimeError(f"the provider refused: {query}")
                    self.result = AuthorizationCodeResult(
                        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
                    )
                    return
                if location:
                    response = await browser.get(urljoin(str(response.url), location))
                    continue
                page = response.text
                action = re.search(r'action="([^"]+)"', page)
                if action is None:
                    raise RuntimeError(f"no form on {response.url}: {page[:300]}")
                prompt = re.search(r'name="prompt" value="([^"]+)"', page)
                form = {"prompt": prompt.group(1) if prompt else "login", "login": "ada", "password": "ada"}
                response = await browser.post(urljoin(str(response.url), action.group(1)), data=form)
            raise RuntimeError("the login did not end at the redirect")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    user = User()
    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name="tool-tests", redirect_uris=[REDIRECT], grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=Memory(),
        redirect_handler=user.redirect,
        callback_handler=user.callback,
    )
    transport = streamable_http_client(args.url, http_client=httpx2.AsyncClient(auth=auth, timeout=30))
    async with Client(transport) as client:
        ok("logged in", f"after {user.logins} login(s), scope {user.scopes[-1]!r}")
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert "device_revoke" in names, names
        ok("listed", names)
        who = await client.call_tool("whoami", {})
        assert not who.is_error, who
        ok("principal", who.content[0].text)
        listed = await client.call_tool("device_list", {})
        assert not listed.is_error, listed
        ok("scoped call")
        before = user.logins
        revoked = await client.call_tool("device_revoke", {"id": "d1"})
        assert not revoked.is_error, revoked
        assert user.logins == before + 1, (before, user.logins)
        assert "devices:admin" in user.scopes[-1], user.scopes
        ok("stepped up", f"scope {user.scopes[-1]!r}")
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)

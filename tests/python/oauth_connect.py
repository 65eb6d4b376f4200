"""The official MCP Python client, declaring URL elicitation, at a gateway that mounts a server
per user: it logs in at the gateway (oidc-provider, the user `ada` scripted on the provider's
own pages), calls the mounted tool without an account there, is sent to the gateway's page to
connect one, which the user opens (signing in at the gateway's provider, then the mounted
server's), and the call goes through as `ada`. Prints `ok <check>` per check, the gateway token
it holds as `inbound <token>`, and `done` at the end.

    oauth_connect.py --url http://127.0.0.1:PORT/mcp --mode legacy|auto [--tool NAME]

The tool is `up-whoami` by default, whose answer names the caller; another tool is only called.

`legacy` speaks 2025-11-25: the call fails with -32042 (URLElicitationRequiredError), the user
opens the page, and the call is made again. `auto` speaks 2026-07-28: the call's input-required
result carries the URL elicitation, the client's elicitation callback opens the page and
accepts, and the client makes the call again with the answer by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from urllib.parse import urljoin

import httpx2
from mcp import Client, MCPError, UrlElicitationRequiredError
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from mcp_types import ElicitResult

from oauth_client import REDIRECT, Memory, User, ok

LOGIN = "ada"


async def open_page(url: str) -> tuple[int, str]:
    """The user opens `url` in a browser: redirects followed, cookies kept, signed in as `ada`
    on the provider's pages. Returns the last page's status and text."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as browser:
        response = await browser.get(url)
        for _ in range(20):
            location = response.headers.get("location")
            if location:
                response = await browser.get(urljoin(str(response.url), location))
                continue
            page = response.text
            action = re.search(r'action="([^"]+)"', page)
            if response.status_code != 200 or "<form" not in page or action is None:
                return response.status_code, page
            prompt = re.search(r'name="prompt" value="([^"]+)"', page)
            form = {"prompt": prompt.group(1) if prompt else "login", "login": LOGIN, "password": LOGIN}
            response = await browser.post(urljoin(str(response.url), action.group(1)), data=form)
        raise RuntimeError("the page did not settle")


def principal_of(result) -> str:
    """The principal a `whoami` result names: its structured content's, else its text."""
    if result.structured_content is not None:
        return result.structured_content["result"]
    return result.content[0].text


class Opener:
    """The client's side of an elicitation: a URL one opens the page and accepts; a form (the
    gateway confirming a call of a tool not marked read-only) is accepted as it is."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, _context, params) -> ElicitResult:
        if getattr(params, "mode", None) != "url":
            return ElicitResult(action="accept", content={})
        status, page = await open_page(params.url)
        assert status == 200 and "connected" in page, (status, page[:300])
        self.opened.append(params.url)
        return ElicitResult(action="accept")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", choices=["legacy", "auto"], required=True)
    parser.add_argument("--tool", default="up-whoami")
    args = parser.parse_args()
    user, storage, opener = User(), Memory(), Opener()
    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name="tool-tests", redirect_uris=[REDIRECT], grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=user.redirect,
        callback_handler=user.callback,
    )
    transport = streamable_http_client(args.url, http_client=httpx2.AsyncClient(auth=auth, timeout=30))
    async with Client(transport, mode=args.mode, elicitation_callback=opener) as client:
        ok("logged in")
        if args.mode == "legacy":
            try:
                result = await client.call_tool(args.tool, {})
                raise AssertionError(f"the call went through without an account: {result}")
            except MCPError as e:
                # The SDK raises the generic error; the URL elicitations are read from it.
                [asked] = UrlElicitationRequiredError.from_error(e.error).elicitations
                ok("sent to connect", asked.url)
                status, page = await open_page(asked.url)
                assert status == 200 and "connected" in page, (status, page[:300])
                ok("connected")
        who = await client.call_tool(args.tool, {})
        assert not who.is_error, who
        text = principal_of(who) if args.tool == "up-whoami" else f"#{LOGIN}"
        assert text.endswith(f"#{LOGIN}"), text
        if args.mode == "auto":
            assert len(opener.opened) == 1, opener.opened
            ok("sent to connect", opener.opened[0])
        ok("called as", text)
        again = await client.call_tool(args.tool, {})
        assert not again.is_error, again
        ok("called again")
    print(f"inbound {storage.tokens.access_token}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)

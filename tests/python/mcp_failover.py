"""The official MCP Python SDK client against `demo-app serve` replicas behind nginx, sharing one
database and Redis (demo-app/tests/app/replicas.rs runs it and checks what it prints).

    mcp_failover.py session --url URL
    mcp_failover.py sessionless --url URL

`session` speaks 2025-11-25 (an `initialize` handshake, then a session): it revokes a device,
confirmed through elicitation, prints `{"event": "kill", "replica": ...}` naming the replica
that holds the session, waits for a line on stdin (the test kills that replica meanwhile), then
goes on in the same session: a listing, and another revocation confirmed through elicitation.

`sessionless` speaks 2026-07-28 (no session): a revocation whose question (`input_required`,
with the state that carries the confirmation token) comes from one request and whose accepted
retry is another request, each balanced on its own.

Every HTTP exchange is recorded (the JSON-RPC method, the tool, whether the request answers a
question, the session id it carried, the replica that answered, its status) and printed in JSON
lines, `{"event": ..., ...}`, with `done` last. A failed check raises: the exit status is
non-zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_check import check, protocol_of


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


RECORDED: list[Exchanges] = []
"""Every recorder, for the exchanges printed when a suite fails."""


class Exchanges:
    """Every request the client sends and who answered it, through httpx event hooks."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        RECORDED.append(self)

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        entry: dict[str, Any] = {
            "http": request.method,
            "session": request.headers.get("mcp-session-id"),
            "assigned": response.headers.get("mcp-session-id"),
            "replica": response.headers.get("x-replica"),
            "status": response.status_code,
        }
        if request.method == "POST":
            body = json.loads(request.content)
            params = body.get("params") or {}
            entry["method"] = body.get("method", "response" if "result" in body else "?")
            entry["tool"] = params.get("name")
            entry["answers"] = "inputResponses" in params
        self.seen.append(entry)

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(timeout=30, event_hooks={"response": [self.on_response]})

    def since(self, start: int) -> list[dict[str, Any]]:
        return self.seen[start:]


def accepting(questions: list[str]) -> Any:
    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        return types.ElicitResult(action="accept")

    return elicit


def structured(result: types.CallToolResult, what: str) -> Any:
    texts = [getattr(c, "text", "") for c in result.content]
    check(not result.is_error, f"{what} failed: {texts}")
    check(result.structured_content is not None, f"{what}: no structuredContent")
    return result.structured_content


async def paired_device(client: Client, workspace: str) -> str:
    code = structured(await client.call_tool("device_add", {"workspace": workspace}), "device_add")["code"]
    paired = await client.call_tool("device_pair", {"code": code, "device_name": workspace})
    return structured(paired, "device_pair")["device_id"]


async def revoke(client: Client, device: str, questions: list[str]) -> str:
    asked = len(questions)
    revoked = structured(await client.call_tool("device_revoke", {"device_id": device}), "device_revoke")
    check(len(questions) == asked + 1 and device in questions[-1], f"not asked about {device}: {questions}")
    check(revoked["revoked_at"] is not None, f"accepted but not revoked: {revoked}")
    return revoked["revoked_at"]


async def session(args: argparse.Namespace) -> None:
    exchanges, questions = Exchanges(), []
    transport = streamable_http_client(args.url, http_client=exchanges.client())
    async with Client(transport, mode="legacy", elicitation_callback=accepting(questions)) as client:
        ids = {e["assigned"] for e in exchanges.seen if e["assigned"]}
        check(len(ids) == 1, f"one session id assigned by initialize: {ids}")
        (sid,) = ids
        emit("connected", protocol=protocol_of(client), session=sid)

        await client.list_tools()
        device = await paired_device(client, "failover-1")
        revoked_at = await revoke(client, device, questions)
        emit("confirmed", device=device, revoked_at=revoked_at, exchanges=exchanges.seen)

        emit("kill", replica=sid.split(".", 1)[0], session=sid)
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        check(line.strip() == "killed", f"the test did not kill the replica: {line!r}")

        start = len(exchanges.seen)
        listed = structured(await client.call_tool("device_list", {"workspace": "failover-1"}), "device_list")
        mine = [d for d in listed["devices"] if d["device_id"] == device]
        check(len(mine) == 1 and mine[0]["revoked_at"] == revoked_at, f"the revoked device: {mine}")
        second = await paired_device(client, "failover-2")
        again = await revoke(client, second, questions)
        emit("after", device=second, revoked_at=again, exchanges=exchanges.since(start))


async def sessionless(args: argparse.Namespace) -> None:
    exchanges, questions = Exchanges(), []
    transport = streamable_http_client(args.url, http_client=exchanges.client())
    async with Client(transport, mode=types.LATEST_PROTOCOL_VERSION, elicitation_callback=accepting(questions)) as client:
        emit("connected", protocol=protocol_of(client), latest=types.LATEST_PROTOCOL_VERSION)
        device = await paired_device(client, "sessionless")
        start = len(exchanges.seen)
        revoked_at = await revoke(client, device, questions)
        emit("revoked", device=device, revoked_at=revoked_at, exchanges=exchanges.since(start),
             sessions=sorted({e["session"] for e in exchanges.seen if e["session"]}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("suite", choices=["session", "sessionless"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--timeout", type=float, default=20, help="seconds for the whole suite")
    args = parser.parse_args()
    suite = {"session": session, "sessionless": sessionless}[args.suite]

    async def run() -> None:
        try:
            with anyio.fail_after(args.timeout):
                await suite(args)
        except BaseException:
            emit("failed", exchanges=[e for r in RECORDED for e in r.seen])
            raise

    asyncio.run(run())
    print("done", flush=True)


if __name__ == "__main__":
    sys.exit(main())

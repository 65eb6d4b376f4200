"""The official MCP Python client against the core's run-time behaviour (tests/tests/core.rs).

    core_check.py list-changed URL   lists, then after each of two tools/list_changed lists again
    core_check.py confirm URL TOOL ARGS_JSON   calls a destructive tool, accepting the question

Each step prints one line the Rust test reads: `tools [names]`, `changed [names]`,
`asked <question>`, `result <json>`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def connect(url: str, **kwargs: Any) -> Client:
    http = httpx2.AsyncClient(timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode="legacy", **kwargs)


async def names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


async def list_changed(url: str) -> None:
    state = {"changed": anyio.Event()}

    async def on_message(message: Any) -> None:
        inner = getattr(message, "root", message)
        if isinstance(inner, types.ToolListChangedNotification):
            state["changed"].set()

    async with connect(url, message_handler=on_message) as client:
        print("tools", json.dumps(await names(client)), flush=True)
        for _ in range(2):
            with anyio.fail_after(20):
                await state["changed"].wait()
            state["changed"] = anyio.Event()
            print("changed", json.dumps(await names(client)), flush=True)


async def confirm(url: str, tool: str, args: str) -> None:
    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        print("asked", params.message, flush=True)
        return types.ElicitResult(action="accept")

    async with connect(url, elicitation_callback=elicit) as client:
        result = await client.call_tool(tool, json.loads(args))
        text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
        print("result", json.dumps({"is_error": bool(result.is_error), "text": text}), flush=True)


if __name__ == "__main__":
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "list-changed":
        anyio.run(list_changed, *rest)
    elif command == "confirm":
        anyio.run(confirm, *rest)
    else:
        raise SystemExit(f"unknown command {command}")

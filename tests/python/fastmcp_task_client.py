"""FastMCP's client (fastmcp + fastmcp-tasks, the tasks extension of protocol 2026-07-28) running a
tool as a task on our server: it starts the task, reads its status, answers the question the
tool asks mid-task (an elicitation) through `tasks/update`, reads the result; or, for a
destructive tool, is asked to confirm (an input-required result) before the task exists. Prints
`ok <check>` per check and `done` at the end.

    fastmcp_task_client.py --url http://127.0.0.1:PORT/mcp --tool device_export \
        --args '{"page_size": 1}' --answer '{"include_revoked": true}' [--confirm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import fastmcp_tasks  # noqa: F401  (importing it declares the extension on every request)
import mcp_types
from fastmcp import Client
from fastmcp_tasks import ToolTask, call_tool_task
from fastmcp_tasks.client_models import ClientCreateTaskResult, UpdateTaskRequest, UpdateTaskRequestParams


def ok(name: str, detail: object = "") -> None:
    print(f"ok {name} {detail}".rstrip(), flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--args", default="{}")
    parser.add_argument("--answer", default="{}")
    parser.add_argument("--confirm", action="store_true", help="the tool is confirmed before its task")
    args = parser.parse_args()
    arguments, answer = json.loads(args.args), json.loads(args.answer)
    confirmations: list[str] = []

    async def on_elicit(message, response_type, params, context):
        # Never asked through the handler: questions come as results, or in the task.
        confirmations.append(message)
        return {}

    async with Client(args.url, mode="2026-07-28", elicitation_handler=on_elicit, timeout=60) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        if args.confirm:
            # The confirmation comes first, as an input-required result; the call made again
            # with the answer and the request state is the one that starts the task.
            asked = await client.session.call_tool(
                args.tool, arguments, allow_input_required=True, allow_claimed=True)
            assert isinstance(asked, mcp_types.InputRequiredResult), asked
            questions = asked.input_requests or {}
            assert len(questions) == 1, questions
            ok("confirmation asked before the task", next(iter(questions)))
            accepted = {key: {"action": "accept"} for key in questions}
            raw = await client.session.call_tool(
                args.tool, arguments, input_responses=accepted, request_state=asked.request_state,
                allow_claimed=True)
            assert isinstance(raw, ClientCreateTaskResult), raw
            task = ToolTask(client, args.tool, raw)
        else:
            task = await call_tool_task(client, args.tool, arguments)
        ok("started", task.task_id)
        assert not confirmations, confirmations
        seen: list[str] = []
        deadline = asyncio.get_running_loop().time() + 60
        while True:
            status = await task.status()
            if not seen or seen[-1] != status.status:
                seen.append(status.status)
            if status.status in ("completed", "failed", "cancelled"):
                break
            if status.status == "input_required":
                requests = status.input_requests or {}
                assert requests and all(r.get("method") == "elicitation/create" for r in requests.values()), requests
                ok("asked", ", ".join(sorted(requests)))
                responses = {
                    key: mcp_types.ElicitResult(action="accept", content=answer).model_dump(
                        by_alias=True, mode="json", exclude_none=True)
                    for key in requests
                }
                await client.session.send_request(
                    UpdateTaskRequest(params=UpdateTaskRequestParams(task_id=task.task_id, input_responses=responses)),
                    mcp_types.Result)
                ok("answered")
                continue
            assert asyncio.get_running_loop().time() < deadline, seen
            await asyncio.sleep(0.05)
        ok("status", " -> ".join(seen))
        assert seen[-1] == "completed", seen
        result = await task.result()
        assert not result.is_error, result
        ok("result", json.dumps(result.structured_content))
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)

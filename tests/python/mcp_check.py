"""Drives our MCP server with the official Python SDK client (`mcp` on PyPI).

    mcp_check.py demo    (--stdio CMD... | --url URL [--token T]) --mode legacy|auto
    mcp_check.py fixture (--stdio CMD... | --url URL) --mode legacy|auto
    mcp_check.py shutdown --url URL --pid PID --mode legacy|auto
    mcp_check.py gateway --url URL --mode legacy|auto

`legacy` is the `initialize` handshake (protocol 2025-11-25 and older); `auto` probes
`server/discover` first, as SDK 2.x clients do, and speaks 2026-07-28 when the server offers it.
Each check prints `ok <name>`; the first failure raises, and the exit status is non-zero.
The Rust tests (`tests/tests/mcp.rs`) run this and read the lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

import anyio
import httpx2
import jsonschema
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


# The demo app's tools, as tools/list orders them.
DEMO_TOOLS = ["cancel_task", "channel_add", "channel_list", "channel_remove", "device_add", "device_export", "device_list", "device_pair", "device_revoke", "host_execute", "list_tasks", "schedule_task", "web_fetch", "web_search"]


def ok(name: str, detail: Any = "") -> None:
    print(f"ok {name} {detail}".rstrip(), flush=True)


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def server_of(args: argparse.Namespace) -> Any:
    if args.stdio:
        return StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    return streamable_http_client(args.url, http_client=httpx2.AsyncClient(headers=headers, timeout=30))


def protocol_of(client: Client) -> str:
    session = client.session
    for attr in ("protocol_version", "negotiated_protocol_version"):
        v = getattr(session, attr, None)
        if isinstance(v, str):
            return v
    return "?"


def no_external_refs(schema: Any) -> bool:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return False
        return all(no_external_refs(v) for v in schema.values())
    if isinstance(schema, list):
        return all(no_external_refs(v) for v in schema)
    return True


async def check_listing(
    client: Client, expected: list[str], content: frozenset[str] = frozenset()
) -> dict[str, types.Tool]:
    """The listing is `expected`; every tool has both schemas, but the `content` tools, whose
    results are content blocks, which no output schema describes."""
    listed = (await client.list_tools()).tools
    names = [t.name for t in listed]
    check(names == expected, f"tools/list names {names} != {expected}")
    for t in listed:
        schemas = [("inputSchema", t.input_schema)]
        if t.name in content:
            check(t.output_schema is None, f"{t.name}: a content tool with an outputSchema")
        else:
            schemas.append(("outputSchema", t.output_schema))
        for which, schema in schemas:
            check(schema is not None, f"{t.name}: no {which}")
            check(schema.get("type") == "object", f"{t.name}: {which} root is not an object: {schema}")
            check(no_external_refs(schema), f"{t.name}: {which} has a $ref outside itself")
            jsonschema.Draft202012Validator.check_schema(schema)
        check(bool(t.description), f"{t.name}: no description")
        check(bool(t.title), f"{t.name}: no title")
    ok("list", f"{len(listed)} tools, every schema checked by jsonschema")
    return {t.name: t for t in listed}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def structured_ok(tool: types.Tool, result: types.CallToolResult) -> Any:
    check(not result.is_error, f"{tool.name} failed: {text_of(result)}")
    sc = result.structured_content
    check(sc is not None, f"{tool.name}: no structuredContent")
    jsonschema.Draft202012Validator(tool.output_schema).validate(sc)
    check(json.loads(text_of(result)) == sc, f"{tool.name}: the text block is not the structured JSON")
    return sc


async def demo(args: argparse.Namespace) -> None:
    answers: list[str] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        answers.append(params.message)
        return types.ElicitResult(action=elicit.answer)  # type: ignore[attr-defined]

    elicit.answer = "decline"  # type: ignore[attr-defined]

    # A client that cannot ask its user: destructive calls are refused.
    async with Client(server_of(args), mode=args.mode, message_handler=on_demo_message) as plain:
        ok("connect", protocol_of(plain))
        tools = await check_listing(plain, DEMO_TOOLS)
        ann = {n: t.annotations for n, t in tools.items()}
        check(ann["device_revoke"].destructive_hint is True, "device_revoke: destructiveHint")
        check(ann["device_list"].read_only_hint is True, "device_list: readOnlyHint")
        check(ann["device_revoke"].idempotent_hint is True, "device_revoke: idempotentHint")
        ok("annotations")

        # The client validates structuredContent against outputSchema itself (and raises if not).
        added = await plain.call_tool("device_add", {"workspace": "mcp", "ttl_seconds": 600})
        code = structured_ok(tools["device_add"], added)["code"]
        ok("device_add", code)

        bad = await plain.call_tool("device_add", {"ttl_seconds": 5, "code_length": "six", "bogus": 1})
        text = text_of(bad)
        check(bad.is_error is True, "invalid arguments: not isError")
        check(bad.structured_content is None, "invalid arguments: has structuredContent")
        check(text.startswith("invalid_arguments:"), f"invalid arguments text: {text}")
        for path in ("/ttl_seconds", "/code_length", "/bogus"):
            check(path in text, f"violation {path} not named in: {text}")
        ok("invalid_arguments", "3 violations named")

        try:
            await plain.call_tool("device_ad", {})
            raise AssertionError("unknown tool: no error")
        except MCPError as e:
            check(e.error.code == -32602, f"unknown tool: code {e.error.code}")
            check("device_ad" in e.error.message and "device_add" in e.error.message, e.error.message)
        ok("unknown_tool", "-32602")

        paired = await plain.call_tool("device_pair", {"code": code, "device_name": "phone"})
        device = structured_ok(tools["device_pair"], paired)["device_id"]
        ok("device_pair", device)

        await demo_items(plain, tools, device)

        refused = await plain.call_tool("device_revoke", {"device_id": device})
        text = text_of(refused)
        check(refused.is_error is True, "unconfirmed revoke: not isError")
        check(text.startswith("confirmation_required:"), f"unconfirmed revoke text: {text}")
        listed = structured_ok(tools["device_list"], await plain.call_tool("device_list", {"workspace": "mcp"}))
        mine = [d for d in listed["devices"] if d["device_id"] == device]
        check(len(mine) == 1 and mine[0]["revoked_at"] is None, f"device changed after a refusal: {mine}")
        ok("destructive_refused", "device still there")

    # A client that can ask: decline refuses, accept runs.
    async with Client(server_of(args), mode=args.mode, elicitation_callback=elicit) as asking:
        tools = {t.name: t for t in (await asking.list_tools()).tools}
        declined = await asking.call_tool("device_revoke", {"device_id": device})
        check(declined.is_error is True and "declined" in text_of(declined), f"declined: {text_of(declined)}")
        check(len(answers) == 1 and device in answers[0], f"the question names the device: {answers}")
        listed = structured_ok(tools["device_list"], await asking.call_tool("device_list", {"workspace": "mcp"}))
        check(all(d["revoked_at"] is None for d in listed["devices"] if d["device_id"] == device), "declined but revoked")
        ok("elicitation_declined", answers[0])

        elicit.answer = "accept"  # type: ignore[attr-defined]
        revoked = structured_ok(tools["device_revoke"], await asking.call_tool("device_revoke", {"device_id": device}))
        check(revoked["revoked_at"] is not None, f"accepted but not revoked: {revoked}")
        check(len(answers) == 2, "asked once more")
        ok("elicitation_accepted", revoked["revoked_at"])


# `notifications/resources/updated` the demo's plain client heard (before 2026-07-28).
demo_updates: list[str] = []


async def on_demo_message(message: Any) -> None:
    if isinstance(message, types.ResourceUpdatedNotification):
        demo_updates.append(str(message.params.uri))


async def demo_items(client: Any, tools: dict[str, Any], device: str) -> None:
    """The demo's paired devices as resources, its pairing-message prompt with completions,
    and an update of `devices://paired` heard once another device is paired."""
    uris = [str(r.uri) for r in (await client.list_resources()).resources]
    check("devices://paired" in uris and f"devices://{device}" in uris, f"resources: {uris}")
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    check(templates == ["devices://{device_id}"], f"templates: {templates}")
    one = json.loads((await client.read_resource(f"devices://{device}")).contents[0].text)
    check(one["device_id"] == device and one["name"] == "phone", f"device resource: {one}")
    ok("demo_resources", len(uris))

    completed = await client.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="devices://{device_id}"),
        {"name": "device_id", "value": device[:6]},
    )
    check(device in completed.completion.values, f"device ids: {completed}")
    workspaces = await client.complete(
        types.PromptReference(type="ref/prompt", name="pairing_message"),
        {"name": "workspace", "value": "m"},
    )
    check(workspaces.completion.values == ["mcp"], f"workspaces: {workspaces}")
    got = await client.get_prompt("pairing_message", {"recipient": "Alice", "workspace": "mcp", "minutes": "10"})
    said = got.messages[0].content.text
    check("Alice" in said and "`mcp`" in said and "10 minutes" in said, f"prompt: {said}")
    try:
        await client.get_prompt("pairing_message", {"recipient": "Alice", "minutes": "ten"})
        raise AssertionError("a minutes value that is no number was accepted")
    except MCPError as e:
        check(e.error.code == -32602 and "minutes" in e.error.message, f"bad minutes: {e.error}")
    ok("demo_prompt", said[:40])

    # Pairing another device updates `devices://paired`.
    code = structured_ok(tools["device_add"], await client.call_tool("device_add", {"workspace": "mcp"}))["code"]
    heard: list[str] = []
    if protocol_of(client) >= "2026-07-28":
        async with client.listen(resource_subscriptions=["devices://paired"]) as sub:
            await client.call_tool("device_pair", {"code": code, "device_name": "tablet"})
            with anyio.fail_after(10):
                async for event in sub:
                    heard.append(event.uri)
                    break
    else:
        await client.subscribe_resource("devices://paired")
        await client.call_tool("device_pair", {"code": code, "device_name": "tablet"})
        with anyio.fail_after(10):
            while not demo_updates:
                await anyio.sleep(0.02)
        heard = list(demo_updates)
    check(heard[:1] == ["devices://paired"], f"updates: {heard}")
    ok("demo_subscribe", heard[0])


async def fixture(args: argparse.Namespace) -> None:
    async with Client(server_of(args), mode=args.mode) as client:
        ok("connect", protocol_of(client))
        own = ["add", "boom", "count", "hang", "hang_status", "itinerary", "numbers", "slow", "touch", "wipe"]
        # The tools the official conformance suite calls (tests/src/bin/mcp-fixture/conformance.rs,
        # and tasks.rs's greeting).
        conformance = ["json_schema_2020_12_tool", "test_audio_content", "test_elicitation",
                       "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
                       "test_embedded_resource", "test_error_handling", "test_image_content",
                       "test_multiple_content_types", "test_reconnection", "test_sampling",
                       "test_simple_text", "test_tool_with_logging", "test_tool_with_progress",
                       "greet"]
        # And those whose result is plain, with an output schema: a parameter mirrored in a
        # header, the tools that ask through input-required results (rounds.rs), and the
        # stateless scenario's diagnostic tools and hooks.
        plain = ["test_custom_headers"] + [
            f"test_input_required_result_{name}"
            for name in ("capabilities", "elicitation", "list_roots", "multi_round",
                         "multiple_inputs", "request_state", "sampling", "tampered_state")
        ]
        plain += ["test_logging_tool", "test_missing_capability", "test_streaming_elicitation",
                  "test_trigger_prompt_change", "test_trigger_tool_change"]
        # The tasks scenarios' tools (tasks.rs).
        plain += ["confirm_delete", "failing_job", "multi_input", "protocol_error_job", "slow_compute",
                  "test_tool_with_task"]
        tools = await check_listing(client, sorted(own + conformance + plain), frozenset(conformance))

        # A list output is wrapped as {"result": [...]}, in the schema and in the content alike.
        numbers = tools["numbers"]
        check(list(numbers.output_schema["properties"]) == ["result"], f"wrapper: {numbers.output_schema}")
        got = structured_ok(numbers, await client.call_tool("numbers", {"n": 3}))
        check(got == {"result": [0, 1, 2]}, f"numbers: {got}")
        ok("wrapped_output", got)

        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        counted = await client.call_tool("count", {"steps": 4}, progress_callback=on_progress)
        structured_ok(tools["count"], counted)
        check([p for p, _, _ in seen] == [1, 2, 3, 4], f"progress notifications: {seen}")
        check(all(t == 4 for _, t, _ in seen), f"progress totals: {seen}")
        ok("progress", len(seen))

        boom = await client.call_tool("boom", {})
        check(boom.is_error is True and text_of(boom).startswith("internal:"), f"panic: {text_of(boom)}")
        slow = await client.call_tool("slow", {})
        check(slow.is_error is True and text_of(slow).startswith("timeout:"), f"timeout: {text_of(slow)}")
        wipe = await client.call_tool("wipe", {"target": "everything"})
        check(wipe.is_error is True and text_of(wipe).startswith("confirmation_required:"), text_of(wipe))
        ok("errors", "panic, timeout, confirmation; server still serving")

        # Cancelling the request (notifications/cancelled, or on 2026-07-28 over HTTP closing
        # the request) drops the tool's future.
        before = (await client.call_tool("hang_status", {})).structured_content
        with anyio.move_on_after(0.5):
            await client.call_tool("hang", {})
        deadline = time.monotonic() + 5
        while True:
            status = (await client.call_tool("hang_status", {})).structured_content
            if status["dropped"] > before["dropped"] or time.monotonic() > deadline:
                break
            await anyio.sleep(0.05)
        expected = {"started": before["started"] + 1, "dropped": before["dropped"] + 1}
        check(status == expected, f"cancellation: {status}, expected {expected}")
        ok("cancelled", status)
    await fixture_asking(args)
    await fixture_items(args)


async def fixture_asking(args: argparse.Namespace) -> None:
    """Tools and a prompt that ask the user, the model and the roots (rounds.rs), answered by
    the SDK's callbacks: on 2026-07-28 the questions come in input-required results, which the
    SDK answers and retries with; before, as requests of the server's own mid-call."""
    asked: list[str] = []

    async def on_elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append("elicitation")
        fields = params.requested_schema.get("properties", {})
        content = {"name": "Ada", "color": "blue", "context": "tests"}
        return types.ElicitResult(action="accept", content={k: v for k, v in content.items() if k in fields})

    async def on_sample(_ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hi"), model="test-model"
        )

    async def on_roots(_ctx: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async with Client(
        server_of(args),
        mode=args.mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        list_roots_callback=on_roots,
    ) as client:
        three = await client.call_tool("test_input_required_result_multiple_inputs", {})
        check(three.is_error is not True, text_of(three))
        check(three.structured_content == {"result": "Hi Ada, working in file:///work"}, f"three at once: {three}")
        check(sorted(asked) == ["elicitation", "roots", "sampling"], f"asked: {asked}")
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
        check(rounds.structured_content == {"result": "Ada likes blue"}, f"two rounds: {rounds}")
        prompt = await client.get_prompt("test_input_required_result_prompt", {})
        said = prompt.messages[0].content.text
        check(said == "Answer with this context in mind: tests", f"prompt: {said}")
        check(len(asked) == 6, f"each question asked once: {asked}")
        ok("asked", ", ".join(asked))


async def fixture_items(args: argparse.Namespace) -> None:
    """The fixture's resources, templates and prompts (the conformance suite's), completions,
    and an update heard after subscribing: `resources/subscribe` through 2025-11-25,
    `subscriptions/listen` on 2026-07-28."""
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    async with Client(server_of(args), mode=args.mode, message_handler=on_message) as client:
        listed = await client.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        check("test://static-text" in uris and "test://template/123/data" in uris, f"resources: {uris}")
        templates = await client.list_resource_templates()
        check([t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"],
              f"templates: {templates}")
        text = (await client.read_resource("test://static-text")).contents[0]
        check(getattr(text, "text", None) == "This is the content of the static text resource."
              and text.mime_type == "text/plain", f"text: {text}")
        blob = (await client.read_resource("test://static-binary")).contents[0]
        check(bool(getattr(blob, "blob", None)) and blob.mime_type == "image/png", f"blob: {blob}")
        data = json.loads((await client.read_resource("test://template/7/data")).contents[0].text)
        check(data == {"id": "7", "templateTest": True, "data": "Data for ID: 7"}, f"template: {data}")
        try:
            await client.read_resource("test://nowhere")
            raise AssertionError("a missing resource was read")
        except MCPError as e:
            expected = -32602 if protocol_of(client) >= "2026-07-28" else -32002
            check(e.error.code == expected, f"not found: {e.error}")
        ok("resources", len(uris))

        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check("test_prompt_with_arguments" in prompts, f"prompts: {prompts}")
        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "x1", "arg2": "y2"})
        said = got.messages[0].content.text
        check(said == "Prompt with arguments: arg1='x1', arg2='y2'", f"prompt: {said}")
        image = await client.get_prompt("test_prompt_with_image")
        check(image.messages[0].content.type == "image", f"image prompt: {image}")
        ok("prompts", len(prompts))

        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
        check(completed.completion.values == ["test", "testValue1"], f"completion: {completed}")
        ok("complete", completed.completion.values)

        watched = "test://watched-resource"
        if protocol_of(client) >= "2026-07-28":
            heard: list[str] = []
            async with client.listen(resource_subscriptions=[watched]) as sub:
                await client.call_tool("touch", {"uri": "test://static-text"})
                await client.call_tool("touch", {"uri": watched})
                with anyio.fail_after(10):
                    async for event in sub:
                        heard.append(event.uri)
                        break
            # The session also tees the subscription's events to the message handler.
            check(heard == [watched] and set(updates) <= {watched}, f"heard: {heard}, {updates}")
            updates = heard
        else:
            await client.subscribe_resource(watched)
            await client.call_tool("touch", {"uri": "test://static-text"})
            await client.call_tool("touch", {"uri": watched})
            with anyio.fail_after(10):
                while not updates:
                    await anyio.sleep(0.02)
        check(updates == [watched], f"updates: {updates}")
        ok("subscribe", updates)


async def shutdown(args: argparse.Namespace) -> None:
    """A call running when the server is told to stop still gets its result."""
    import os
    import signal

    async with Client(server_of(args), mode=args.mode) as client:
        ok("connect", protocol_of(client))
        # Listed first: the client checks results against the listed output schema, and would
        # otherwise list the tools after the call, when the server accepts no new requests.
        await client.list_tools()
        async with anyio.create_task_group() as tg:
            results: list[types.CallToolResult] = []

            async def run() -> None:
                results.append(await client.call_tool("count", {"steps": 60}))

            tg.start_soon(run)
            await anyio.sleep(0.2)
            os.kill(args.pid, signal.SIGTERM)
        got = results[0]
        check(not got.is_error and got.structured_content == {"counted": 60}, f"cut short: {got}")
        ok("finished_during_shutdown", got.structured_content)


async def gateway(args: argparse.Namespace) -> None:
    """`demo-app serve` mounting server-everything as `everything` and a store as `notes`: the
    mounted tools are listed beside the app's own and called through it, media unchanged."""
    async with Client(server_of(args), mode=args.mode) as client:
        ok("connect", protocol_of(client))
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for name in ["device_add", "notes-write", "everything-echo", "everything-get-tiny-image"]:
            check(name in listed, f"{name} not listed: {sorted(listed)}")
        echo = listed["everything-echo"]
        check(echo.output_schema is None, f"content tools have no output schema: {echo.output_schema}")
        ok("list", len(listed))
        got = await client.call_tool("everything-echo", {"message": "through"})
        check(not got.is_error and text_of(got) == "Echo: through", f"echo: {got}")
        ok("echo", text_of(got))
        image = await client.call_tool("everything-get-tiny-image", {})
        kinds = [c.type for c in image.content]
        png = [c for c in image.content if c.type == "image"]
        check(not image.is_error and png and png[0].mime_type == "image/png" and len(png[0].data) > 100,
              f"the image did not come through: {kinds}")
        ok("image", kinds)
        stored = structured_ok(listed["notes-write"],
                               await client.call_tool("notes-write", {"key": "from-python", "value": [1, 2]}))
        ok("store", stored)

        # The mounted server's resources keep their URIs beside the app's own; its prompts take
        # its prefix; both are read and got through the gateway.
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        check("demo://resource/dynamic/text/{resourceId}" in templates and "devices://{device_id}" in templates,
              f"templates: {templates}")
        text = (await client.read_resource("demo://resource/dynamic/text/3")).contents[0].text
        check(text.startswith("Resource 3"), f"read through the gateway: {text}")
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check("everything-args-prompt" in prompts and "pairing_message" in prompts, f"prompts: {prompts}")
        got = await client.get_prompt("everything-args-prompt", {"city": "Oslo"})
        said = " ".join(getattr(m.content, "text", "") for m in got.messages)
        check("Oslo" in said, f"prompt through the gateway: {said}")
        ok("items", len(templates) + len(prompts))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("suite", choices=["demo", "fixture", "shutdown", "gateway"])
    parser.add_argument("--pid", type=int)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    suites = {"demo": demo, "fixture": fixture, "shutdown": shutdown, "gateway": gateway}
    asyncio.run(suites[args.suite](args))
    print("done", flush=True)


if __name__ == "__main__":
    sys.exit(main())

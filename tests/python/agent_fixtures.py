"""Writes the model replies the agent's tests replay (tests/fixtures/agent/*.json), each built
with the provider SDK's own response types, so that a fixture is a reply the SDK itself accepts:

    openai 3.57.0        ChatCompletion, ChatCompletionChunk, responses.Response and its
                         ResponseStreamEvent union
    anthropic 2.14.0     Message and its RawMessageStreamEvent union
    google-genai 3.6.1   GenerateContentResponse (its camelCase aliases, as the API sends it)

Run from the repository's root after changing a case, and commit the JSON:

    .venv/bin/python tests/python/agent_fixtures.py

Each file is {"api": ..., "reply": {...}} for a whole reply, or {"api": ..., "events": [...]}
for a streamed one (each event the `data` of one server-sent event). Calls name the tool
`echo` (of the test registry), with ids the fake provider records as issued.
"""

import json
import pathlib

import anthropic
import google.genai
import openai
from anthropic.types import Message, RawMessageStreamEvent
from google.genai import types as genai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

OUT = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "agent"
VERSIONS = {"openai": "3.57.0", "anthropic": "2.14.0", "google-genai": "3.6.1"}
ARGS = '{"text":"hi"}'
REFUSAL = "I can't help with that."


def dump(model, **kw):
    return model.model_dump(mode="json", exclude_none=True, **kw)


# OpenAI Chat Completions


def chat(message, finish="stop", usage=None):
    return dump(ChatCompletion.model_validate({
        "id": "chatcmpl-f", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", **message}}],
        "usage": usage or {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59},
    }))


def chunk(delta, finish=None, usage=None, choices=True):
    value = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0,
             "model": "fake-model",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []}
    if usage:
        value["usage"] = usage
    return dump(ChatCompletionChunk.model_validate(value))


def chat_stream_refusal():
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"refusal": c}) for c in REFUSAL]
    events.append(chunk({}, "stop"))
    events.append(chunk({}, usage={"prompt_tokens": 50, "completion_tokens": 9,
                                   "total_tokens": 59}, choices=False))
    return events + ["[DONE]"]


def chat_stream_call():
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": c}) for c in "Let me."]
    events.append(chunk({"tool_calls": [{"index": 0, "id": "call_fix_chat", "type": "function",
                                         "function": {"name": "echo", "arguments": ""}}]}))
    events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": c}}]}) for c in ARGS]
    events.append(chunk({}, "tool_calls"))
    events.append(chunk({}, usage={
        "prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62,
        "prompt_tokens_details": {"cached_tokens": 32, "cache_write_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 5}}, choices=False))
    return events + ["[DONE]"]


# OpenAI Responses

RESPONSE = {"id": "resp_f", "object": "response", "created_at": 0, "model": "fake-model",
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "status": "completed"}


def response(output, usage=None, **extra):
    return dump(Response.model_validate({
        **RESPONSE, "output": output, **extra,
        "usage": usage or {"input_tokens": 50, "output_tokens": 9, "total_tokens": 59,
                           "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                           "output_tokens_details": {"reasoning_tokens": 0}},
    }))


def refusal_message(status="completed"):
    return {"type": "message", "id": "msg_f", "role": "assistant", "status": status,
            "content": [{"type": "refusal", "refusal": REFUSAL}]}


def events_of(adapter, values):
    """Each event validated against the SDK's stream-event union, numbered as the API does."""
    out = []
    for n, value in enumerate(values):
        if value == {"type": "ping"}:
            # Sent by the API, skipped by the SDK's stream reader before its union.
            out.append(value)
            continue
        if "sequence_number" not in value and adapter is RESPONSES:
            value = {**value, "sequence_number": n}
        out.append(dump(adapter.validate_python(value)))
    return out


RESPONSES = TypeAdapter(ResponseStreamEvent)


def responses_stream_refusal():
    done = response([refusal_message()])
    return events_of(RESPONSES, [
        {"type": "response.created", "response": {**done, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": refusal_message("in_progress") | {"content": []}},
        {"type": "response.content_part.added", "item_id": "msg_f", "output_index": 0,
         "content_index": 0, "part": {"type": "refusal", "refusal": ""}},
        *[{"type": "response.refusal.delta", "item_id": "msg_f", "output_index": 0,
           "content_index": 0, "delta": c} for c in REFUSAL],
        {"type": "response.refusal.done", "item_id": "msg_f", "output_index": 0,
         "content_index": 0, "refusal": REFUSAL},
        {"type": "response.completed", "response": done},
    ])


def responses_stream_call():
    text = {"type": "message", "id": "msg_t", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Let me.", "annotations": []}]}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_fix_responses",
            "name": "echo", "arguments": ARGS, "status": "completed"}
    done = response([text, call], usage={
        "input_tokens": 50, "output_tokens": 12, "total_tokens": 62,
        "input_tokens_details": {"cached_tokens": 32, "cache_write_tokens": 8},
        "output_tokens_details": {"reasoning_tokens": 5}})
    return events_of(RESPONSES, [
        {"type": "response.created", "response": {**done, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**text, "status": "in_progress", "content": []}},
        *[{"type": "response.output_text.delta", "item_id": "msg_t", "output_index": 0,
           "content_index": 0, "delta": c, "logprobs": []} for c in "Let me."],
        {"type": "response.output_item.done", "output_index": 0, "item": text},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**call, "arguments": "", "status": "in_progress"}},
        *[{"type": "response.function_call_arguments.delta", "item_id": "fc_1",
           "output_index": 1, "delta": c} for c in ARGS],
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1,
         "arguments": ARGS, "name": "echo"},
        {"type": "response.output_item.done", "output_index": 1, "item": call},
        {"type": "response.completed", "response": done},
    ])


# Anthropic Messages

ANTHROPIC = TypeAdapter(RawMessageStreamEvent)


def message(content, stop="end_turn", usage=None):
    return dump(Message.model_validate({
        "id": "msg_f", "type": "message", "role": "assistant", "model": "fake-model",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": usage or {"input_tokens": 50, "output_tokens": 9},
    }))


def anthropic_stream(blocks, stop, usage_out, cut=False):
    """The events of a message with `blocks`: (start block, [deltas])."""
    start = message([], stop=None, usage={"input_tokens": 50, "output_tokens": 1})
    values = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for i, (block, deltas) in enumerate(blocks):
        values.append({"type": "content_block_start", "index": i, "content_block": block})
        values += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        values.append({"type": "content_block_stop", "index": i})
    values.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": usage_out}})
    values.append({"type": "message_stop"})
    return events_of(ANTHROPIC, values)


def anthropic_stream_refusal():
    return anthropic_stream(
        [({"type": "text", "text": ""},
          [{"type": "text_delta", "text": c} for c in REFUSAL])],
        "refusal", 9)


def anthropic_stream_call():
    return anthropic_stream(
        [({"type": "thinking", "thinking": "", "signature": ""},
          [{"type": "thinking_delta", "thinking": "Echo it."},
           {"type": "signature_delta", "signature": "sig-anthropic"}]),
         ({"type": "text", "text": ""}, [{"type": "text_delta", "text": c} for c in "Let me."]),
         ({"type": "tool_use", "id": "call_fix_anthropic", "name": "echo", "input": {}},
          [{"type": "input_json_delta", "partial_json": c} for c in ARGS])],
        "tool_use", 12)


def anthropic_unknown_field():
    """A tool call whose blocks carry a field the request type does not define (the SDK's
    models keep unknown fields, as a newer API might send them)."""
    return message([
        {"type": "text", "text": "Let me.", "future_field": {"x": 1}},
        {"type": "tool_use", "id": "call_fix_unknown", "name": "echo",
         "input": {"text": "hi"}, "future_field": "not for requests"},
    ], stop="tool_use")


# Gemini


def gemini(candidates=None, usage=None, **extra):
    value = {"modelVersion": "fake-model", "responseId": "r-f", **extra,
             "usageMetadata": usage or {"promptTokenCount": 50, "candidatesTokenCount": 9,
                                        "totalTokenCount": 59}}
    if candidates is not None:
        value["candidates"] = candidates
    return dump(genai.GenerateContentResponse.model_validate(value), by_alias=True)


RATINGS = [
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
]


def gemini_safety():
    return gemini([{"index": 0, "finishReason": "SAFETY", "safetyRatings": RATINGS}],
                  usage={"promptTokenCount": 50, "totalTokenCount": 50})


def gemini_stream_safety():
    first = gemini([{"index": 0, "content": {"role": "model", "parts": [{"text": "Sure, "}]}}])
    last = gemini([{"index": 0, "content": {"role": "model", "parts": []},
                    "finishReason": "SAFETY", "safetyRatings": RATINGS}])
    return [first, last]


def gemini_blocked():
    return gemini(promptFeedback={"blockReason": "PROHIBITED_CONTENT", "safetyRatings": RATINGS},
                  usage={"promptTokenCount": 50, "totalTokenCount": 50})


def gemini_stream_call():
    chunks = [gemini([{"index": 0, "content": {"role": "model", "parts": [{"text": c}]}}])
              for c in "Let me."]
    call = {"functionCall": {"name": "echo", "args": {"text": "hi"}},
            "thoughtSignature": "c2lnLWdlbWluaQ=="}
    chunks.append(gemini([{"index": 0, "content": {"role": "model", "parts": [call]},
                           "finishReason": "STOP"}],
                         usage={"promptTokenCount": 50, "cachedContentTokenCount": 32,
                                "candidatesTokenCount": 7, "thoughtsTokenCount": 5,
                                "toolUsePromptTokenCount": 3, "totalTokenCount": 65}))
    return chunks


def gemini_unknown_field():
    """google-genai's models refuse unknown fields, so the field a newer API might add is
    put into the reply the SDK made."""
    reply = gemini([{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"text": "Let me."},
        {"functionCall": {"name": "echo", "args": {"text": "hi"}},
         "thoughtSignature": "c2lnLWdlbWluaQ=="},
    ]}}])
    for part in reply["candidates"][0]["content"]["parts"]:
        part["futureField"] = {"x": 1}
    reply["candidates"][0]["content"]["parts"][1]["functionCall"]["futureField"] = 1
    return reply


CASES = {
    "openai-chat-refusal": ("openai-chat", "reply", lambda: chat(
        {"content": None, "refusal": REFUSAL})),
    "openai-chat-refusal-stream": ("openai-chat", "events", chat_stream_refusal),
    "openai-chat-call-stream": ("openai-chat", "events", chat_stream_call),
    "openai-chat-empty": ("openai-chat", "reply", lambda: chat({"content": ""})),
    "openai-responses-refusal": ("openai-responses", "reply", lambda: response(
        [refusal_message()])),
    "openai-responses-refusal-stream": ("openai-responses", "events", responses_stream_refusal),
    "openai-responses-call-stream": ("openai-responses", "events", responses_stream_call),
    "anthropic-refusal": ("anthropic", "reply", lambda: message(
        [{"type": "text", "text": REFUSAL}], stop="refusal")),
    "anthropic-refusal-stream": ("anthropic", "events", anthropic_stream_refusal),
    "anthropic-call-stream": ("anthropic", "events", anthropic_stream_call),
    "anthropic-empty": ("anthropic", "reply", lambda: message([])),
    "anthropic-cache-usage": ("anthropic", "reply", lambda: message(
        [{"type": "text", "text": "Cached."}],
        usage={"input_tokens": 120, "cache_read_input_tokens": 64,
               "cache_creation_input_tokens": 10, "output_tokens": 9})),
    "anthropic-unknown-field": ("anthropic", "reply", anthropic_unknown_field),
    "gemini-safety": ("gemini", "reply", gemini_safety),
    "gemini-safety-stream": ("gemini", "events", gemini_stream_safety),
    "gemini-prompt-blocked": ("gemini", "reply", gemini_blocked),
    "gemini-call-stream": ("gemini", "events", gemini_stream_call),
    "gemini-unknown-field": ("gemini", "reply", gemini_unknown_field),
}


def main():
    installed = {"openai": openai.__version__, "anthropic": anthropic.__version__,
                 "google-genai": google.genai.__version__}
    if installed != VERSIONS:
        raise SystemExit(f"these fixtures are made with {VERSIONS}; installed: {installed}")
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (api, form, make) in CASES.items():
        value = {"api": api, "made_with": VERSIONS, form: make()}
        (OUT / f"{name}.json").write_text(json.dumps(value, indent=1, sort_keys=True) + "\n")
    print(f"{len(CASES)} fixtures in {OUT}")


if __name__ == "__main__":
    main()

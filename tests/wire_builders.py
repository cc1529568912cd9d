"""Build minimal, well-formed SSE answers for each wire API (for end-to-end tests).

The per-adapter tests replay recorded-shape fixture files; end-to-end runs need answers that
name this test's own tools and arguments, so they are built here in the same shapes.
"""

from __future__ import annotations

import json
from typing import Any


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def anthropic(text: str = "", call: tuple[str, dict] | None = None, n: int = 1) -> bytes:
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "usage": {"input_tokens": 100, "output_tokens": 1},
                },
            },
        )
    ]
    index = 0
    if text:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": text}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]  # fmt: skip
        index = 1
    if call:
        name, args = call
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": {"type": "tool_use", "id": f"toolu_{n}",
                                                       "name": name, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "input_json_delta",
                                               "partial_json": json.dumps(args)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    stop = "tool_use" if call else "end_turn"
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                           "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return _sse(events)


def openai_chat(text: str = "", call: tuple[str, dict] | None = None, n: int = 1) -> bytes:
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    if text:
        events.append((None, chunk({"content": text})))
    if call:
        name, args = call
        start = {"index": 0, "id": f"call_{n}", "type": "function",
                 "function": {"name": name, "arguments": ""}}  # fmt: skip
        more = {"index": 0, "function": {"arguments": json.dumps(args)}}
        events.append((None, chunk({"tool_calls": [start]})))
        events.append((None, chunk({"tool_calls": [more]})))
    events.append((None, chunk({}, "tool_calls" if call else "stop")))
    events.append(
        (None, {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
    )  # fmt: skip
    events.append((None, "[DONE]"))
    return _sse(events)


def openai_responses(text: str = "", call: tuple[str, dict] | None = None, n: int = 1) -> bytes:
    rid = f"resp_{n}"
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created",
                              "response": {"id": rid, "status": "in_progress", "output": []}}),
    ]  # fmt: skip
    index = 0
    if text:
        item = {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": []}
        events += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": item}),
            ("response.output_text.delta", {"type": "response.output_text.delta",
                                            "item_id": f"msg_{n}", "output_index": 0,
                                            "content_index": 0, "delta": text}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": 0, "item": item}),
        ]  # fmt: skip
        index = 1
    if call:
        name, args = call
        item = {"id": f"fc_{n}", "type": "function_call", "call_id": f"call_{n}", "name": name,
                "arguments": ""}  # fmt: skip
        done = {**item, "arguments": json.dumps(args), "status": "completed"}
        events += [
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": index, "item": item}),
            ("response.function_call_arguments.delta",
             {"type": "response.function_call_arguments.delta", "item_id": f"fc_{n}",
              "output_index": index, "delta": json.dumps(args)}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": index, "item": done}),
        ]  # fmt: skip
    usage = {
        "input_tokens": 100,
        "output_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    response = {"id": rid, "status": "completed", "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return _sse(events)


def gemini(text: str = "", call: tuple[str, dict] | None = None, n: int = 1) -> bytes:
    parts: list[dict] = []
    if text:
        parts.append({"text": text})
    if call:
        parts.append({"functionCall": {"name": call[0], "args": call[1]}})
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20,
                          "totalTokenCount": 120},
        "modelVersion": "gemini-2.5-flash",
    }  # fmt: skip
    return _sse([(None, chunk)])


BUILDERS = {
    "anthropic": anthropic,
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "gemini": gemini,
}

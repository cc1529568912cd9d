"""The floor under `moot -p` on a coding task: a bare agent of httpx and nothing else.

`python benchmarks/bare_agent.py "TASK"` does what `moot -p "TASK"` does on the agent benchmark
(benchmarks/agent_speed.py), minus everything that makes moot moot: it streams Anthropic
Messages (SSE) from `$ANTHROPIC_BASE_URL`, offers the model `read` and `edit` with the same JSON
schemas moot sends, runs them in-process on the working directory, and calls the model again
until it answers without a tool, then prints the answer. No event log, no sandbox, no settings,
no permission checks, no retries: an honest minimal loop, so the ratio of moot's wall time to
this one's is what moot's guarantees cost on a short task.

Its client is httpx's default, which loads the CA bundle (~20 ms) even for an `http://` server;
`--no-tls-for-http` skips that for a plain-http base URL, as moot's providers do, for the
strictest floor.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

# httpx imports its command line (click, rich, pygments: ~100 ms) whenever they are installed,
# as they are in moot's venv; a bare agent in a venv of its own would not have them. moot keeps
# them unloaded the same way (moot/cli/lean_httpx.py), so the floor does too.
sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))

import httpx  # noqa: E402

MODEL = "claude-haiku-4-5"
SYSTEM = "You are a coding agent. Use the tools to read and edit files in the working directory."
TOOLS = [
    {
        "name": "read",
        "description": "Read a file as numbered lines.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1, "default": 1},
                "limit": {"type": "integer", "minimum": 1, "default": 2000},
            },
            "required": ["path"],
        },
    },
    {
        "name": "edit",
        "description": "Replace exact text in a file. old must be unique unless replace_all.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
                "replace_all": {"type": "boolean", "default": False},
            },
            "required": ["path", "old", "new"],
        },
    },
]


def read(path: str, offset: int = 1, limit: int = 2000) -> str:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    chosen = lines[offset - 1 : offset - 1 + limit]
    return "\n".join(f"{offset + i:6}\t{line}" for i, line in enumerate(chosen))


def edit(path: str, old: str, new: str, replace_all: bool = False) -> str:
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    count = text.count(old)
    if count == 0:
        raise ValueError("old text not found")
    if count > 1 and not replace_all:
        raise ValueError(f"old text found {count} times")
    file.write_text(text.replace(old, new), encoding="utf-8")
    return f"Edited {path}"


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """The tool's result text, and whether it failed."""
    try:
        if name == "read":
            return read(**arguments), False
        if name == "edit":
            return edit(**arguments), False
        return f"unknown tool {name}", True
    except (OSError, TypeError, ValueError) as error:
        return str(error), True


async def stream_turn(client: httpx.AsyncClient, messages: list[dict[str, Any]]) -> list[dict]:
    """One streamed model call: the assistant's content blocks, tool inputs parsed."""
    body = {
        "model": MODEL,
        "max_tokens": 8192,
        "system": SYSTEM,
        "tools": TOOLS,
        "messages": messages,
        "stream": True,
    }
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    async with client.stream("POST", "/v1/messages", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            kind, at = event["type"], event.get("index", -1)
            if kind == "content_block_start":
                blocks[at] = dict(event["content_block"])
            elif kind == "content_block_delta":
                delta = event["delta"]
                if delta["type"] == "text_delta":
                    blocks[at]["text"] += delta["text"]
                    sys.stdout.write(delta["text"])
                elif delta["type"] == "input_json_delta":
                    partial[at] = partial.get(at, "") + delta["partial_json"]
            elif kind == "content_block_stop" and at in partial:
                blocks[at]["input"] = json.loads(partial.pop(at) or "{}")
    return [blocks[i] for i in sorted(blocks)]


async def main(task: str, *, tls_for_http: bool = True) -> int:
    headers = {
        "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
        "anthropic-version": "2023-06-01",
    }
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    verify = tls_for_http or base.startswith("https:")
    client = httpx.AsyncClient(base_url=base, headers=headers, timeout=600, verify=verify)
    async with client:
        while True:
            content = await stream_turn(client, messages)
            messages.append({"role": "assistant", "content": content})
            calls = [block for block in content if block["type"] == "tool_use"]
            if not calls:
                sys.stdout.write("\n")
                return 0
            results = []
            for call in calls:
                text, failed = run_tool(call["name"], call["input"])
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": text,
                        "is_error": failed,
                    }
                )
            messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    words = sys.argv[1:]
    lean = words[:1] == ["--no-tls-for-http"]
    sys.exit(asyncio.run(main(" ".join(words[lean:]), tls_for_http=not lean)))

"""Under `--input-format stream-json`, what the Agent SDK's `initialize` request chooses about
the session, read before the session opens: the TypeScript SDK sends its system prompt and its
in-process MCP servers' tool lists there rather than on the command line.

The request is the first line on stdin (both SDKs send it first). It is read a byte at a time
from the descriptor, so nothing after it is taken from the stream the session reads later.
"""

from __future__ import annotations

import json
import os
from argparse import Namespace
from typing import Any

from moot.cli.claude_stream.control import Line

FIRST_LINE_LIMIT = 1 << 24

HONOURED = frozenset(
    {
        "subtype",
        "hooks",
        "systemPrompt",
        "appendSystemPrompt",
        "jsonSchema",
        "sdkMcpServers",
        "sdkMcpServerManifests",
        "sdkMcpServerConfigs",
        "excludeDynamicSections",
        "systemPromptSnapshot",
    }
)
"""`initialize` fields moot reads (the last two only shape Claude Code's own preset prompt,
which moot does not have: they change nothing here)."""


def first_line(fd: int = 0) -> Line | None:
    """The first JSON line on `fd`, or None at the end of input or for a line that is not
    JSON (the session then reads on as usual)."""
    read = bytearray()
    while len(read) < FIRST_LINE_LIMIT:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            break
        read += byte
    try:
        line = json.loads(read)
    except ValueError:
        return None
    return line if isinstance(line, dict) else None


def unhonoured(request: dict[str, Any]) -> list[str]:
    """The fields of an `initialize` request moot cannot honour, with a value given."""
    return sorted(
        k for k, v in request.items() if k not in HONOURED and v not in (None, False, [], {})
    )


def take_initialize(options: Namespace, line: Line | None) -> None:
    """Apply what an `initialize` request `line` chooses to `options`; keep `line` for the
    session to answer (`options.first_line`)."""
    options.first_line = line
    request = (line or {}).get("request") or {}
    if (line or {}).get("type") != "control_request" or request.get("subtype") != "initialize":
        return
    prompt = request.get("systemPrompt")
    if prompt is not None:
        options.system_prompt = "\n\n".join(prompt) if isinstance(prompt, list) else str(prompt)
    if request.get("appendSystemPrompt"):
        options.append_system_prompt = str(request["appendSystemPrompt"])
    if request.get("jsonSchema") is not None and options.json_schema is None:
        options.json_schema = json.dumps(request["jsonSchema"])
    options.sdk_manifests = request.get("sdkMcpServerManifests") or {}
    options.sdk_servers = list(request.get("sdkMcpServers") or ())

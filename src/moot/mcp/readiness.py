"""What a session says of MCP servers it waited for that did not come up in time.

A headless run and an editor's session wait for their servers before the first model request
(`McpManager.until_ready`, through `moot.client`'s `ServersReady`), so a short run sees the
tools and prompts of a server it never ran before. The wait is bounded; a server still
starting then, or one that failed, is named with why, or the last lines it wrote to stderr
(a server that hangs at start often says why there: a missing token, a port in use).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from moot.protocol.mcp import McpServerConfig

DEFAULT_WAIT_S = 30.0
"""How long a session waits for its servers before its first model request, by default."""

TAIL_LINES = 3
"""The last lines of a server's stderr shown when it is late."""

TAIL_BYTES = 2000


def wait_seconds(setting: float | None, environ: Mapping[str, str]) -> float:
    """How long to wait: the settings' `mcpStartupWait` (seconds), else `MCP_TIMEOUT`
    (milliseconds, as Claude Code reads it), else `DEFAULT_WAIT_S`."""
    if setting is not None:
        return max(0.0, float(setting))
    raw = environ.get("MCP_TIMEOUT", "").strip()
    try:
        return max(0.0, float(raw) / 1000) if raw else DEFAULT_WAIT_S
    except ValueError:
        return DEFAULT_WAIT_S


def log_size(path: Path) -> int:
    """Where a server's stderr log ends now (0 when there is none yet)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stderr_tail(path: Path, start: int) -> str:
    """The last `TAIL_LINES` lines written to a server's stderr log since `start`, joined."""
    try:
        with path.open("rb") as file:
            file.seek(max(start, log_size(path) - TAIL_BYTES))
            text = file.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-TAIL_LINES:])


def late(config: McpServerConfig, state: str, error: str, waited: float, tail: str) -> str:
    """One server that is not ready after the wait, for the person."""
    name = config.name
    if state == "auth_required":
        return f"MCP server {name} needs you to sign in (`/mcp` shows how); its tools wait"
    if state == "failed":
        why = error or "it stopped"
        shown = f" (stderr: {tail})" if tail and "stderr:" not in why else ""
        return f"MCP server {name} failed to start: {why}{shown}"
    said = f"; its stderr ends: {tail}" if tail else "; it wrote nothing to stderr"
    return (
        f"MCP server {name} (`{config.shown()}`) is not ready after {waited:g} s, so this "
        f"request goes without its tools{said}. Raise the wait with MCP_TIMEOUT "
        "(milliseconds) or the mcpStartupWait setting (seconds)"
    )

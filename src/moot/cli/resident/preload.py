"""What the resident process loads before it listens, what those imports read of the
environment, and how it tells that what it loaded changed on disk since."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from typing import ClassVar

PRELOAD = (
    # What the front ends import before their session line (each pulls in the rest).
    "moot.cli",
    "moot.cli.args",
    "moot.cli.headless",
    "moot.cli.lean_httpx",
    "moot.cli.sessions",
    "moot.repl.repl",
    "moot.repl.line_output",
    "moot.repl.markdown",
    "moot.tui.app",
    "moot.tui.hangup",
    "moot.tui.inert_text",
    "moot.tui.warm",
    # What a session opens with: its store, skills, memory, MCP servers and sandbox.
    "moot.client.briefing",
    "moot.client.commands",
    "moot.client.late_facts",
    "moot.client.prompt",
    "moot.client.setup_detect",
    "moot.client.trust",
    "moot.client.upkeep",
    "moot.mcp.session",
    "moot.sandbox.bwrap_argv",
    "moot.sandbox.bwrap_probe",
    "moot.sandbox.net_relay",
    "moot.skills.discovery",
    "moot.skills.tool",
    "moot.store.sqlite",
    "moot.store.attachment_blobs",
    "moot.store.invariants",
    "moot.commands.mcp",
    # What the first answer draws, and the first request sends with.
    "moot.providers.anthropic",
    "moot.providers.openai_chat",
    "moot.providers.openai_responses",
    "moot.providers.gemini",
    "moot.providers.scripted",
    "rich.markdown",
    "rich.syntax",
    "pygments.lexers.python",
    "textual.drivers.linux_driver",
    "textual.widgets._markdown",
    "textual.layouts.factory",
    "textual.layouts.horizontal",
    "textual.layouts.stream",
    "textual.scrollbar",
    "textual.pilot",
    "rich._emoji_codes",
    "ctypes",
    "prompt_toolkit.input.vt100",
    "prompt_toolkit.patch_stdout",
    "prompt_toolkit.key_binding.bindings.search",
)
"""Imported once by the resident process: what the app, the REPL and `moot -p` import before
their session line and first answer (each of these pulls in the rest). A module missing here is
only imported by the child, as it would have been without a resident process."""


class _RecordingEnviron(os._Environ[str]):
    """`os.environ` while the modules load: notes each variable read (`"*"` for a look at
    all of them)."""

    read: ClassVar[set[str]] = set()

    def __getitem__(self, key: str) -> str:
        _RecordingEnviron.read.add(key)
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        _RecordingEnviron.read.add("*")
        return super().__iter__()


def preload() -> dict[str, str | None]:
    """Import `PRELOAD`; the environment variables the imports read, with their values."""
    environ_class = type(os.environ)
    os.environ.__class__ = _RecordingEnviron
    try:
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except ImportError as exc:  # an optional part not installed: the child does without
                print(f"moot resident: {name} not loaded: {exc}", file=sys.stderr)
    finally:
        os.environ.__class__ = environ_class
    return {name: os.environ.get(name) for name in sorted(_RecordingEnviron.read)}


def fingerprint() -> dict[str, tuple[int, int]]:
    """Each loaded module's file with its modification time and size."""
    files: dict[str, tuple[int, int]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path not in files:
            with contextlib.suppress(OSError):
                info = os.stat(path)
                files[path] = (info.st_mtime_ns, info.st_size)
    return files


def changed(files: dict[str, tuple[int, int]]) -> str | None:
    """The first of `files` that changed since, or None."""
    for path, (mtime, size) in files.items():
        try:
            info = os.stat(path)
        except OSError:
            return path
        if (info.st_mtime_ns, info.st_size) != (mtime, size):
            return path
    return None

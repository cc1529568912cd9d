"""What a server's diagnostics say, and which errors an edit brought.

An error is "new" when the file had no error like it before the edit: the same message on a
line of the same text (stripped), counted as a multiset. Line numbers alone would not do: an
edit above an old error moves it, and it is not the edit's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

ERROR = 1
WARNING = 2
MAX_SHOWN = 10
"""New errors written into an edit's result at most; the `diagnostics` tool lists them all."""
MAX_MESSAGE = 300
"""Characters of one diagnostic's message shown at most."""
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


class Diagnostic(msgspec.Struct, frozen=True):
    """One diagnostic of a file, as the server published it."""

    line: int
    """0-based, as LSP counts."""
    column: int
    severity: int
    message: str
    code: str = ""
    line_text: str = ""
    """The text of its line (stripped), for telling old errors from new ones."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.message, self.line_text)

    def render(self, rel: str) -> str:
        code = f" [{self.code}]" if self.code else ""
        kind = _SEVERITY.get(self.severity, "error")
        message = " ".join(self.message.split())
        if len(message) > MAX_MESSAGE:  # pyright's import cycles name every file in them
            message = message[: MAX_MESSAGE - 1] + "…"
        return f"{rel}:{self.line + 1}:{self.column + 1}: {kind}: {message}{code}"


def parse(items: Iterable[Any], text: str) -> tuple[Diagnostic, ...]:
    """A `publishDiagnostics` list read against the document's `text` (what was sent)."""
    lines = text.split("\n")
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        start = (item.get("range") or {}).get("start") or {}
        line, column = int(start.get("line", 0)), int(start.get("character", 0))
        code = item.get("code")
        source = item.get("source")
        found.append(
            Diagnostic(
                line=line,
                column=column,
                severity=int(item.get("severity") or ERROR),
                message=str(item.get("message", "")),
                code=str(code) if code is not None else (str(source) if source else ""),
                line_text=lines[line].strip() if 0 <= line < len(lines) else "",
            )
        )
    found.sort(key=lambda d: (d.line, d.column))
    return tuple(found)


_TS_SEVERITY = {"error": ERROR, "warning": WARNING, "suggestion": 4, "message": 3}


def parse_tsserver(items: Iterable[Any], text: str) -> tuple[Diagnostic, ...]:
    """tsserver's own diagnostics (`semanticDiagnosticsSync`: 1-based lines and offsets, a
    `category`) read as `parse` reads LSP's."""
    lines = text.split("\n")
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        start = item.get("start") or {}
        line, column = int(start.get("line", 1)) - 1, int(start.get("offset", 1)) - 1
        code = item.get("code")
        found.append(
            Diagnostic(
                line=line,
                column=column,
                severity=_TS_SEVERITY.get(str(item.get("category")), ERROR),
                message=str(item.get("text", "")),
                code=str(code) if code is not None else "",
                line_text=lines[line].strip() if 0 <= line < len(lines) else "",
            )
        )
    found.sort(key=lambda d: (d.line, d.column))
    return tuple(found)


def new_errors(before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The errors of `after` that `before` had no match for (see the module docstring)."""
    old = Counter(d.key for d in before if d.severity == ERROR)
    new = []
    for diagnostic in after:
        if diagnostic.severity != ERROR:
            continue
        if old[diagnostic.key] > 0:
            old[diagnostic.key] -= 1
        else:
            new.append(diagnostic)
    return new


def render_new(rel: str, server: str, errors: Sequence[Diagnostic]) -> str:
    """The note an edit's result ends with: its new errors, capped at `MAX_SHOWN`."""
    if not errors:
        return f"[{server}: no new errors in {rel}]"
    many = "s" if len(errors) > 1 else ""
    lines = [f"[{server}: {len(errors)} new error{many} in {rel} after this change]"]
    lines += [d.render(rel) for d in errors[:MAX_SHOWN]]
    if len(errors) > MAX_SHOWN:
        lines.append(f"... and {len(errors) - MAX_SHOWN} more (the diagnostics tool lists all)")
    return "\n".join(lines)

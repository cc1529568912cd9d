"""The status line: model, permission mode, context used, tokens, cost, sandbox, branch,
session. It re-renders only when one of them changes."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from rich.text import Text
from textual.widgets import Static

from moot.protocol import events as ev
from moot.protocol.client import SessionStatus

_MODE_STYLE = {
    "default": "bold",
    "acceptEdits": "bold green",
    "plan": "bold cyan",
    "dontAsk": "bold yellow",
    "bypassPermissions": "bold red",
}


class StatusFacts(msgspec.Struct):
    model: str = ""
    mode: str | None = None
    context_window: int | None = None
    context_tokens: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    sandbox: str = ""
    branch: str = ""
    session_id: str = ""
    running: bool = False
    working: str = ""
    """What the running turn does now (`WorkingLine`'s words)."""


class StatusLine(Static):
    """One line at the bottom of the app."""

    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self.facts = StatusFacts()

    def from_status(self, status: SessionStatus, *, branch: str = "") -> None:
        facts = self.facts
        facts.model, facts.mode, facts.session_id = status.model, status.mode, status.session_id
        facts.sandbox, facts.branch = status.sandbox.backend, branch
        facts.context_window = status.context_window
        self._render_facts()

    def opening(self, model: str | None, *, waiting: int = 0) -> None:
        """While the session opens: the model asked for (if one was) and what waits for it."""
        line = Text()
        if model:
            line.append(shown_model(model), style="bold")
            line.append("  ")
        line.append("opening the session…", style="italic")
        if waiting:
            line.append(f"  {waiting} waiting to be sent", style="bold")
        self.update(line)

    def working(self, words: str) -> None:
        """What the running turn does now; empty once it ended."""
        if words != self.facts.working:
            self.facts.working = words
            self._render_facts()

    def take(self, event: ev.Event) -> None:
        before = msgspec.structs.astuple(self.facts)
        self._apply(event)
        if msgspec.structs.astuple(self.facts) != before:
            self._render_facts()

    def take_spent(self, tokens: int, cost_usd: float, latest: Iterable[ev.Event]) -> None:
        """What a resumed session spent before (its summary's totals), and how full the
        context is from the latest `usage` events; drawn once."""
        facts = self.facts
        facts.tokens, facts.cost_usd = tokens, cost_usd
        for event in latest:
            if isinstance(event, ev.UsageRecorded) and not event.parent_call_id:
                usage = event.usage
                facts.context_tokens = (
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
                )
        self._render_facts()

    def _apply(self, event: ev.Event) -> None:
        facts = self.facts
        match event:
            case ev.ModeChanged():
                facts.mode = event.mode
            case ev.UsageRecorded() if not event.parent_call_id:
                # The person's agent's last request: how full its context is now.
                usage = event.usage
                facts.context_tokens = (
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
                )
                facts.tokens += usage.input_tokens + usage.output_tokens
                facts.cost_usd += event.cost_usd
            case ev.UsageRecorded():
                facts.tokens += event.usage.input_tokens + event.usage.output_tokens
                facts.cost_usd += event.cost_usd
            case ev.TurnStarted():
                facts.running = True
            case ev.TurnFinished():
                facts.running = False

    def _render_facts(self) -> None:
        f = self.facts
        line = Text()
        line.append(shown_model(f.model) or "no model", style="bold")
        if f.mode:
            line.append("  ")
            line.append(f.mode, style=_MODE_STYLE.get(f.mode, "bold"))
        if f.working:
            line.append(f"  {f.working}", style="bold")
        if f.context_window:
            percent = 100 * f.context_tokens / f.context_window
            line.append(f"  ctx {percent:.0f}%")
        line.append(f"  {f.tokens:,} tok  ${f.cost_usd:.4f}")
        if f.sandbox:
            style = "bold red" if f.sandbox in ("host", "none") else ""
            line.append(f"  {f.sandbox}", style=style)
        if f.branch:
            line.append(f"  ⎇ {f.branch}")
        if f.session_id:
            # Cut, the line would lose the id's end, its random part; shortened to that part,
            # the id still finds the session (`/resume` searches ids).
            room = self.content_size.width - line.cell_len - 2
            shown = f.session_id if room >= len(f.session_id) else "…" + f.session_id[-8:]
            line.append(f"  {shown}", style="dim")
        self.update(line)

    def on_resize(self) -> None:
        if self.facts.model:
            self._render_facts()


def shown_model(model: str) -> str:
    """The model as the status line shows it: a script by its file's name (a script is named
    by its whole path, so that a resumed session finds it again)."""
    if model.startswith("scripted:") and "/" in model:
        return "scripted:" + model.rsplit("/", 1)[1]
    return model

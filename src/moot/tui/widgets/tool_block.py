"""A tool call in the transcript: one compact line that expands.

The line shows the tool, its key argument, a spinner while it runs, then its duration and a
summary of the result. Enter or a click expands it: long output goes into a `Log` with
`max_lines` (line-virtualized: only the visible lines render), a diff into a `DiffView` capped
until "show all" (`f`, or a click on its note). The keys are the key table's `tool` rows.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Log, Static

from moot.frontend.display import key_argument, one_line, result_summary
from moot.tui.keys import bindings_for
from moot.tui.widgets.blocks import depth_class
from moot.tui.widgets.diff_view import DiffView

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MAX_LOG_LINES = 2000


class ToolBlock(Vertical):
    """One tool call: started, running, finished."""

    DEFAULT_CSS = """
    ToolBlock { height: auto; padding: 0 1; }
    ToolBlock.depth-1 { margin-left: 2; }
    ToolBlock.depth-2 { margin-left: 4; }
    ToolBlock.depth-3 { margin-left: 6; }
    ToolBlock.depth-4 { margin-left: 8; }
    ToolBlock > .line { height: 1; color: $text-muted; }
    ToolBlock.-error > .line { color: $error; }
    ToolBlock:focus > .line { background: $boost; }
    ToolBlock > Log { height: auto; max-height: 20; border-left: tall $panel; }
    ToolBlock > .diagnostics { height: auto; color: $warning; border-left: tall $panel; }
    """
    can_focus = True
    BINDINGS = bindings_for("tool")  # type: ignore[assignment]

    def __init__(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        seq: int = 0,
        depth: int = 0,
        spin: bool = True,
        workspace: str = "",
    ) -> None:
        super().__init__()
        self.spin = spin
        """Animate while running (a live call; not one shown from the store)."""
        self.seq = seq
        self.tool = tool
        self.arguments = arguments
        self.workspace = workspace
        """Paths inside it are shown relative to it."""
        self.output: list[str] = []
        self.content = ""
        self.display_data: dict[str, Any] = {}
        self.is_error = False
        self.running = True
        self.duration_ms = 0.0
        self.expanded = False
        self._started = time.monotonic()
        self._frame = 0
        self._line = Static("", classes="line")
        self._timer: Timer | None = None
        self.add_class(depth_class(depth), update=False)  # styled once, when it mounts

    def compose(self):
        yield self._line

    def on_mount(self) -> None:
        self._render_line()
        if self.running and self.spin:
            self._timer = self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        self._frame += 1
        self._render_line()

    def _render_line(self) -> None:
        line = Text()
        if self.running:
            line.append(SPINNER[self._frame % len(SPINNER)] + " ", style="bold")
        else:
            line.append("✗ " if self.is_error else "✓ ", style="red" if self.is_error else "green")
        line.append(self.tool, style="bold")
        key = key_argument(self.arguments, self.workspace)
        if key:
            line.append(f" {one_line(key, 60)}")
        if self.running:
            line.append(f"  {time.monotonic() - self._started:.0f}s", style="dim")
        else:
            line.append(f"  {self.duration_ms / 1000:.1f}s", style="dim")
            summary = self.summary()
            if summary:
                line.append(f"  {summary}", style="dim")
        if self.has_body() and not self.expanded:
            line.append("  ▸", style="dim")
        self._line.update(line)

    def summary(self) -> str:
        """A few words on the result."""
        return result_summary(self.content, 50)

    def has_body(self) -> bool:
        return bool(self.output or self.content.count("\n") or self.diff())

    def diagnostics(self) -> str:
        """What a language server found after an edit (`moot.tools.diagnosed`)."""
        value = self.display_data.get("diagnostics")
        return value if isinstance(value, str) else ""

    def diff(self) -> str:
        value = self.display_data.get("diff")
        return value if isinstance(value, str) else ""

    def add_output(self, text: str) -> None:
        self.output.append(text)
        log = self._log()
        if log is not None:
            log.write(text)

    def finish(self, content: str, *, is_error: bool, duration_ms: float, display: dict) -> None:
        self.running = False
        self.content, self.is_error, self.duration_ms = content, is_error, duration_ms
        self.display_data = display
        self.set_class(is_error, "-error")
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.is_mounted:
            self._render_line()
            if self.diff() and not self.expanded:
                self.toggle()  # an edit shows its diff at once

    def _log(self) -> Log | None:
        found = self.query(Log)
        return found.first() if found else None

    def toggle(self) -> None:
        self.expanded = not self.expanded
        if self.expanded:
            if self.diff():
                self.mount(DiffView(self.diff()))
                if self.diagnostics():  # under the diff it is about
                    self.mount(Static(Text(self.diagnostics()), classes="diagnostics"))
            else:
                log = Log(max_lines=MAX_LOG_LINES, auto_scroll=False)
                self.mount(log)
                log.write("".join(self.output) if self.output else self.content)
        else:
            for child in list(self.children)[1:]:
                child.remove()
        self._render_line()

    def on_click(self) -> None:
        self.action_fold()

    def action_fold(self) -> None:
        if self.has_body():
            self.toggle()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `f` shows all of a diff; a block without one leaves the key to be typed (the app
        # sends it on to the prompt).
        return bool(self.diff()) if action == "show_all" else True

    def action_show_all(self) -> None:
        """The whole of a long diff, from the keyboard (its note takes a click)."""
        if not self.diff():
            return
        if not self.expanded:
            self.toggle()
        for view in self.query(DiffView):
            view.show_all()

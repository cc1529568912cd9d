"""The transcript: a session's events as lines in the terminal's own scrollback.

Everything printed is final (scrollback is never redrawn): an answer's lines as they complete
(code fences and tables once closed, as one block), each tool call as one line with a summary
of its result once it finished, diffs coloured, errors where they happened. A peer's work is
indented under the call that made it, and a line naming the speaker comes first whenever
another agent's answer takes over. What is unfinished (the line being written, a running tool)
is in `live()`, which the REPL shows in its live area and never prints.

Text from the model and from tools goes through `strip_escapes` first: a tool's output must not
move the cursor, clear the screen or retitle the terminal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from moot.frontend.attach import placeholders
from moot.frontend.display import key_argument, one_line, result_summary
from moot.frontend.network import NETWORK
from moot.frontend.notices import notice, refused_by, turn_spent, turn_stopped
from moot.frontend.thumbnails import thumbnail
from moot.protocol import events as ev
from moot.protocol.states import RunState
from moot.repl.paint import Paint, strip_escapes
from moot.repl.stream import AnswerStream, Piece

Write = Callable[[str], None]
"""Takes finished lines (each ending in a newline)."""

INDENT = "  "
DIFF_LINES = 60
"""Lines of a diff printed before the rest is only counted."""
LIVE_LINES = 4
"""Rows of the live area at most."""
EXIT_PLAN_MODE = "exit_plan_mode"


class _Call(msgspec.Struct):
    """What the transcript knows of one agent call."""

    agent: str
    depth: int
    answer: AnswerStream = msgspec.field(default_factory=AnswerStream)
    thinking: int = 0
    """Characters of reasoning streamed in this model turn."""


class _Running(msgspec.Struct):
    tool: str
    key: str
    depth: int
    started: float
    last_output: str = ""


class Transcript:
    """Turns events into printed lines (through `write`) and a live part (`live()`).

    Args:
        write: Where finished lines go.
        plain: The plain look: no colour, no markdown styling, ASCII marks.
        width: The terminal's width now (markdown is laid out to it).
        clock: For how long running tools have run.
    """

    def __init__(
        self,
        write: Write,
        *,
        plain: bool,
        width: Callable[[], int] = lambda: 80,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write = write
        self.workspace = ""
        """The session's workspace: tool calls show paths inside it relative to it."""
        self.paint = Paint(plain=plain)
        self.plain = plain
        self._width = width
        self._clock = clock
        self.thumbnails: str | None = None
        """The graphics protocol a message's images are drawn with (`ui.imageThumbnails`);
        None: a line each, no picture."""
        self.own_submissions: set[str] = set()
        """Submissions of turns typed at this prompt, in this session: their text is on screen
        already."""
        self._calls: dict[str, _Call] = {}
        self._running: dict[tuple[str, str], _Running] = {}
        self._previewed: set[tuple[str, str]] = set()
        self._called: dict[tuple[str, str], tuple[str, str]] = {}
        """Each tool call the model asked for (its tool and key argument), for the line of a
        call refused before it ran."""
        self._speaker = ""
        self._speaker_depth = 0

    def new_session(self) -> None:
        """Forget what the session left (the REPL goes on with another one).

        The submissions typed here go too: a fork copies its events' submission ids, so a
        turn typed here before `/fork` or `/rewind` would print without its prompt.
        """
        self.own_submissions.clear()
        self._calls.clear()
        self._running.clear()
        self._previewed.clear()
        self._called.clear()
        self._speaker, self._speaker_depth = "", 0

    # ---- printing ---------------------------------------------------------------------------

    def emit(self, text: str, depth: int = 0) -> None:
        """Print `text` (one or more lines) indented `depth` levels."""
        pad = INDENT * depth
        lines = text.split("\n")
        self._write("".join(f"{pad}{line}\n" if line else "\n" for line in lines))

    def say(self, text: str, *, warning: bool = False, markdown: bool = False) -> None:
        """A line (or a markdown block) from the REPL itself, such as a command's answer (which
        may quote the session: a title, a path)."""
        text = strip_escapes(text)
        if markdown and not self.plain:
            from moot.repl.markdown import render_markdown  # rich loads at first use

            self.emit(render_markdown(text, self._width()))
        else:
            self.emit(self.paint(text, "yellow") if warning else text)

    def _notice(self, text: str, depth: int = 0, *, warning: bool = False) -> None:
        """A line about what happened; it may quote an event's fields, so it is stripped."""
        self.emit(self.paint(strip_escapes(text), "yellow" if warning else "dim"), depth)

    def _call(self, event: ev.Event) -> _Call:
        call = self._calls.get(event.call_id)
        if call is None:
            depth = 1 if event.parent_call_id else 0
            call = self._calls[event.call_id] = _Call(event.agent, depth)
        return call

    def _spoken(self, call_id: str, call: _Call, *, header: bool) -> None:
        """Name the speaker when another agent's answer takes over."""
        if call_id != self._speaker and header and (call.depth or self._speaker_depth):
            self.emit(self.paint(f"{call.agent}:", "bold"), call.depth)
        self._speaker, self._speaker_depth = call_id, call.depth

    def _pieces(self, call_id: str, call: _Call, pieces: Iterable[Piece]) -> None:
        for piece in pieces:
            self._spoken(call_id, call, header=True)
            if self.plain or not piece.text.strip():
                self.emit(piece.text, call.depth)
                continue
            from moot.repl.markdown import render_markdown  # rich loads at the first answer

            width = self._width() - len(INDENT) * call.depth
            self.emit(render_markdown(piece.text, width), call.depth)

    # ---- events -----------------------------------------------------------------------------

    def take(self, event: ev.Event) -> None:
        """Print what `event` finished; remember what it started."""
        match event:
            case ev.TextDelta():
                call = self._call(event)
                self._pieces(event.call_id, call, call.answer.feed(strip_escapes(event.text)))
            case ev.ThinkingDelta():
                self._call(event).thinking += len(event.text)
            case ev.TurnStarted():
                self._calls[event.call_id] = _Call(event.agent, 0)
                self._speaker, self._speaker_depth = event.call_id, 0
                if event.submission_id not in self.own_submissions:
                    self.emit(self.paint(f"> {strip_escapes(event.prompt)}", "bold"))
                for line, attachment in zip(
                    placeholders(event.attachments), event.attachments, strict=True
                ):
                    self.emit(self.paint(f"  {strip_escapes(line)}", "dim"))
                    if self.thumbnails and (drawn := thumbnail(attachment, self.thumbnails)):
                        self._write(drawn)
            case ev.AgentCalled():
                self._calls[event.call_id] = _Call(event.agent, event.depth)
                message = one_line(strip_escapes(event.message), 100)
                how = " (background)" if event.background else ""
                line = strip_escapes(f"{event.caller} {self.paint.arrow} {event.agent}{how}: ")
                self.emit(self.paint(line, "bold") + message, event.depth)
                self._speaker, self._speaker_depth = event.call_id, event.depth
            case ev.AgentReturned():
                call = self._call(event)
                self._finish_answer(event.call_id, call)
                state = "" if event.state is RunState.COMPLETED else f" ({event.state})"
                self._notice(f"{self.paint.back} {event.agent} returned{state}", call.depth)
            case ev.ModelResponded():
                self._responded(event)
            case ev.ToolStarted():
                depth = self._call(event).depth
                key = one_line(strip_escapes(key_argument(event.arguments, self.workspace)), 60)
                self._running[(event.call_id, event.tool_call_id)] = _Running(
                    event.tool, key, depth, self._clock()
                )
            case ev.ToolOutput():
                running = self._running.get((event.call_id, event.tool_call_id))
                if running is not None:
                    tail = strip_escapes(event.text).rstrip("\n").rsplit("\n", 1)[-1]
                    running.last_output = tail or running.last_output
            case ev.ToolFinished():
                self._tool_finished(event)
            case _:
                self._other(event)

    def _other(self, event: ev.Event) -> None:
        depth = self._calls[event.call_id].depth if event.call_id in self._calls else 0
        match event:
            case ev.ApprovalDecided(approved=False):
                # The call's own line, as for one that ran: it never will.
                tool, key = self._called.pop((event.call_id, event.tool_call_id), ("", ""))
                what = f"{tool} {key}".strip()
                refused = refused_by(event, strip_escapes)
                if self.plain:
                    line = f"tool {what}: {refused}" if what else refused
                else:
                    head = f"{self.paint(self.paint.failed, 'red')} {self.paint(tool, 'bold')}"
                    line = f"{head} {key}  {self.paint(refused, 'yellow')}" if what else refused
                self.emit(line, depth)
            case ev.Error():
                line = f"{event.source} error: {strip_escapes(event.message)}"
                self.emit(self.paint(line, "red", "bold") if not self.plain else line, depth)
            case ev.TurnFinished():
                self._turn_finished(event)
            case ev.WaitingForMessage():
                bound = f", up to {event.timeout_s:g} s" if event.timeout_s is not None else ""
                who = strip_escapes(event.agent)
                self._notice(f"{who} is waiting for a message{bound} (/msg AGENT TEXT)", depth)
            case ev.ContextCompacted():
                how = "summarised" if event.method == "model" else "shortened (no summary)"
                self._notice(
                    f"context compacted ({event.trigger}): {event.replaced} older messages "
                    f"{how}; ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens",
                    depth,
                )
            case _:
                shown = notice(
                    event, arrow=self.paint.arrow, message_width=100, clean=strip_escapes
                )
                if shown is not None:
                    at = depth if shown.in_call else 0
                    self._notice(shown.text, at, warning=shown.warning)

    def _responded(self, event: ev.ModelResponded) -> None:
        call = self._call(event)
        if call.thinking or (event.thinking and not call.answer.fed):
            words = call.thinking // 6 or sum(len(t.text.split()) for t in event.thinking)
            self._notice(f"(thought for ~{words} words)", call.depth)
            call.thinking = 0
        for asked in event.tool_calls:
            key = one_line(strip_escapes(key_argument(asked.arguments, self.workspace)), 60)
            self._called[(event.call_id, asked.id)] = (strip_escapes(asked.name), key)
        if call.answer.fed:
            self._finish_answer(event.call_id, call)
        elif event.text:  # from the store (history has no deltas), or a merged stream
            self._pieces(event.call_id, call, _whole(strip_escapes(event.text)))
        call.answer = AnswerStream()

    def _finish_answer(self, call_id: str, call: _Call) -> None:
        self._pieces(call_id, call, call.answer.finish())

    def _tool_finished(self, event: ev.ToolFinished) -> None:
        key = (event.call_id, event.tool_call_id)
        running = self._running.pop(key, None)
        call = self._call(event)
        self._finish_answer(event.call_id, call)  # text before a tool call ends with it
        self._spoken(event.call_id, call, header=False)
        paint = self.paint
        what = running.key if running else ""
        if event.interrupted:
            mark, style, result = paint.failed, "yellow", "interrupted"
        elif event.is_error:
            mark, style, result = paint.failed, "red", result_summary(strip_escapes(event.content))
        else:
            mark, style, result = paint.ok, "green", result_summary(strip_escapes(event.content))
        took = f"{event.duration_ms / 1000:.1f}s"
        tool = strip_escapes(event.tool)  # the name the model called, known or not
        if self.plain:
            state = "interrupted" if event.interrupted else "failed" if event.is_error else "ok"
            line = f"tool {tool} {what}".rstrip() + f": {state} ({took})"
            line += f" {result}" if result and not event.interrupted else ""
        else:
            line = f"{paint(mark, style)} {paint(tool, 'bold')}"
            line += f" {what}" if what else ""
            line += f"  {paint(took, 'dim')}"
            line += f"  {paint(result, 'red' if event.is_error else 'dim')}" if result else ""
        self.emit(line, call.depth)
        self._tool_body(event, call.depth, previewed=key in self._previewed)
        self._previewed.discard(key)

    def _tool_body(self, event: ev.ToolFinished, depth: int, *, previewed: bool) -> None:
        """What a finished tool shows under its line: a diff (unless its approval showed it),
        the task list, the new errors a language server found after an edit."""
        diff = event.display.get("diff")
        if isinstance(diff, str) and diff.strip() and not previewed:
            self.emit(self.diff(strip_escapes(diff)), depth + 1)
        if event.tool == "todo" and not event.is_error:
            self.emit(strip_escapes(event.content.strip("\n")), depth + 1)
        found = event.display.get("diagnostics")
        if isinstance(found, str) and found.strip():  # what a language server said of an edit
            lines = strip_escapes(found.strip("\n"))
            self.emit(lines if self.plain else self.paint(lines, "yellow"), depth + 1)

    def diff(self, diff: str) -> str:
        """A diff coloured, its first `DIFF_LINES` lines and a count of the rest."""
        lines = diff.rstrip("\n").split("\n")
        shown = self.paint.diff("\n".join(lines[:DIFF_LINES]))
        more = len(lines) - DIFF_LINES
        return shown + (f"\n{self.paint(f'… {more} more lines', 'dim')}" if more > 0 else "")

    def _turn_finished(self, event: ev.TurnFinished) -> None:
        for call_id, call in list(self._calls.items()):
            self._finish_answer(call_id, call)
        self._calls.clear()
        self._running.clear()
        self._previewed.clear()
        self._speaker, self._speaker_depth = "", 0
        stopped = turn_stopped(event)
        if stopped is not None:
            self._notice(stopped.text, warning=True)
        self._notice(turn_spent(event))

    # ---- approvals --------------------------------------------------------------------------

    def approval(self, request: ev.ApprovalRequested, *, waiting: int = 1) -> None:
        """Print what the person looks at before answering: who asks for what, and why, then
        the diff, the command or the plan."""
        depth = self._calls[request.call_id].depth if request.call_id in self._calls else 0
        self._speaker = ""
        plan = request.tool == EXIT_PLAN_MODE
        what = "approval of a plan" if plan else f"to run {request.tool}"
        if request.tool == NETWORK:
            what = f"to reach {request.preview}"
        more = f" (1 of {waiting} waiting)" if waiting > 1 else ""
        asks = strip_escapes(f"{request.agent} asks {what}{more}")
        self.emit(self.paint(asks, "bold", "yellow"), depth)
        if request.reason:
            self._notice(strip_escapes(request.reason), depth)
        preview = strip_escapes(request.preview or _arguments(request.arguments))
        if plan and not self.plain:
            from moot.repl.markdown import render_markdown

            self.emit(render_markdown(preview, self._width() - 2), depth + 1)
        elif preview.startswith("--- ") or "\n@@ " in preview:
            self.emit(self.diff(preview), depth + 1)
            self._previewed.add((request.call_id, request.tool_call_id))
        else:
            self.emit(preview.rstrip("\n"), depth + 1)

    # ---- the live part ----------------------------------------------------------------------

    def live(self) -> list[str]:
        """What is unfinished: answers being written and tools running, at most `LIVE_LINES`
        rows (the newest), painted dim."""
        rows: list[str] = []
        width = max(20, self._width() - 1)
        for call in self._calls.values():
            pad = INDENT * call.depth
            for line in call.answer.live:
                text = line[-(width - len(pad)) :] if len(line) + len(pad) > width else line
                rows.append(pad + text)
        now = self._clock()
        for running in self._running.values():
            pad = INDENT * running.depth
            line = f"{self.paint.running} {running.tool} {running.key}".rstrip()
            line += f"  {now - running.started:.0f}s"
            if running.last_output:
                line += f"  {one_line(running.last_output, width)}"
            room = width - len(pad)
            rows.append(pad + (line if len(line) <= room else line[: room - 1] + "…"))
        return [self.paint(row, "dim") for row in rows[-LIVE_LINES:]]


def _whole(text: str) -> list[Piece]:
    stream = AnswerStream()
    return [*stream.feed(text), *stream.finish()]


def _arguments(arguments: dict[str, Any]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in arguments.items())

"""The approvals that wait, asked one at a time, the first first.

Parallel peers may ask at once: requests queue, each keyed by (agent call, tool call) as the
contract keys them. Asking prints the preview and the choices, then the question line, drops
the type-ahead and reads one key, typed after a pause (`question.KeyQuestion`); `n` then asks
why. A request settled meanwhile (elsewhere, or by the turn's end) stops being asked. An MCP
server's question (`mcp_question_asked`) waits in the same queue (`moot.repl.mcp_question`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from prompt_toolkit.input import Input

from moot.frontend.network import NETWORK
from moot.protocol import events as ev
from moot.protocol import ops
from moot.repl.mcp_question import declined, fill_in, show_question
from moot.repl.paint import strip_escapes
from moot.repl.printer import Printer
from moot.repl.question import (
    INTERRUPT,
    KeyQuestion,
    answer_op,
    choices_for,
    drop_typeahead,
    question_line,
)
from moot.repl.transcript import Transcript

Line = Callable[[str], Awaitable[str]]
"""Reads one line for a question (`why not?`); empty when cancelled."""


class Approvals:
    """The queue of requests, and the asking of its first one."""

    def __init__(
        self,
        transcript: Transcript,
        printer: Printer,
        *,
        line: Line,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._transcript = transcript
        self._printer = printer
        self._line = line
        self._clock = clock
        self.waiting: list[ev.ApprovalRequested | ev.McpQuestionAsked] = []
        self._question: KeyQuestion | None = None
        self.question_line: str | None = None
        """The question printed and not answered yet (printed again after lines that come
        meanwhile)."""

    @property
    def asking(self) -> bool:
        """A question waits for its key."""
        return self._question is not None

    def add(self, request: ev.ApprovalRequested | ev.McpQuestionAsked) -> None:
        self.waiting.append(request)

    def settled(self, call_id: str, tool_call_id: str) -> None:
        """A request was decided (here, elsewhere, or by an interrupt): stop asking it."""
        self._keep(
            lambda r: (
                not isinstance(r, ev.ApprovalRequested)
                or (r.call_id, r.tool_call_id) != (call_id, tool_call_id)
            )
        )

    def answered(self, ask_id: str) -> None:
        """A server's question was answered (here or elsewhere) or withdrawn: stop asking it."""
        self._keep(lambda r: not isinstance(r, ev.McpQuestionAsked) or r.ask_id != ask_id)

    def clear(self) -> None:
        """No approval waits any more (the turn ended); a server's question may still."""
        self._keep(lambda r: isinstance(r, ev.McpQuestionAsked))

    def _keep(self, kept: Callable[[ev.ApprovalRequested | ev.McpQuestionAsked], bool]) -> None:
        first = self.waiting[0] if self.waiting else None
        self.waiting = [r for r in self.waiting if kept(r)]
        if first is not None and first not in self.waiting and self._question is not None:
            self._question.cancel()

    async def ask_first(self, keyboard: Input) -> ops.Op | str | None:
        """Ask the first request; returns the op that answers it, `INTERRUPT` (ctrl+c: stop
        the turn), or None (settled meanwhile, or the REPL is quitting)."""
        request = self.waiting[0]
        await self._printer.flush()
        if isinstance(request, ev.McpQuestionAsked):
            return await self._ask_mcp(request, keyboard)
        self._transcript.approval(request, waiting=len(self.waiting))
        choices = choices_for(request)
        paint = self._transcript.paint
        self._transcript.emit(
            # A label may quote a rule made of the model's arguments.
            "\n".join(f"{paint(c.key, 'bold', 'cyan')}  {strip_escapes(c.label)}" for c in choices),
            1,
        )
        key = await self._key("".join(c.key for c in choices), keyboard)
        if not self.waiting or self.waiting[0] is not request:
            self._printer.write("(settled)\n")
            return None
        if key is None:
            return None
        if key == INTERRUPT:
            self._printer.write("^C\n")
            self.waiting.pop(0)
            return INTERRUPT
        self._printer.write(f"{key}\n")
        why = key == "n" and request.tool != NETWORK  # a host refused needs no reason
        feedback = await self._line("why not? (Enter: no reason) ") if why else ""
        op = answer_op(request, key, feedback)
        if op is None or not self.waiting or self.waiting[0] is not request:
            return None  # settled while the reason was typed
        self.waiting.pop(0)
        return op

    async def _ask_mcp(self, request: ev.McpQuestionAsked, keyboard: Input) -> ops.Op | None:
        """A server's question: a key to answer, decline or cancel, then the fields' values."""
        fields = show_question(self._transcript, request)
        key = await self._key("adc", keyboard)
        if key is None or not self.waiting or self.waiting[0] is not request:
            self._printer.write("(settled)\n")
            return None
        self._printer.write(f"{'^C' if key == INTERRUPT else key}\n")
        if key == "a":
            op = await fill_in(request, fields, self._line, self._transcript.say)
        else:  # ctrl+c cancels the question; the turn goes on
            op = declined(request, "d" if key == "d" else "c")
        if not self.waiting or self.waiting[0] is not request:
            return None  # withdrawn while the fields were typed
        self.waiting.pop(0)
        return op

    async def _key(self, keys: str, keyboard: Input) -> str | None:
        """Print the question line and read one of `keys` after a pause."""
        self.question_line = question_line(keys)
        self._printer.write(self.question_line)
        await self._printer.flush()
        drop_typeahead(keyboard)
        self._question = KeyQuestion(
            keys, clock=self._clock, on_ignored=lambda: self._ignored(keys)
        )
        try:
            return await self._question.ask()
        finally:
            self._question = None
            self.question_line = None

    def _ignored(self, keys: str) -> None:
        self._transcript.say(
            f"(that answers nothing: press {_either(keys)}, after a pause in typing)"
        )


def _either(keys: str) -> str:
    """`y, s, a or n`."""
    return f"{', '.join(keys[:-1])} or {keys[-1]}" if len(keys) > 1 else keys

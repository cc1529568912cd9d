"""`ReplSession`: the session the REPL works in, from opening it to closing it.

It opens the session in a thread while the prompt shows, prints a resumed one's tail, pumps its
events into the transcript (and the toolbar's facts), sends what the person typed as turns,
follows the session's answers to them (a refused message goes back into the prompt), goes on
with a turn a crash left open, and replaces the session with another (`/new`, `/resume`).

Its own object rather than more of the REPL, which stays the shell (the prompt, its keys, the
live area): it reaches the shell only through `PromptShell`, which names the four things it
asks of the prompt, so the shell's module imports this one and not the other way round.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Protocol

from moot.commands.files import use_session_commands
from moot.commands.mentions import expand_mentions
from moot.commands.registry import CommandError, Registry
from moot.frontend.display import HISTORY_KINDS
from moot.frontend.network import as_approval
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.activity import WAITING_FOR_MODEL, TurnProgress
from moot.protocol.client import Client, SessionStatus
from moot.protocol.messages import Attachment
from moot.protocol.subscription import Subscription
from moot.repl.approvals import Approvals
from moot.repl.completion import PromptCompleter
from moot.repl.status import StatusFacts
from moot.repl.transcript import Transcript

HISTORY_TAIL = 200
"""Events of a resumed session printed at start (the rest: `moot sessions show`)."""

OpenClient = Callable[[], Client]
"""Opens a session's client (blocking: the REPL calls it in a thread)."""
OpenSession = Callable[[str], Client]
"""Opens a stored session's client by id (`/resume`, `/fork`)."""


class PromptShell(Protocol):
    """What the session asks of the REPL's prompt (`Repl`)."""

    def wake(self) -> None:
        """Something the prompt waits for happened (a turn ended, the session failed)."""
        ...

    def preempt(self, given_back: str = "", attachments: tuple[Attachment, ...] = ()) -> None:
        """Make way for an approval, or for a message the session gave back (`given_back`,
        put before what was typed, its chips holding `attachments` again)."""
        ...

    def keep_draft(self, text: str, attachments: tuple[Attachment, ...] = ()) -> None:
        """Put `text` in the prompt for the next read (a message that was not sent)."""
        ...

    def quit_now(self) -> None:
        """End the REPL (the session could not be opened)."""
        ...


class ReplSession:
    """The session of one REPL.

    Args:
        shell: The prompt (`Repl`).
        connect: Opens the session (in a thread, while the prompt shows).
        transcript: Where the session's events print.
        approvals: The questions waiting for the person.
        completer: The prompt's completion (it reads the files again after a turn).
        registry: The slash commands (the session's own join them).
        plain: The plain look: a line says a turn is under way (nothing is redrawn).
        clock: Monotonic seconds (the turn's progress).
        task: A first message to send.
        show_history: Print the end of the session's stored events first (a resumed session).
        printed: Waits until what the transcript was given is on the terminal (the printer's
            `flush`): the markdown warm-up starts only once the session's line is out.
    """

    def __init__(
        self,
        shell: PromptShell,
        connect: OpenClient,
        *,
        transcript: Transcript,
        approvals: Approvals,
        completer: PromptCompleter,
        registry: Registry,
        plain: bool,
        clock: Callable[[], float],
        task: str | None = None,
        show_history: bool = False,
        printed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._shell = shell
        self._printed = printed
        self._connect = connect
        self._transcript = transcript
        self._approvals = approvals
        self._completer = completer
        self._registry = registry
        self._plain = plain
        self._clock = clock
        self._task = task
        self._show_history = show_history
        self.client_or_none: Client | None = None
        """The session (once open)."""
        self.error = ""
        """Why the session could not open (the REPL then ends with `EXIT_SETUP`)."""
        self.facts = StatusFacts()
        """What the toolbar shows of the session."""
        self.progress = TurnProgress()
        """What the running turn does now: the live area's last line and the toolbar say it."""
        self.turn_running = False
        self.offered: list[str] = []
        """What `!command` offered for the next message (`ReplCommands.offer`)."""
        self._sent: dict[str, str] = {}
        self._sent_attachments: dict[str, tuple[Attachment, ...]] = {}
        """The images and PDFs of `_sent` messages: a message given back keeps them."""
        """Turns submitted and not yet answered (`turn_started` or `op_refused`), by submission
        id: the message to give back should the session refuse it ("" for a resume)."""
        self._opening: asyncio.Task[None] | None = None
        self.pump_task: asyncio.Task[None] | None = None
        """The task that takes the session's events (once it is open)."""

    @property
    def client(self) -> Client:
        """The session (once open)."""
        if self.client_or_none is None:
            raise CommandError("the session is still opening")
        return self.client_or_none

    # ---- opening and closing -----------------------------------------------------------------

    def start_opening(self) -> None:
        """Open the session while the prompt shows (`opened` waits for it)."""
        self._opening = asyncio.create_task(self._open())

    async def _open(self) -> None:
        """Open the session, then start taking its events and send the first message."""
        from moot.client import SetupError

        try:
            client = await asyncio.to_thread(self._connect)
        except SetupError as exc:
            self.error = str(exc)
            self._shell.quit_now()
            return
        except BaseException:
            self._shell.quit_now()
            raise
        self.client_or_none = client
        status = client.status()
        self.turn_running = status.running
        self._shown(status, after=None)
        for notice in status.notices:
            self._transcript.say(notice, warning=True)
        self._go_on_interrupted(status)
        if self._task:
            await self.send(self._task, typed=False)
        if not self._plain:
            # Only once the session's line is on the terminal: the warm-up thread (rich's
            # imports, ~70 ms of CPU) would otherwise share the GIL with the prompt's redraw
            # around that line, and the line would show later by what the thread took meanwhile.
            if self._printed is not None:
                await self._printed()
            from moot.repl.markdown import warm_up

            warm_up()

    def _shown(self, status: SessionStatus, *, after: int | None) -> None:
        """Show the session opened (`status`): its line, its commands, its history (a resumed
        one), then take its events (subscribed before anything is sent, so no event of the
        first turn is missed)."""
        client = self.client
        self.facts = StatusFacts.of(status)
        self._transcript.workspace = status.workspace
        self._transcript.emit(
            f"session {status.session_id} · {status.model} · mode {status.mode or '-'}"
        )
        for warning in use_session_commands(self._registry, client):
            self._transcript.say(warning, warning=True)
        if self._show_history:
            after = self._history()
        self.pump_task = asyncio.create_task(self._pump(client.subscribe(after)))

    async def opened(self) -> bool:
        """Wait for the session to be open; False when it could not be."""
        if self._opening is not None:
            await asyncio.shield(self._opening)
        return self.client_or_none is not None

    async def close(self, stop_printing: Callable[[], Awaitable[None]]) -> None:
        """Close the session (a running turn records its end); `stop_printing` ends the
        printer once no event comes any more."""
        if self._opening is not None:
            # A session still opening is waited for, so that it is closed, not left behind.
            await asyncio.shield(self._opening)
        try:
            await self._stop_pump()
            await stop_printing()  # may fail on a terminal that went away (SIGHUP)
        finally:
            if self.client_or_none is not None:
                from moot.client.errors import StoreError  # only here: the REPL's end

                with contextlib.suppress(StoreError):  # a run the store stopped: told by `_pump`
                    await self.client_or_none.close()

    async def _stop_pump(self) -> None:
        if self.pump_task is not None:
            self.pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.pump_task

    # ---- another session -------------------------------------------------------------------

    async def switch(self, open_one: OpenClient, *, show_history: bool) -> None:
        """Go on with the session `open_one` opens; this one closes (it stays in the store)."""
        from moot.client import SetupError
        from moot.client.errors import SessionBusy

        if self.turn_running:
            raise CommandError("a turn is running: stop it first (ctrl+c)")
        old = self.client
        try:
            self.client_or_none = await asyncio.to_thread(open_one)
        except (SetupError, SessionBusy) as exc:
            raise CommandError(f"cannot open it: {exc}") from None
        await self._stop_pump()
        from moot.client.errors import StoreError

        with contextlib.suppress(StoreError):  # a run the store stopped: told by `_pump`
            await old.close()
        self._sent.clear()  # submission ids are the session's own
        self._sent_attachments.clear()
        self._approvals.clear()
        self._transcript.new_session()
        self.offered.clear()  # the old session's shell output is not for the new one
        self._completer.forget_paths()
        self._show_history = show_history
        status = self.client.status()
        self._shown(status, after=None)
        self._go_on_interrupted(self.client.status())

    def _go_on_interrupted(self, status: SessionStatus) -> None:
        """A turn moot ended in the middle of (killed, a crash) goes on first, as `moot
        --resume` does headless, asking again for an approval it waited on."""
        if status.open_run is not None and not status.running:
            self.turn_running = True
            if (submission := self.submit(ops.ResumeRun())) is not None:
                self._sent[submission] = ""
            else:
                self.turn_running = False

    def _history(self) -> int:
        """Print the end of a resumed session; the seq to go on from live."""
        client = self.client
        session_id = client.session_id
        summary = client.query.session(session_id)
        events = client.query.events(session_id, kinds=HISTORY_KINDS, limit=HISTORY_TAIL)
        if events and events[0].seq > 1:
            self._transcript.say(f"(earlier events: moot sessions show {session_id})")
        for event in events:
            self.facts.take(event)
            self._transcript.take(event)
        self.turn_running = client.status().running
        if summary is not None:
            self.facts.cost_usd = summary.cost_usd  # usage events are not in what is shown
        return summary.event_count if summary else 0

    # ---- sending -----------------------------------------------------------------------------

    async def send(
        self, text: str, *, typed: bool, attachments: tuple[Attachment, ...] = ()
    ) -> None:
        """Send a message; one `typed` at the prompt is on screen already, another is echoed.
        Its `@server:uri` mentions bring their MCP resources along, `attachments` (its chips'
        images and PDFs) go with it."""
        if self.offered:  # what `!command` offered goes with this message
            text = "\n\n".join([*self.offered, text])
            self.offered.clear()
        self.turn_running = True  # no second message while a resource is read
        message, found = await expand_mentions(self.client, text)
        turn = ops.UserTurn(text=message, attachments=(*attachments, *found))
        submission = self.submit(turn, text=text, attachments=attachments)
        if submission is None:
            self.turn_running = False
            return
        self._sent[submission] = text
        if attachments:
            self._sent_attachments[submission] = attachments
        if typed:
            self._transcript.own_submissions.add(submission)
        self.turn_running = True

    def submit(
        self, op: ops.Op, *, text: str = "", attachments: tuple[Attachment, ...] = ()
    ) -> str | None:
        """Submit `op`; its submission id. A sessions database that cannot be written (a full
        disk) takes no op: that is told here, a message (`text`) goes back into the prompt,
        and None is returned."""
        try:
            return self.client.submit(op)
        except Exception as exc:
            from moot.client.errors import StoreError  # only when an op failed

            if not isinstance(exc, StoreError):
                raise
            self._transcript.say(str(exc), warning=True)
            if text:
                self._shell.keep_draft(text, attachments)
            return None

    def _refused(self, event: ev.OpRefused) -> None:
        """A turn the session refused (one runs already, a crash left one open): the REPL
        waits for none, and a message goes back into the prompt."""
        text = self._sent.pop(event.submission_id)
        attachments = self._sent_attachments.pop(event.submission_id, ())
        self.turn_running = self.client.status().running
        if text or not self.turn_running:
            self._shell.preempt(given_back=text, attachments=attachments)

    # ---- events ------------------------------------------------------------------------------

    async def _pump(self, subscription: Subscription) -> None:
        client = self.client
        try:
            async for event in subscription:
                self._take(event)
        finally:
            subscription.close()
        # The stream ends early when a run stops because the store could not be written (a
        # full disk), which it could not record: said once, here.
        if client is self.client_or_none and (failure := client.status().failure):
            self.turn_running = False
            self._approvals.clear()
            self._transcript.say(
                f"the turn stopped: {failure}. What was stored is kept: once there is room, "
                f"`moot --resume {client.session_id}` finishes the turn.",
                warning=True,
            )
            self._shell.wake()

    def _take(self, event: ev.Event) -> None:
        self.facts.take(event)
        changed = self.progress.apply(event, self._clock())
        if changed and self._plain and isinstance(event, ev.TurnStarted):
            # Nothing is redrawn in the plain look: one line says the turn is under way.
            self._transcript.say(f"{WAITING_FOR_MODEL}… (ctrl+c stops it)")
        self._transcript.take(event)
        match event:
            case ev.TurnStarted() | ev.RunResumed():
                self.turn_running = True
                self._sent.pop(event.submission_id, None)
            case ev.OpRefused() if event.submission_id in self._sent:
                self._refused(event)
            case ev.TurnFinished():
                self.turn_running = False
                self._approvals.clear()
                self._completer.forget_paths()  # the turn may have added files
                self._shell.wake()
            case ev.ApprovalRequested():
                self._approvals.add(event)
                self._shell.preempt()
            case ev.ApprovalDecided():
                self._approvals.settled(event.call_id, event.tool_call_id)
            case ev.NetworkAccessRequested():  # asked as an approval (`frontend.network`)
                self._approvals.add(as_approval(event))
                self._shell.preempt()
            case ev.NetworkAccessDecided():
                self._approvals.settled("", event.request_id)
            case ev.McpQuestionAsked():
                self._approvals.add(event)
                self._shell.preempt()
            case ev.McpQuestionAnswered():
                self._approvals.answered(event.ask_id)
            case ev.ModelChanged():  # the new model's name and context window, for the toolbar
                status = self.client.status()
                self.facts.model, self.facts.context_window = status.model, status.context_window

"""`Repl`: the line-oriented front end over one session's client.

It holds a `Client` (the front-end contract) and nothing of the runtime. The prompt shows first;
the session opens meanwhile in a thread (reading settings, the store, assembling tools: about as
long as prompt_toolkit takes to load), and what is typed before it is ready waits for it. One
task pumps the
client's events into the transcript (printed into scrollback through the `Printer`); the main
loop reads the prompt, answers approvals and runs slash commands (the registry the app shares;
`Repl` is their `CommandContext`).

Two ways of waiting, by look:

- styled: the prompt stays while a turn runs (keys echo, shift+tab and ctrl+c work); finished
  lines print above it and the unfinished ones show in its live area.
- plain (`TERM=dumb`, `NO_COLOR`, output not a terminal, `repl.plainOutput`): nothing is
  redrawn. The prompt shows only between turns, drawing with nothing but the cursor moves and
  erasures editing its line needs (`line_output.py`; on a dumb terminal, text alone); during a
  turn, lines print as they finish and ctrl+c (a signal, the terminal being in its normal
  mode) stops the turn.

An approval takes the prompt's place (what was typed comes back after it), so a key typed for
the message never answers the question.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.completion import WordCompleter
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from prompt_toolkit.key_binding import KeyPressEvent

from moot.app_prefs import remember_theme, theme_file_names
from moot.commands.builtin import builtin_commands, next_mode
from moot.commands.display import HISTORY_KINDS
from moot.commands.files import memory_note, use_session_commands
from moot.commands.mentions import expand_mentions
from moot.commands.registry import CommandError, Panes, Registry, is_command
from moot.commands.shell import is_shell, run_shell
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.activity import WAITING_FOR_MODEL, TurnProgress
from moot.protocol.client import Client, SessionStatus, Subscription
from moot.repl.approvals import Approvals
from moot.repl.completion import PromptCompleter
from moot.repl.listing import chosen, help_text, matching, numbered
from moot.repl.look import Look
from moot.repl.printer import Printer
from moot.repl.prompt import MARK, build_session, prompt_bindings
from moot.repl.question import INTERRUPT
from moot.repl.status import StatusFacts
from moot.repl.transcript import Transcript

EXIT_SETUP = 2
"""The exit code when the session could not open (a usage error, as elsewhere in moot)."""
QUIT_WINDOW_S = 1.5
"""A second ctrl+c at an empty prompt within this long quits."""
HISTORY_TAIL = 200
"""Events of a resumed session printed at start (the rest: `moot sessions show`)."""
OpenClient = Callable[[], Client]
"""Opens a session's client (blocking: the REPL calls it in a thread)."""


class _Preempted(Exception):
    """The prompt gave way to an approval (what was typed is kept)."""


class Repl:
    """The plain REPL.

    Args:
        connect: Opens the session (in a thread, while the prompt shows); may raise
            `SetupError`, which ends the REPL with `error` set.
        look: Styled or plain, toolbar or not.
        out: Where the transcript goes (the terminal).
        task: A first message to send.
        show_history: Print the end of the session's stored events first (a resumed session).
        open_client: Opens a new session, for `/new`.
        open_session: Opens a stored session by id, for `/resume` and `/fork`.
        registry: The slash commands (the built-in ones when None).
        history_path: The prompt history file (`moot.history.history_file`); None keeps none.
        clock: Monotonic seconds (approvals' grace period, ctrl+c twice).
    """

    def __init__(
        self,
        connect: OpenClient,
        *,
        look: Look,
        out: TextIO,
        task: str | None = None,
        show_history: bool = False,
        open_client: OpenClient | None = None,
        open_session: Callable[[str], Client] | None = None,
        registry: Registry | None = None,
        history_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._connect = connect
        self._client: Client | None = None
        self.look = look
        self.registry = registry or builtin_commands()
        self._task_text = task
        self._show_history = show_history
        self._open_client = open_client
        self._open_session = open_session
        self._clock = clock
        self._history_path = history_path
        self.facts = StatusFacts()
        self.progress = TurnProgress()
        """What the running turn does now: the live area's last line and the toolbar say it."""
        self.error = ""
        """Why the session could not open (the REPL then ends with `EXIT_SETUP`)."""
        self._printer = Printer(out, on_tick=self._tick, reprompt=self._reprompt)
        self.transcript = Transcript(
            self._printer.write, plain=look.plain, width=_width, clock=clock
        )
        self._completer = PromptCompleter(self.registry, lambda: self, self._files)
        self._session: PromptSession[str] | None = None
        self.approvals = Approvals(self.transcript, self._printer, line=self._line, clock=clock)
        self.asking: str | None = None
        """The question a line is read for now (`why not?`, a pick), if any."""
        self._turn_running = False
        self._sent: dict[str, str] = {}
        """Turns submitted and not yet answered (`turn_started` or `op_refused`), by submission
        id: the message to give back should the session refuse it ("" for a resume)."""
        self._quitting = False
        self._reading = False
        self._accepting = False
        self._draft = ""
        self._offered: list[str] = []
        """What `!command` offered for the next message (`offer`)."""
        self._last_ctrl_c = -QUIT_WINDOW_S
        self._live: list[str] = []
        self._toolbar = ""
        self._wake: asyncio.Event | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._opening: asyncio.Task[None] | None = None

    @property
    def client(self) -> Client:
        """The session (once open)."""
        if self._client is None:
            raise CommandError("the session is still opening")
        return self._client

    # ---- the loop ---------------------------------------------------------------------------

    async def run(self) -> int:
        """Run until the person quits; closes the client. Returns the exit code."""
        self._wake = asyncio.Event()
        self._session = build_session(
            self.look,
            message=self._message,
            bindings=prompt_bindings(
                accept=self._accept,
                ctrl_c=self._ctrl_c,
                shift_tab=lambda event: self.cycle_mode(),
                ctrl_d=lambda event: self._quit_now(),
            ),
            completer=self._completer,
            toolbar=self._toolbar_line,
            history_path=self._history_path,
        )
        self._printer.start()
        self._banner()
        self._opening = asyncio.create_task(self._open())
        loop = asyncio.get_running_loop()
        handled = []
        for number in (signal.SIGTERM, signal.SIGHUP):  # a `kill`, a terminal that went away
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self._quit_now)
                handled.append(number)
        try:
            while not self._quitting:
                await self._step()
        finally:
            try:
                await self._stop()  # the session closes: a running turn records its end
            finally:
                for number in handled:
                    loop.remove_signal_handler(number)
        return EXIT_SETUP if self.error else 0

    async def _open(self) -> None:
        """Open the session while the prompt shows, then start taking its events."""
        from moot.client import SetupError

        try:
            client = await asyncio.to_thread(self._connect)
        except SetupError as exc:
            self.error = str(exc)
            self._quit_now()
            return
        except BaseException:
            self._quit_now()
            raise
        self._client = client
        status = client.status()
        self.facts = StatusFacts.of(status)
        self.transcript.workspace = status.workspace
        self._turn_running = status.running
        self._session_line(status)
        for warning in use_session_commands(self.registry, client):
            self.transcript.say(warning, warning=True)
        after = self._history() if self._show_history else None
        # Subscribed before anything is sent, so no event of the first turn is missed.
        self._pump_task = asyncio.create_task(self._pump(client.subscribe(after)))
        for notice in status.notices:
            self.transcript.say(notice, warning=True)
        self._go_on_interrupted(status)
        if self._task_text:
            await self._send(self._task_text, typed=False)
        if not self.look.plain:
            from moot.repl.markdown import warm_up

            warm_up()

    async def _opened(self) -> bool:
        """Wait for the session to be open; False when it could not be."""
        if self._opening is not None:
            await asyncio.shield(self._opening)
        return self._client is not None

    async def _stop(self) -> None:
        if self._opening is not None:
            # A session still opening is waited for, so that it is closed, not left behind.
            await asyncio.shield(self._opening)
        try:
            if self._pump_task is not None:
                self._pump_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._pump_task
            await self._printer.stop()  # may fail on a terminal that went away (SIGHUP)
        finally:
            if self._client is not None:
                from moot.client.errors import StoreError  # only here: the REPL's end

                with contextlib.suppress(StoreError):  # a run the store stopped: told by `_pump`
                    await self._client.close()

    async def _step(self) -> None:
        if self.approvals.waiting:
            assert self._session is not None
            answer = await self.approvals.ask_first(self._session.input)
            if answer == INTERRUPT:
                self.interrupt()
            elif isinstance(answer, ops.Approve | ops.Deny):
                self._submit(answer)
        elif self.look.plain and self._turn_running:
            await self._wait_for_turn()
        else:
            text = await self._read()
            if text is not None:
                await self._handle(text)

    async def _read(self) -> str | None:
        assert self._session is not None
        self._accepting = False
        self._reading = True
        await self._printer.flush()
        try:
            text = await self._session.prompt_async(default=self._draft)
        except _Preempted:
            return None
        except (EOFError, KeyboardInterrupt):
            self._quitting = True
            return None
        finally:
            self._reading = False
            self._session.app.erase_when_done = False
        self._draft = ""
        return text

    async def _handle(self, text: str) -> None:
        if not text.strip() or not await self._opened():
            return
        if is_command(text):
            await self.registry.run(self, text.strip())
            return
        if is_shell(text):  # `!command`: the person's own, through the session's sandbox
            await run_shell(self, text)
            return
        if (note := memory_note(text)) is not None:
            self._submit(ops.NoteToMemory(text=note))
            return
        if self._turn_running:
            self.transcript.say(
                "a turn is running: wait for it, or press ctrl+c to stop it", warning=True
            )
            self._draft = text
            return
        await self._send(text, typed=True)

    async def _send(self, text: str, *, typed: bool) -> None:
        """Send a message; one `typed` at the prompt is on screen already, another is echoed.
        Its `@server:uri` mentions bring their MCP resources along."""
        if self._offered:  # what `!command` offered goes with this message
            text = "\n\n".join([*self._offered, text])
            self._offered.clear()
        self._turn_running = True  # no second message while a resource is read
        message, found = await expand_mentions(self.client, text)
        submission = self._submit(ops.UserTurn(text=message, attachments=found), text=text)
        if submission is None:
            self._turn_running = False
            return
        self._sent[submission] = text
        if typed:
            self.transcript.own_submissions.add(submission)
        self._turn_running = True

    async def _wait_for_turn(self) -> None:
        """The plain look between a message and its turn's end: ctrl+c is a signal here."""
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        handled = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, self.interrupt)
            handled = True
        try:
            await self._wake.wait()
            self._wake.clear()
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGINT)

    def _submit(self, op: ops.Op, *, text: str = "") -> str | None:
        """Submit `op`; its submission id. A sessions database that cannot be written (a full
        disk) takes no op: that is told here, a message (`text`) goes back into the prompt,
        and None is returned."""
        try:
            return self.client.submit(op)
        except Exception as exc:
            from moot.client.errors import StoreError  # only when an op failed

            if not isinstance(exc, StoreError):
                raise
            self.transcript.say(str(exc), warning=True)
            if text:
                self._draft = text
            return None

    def _preempt(self, given_back: str = "") -> None:
        """Make way for an approval, or for a message the session gave back: the prompt ends,
        what was typed is kept (after `given_back`)."""
        assert self._wake is not None and self._session is not None
        self._wake.set()
        app = get_app_or_none()
        reading = self._reading and app is not None and app.is_running and not app.is_done
        typed = self._session.default_buffer.text if reading else self._draft
        if given_back:
            typed = f"{given_back}\n{typed}" if typed.strip() else given_back
        self._draft = typed
        if reading:
            assert app is not None
            app.erase_when_done = True
            app.exit(exception=_Preempted())

    def _refused(self, event: ev.OpRefused) -> None:
        """A turn the session refused (one runs already, a crash left one open): the REPL
        waits for none, and a message goes back into the prompt."""
        text = self._sent.pop(event.submission_id)
        self._turn_running = self.client.status().running
        if text or not self._turn_running:
            self._preempt(given_back=text)

    # ---- events -----------------------------------------------------------------------------

    async def _pump(self, subscription: Subscription) -> None:
        client = self.client
        try:
            async for event in subscription:
                self._take(event)
        finally:
            subscription.close()
        # The stream ends early when a run stops because the store could not be written (a
        # full disk), which it could not record: said once, here.
        if client is self._client and (failure := client.status().failure):
            self._turn_running = False
            self.approvals.clear()
            self.transcript.say(
                f"the turn stopped: {failure}. What was stored is kept: once there is room, "
                f"`moot --resume {client.session_id}` finishes the turn.",
                warning=True,
            )
            assert self._wake is not None
            self._wake.set()

    def _take(self, event: ev.Event) -> None:
        self.facts.take(event)
        changed = self.progress.apply(event, self._clock())
        if changed and self.look.plain and isinstance(event, ev.TurnStarted):
            # Nothing is redrawn in the plain look: one line says the turn is under way.
            self.transcript.say(f"{WAITING_FOR_MODEL}… (ctrl+c stops it)")
        self.transcript.take(event)
        match event:
            case ev.TurnStarted() | ev.RunResumed():
                self._turn_running = True
                self._sent.pop(event.submission_id, None)
            case ev.OpRefused() if event.submission_id in self._sent:
                self._refused(event)
            case ev.TurnFinished():
                self._turn_running = False
                self.approvals.clear()
                self._completer.forget_paths()  # the turn may have added files
                assert self._wake is not None
                self._wake.set()
            case ev.ApprovalRequested():
                self.approvals.add(event)
                self._preempt()
            case ev.ApprovalDecided():
                self.approvals.settled(event.call_id, event.tool_call_id)
            case ev.ModelChanged():  # the new model's name and context window, for the toolbar
                status = self.client.status()
                self.facts.model, self.facts.context_window = status.model, status.context_window

    def _history(self) -> int:
        """Print the end of a resumed session; the seq to go on from live."""
        session_id = self.client.session_id
        summary = self.client.query.session(session_id)
        events = self.client.query.events(session_id, kinds=HISTORY_KINDS, limit=HISTORY_TAIL)
        if events and events[0].seq > 1:
            self.transcript.say(f"(earlier events: moot sessions show {session_id})")
        for event in events:
            self.facts.take(event)
            self.transcript.take(event)
        self._turn_running = self.client.status().running
        if summary is not None:
            self.facts.cost_usd = summary.cost_usd  # usage events are not in what is shown
        return summary.event_count if summary else 0

    # ---- approvals --------------------------------------------------------------------------

    async def _line(
        self, message: str, completer: WordCompleter | None = None, *, secret: bool = False
    ) -> str:
        """One line typed at a question of the REPL's own (kept in no history; a `secret` one
        not shown either); empty when cancelled."""
        await self._printer.flush()
        session: PromptSession[str] = PromptSession(
            message,
            completer=completer,
            complete_while_typing=not self.look.plain,
            color_depth=self._session.color_depth if self._session else None,
            is_password=secret,
        )
        self.asking = message
        try:
            return (await session.prompt_async() or "").strip()
        except (EOFError, KeyboardInterrupt):
            return ""
        finally:
            self.asking = None

    # ---- the prompt's keys and looks --------------------------------------------------------

    def _accept(self, event: KeyPressEvent) -> None:
        self._accepting = True  # the prompt left in scrollback shows no live area
        event.current_buffer.validate_and_handle()

    def _ctrl_c(self, event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if self._turn_running:
            self.interrupt()
        elif buffer.text:
            buffer.reset()
        elif self._offered:
            self._offered.clear()
            self.transcript.say("dropped what !command offered")
        elif self._clock() - self._last_ctrl_c < QUIT_WINDOW_S:
            self._quit_now()
        else:
            self._last_ctrl_c = self._clock()
            self.transcript.say("press ctrl+c again to quit (or ctrl+d)")

    def _quit_now(self) -> None:
        self._quitting = True
        if self._wake is not None:
            self._wake.set()
        app = get_app_or_none()
        if app is not None and app.is_running and not app.is_done:
            app.exit(result=None)

    def interrupt(self) -> None:
        """Stop the running turn (ctrl+c)."""
        if self._turn_running:
            self._submit(ops.Interrupt())
            self.transcript.say("stopping the turn...")

    def cycle_mode(self) -> None:
        """The next permission mode (shift+tab)."""
        if self._client is None:
            self.transcript.say("the session is still opening", warning=True)
            return
        mode = self.facts.mode
        if mode is None:
            self.transcript.say("this session has no permission modes", warning=True)
            return
        self._submit(ops.SetMode(mode=next_mode(mode)))  # type: ignore[arg-type]

    def _message(self) -> AnyFormattedText:
        mark = self.transcript.paint(MARK, "bold")
        if self._accepting or not self._live:
            return ANSI(mark)
        return ANSI("\n".join(self._live) + "\n" + mark)

    def _tick(self) -> None:
        """Ten times a second: refresh the live area and the toolbar when they changed."""
        now = self._clock()
        live = [] if self.look.plain else self.transcript.live()
        if not self.look.plain and (working := self.progress.line(now)):
            live = [*live, self.transcript.paint(f"… {working}", "dim")]
        toolbar = (
            self.facts.line(self.progress.line(now, tokens=False)) if self.look.toolbar else ""
        )
        if live == self._live and toolbar == self._toolbar:
            return
        self._live, self._toolbar = live, toolbar
        app = get_app_or_none()
        if self._reading and app is not None and app.is_running:
            app.invalidate()

    def _reprompt(self) -> str | None:
        """What to write again after lines printed while a prompt that draws nothing (a dumb
        terminal's, or an approval's question) shows; None while prompt_toolkit redraws."""
        if self.approvals.question_line is not None:
            return self.approvals.question_line
        if self.look.dumb and self._reading and self._session is not None:
            return MARK + self._session.default_buffer.text
        return None

    def _banner(self) -> None:
        """What this is and how to leave, printed before the session is open."""
        paint = self.transcript.paint
        why = f" ({self.look.why})" if self.look.why else ""
        self.transcript.emit(
            paint(f"moot plain REPL{why}", "bold")
            + paint(" · /help lists commands and keys; ctrl+d quits", "dim")
        )

    def _session_line(self, status: SessionStatus) -> None:
        self.transcript.emit(
            f"session {status.session_id} · {status.model} · mode {status.mode or '-'}"
        )

    def _files(self) -> Sequence[str]:
        if self._client is None:
            raise RuntimeError("the session is still opening")  # not kept: asked again later
        return self._client.files()

    def _toolbar_line(self) -> str:
        if self._client is None:
            return " opening the session... "
        return f" {self.facts.line(self.progress.line(self._clock(), tokens=False))} "

    # ---- CommandContext ---------------------------------------------------------------------

    @property
    def shows_refusals(self) -> bool:
        return True  # the transcript prints the session's refused ops

    @property
    def columns(self) -> int:
        return _width()

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        self.transcript.say(text, markdown=markdown, warning=warning)

    async def ask_secret(self, question: str) -> str | None:
        self.say(question)
        return await self._line("key (not shown; Enter cancels): ", secret=True) or None

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        """A numbered list; a number, a value or a label picks, other words search (the list is
        shown again, narrowed to what matches them), Enter cancels."""
        if not choices:
            self.say(f"no {title} to choose from", warning=True)
            return None
        shown = list(choices)
        self.transcript.emit(numbered(title, shown, self.transcript.paint))
        names = [value for value, _ in choices]
        while True:
            typed = await self._line(
                f"{title} (a number, a name or words to search; Enter cancels): ",
                WordCompleter(names, sentence=True),
            )
            if not typed:
                return None
            if typed.isdigit():  # a number is the list's as shown
                if (value := chosen(typed, shown)) is not None:
                    return value
                self.say(f"no number {typed} in the list: 1 to {len(shown)}", warning=True)
                continue
            if (value := chosen(typed, shown) or chosen(typed, choices)) is not None:
                return value
            found = matching(typed, choices)
            if found:
                shown = found
                self.transcript.emit(
                    numbered(f"{title}, matching {typed!r}", shown, self.transcript.paint)
                )
            else:
                self.say(f"nothing in the list matches {typed!r}", warning=True)

    def theme_names(self) -> Sequence[str]:
        """The app's themes from files (moot's and the person's): the REPL shows none itself,
        but `/theme` sets the one the app starts with."""
        return theme_file_names()

    @property
    def theme(self) -> str:
        from moot.app_prefs import THEME, load_prefs

        chosen = load_prefs().get(THEME)
        return chosen if isinstance(chosen, str) else ""

    def set_theme(self, name: str) -> None:
        names = self.theme_names()
        if name not in names:
            raise CommandError(f"no theme {name!r}; one of: {', '.join(names)}")
        remember_theme(name)
        self.say(
            f"theme: {name}, for the app (moot starts with it); the plain REPL keeps the "
            "terminal's own colours"
        )

    def exit(self) -> None:
        self._quit_now()

    async def new_session(self) -> None:
        if self._open_client is None:
            raise CommandError("this REPL cannot open another session")
        await self._switch(self._open_client, show_history=False)

    async def open_session(self, session_id: str) -> None:
        if self._open_session is None:
            raise CommandError("this REPL cannot open another session")
        opener = self._open_session
        await self._switch(lambda: opener(session_id), show_history=True)

    async def _switch(self, open_one: OpenClient, *, show_history: bool) -> None:
        """Go on with the session `open_one` opens; this one closes (it stays in the store)."""
        from moot.client import SetupError
        from moot.client.errors import SessionBusy

        if self._turn_running:
            raise CommandError("a turn is running: stop it first (ctrl+c)")
        old = self.client
        try:
            self._client = await asyncio.to_thread(open_one)
        except (SetupError, SessionBusy) as exc:
            raise CommandError(f"cannot open it: {exc}") from None
        if self._pump_task is not None:
            self._pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump_task
        from moot.client.errors import StoreError

        with contextlib.suppress(StoreError):  # a run the store stopped: told by `_pump`
            await old.close()
        self._sent.clear()  # submission ids are the session's own
        self.approvals.clear()
        self.transcript.new_session()
        self._offered.clear()  # the old session's shell output is not for the new one
        self.facts = StatusFacts.of(self.client.status())
        self.transcript.workspace = self.client.status().workspace
        for warning in use_session_commands(self.registry, self.client):
            self.transcript.say(warning, warning=True)
        self._completer.forget_paths()
        self._session_line(self.client.status())
        after = self._history() if show_history else None
        self._pump_task = asyncio.create_task(self._pump(self.client.subscribe(after)))
        self._go_on_interrupted(self.client.status())

    def _go_on_interrupted(self, status: SessionStatus) -> None:
        """A turn moot ended in the middle of (killed, a crash) goes on first, as `moot
        --resume` does headless, asking again for an approval it waited on."""
        if status.open_run is not None and not status.running:
            self._turn_running = True
            if (submission := self._submit(ops.ResumeRun())) is not None:
                self._sent[submission] = ""
            else:
                self._turn_running = False

    def show_help(self) -> None:
        self.transcript.emit(help_text(self.registry, self.transcript.paint))

    async def copy(self, text: str) -> str:
        from moot.commands.clipboard import copy_with_command

        how = await asyncio.to_thread(copy_with_command, text)
        if how is not None:
            return how
        if self.look.plain:
            raise CommandError("no clipboard command here (wl-copy, xclip, xsel or pbcopy)")
        import base64

        # OSC 52: the terminal's own clipboard, through whatever prints above the prompt.
        self.transcript.emit(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")
        return "the terminal's clipboard (OSC 52)"

    def offer(self, text: str, label: str) -> None:
        self._offered.append(text)
        self.transcript.say(f"[{label}] goes with your next message (/new or ctrl+c drops it)")

    def search(self, text: str) -> int:
        if not text:
            return 0
        needle = text.lower()
        found = 0
        for event in self.client.query.events(
            self.client.session_id, kinds=("model_responded", "turn_started", "tool_finished")
        ):
            said = (
                getattr(event, "text", "")
                or getattr(event, "prompt", "")
                or getattr(event, "content", "")
            )
            for line in said.splitlines():
                if needle in line.lower():
                    found += 1
                    self.transcript.say(f"seq {event.seq}: {line.strip()[:200]}")
        return found

    def inspect(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        self.transcript.say(f"{title} ({len(events)} events{'; ' + note if note else ''})")
        for event in events:
            self.transcript.say(ev.event_to_json(event)[:2000])

    def panes(self) -> Panes:
        raise CommandError("the plain REPL has no side panes: /panes is for the app (moot)")


def _width() -> int:
    return shutil.get_terminal_size().columns

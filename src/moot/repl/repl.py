"""`Repl`: the line-oriented front end over one session's client.

It holds a `Client` (the front-end contract) and nothing of the runtime. The prompt shows first;
the session opens meanwhile in a thread (reading settings, the store, assembling tools: about as
long as prompt_toolkit takes to load), and what is typed before it is ready waits for it. One
task pumps the client's events into the transcript (printed into scrollback through the
`Printer`); the main loop reads the prompt, answers approvals and runs slash commands (the
registry the app shares).

`Repl` is the shell: the prompt, its keys, the live area and the toolbar. Two objects it owns
do the rest, each in its own module: `ReplSession` (`repl/session.py`: opening, the events,
sending, switching) and `ReplCommands` (`repl/context.py`: the `CommandContext` the registry
runs against). Composition rather than one class: each names what it asks of the prompt (a
`Protocol`), so neither module imports this one.

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
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.completion import WordCompleter
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from prompt_toolkit.key_binding import KeyPressEvent, merge_key_bindings

from moot.commands.builtin import builtin_commands, next_mode
from moot.commands.files import memory_note
from moot.commands.registry import Registry, is_command
from moot.commands.shell import is_shell, run_shell
from moot.paths import workspace_root
from moot.protocol import ops
from moot.protocol.activity import TurnProgress
from moot.protocol.client import Client, WorkspaceFiles
from moot.protocol.messages import Attachment
from moot.repl.approvals import Approvals
from moot.repl.attachments import PromptAttachments
from moot.repl.completion import PromptCompleter
from moot.repl.context import ReplCommands, terminal_width
from moot.repl.look import Look
from moot.repl.printer import Printer
from moot.repl.prompt import MARK, build_session, prompt_bindings
from moot.repl.question import INTERRUPT
from moot.repl.session import OpenClient, OpenSession, ReplSession
from moot.repl.status import StatusFacts
from moot.repl.transcript import Transcript

EXIT_SETUP = 2
"""The exit code when the session could not open (a usage error, as elsewhere in moot)."""
QUIT_WINDOW_S = 1.5
"""A second ctrl+c at an empty prompt within this long quits."""


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
        history_path: The prompt history file (`moot.frontend.history.history_file`); None
            keeps none.
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
        open_session: OpenSession | None = None,
        registry: Registry | None = None,
        history_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.look = look
        self.registry = registry or builtin_commands()
        self._clock = clock
        self._history_path = history_path
        self._printer = Printer(out, on_tick=self._tick, reprompt=self._reprompt)
        self.transcript = Transcript(
            self._printer.write, plain=look.plain, width=terminal_width, clock=clock
        )
        self._completer = PromptCompleter(self.registry, lambda: self.commands, self._files)
        self._prompt: PromptSession[str] | None = None
        self.attached = PromptAttachments(
            self._workspace, lambda text: self.transcript.say(text, warning=True)
        )
        """The images and PDFs of the message being typed (its chips)."""
        self.approvals = Approvals(self.transcript, self._printer, line=self.ask_line, clock=clock)
        self.session = ReplSession(
            self,
            connect,
            transcript=self.transcript,
            approvals=self.approvals,
            completer=self._completer,
            registry=self.registry,
            plain=look.plain,
            clock=clock,
            task=task,
            show_history=show_history,
            printed=self._printer.flush,
        )
        self.commands = ReplCommands(
            self,
            self.session,
            self.transcript,
            self.registry,
            plain=look.plain,
            open_client=open_client,
            open_session=open_session,
        )
        self.asking: str | None = None
        """The question a line is read for now (`why not?`, a pick), if any."""
        self._quitting = False
        self._reading = False
        self._accepting = False
        self._draft = ""
        self._last_ctrl_c = -QUIT_WINDOW_S
        self._live: list[str] = []
        self._toolbar = ""
        self._wake: asyncio.Event | None = None

    @property
    def client(self) -> Client:
        """The session (once open)."""
        return self.session.client

    @property
    def error(self) -> str:
        """Why the session could not open (the REPL then ends with `EXIT_SETUP`)."""
        return self.session.error

    @property
    def facts(self) -> StatusFacts:
        return self.session.facts

    @property
    def progress(self) -> TurnProgress:
        return self.session.progress

    # ---- the loop ---------------------------------------------------------------------------

    async def run(self) -> int:
        """Run until the person quits; closes the client. Returns the exit code."""
        self._wake = asyncio.Event()
        self._prompt = build_session(
            self.look,
            message=self._message,
            bindings=merge_key_bindings(
                [
                    prompt_bindings(
                        accept=self._accept,
                        ctrl_c=self._ctrl_c,
                        shift_tab=lambda event: self.cycle_mode(),
                        ctrl_d=lambda event: self.quit_now(),
                    ),
                    self.attached.bindings(),
                ]
            ),
            completer=self._completer,
            toolbar=self._toolbar_line,
            history_path=self._history_path,
        )
        self.attached.watch(self._prompt.default_buffer)
        self._printer.start()
        self._banner()
        self.session.start_opening()
        loop = asyncio.get_running_loop()
        handled = []
        for number in (signal.SIGTERM, signal.SIGHUP):  # a `kill`, a terminal that went away
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self.quit_now)
                handled.append(number)
        try:
            while not self._quitting:
                await self._step()
        finally:
            try:
                # The session closes: a running turn records its end.
                await self.session.close(self._printer.stop)
            finally:
                for number in handled:
                    loop.remove_signal_handler(number)
        return EXIT_SETUP if self.error else 0

    async def _step(self) -> None:
        if self.approvals.waiting:
            assert self._prompt is not None
            answer = await self.approvals.ask_first(self._prompt.input)
            if answer == INTERRUPT:
                self.interrupt()
            elif isinstance(
                answer, ops.Approve | ops.Deny | ops.AnswerNetworkAccess | ops.AnswerMcpQuestion
            ):
                self.session.submit(answer)
        elif self.look.plain and self.session.turn_running:
            await self._wait_for_turn()
        else:
            text = await self._read()
            if text is not None:
                await self._handle(text)

    async def _read(self) -> str | None:
        assert self._prompt is not None
        self._accepting = False
        self._reading = True
        await self._printer.flush()
        try:
            text = await self._prompt.prompt_async(default=self._draft)
        except _Preempted:
            return None
        except (EOFError, KeyboardInterrupt):
            self._quitting = True
            return None
        finally:
            self._reading = False
            self._prompt.app.erase_when_done = False
        self._draft = ""
        return text

    async def _handle(self, text: str) -> None:
        session = self.session
        if (not text.strip() and not session.offered) or not await session.opened():
            return  # an empty line sends only what a command offered (/test's failures)
        if is_command(text):
            await self.registry.run(self.commands, text.strip())
        elif is_shell(text):  # `!command`: the person's own, through the session's sandbox
            await run_shell(self.commands, text)
        elif (note := memory_note(text)) is not None:
            session.submit(ops.NoteToMemory(text=note))
        elif session.turn_running:
            self.transcript.say(
                "a turn is running: wait for it, or press ctrl+c to stop it", warning=True
            )
            self._draft = text
        elif (outgoing := self.attached.outgoing(text)) is None:
            self._draft = text  # an image named that cannot be attached: nothing goes
        else:
            await session.send(outgoing[0], typed=True, attachments=outgoing[1])

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

    # ---- what the session asks of the prompt (`session.PromptShell`) -------------------------

    def wake(self) -> None:
        assert self._wake is not None
        self._wake.set()

    def preempt(self, given_back: str = "", attachments: tuple[Attachment, ...] = ()) -> None:
        """Make way for an approval, or for a message the session gave back: the prompt ends,
        what was typed is kept (after `given_back`, whose chips hold `attachments` again)."""
        assert self._wake is not None and self._prompt is not None
        self.attached.given_back(given_back, attachments)
        self._wake.set()
        app = get_app_or_none()
        reading = self._reading and app is not None and app.is_running and not app.is_done
        typed = self._prompt.default_buffer.text if reading else self._draft
        if given_back:
            typed = f"{given_back}\n{typed}" if typed.strip() else given_back
        self._draft = typed
        if reading:
            assert app is not None
            app.erase_when_done = True
            app.exit(exception=_Preempted())

    def keep_draft(self, text: str, attachments: tuple[Attachment, ...] = ()) -> None:
        self.attached.given_back(text, attachments)
        self._draft = text

    def quit_now(self) -> None:
        self._quitting = True
        if self._wake is not None:
            self._wake.set()
        app = get_app_or_none()
        if app is not None and app.is_running and not app.is_done:
            app.exit(result=None)

    async def ask_line(
        self, message: str, completer: WordCompleter | None = None, *, secret: bool = False
    ) -> str:
        """One line typed at a question of the REPL's own (kept in no history; a `secret` one
        not shown either); empty when cancelled."""
        await self._printer.flush()
        session: PromptSession[str] = PromptSession(
            message,
            completer=completer,
            complete_while_typing=not self.look.plain,
            color_depth=self._prompt.color_depth if self._prompt else None,
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
        if self.session.turn_running:
            self.interrupt()
        elif buffer.text:
            buffer.reset()
        elif self.session.offered:
            self.session.offered.clear()
            self.transcript.say("dropped what !command offered")
        elif self._clock() - self._last_ctrl_c < QUIT_WINDOW_S:
            self.quit_now()
        else:
            self._last_ctrl_c = self._clock()
            self.transcript.say("press ctrl+c again to quit (or ctrl+d)")

    def interrupt(self) -> None:
        """Stop the running turn (ctrl+c)."""
        if self.session.turn_running:
            self.session.submit(ops.Interrupt())
            self.transcript.say("stopping the turn...")

    def cycle_mode(self) -> None:
        """The next permission mode (shift+tab)."""
        if self.session.client_or_none is None:
            self.transcript.say("the session is still opening", warning=True)
            return
        mode = self.facts.mode
        if mode is None:
            self.transcript.say("this session has no permission modes", warning=True)
            return
        self.session.submit(ops.SetMode(mode=next_mode(mode)))  # type: ignore[arg-type]

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
        if self.look.dumb and self._reading and self._prompt is not None:
            return MARK + self._prompt.default_buffer.text
        return None

    def _banner(self) -> None:
        """What this is and how to leave, printed before the session is open."""
        paint = self.transcript.paint
        why = f" ({self.look.why})" if self.look.why else ""
        self.transcript.emit(
            paint(f"moot plain REPL{why}", "bold")
            + paint(" · /help lists commands and keys; ctrl+d quits", "dim")
        )

    def _workspace(self) -> Path:
        """Where `@path` names files: the session's workspace (where moot started until it
        is open)."""
        client = self.session.client_or_none
        return Path(client.status().workspace) if client is not None else workspace_root(Path.cwd())

    def _files(self) -> WorkspaceFiles:
        client = self.session.client_or_none
        if client is None:
            raise RuntimeError("the session is still opening")  # not kept: asked again later
        return client.files()

    def _toolbar_line(self) -> str:
        if self.session.client_or_none is None:
            return " opening the session... "
        return f" {self.facts.line(self.progress.line(self._clock(), tokens=False))} "

    def exit(self) -> None:
        """Quit (as `/exit` does)."""
        self.quit_now()

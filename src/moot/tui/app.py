"""`MootApp`: the Textual app over one session's client.

The app holds a `Client` (the front-end contract) and nothing of the runtime: it sends ops,
renders events (taken by the one bridge worker, `EventBridge`) and reads history through the
client's queries. Layout: the chat pane in the main column with the approval pane and the
prompt below it; the tools pane and the run-trace pane in a side column, which folds away on
narrow terminals, where `f2`/`f3` bring a pane up in the chat's place (`tui/layout.py`); the
status line at the bottom.

Started with a way to open its session (`AppOptions.connect`) rather than a session, the app lays
out its panes and focuses the prompt first, then opens the session in a thread after the first
paint: the person can type meanwhile. What is sent before the session is open waits for it (the
status line says so) and goes, in order, once it is; a session that cannot be opened ends the
app with `error` set (`run_app` prints it).

With no client yet (a first run, no model configured) the app shows the first-run screen
(`screens/setup.py`), then lays out once it hands over a session. Another session (`/new`, the
palette's) replaces the client and recomposes the layout: no pane keeps the old one's state.

Textual wants one `App`: this module is its shell (layout, keys and their actions, messages),
and three objects it owns do the rest, each in its own module: `SessionView` (opening, showing,
switching and closing the session, its events into the panes), `Outbox` (what the person
sends, and what becomes of it) and `AppCommands` (what slash commands and the palette may ask
of the app: the registry runs against it, not against the app). Composition, not mixins: each
part names what it uses of the others, and none imports the app's module.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, TextArea, Tree

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.widget import AwaitMount

    from moot.tui.screens.setup import Started

from moot.commands.registry import Registry
from moot.frontend.app_prefs import load_prefs, save_prefs
from moot.frontend.history import PromptHistory, history_file
from moot.protocol import ops
from moot.protocol.client import Client
from moot.tui import heap
from moot.tui.app_commands import AppCommands
from moot.tui.keys import PANE_ACTIONS, SESSION_ACTIONS, WORD_KEYS, app_bindings
from moot.tui.layout import NARROW, PaneSizes, SidePanes
from moot.tui.messages import Answered, PromptSubmitted, SessionEvent, Streamed
from moot.tui.options import AppOptions
from moot.tui.outbox import Outbox
from moot.tui.palette import PROVIDERS, system_commands
from moot.tui.pane_lookup import PaneLookup
from moot.tui.session_view import SessionView
from moot.tui.terminal import fitted_theme, set_mouse_capture
from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.prompt import PromptArea, PromptInput
from moot.tui.widgets.status_line import StatusLine
from moot.tui.widgets.tools_pane import ToolsPane
from moot.tui.widgets.trace import TracePane
from moot.tui.widgets.working import WorkingLine

QUIT_WINDOW_S = 1.5
"""A second ctrl+c within this long quits."""
_QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""What ends the app as quitting does (in moot's own process): a `kill`, a closed terminal."""


class MootApp(App[int]):
    """The terminal app.

    Args:
        client: The session to show; None opens one with `options.connect`, or shows the
            first-run screen (`options.first_run` opens it).
        options: How it starts and what it may open (`AppOptions`).
    """

    CSS_PATH = "app.tcss"
    TITLE = "moot"
    BINDINGS = app_bindings()  # type: ignore[assignment]
    ENABLE_COMMAND_PALETTE = True
    COMMANDS = App.COMMANDS | PROVIDERS

    def __init__(self, client: Client | None, options: AppOptions | None = None) -> None:
        super().__init__()
        options = options or AppOptions()
        if client is None and options.first_run is None and options.connect is None:
            raise ValueError("MootApp needs a client, a way to open one, or a first run")
        self._options = options
        self._clock = options.clock
        self._quiet = (
            heap.QuietCollector(lambda delay, then: self.set_timer(delay, then), time.monotonic)
            if options.own_heap
            else None
        )
        self._last_ctrl_c = -QUIT_WINDOW_S
        self.mouse_reporting = options.mouse
        """Whether the terminal's mouse reports come to the app (off: the terminal selects)."""
        self._prefs = load_prefs()
        self.side = SidePanes(self, PaneSizes.from_prefs(self._prefs.get("panes")), self._keep)
        """The side panes' layout: what shows, how big (the person's, kept in the prefs)."""
        self.panes = PaneLookup(self)
        self.outbox = Outbox(
            self,
            self.panes,
            client=lambda: self.view.client_or_none,
            registry=lambda: self.commands.registry,
            context=lambda: self.commands,
            model=options.model,
            task=options.task,
        )
        self.view = SessionView(
            self,
            self.panes,
            self.outbox,
            client,
            options,
            registry=lambda: self.commands.registry,
            lay_out=self._lay_out,
        )
        self.commands = AppCommands(
            self, self.panes, self.view, self.outbox, self.side, self._prefs, options
        )

    def get_driver_class(self) -> type[Driver]:
        from moot.tui.hangup import terminal_driver  # one a terminal gone does not keep alive

        return terminal_driver(super().get_driver_class())

    # ---- what others read of the app -------------------------------------------------------

    @property
    def client(self) -> Client:
        """The session's client; there is none while the first-run screen shows."""
        return self.view.client

    @property
    def registry(self) -> Registry:
        return self.commands.registry

    @property
    def chosen_theme(self) -> str:
        """The theme asked for; `theme` may be its 16-colour stand-in (`tui/terminal.py`)."""
        return self.commands.chosen_theme

    @property
    def chat(self) -> ChatPane:
        return self.panes.chat

    @property
    def trace(self) -> TracePane:
        return self.panes.trace

    @property
    def prompt(self) -> PromptInput:
        return self.panes.prompt

    # ---- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        shown = self.view.has_session
        if not shown and self._options.connect is None:
            return  # the first-run screen comes first; `_first_run_done` composes this
        history = self._options.history or PromptHistory(history_file(self.view.workspace()))
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield ChatPane(self.view.load_earlier, id="chat")
                yield WorkingLine(self._said_working, clock=self._clock, id="working")
                if shown:  # else mounted after the first paint
                    yield ApprovalPane(clock=self._clock, id="approval")
                yield PromptArea(
                    history,
                    commands=self.commands.completions,
                    paths=self.view.files,
                    root=self.view.workspace,
                    id="prompt-area",
                )
            with Vertical(id="side"):
                if shown:  # else mounted after the first paint
                    yield from self._side_panes()
        yield StatusLine(id="status")

    def _said_working(self, words: str) -> None:
        """The working line's words, shown in the status line too."""
        self.panes.status.working(words)

    def _side_panes(self) -> list[Widget]:
        panes: list[Widget] = [ToolsPane(id="tools"), TracePane(clock=self._clock, id="trace")]
        heights = self.side.heights()  # set before they mount: no first frame at another split
        for pane in panes:
            pane.styles.height = heights[pane.id or ""]
        return panes

    def _mount_after_paint(self) -> Sequence[AwaitMount]:
        """The side panes (a tree, a list) and the approval pane (hidden until a request) come
        after the first paint: their styles, layout and rendering are not on the way to the
        prompt, and nothing reaches them before the session is open (their keys wait for it:
        `check_action`)."""
        return (
            self.query_one("#side").mount(*self._side_panes()),
            self.query_one("#main").mount(
                ApprovalPane(clock=self._clock, id="approval"), before=self.query_one(PromptArea)
            ),
        )

    def on_load(self) -> None:
        # The theme is set before the stylesheet is first applied: set once the widgets are
        # mounted, it would restyle every one of them before the first paint (~50 ms).
        self.commands.load_themes()
        self.theme = self.commands.chosen_theme

    async def on_mount(self) -> None:
        if self._options.own_heap:
            loop = asyncio.get_running_loop()
            for number in _QUIT_SIGNALS:
                loop.add_signal_handler(number, self.exit)
            from moot.tui.hangup import end_on_hangup  # a closed window, no SIGHUP: it ends

            end_on_hangup(self.exit)
        # The terminal is known now: a 16-colour one takes the theme's stand-in (no change, and
        # so no restyle, on any other).
        self.theme = self.commands.chosen_theme
        if not self.mouse_reporting:
            set_mouse_capture(self, False)
        # Back from a stop (`kill -TSTP`, then `fg`), the terminal showed the shell meanwhile.
        self.app_resume_signal.subscribe(self, lambda app: app.refresh(repaint=True, layout=True))
        options = self._options
        if not self.view.has_session and options.connect is None:
            assert options.first_run is not None
            from moot.tui.screens.setup import SetupScreen  # only on a first run

            self.push_screen(SetupScreen(options.first_run), self._first_run_done)
            return
        if not self.view.has_session:
            # The prompt first; the session opens once it is on screen (`_begin_opening`).
            self._lay_out()
            self.panes.status.opening(options.model)
            if options.held and options.workspace is not None:
                from moot.tui.trust import ask_trust  # only where settings wait for approval

                ask_trust(self, options.workspace, options.held, self._begin_opening)
            else:
                self.call_after_refresh(self._begin_opening)
        else:
            await self.view.show()
        await self._warn_of_themes()

    def _begin_opening(self) -> None:
        self.view.open(self._mount_after_paint)

    async def _warn_of_themes(self) -> None:
        for warning in self.commands.theme_warnings:
            await self.chat.say(warning, warning=True)

    def _lay_out(self) -> None:
        self._fit(self.size.width)
        self.prompt.focus()

    async def _first_run_done(self, started: Started | None) -> None:
        if started is None:
            return
        # A model picked: the task given on the command line goes out now; the demo sends its own.
        task = started.task if started.task is not None else self.outbox.task
        await self.view.switch_client(started.client, show_history=False, task=task)
        await self._warn_of_themes()

    def on_resize(self, event: events.Resize) -> None:
        # Runs before App's own handler records the new size: read it from the event.
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(width < NARROW, "-narrow")
        self.side.fit(width)

    def _keep(self, sizes: PaneSizes) -> None:
        """The side panes' sizes changed: remembered for the next start."""
        self._prefs["panes"] = msgspec.to_builtins(sizes)
        save_prefs(self._prefs)

    def validate_theme(self, name: str) -> str:
        # Every switch passes here (start, /theme, the palette, Textual's own picker).
        return fitted_theme(self, name)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        return system_commands(
            super().get_system_commands(screen),
            quit_now=self.action_quit_now,
            action=lambda name: getattr(self, f"action_{name}"),
        )

    # ---- messages --------------------------------------------------------------------------

    @on(Streamed)
    async def _streamed(self, message: Streamed) -> None:
        if self._quiet is not None:
            self._quiet.touch()
        try:
            self.panes.working.take_stream(message.kind, len(message.text))
            await self.chat.take_stream(message)
        except NoMatches:  # the app is shutting down: its panes are gone, the bridge not yet
            return

    @on(SessionEvent)
    async def _event(self, message: SessionEvent) -> None:
        if self._quiet is not None:
            self._quiet.touch()
        try:
            await self.view.show_event(message.event)
        except NoMatches:  # the app is shutting down (see `_streamed`)
            return

    @on(PromptSubmitted)
    async def _submitted(self, message: PromptSubmitted) -> None:
        self.outbox.send(message.text, message.attachments)

    @on(Answered)
    def _answered(self, message: Answered) -> None:
        self.outbox.submit(message.op)  # type: ignore[arg-type]
        self.prompt.focus()

    @on(PromptInput.Typed)
    def _typed(self, message: PromptInput.Typed) -> None:
        if self._quiet is not None:
            self._quiet.typed()
        with contextlib.suppress(NoMatches):  # none until the first paint (`_begin_opening`)
            self.panes.approvals.last_typed = self._clock()

    @on(TracePane.MessageAgent)
    def _message_agent(self, message: TracePane.MessageAgent) -> None:
        self.prompt.load_text(f"@{message.agent} ")
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    @on(TracePane.CancelAgent)
    def _cancel_agent(self, message: TracePane.CancelAgent) -> None:
        self.outbox.submit(ops.CancelAgent(task_id=message.call_id))
        self.notify(f"cancelling {message.agent} ({message.call_id})")

    @on(TracePane.Inspect)
    def _inspect(self, message: TracePane.Inspect) -> None:
        self.commands.inspect_node(message.title, message.events)

    # ---- actions (the keys table names them) ---------------------------------------------------

    def action_interrupt(self) -> None:
        commands = any(w.group == "command" and w.is_running for w in self.workers)
        if self.outbox.turn_running or commands:  # a `!command` stops too
            self.outbox.submit(ops.Interrupt())

    def action_quit(self) -> None:  # type: ignore[override]
        now = self._clock()
        if now - self._last_ctrl_c < QUIT_WINDOW_S:
            self.exit(0)
            return
        self._last_ctrl_c = now
        if self.outbox.turn_running:
            self.outbox.submit(ops.Interrupt())
        self.notify("press ctrl+c again to quit", timeout=QUIT_WINDOW_S)

    def action_quit_now(self) -> None:
        self.exit(0)

    def action_cycle_mode(self) -> None:
        mode = self.client.status().mode
        if mode is None:
            self.notify("this session has no permission modes")
            return
        from moot.commands.builtin import next_mode

        self.outbox.submit(ops.SetMode(mode=next_mode(mode)))  # type: ignore[arg-type]

    def action_help(self) -> None:
        self.commands.show_help()

    def action_toggle_tools(self) -> None:
        self.side.show("tools")

    def action_toggle_trace(self) -> None:
        self.side.show("trace")

    def action_narrow_side(self) -> None:
        self._widen(-1)

    def action_widen_side(self) -> None:
        self._widen(1)

    def _widen(self, steps: int) -> None:
        self.side.widen(steps)
        # Where no column shows, nothing on screen moves: say what changed.
        if self.side.narrow:
            self.notify(f"side column: {self.side.width} columns, on a terminal {NARROW} or wider")
        elif not (self.side.shows("tools") or self.side.shows("trace")):
            self.notify(f"side column: {self.side.width} columns, once f2 or f3 shows a pane")

    def action_grow_tools(self) -> None:
        self.side.move_split(1)

    def action_grow_trace(self) -> None:
        self.side.move_split(-1)

    def action_toggle_mouse(self) -> None:
        self.mouse_reporting = not self.mouse_reporting
        set_mouse_capture(self, self.mouse_reporting)
        self.notify(
            "mouse: moot (f4: let the terminal select text)"
            if self.mouse_reporting
            else "mouse: the terminal selects text (f4: give it back to moot)"
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Before the first session opens (the first-run screen), keys that act on a session
        # do nothing; quitting, help, the mouse and moving between fields still work.
        if not self.view.has_session and action in SESSION_ACTIONS:
            return False
        if action in PANE_ACTIONS and self.screen is not self.default_screen:
            return False
        if action in ("chat_page_up", "chat_page_down"):
            return isinstance(self.focused, PromptInput)  # elsewhere: the widget's own
        if action == "follow" and (
            self.screen is not self.default_screen or isinstance(self.focused, OptionList | Tree)
        ):
            return False  # a list's or a tree's own `end`: its last row
        if action in WORD_KEYS:
            field = self.focused
            if isinstance(field, TextArea):
                return not field.text
            if isinstance(field, Input):
                return not field.value
        return True

    def action_follow(self) -> None:
        self.chat.follow()

    def action_load_earlier(self) -> None:
        if not self.chat.more_before:
            self.notify("the whole session is shown")
            return
        self.run_worker(self.chat.load_earlier(), group="history", exclusive=True)

    def action_chat_page_up(self) -> None:
        self.chat.scroll_page_up()

    def action_chat_page_down(self) -> None:
        self.chat.scroll_page_down()

    def action_focus_prompt(self) -> None:
        self.prompt.focus()

    def type_into_prompt(self, key: str, character: str | None) -> None:
        """A key typed on at an approval (`ApprovalPane`): it edits the prompt at once, in
        order with the keys behind it, and the prompt takes the focus."""
        from moot.tui.widgets.approval import EDITING_KEYS

        prompt = self.prompt
        if self._quiet is not None:
            self._quiet.typed()  # typing, as if in the prompt: no collection under it
        if key in EDITING_KEYS:
            getattr(prompt, f"action_{EDITING_KEYS[key]}")()
        elif character:
            prompt.insert(character)
        prompt.focus()

    def on_key(self, event: events.Key) -> None:
        """A character typed while the focus is off every text field (a tool block clicked,
        `tab` to the chat) goes to the prompt, with the focus, not nowhere; a key bound where
        the focus is (a tool block's `f`, the trace's `m`) keeps its action."""
        if (
            not event.is_printable
            or self.screen is not self.default_screen
            or isinstance(self.focused, TextArea | Input | ApprovalPane)
            or ((bound := self.active_bindings.get(event.key)) is not None and bound.enabled)
        ):
            return
        prompts = self.query(PromptInput)
        if not prompts or not prompts.first().focusable:
            return
        event.stop()
        prompts.first().focus()
        # The focus moves in a callback on the app's queue: the key goes after it.
        self.post_message(events.Key(event.key, event.character))

    async def on_unmount(self) -> None:
        if self._options.own_heap:
            loop = asyncio.get_running_loop()
            for number in _QUIT_SIGNALS:
                loop.remove_signal_handler(number)
        await self.view.close()

"""`MootApp`: the Textual app over one session's client.

The app holds a `Client` (the front-end contract) and nothing of the runtime: it sends ops,
renders events (taken by the one bridge worker, `EventBridge`) and reads history through the
client's queries. Layout: the chat pane in the main column with the approval pane and the
prompt below it; the tools pane and the run-trace pane in a side column, which folds away on
narrow terminals, where `f2`/`f3` bring a pane up in the chat's place (`tui/layout.py`); the
status line at the bottom.

Started with a way to open its session (`connect`) rather than a session, the app lays out
its panes and focuses the prompt first, then opens the session in a thread after the first
paint: the person can type meanwhile. What is sent before the session is open waits for it (the
status line says so) and goes, in order, once it is; a session that cannot be opened ends the
app with `error` set (`run_app` prints it).

With no client yet (the first run, no model configured) the app shows the first-run screen
(`screens/setup.py`) and composes its layout once that screen hands it a session. Another
session (`/new`, the palette's sessions) replaces the client and recomposes the layout
(`_switch_client`), so no pane keeps state from the session before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, TextArea, Tree

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from moot.settings_review import HeldSettings
    from moot.tui.screens.setup import FirstRun, Started

from moot.app_prefs import THEME, load_prefs, save_prefs
from moot.commands.display import HISTORY_KINDS
from moot.commands.files import memory_note, use_session_commands
from moot.commands.mentions import MENTION, expand_mentions
from moot.commands.registry import CommandError, Panes, Registry, is_command
from moot.commands.shell import is_shell, run_shell
from moot.history import PromptHistory, history_file
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import Client
from moot.settings import SettingsError
from moot.tui import heap
from moot.tui.bridge import EventBridge
from moot.tui.keys import app_bindings
from moot.tui.layout import NARROW, PaneSizes, SidePanes
from moot.tui.messages import Answered, PromptSubmitted, SessionEvent, Streamed
from moot.tui.palette import PROVIDERS, system_commands
from moot.tui.scrollback import Visit
from moot.tui.search import TranscriptSearch
from moot.tui.side_history import side_history
from moot.tui.terminal import fitted_theme, set_mouse_capture
from moot.tui.themes import DEFAULT_THEME, load_themes
from moot.tui.welcome import welcome
from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.prompt import PromptArea, PromptInput
from moot.tui.widgets.status_line import StatusLine
from moot.tui.widgets.tools_pane import ToolsPane
from moot.tui.widgets.trace import TracePane
from moot.tui.widgets.working import WorkingLine

PaneT = TypeVar("PaneT", bound=Widget)

QUIT_WINDOW_S = 1.5
"""A second ctrl+c within this long quits."""
HISTORY_TAIL = 100
"""Events of a resumed session shown at start (older ones page in on demand): a few screens
of it. Each is a block to mount and lay out before the session shows (200 took ~300 ms)."""

OpenClient = Callable[[], Client]
"""Opens a new session's client (for `/new`)."""
OpenSession = Callable[[str], Client]
"""Opens a stored session's client by id (the palette's sessions), in its own workspace."""
PANE_ACTIONS = frozenset(
    {"toggle_tools", "toggle_trace", "narrow_side", "widen_side", "grow_tools", "grow_trace"}
)
"""The keys that lay out the side panes: only while the panes' screen shows (not under a
picker or the help, whose own fields take `ctrl+left`)."""
WORD_KEYS = frozenset({"narrow_side", "widen_side", "follow"})
"""On `ctrl+left`/`ctrl+right` and `end`, priority keys: the prompt has the focus nearly
always, and as a text field it would take them to move by word or to the line's end. They act
on the app unless the field with the focus holds text, which keeps them for its cursor."""
SESSION_ACTIONS = PANE_ACTIONS | frozenset(
    {
        "interrupt",
        "cycle_mode",
        "follow",
        "focus_prompt",
        "command_palette",
        "load_earlier",
        "chat_page_up",
        "chat_page_down",
    }
)
"""The app's keys that act on a session: off while the first-run screen shows (no session yet)."""


LATEST_USAGE = 50
"""Usage events read when a session resumes: the last of the person's agent says how full its
context is (its peers' come between)."""


class MootApp(App[int]):
    """The terminal app."""

    CSS_PATH = "app.tcss"
    TITLE = "moot"
    BINDINGS = app_bindings()  # type: ignore[assignment]
    ENABLE_COMMAND_PALETTE = True
    COMMANDS = App.COMMANDS | PROVIDERS

    def __init__(
        self,
        client: Client | None,
        *,
        task: str | None = None,
        show_history: bool = False,
        open_client: OpenClient | None = None,
        registry: Registry | None = None,
        history: PromptHistory | None = None,
        clock: Callable[[], float] = time.monotonic,
        first_run: FirstRun | None = None,
        open_session: OpenSession | None = None,
        mouse: bool = True,
        connect: OpenClient | None = None,
        workspace: Path | None = None,
        model: str | None = None,
        own_heap: bool = False,
        held: Sequence[HeldSettings] = (),
    ) -> None:
        """Args:
        client: The session to show; None opens one with `connect`, or shows the first-run
            screen (`first_run` opens it).
        connect: Opens the session (blocking: called in a thread once the prompt shows).
        workspace: The workspace `connect` opens (its prompt history shows before it is open).
        model: The model asked for, shown while the session opens (None: the settings').
        own_heap: The process is the app's alone (`moot`): its heap is frozen once a session
            shows (`tui/heap.py`), and SIGTERM and SIGHUP (the terminal went away) end the app
            as quitting does, so a running turn records its end and its open calls'. Tests,
            which run many apps in one process, leave it off.
        first_run: How the first-run screen opens a session with a model, or the demo.
        open_session: Opens a stored session by id (the palette's sessions).
        mouse: Capture the mouse from the start (`f4` switches it either way).
        held: The workspace's settings files whose grants wait for the person's approval:
            asked about (`tui/trust.py`) before `connect` opens the session.
        """
        super().__init__()
        if client is None and first_run is None and connect is None:
            raise ValueError("MootApp needs a client, a way to open one, or a first run")
        self._client = client
        self._connect = connect
        self._workspace = workspace
        self._model = model
        self._held = tuple(held)
        self._opening: asyncio.Task[Client] | None = None
        """The thread opening the session (`connect`), until it is open."""
        self._side_mounted: AwaitMount | None = None
        """The side panes being mounted after the first paint (`_begin_opening`)."""
        self._approvals_mounted: AwaitMount | None = None
        """The approval pane (hidden until a request) being mounted after the first paint."""
        self._waiting: list[str] = []
        self._switching = False
        """Another session is opening (`/new`, `/resume`): what is sent meanwhile waits for it."""
        self._commands = 0
        """Commands the person sent that still run; what is sent meanwhile waits for them."""
        self._after_commands: list[str] = []
        """What was sent before the session was open, in order."""
        self._session_known = asyncio.Event()
        """Set once a session is shown or none can be: `@` completion waits for it, on the
        loop (a thread waiting for it held a worker the session's tools needed)."""
        if client is not None:
            self._session_known.set()
        self._listing: ThreadPoolExecutor | None = None
        """The one thread that lists the workspace's files for `@` completion (made at the
        first `@`): listing never takes a thread of the loop's executor, which runs tools."""
        self.error: str | None = None
        """Why the session could not be opened (the app then ends)."""
        self._own_heap = own_heap
        self._quiet = (
            heap.QuietCollector(lambda delay, then: self.set_timer(delay, then), time.monotonic)
            if own_heap
            else None
        )
        self._switched = False
        self._first_run = first_run
        self._open_session = open_session
        self.mouse_reporting = mouse
        """Whether the terminal's mouse reports come to the app (off: the terminal selects)."""
        self.visits: list[Visit] = []
        """The sessions shown, in order, each from where it was taken up (printed on exit)."""
        self.chosen_theme = DEFAULT_THEME
        """The theme asked for; `theme` may be its 16-colour stand-in (`tui/terminal.py`)."""
        self._task_text = task
        self._show_history = show_history
        self._open_client = open_client
        self._commands_registry = registry
        self._history = history
        self._clock = clock
        self._last_ctrl_c = -QUIT_WINDOW_S
        self._turn_running = False
        self._sent: dict[str, str] = {}
        """The person's messages sent and not yet answered (`turn_started` or `op_refused`), by
        submission id: one the session refuses goes back into the prompt."""
        self._prefs = load_prefs()
        self.side = SidePanes(self, PaneSizes.from_prefs(self._prefs.get("panes")), self._keep)
        """The side panes' layout: what shows, how big (the person's, kept in the prefs)."""
        self.theme_warnings: list[str] = []
        self._bridge: EventBridge | None = None
        self._search = TranscriptSearch()
        self._panes: dict[type[Widget], Widget] = {}

    # ---- layout ----------------------------------------------------------------------------

    @property
    def client(self) -> Client:
        """The session's client; there is none while the first-run screen shows."""
        if self._client is None:
            raise RuntimeError("no session is open yet (the first-run screen shows)")
        return self._client

    @client.setter
    def client(self, client: Client) -> None:
        self._client = client

    @property
    def registry(self) -> Registry:
        """The slash commands: the built-in ones, made when first asked for (their modules are
        not on the way to the first paint)."""
        if self._commands_registry is None:
            from moot.commands.builtin import builtin_commands

            self._commands_registry = builtin_commands()
        return self._commands_registry

    @property
    def has_session(self) -> bool:
        return self._client is not None

    def compose(self) -> ComposeResult:
        if self._client is None and self._connect is None:
            return  # the first-run screen comes first; `_first_run_done` composes this
        history = self._history or PromptHistory(history_file(self._workspace_path()))
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield ChatPane(self._load_earlier, id="chat")
                yield WorkingLine(self._said_working, clock=self._clock, id="working")
                if self._client is not None:  # else mounted after the first paint
                    yield ApprovalPane(clock=self._clock, id="approval")
                yield PromptArea(
                    history,
                    commands=self._command_completions,
                    paths=self._files,
                    id="prompt-area",
                )
            with Vertical(id="side"):
                if self._client is not None:  # else mounted after the first paint
                    yield from self._side_panes()
        yield StatusLine(id="status")

    def _said_working(self, words: str) -> None:
        """The working line's words, shown in the status line too."""
        self._pane(StatusLine).working(words)

    def _side_panes(self) -> list[Widget]:
        panes: list[Widget] = [ToolsPane(id="tools"), TracePane(clock=self._clock, id="trace")]
        heights = self.side.heights()  # set before they mount: no first frame at another split
        for pane in panes:
            pane.styles.height = heights[pane.id or ""]
        return panes

    def _workspace_path(self) -> Path:
        if self._client is not None:
            return Path(self._client.status().workspace)
        assert self._workspace is not None, "an app that opens its session knows its workspace"
        return self._workspace

    async def _files(self) -> Sequence[str]:
        """The workspace's files for `@` completion: the session's, once one is shown."""
        await self._session_known.wait()
        client = self._client
        if client is None:
            return []
        if self._listing is None:
            self._listing = ThreadPoolExecutor(1, thread_name_prefix="moot-listing")
        return await asyncio.get_running_loop().run_in_executor(self._listing, client.files)

    def _pane(self, kind: type[PaneT]) -> PaneT:
        # Kept once found: a query walks the DOM in order, and the side panes come after every
        # block of the transcript (hundreds), for each event.
        pane = self._panes.get(kind)
        if pane is None or not pane.is_attached:
            pane = self._panes[kind] = self.query_one(kind)
        return pane  # type: ignore[return-value]

    @property
    def chat(self) -> ChatPane:
        return self._pane(ChatPane)

    @property
    def approvals(self) -> ApprovalPane:
        return self._pane(ApprovalPane)

    @property
    def trace(self) -> TracePane:
        return self._pane(TracePane)

    @property
    def prompt(self) -> PromptInput:
        return self._pane(PromptInput)

    def on_load(self) -> None:
        # The theme is set before the stylesheet is first applied: set once the widgets are
        # mounted, it would restyle every one of them before the first paint (~50 ms).
        themes, self.theme_warnings = load_themes()
        for theme in themes:
            self.register_theme(theme)
        wanted = self._prefs.get(THEME)
        names = self.theme_names()
        self.chosen_theme = wanted if isinstance(wanted, str) and wanted in names else DEFAULT_THEME
        self.theme = self.chosen_theme

    async def on_mount(self) -> None:
        if self._own_heap:
            loop = asyncio.get_running_loop()
            for number in _QUIT_SIGNALS:
                loop.add_signal_handler(number, self.exit)
        # The terminal is known now: a 16-colour one takes the theme's stand-in (no change, and
        # so no restyle, on any other).
        self.theme = self.chosen_theme
        if not self.mouse_reporting:
            set_mouse_capture(self, False)
        if self._client is None and self._connect is None:
            assert self._first_run is not None
            from moot.tui.screens.setup import SetupScreen  # only on a first run

            self.push_screen(SetupScreen(self._first_run), self._first_run_done)
            return
        if self._client is None:
            # The prompt first; the session opens once it is on screen (`_begin_opening`).
            self._lay_out()
            self.query_one(StatusLine).opening(self._model)
            if self._held and self._workspace is not None:
                from moot.tui.trust import ask_trust  # only where settings wait for approval

                ask_trust(self, self._workspace, self._held, self._begin_opening)
            else:
                self.call_after_refresh(self._begin_opening)
        else:
            await self._show_session()
        for warning in self.theme_warnings:
            await self.chat.say(warning, warning=True)

    def _lay_out(self) -> None:
        self._fit(self.size.width)
        self.prompt.focus()

    def _begin_opening(self) -> None:
        assert self._connect is not None
        self._opening = asyncio.create_task(asyncio.to_thread(self._connect))
        if self._show_history:
            # A resumed session's history renders markdown as soon as it is open: its modules
            # load meanwhile (the UI thread only waits for the session then), not on the UI
            # thread at the first answer shown (~100 ms).
            from moot.tui.warm import warm_up

            warm_up(then=self._settle_loaded)
        # The side panes (a tree, a list) and the approval pane (hidden until a request) come
        # after the first paint: their styles, layout and rendering are not on the way to the
        # prompt, and nothing reaches them before the session is open (their keys wait for it:
        # `check_action`).
        self._side_mounted = self.query_one("#side").mount(*self._side_panes())
        self._approvals_mounted = self.query_one("#main").mount(
            ApprovalPane(clock=self._clock, id="approval"), before=self.query_one(PromptArea)
        )
        self._await_session()

    @work(group="session", exclusive=True)
    async def _await_session(self) -> None:
        """Show the session once its thread has opened it, then send what waited for it."""
        from moot.client import SetupError

        assert self._opening is not None
        try:
            # Shielded: an app that quits meanwhile still closes the session (`on_unmount`).
            client = await asyncio.shield(self._opening)
        except SetupError as exc:
            self.error = str(exc)
            self.exit()
            return
        finally:
            self._session_known.set()  # an `@` typed meanwhile goes on (with no files if none)
        self._client = client
        for mounting in (self._side_mounted, self._approvals_mounted):
            if mounting is not None:
                await mounting
        await self._show_session(lay_out=False)
        self._send_waiting()
        if not self._show_history:  # a resumed session's began with the opening
            from moot.tui.warm import warm_up

            warm_up(then=self._settle_loaded)

    def _send_waiting(self) -> None:
        """Send, in order, what was sent while the session opened."""
        waiting, self._waiting = self._waiting, []
        for text in waiting:
            self._send(text)

    async def _open_another(self, opener: Callable[[], Client]) -> Client:
        """Open another session in a thread, so the app goes on painting and taking keys (it
        blocked for the opening's ~150 ms, and what was typed meanwhile went to a prompt the
        switch then replaced); what is sent meanwhile waits for the new session."""
        self._switching = True
        try:
            return await asyncio.to_thread(opener)
        except BaseException:
            self._switching = False
            self._send_waiting()  # to the session still shown
            raise

    async def _show_session(self, *, lay_out: bool = True) -> None:
        """Show the session: status, history, the bridge, its notices, the task to send."""
        if lay_out:
            self._lay_out()
        status = self.client.status()
        self.query_one(StatusLine).from_status(status, branch=status.git_branch)
        self.chat.workspace = status.workspace
        with contextlib.suppress(NoMatches):  # mounted after the first paint
            self._pane(ToolsPane).workspace = status.workspace
        # From seq 0 for a new session, not "from now": the task below may be answered before
        # the bridge's worker has subscribed, and nothing of it may be missed.
        after = await self._history_shown() if self._show_history else 0
        self.visits.append(Visit(self.client.session_id, after))
        self._bridge = EventBridge(self.client, self.post_message)
        self._pump(after)
        if not self._show_history:
            await self.chat.say(welcome(status))
        for notice in self.client.status().notices:
            await self.chat.say(notice, warning=True)
        if status.open_run is not None and not status.running:
            # moot ended in the middle of a turn (killed, a crash): it goes on first, as
            # `moot --resume` does headless, asking again for an approval it waited on.
            self._turn_running = True
            self.submit(ops.ResumeRun())
        for warning in use_session_commands(self.registry, self.client):
            await self.chat.say(warning, warning=True)
        if self._task_text:
            task, self._task_text = self._task_text, None
            self._send(task)
        if self._own_heap:
            heap.settle(collect=self._switched)

    def _settle_loaded(self) -> None:
        """The answer's modules are loaded (`warm_up`): in moot's own process, freeze them with
        the rest. Loaded after the first freeze, their ~80k objects were scanned by every
        collection of the oldest generation (~100 ms of each, while an answer streams)."""
        if self._own_heap:
            heap.settle()

    async def _first_run_done(self, started: Started | None) -> None:
        if started is None:
            return
        # A model picked: the task given on the command line goes out now; the demo sends its own.
        task = started.task if started.task is not None else self._task_text
        await self._switch_client(started.client, show_history=False, task=task)
        for warning in self.theme_warnings:
            await self.chat.say(warning, warning=True)

    async def _switch_client(
        self, client: Client, *, show_history: bool, task: str | None = None
    ) -> None:
        """Show `client`'s session instead of the one shown (closed here): every pane is
        composed anew, so nothing of the session before stays."""
        old, self._client = self._client, client
        self._session_known.set()  # the first-run screen's session too: `@` waited for ever
        self._turn_running = False
        self._sent.clear()  # submission ids are the session's own
        if old is not None:
            from moot.client.errors import StoreError  # see `on_unmount`

            with contextlib.suppress(StoreError):  # a run the store stopped: told already
                await old.close()
        if self._own_heap:
            heap.release()  # the old session's panes go; collected before the next freeze
            self._switched = True
        self._show_history, self._task_text = show_history, task
        while len(self.screen_stack) > 1:  # a picker or help over the old session's panes
            await self.pop_screen()
        # Typed, not sent: the new prompt takes it over (the setup screen has no prompt).
        prompts = self.query(PromptInput)
        draft = prompts.first().text if prompts else ""
        await self.recompose()
        if draft:
            self.prompt.load_text(draft)
        await self._show_session()
        self._switching = False
        self._send_waiting()

    async def _history_shown(self) -> int:
        """Show the tail of a resumed session; the seq to go on from live.

        The chat shows the last `HISTORY_TAIL` events of its kinds (older ones page in on
        demand); the trace and tools panes show the trace of that tail, from the start of its
        first run (`tui/side_history.py`): the lines a live app shows for those runs, without
        reading the whole log of a long session.
        """
        query, session_id = self.client.query, self.client.session_id
        summary = query.session(session_id)
        last = summary.event_count if summary else 0
        # Up to `last` only: what came after it is the subscription's to replay (once).
        events = query.events(
            session_id, before_seq=last + 1, kinds=HISTORY_KINDS, limit=HISTORY_TAIL
        )
        side = side_history(query, session_id, events, last)
        for event in side:
            self.trace.take(event)
        self._pane(ToolsPane).show_history(side)
        # Tokens and cost as they stood (the summary's totals: no scan of the log), and how
        # full the context was (the latest usage events; usage is not in the tail).
        latest = query.events(session_id, kinds=("usage",), limit=LATEST_USAGE)
        if summary is not None:
            self.query_one(StatusLine).take_spent(summary.tokens, summary.cost_usd, latest)
        await self.chat.show_history(events, more_before=bool(events) and events[0].seq > 1)
        self.trace.apply_pending()
        return last

    def _load_earlier(self, before_seq: int, limit: int) -> Sequence[ev.Event]:
        return self.client.query.events(
            self.client.session_id, before_seq=before_seq, kinds=HISTORY_KINDS, limit=limit
        )

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

    # ---- the bridge --------------------------------------------------------------------------

    @work(group="bridge", exclusive=True, exit_on_error=False)
    async def _pump(self, after_seq: int | None) -> None:
        assert self._bridge is not None
        client = self.client
        await self._bridge.run(after_seq)
        # The stream ends when the session closes, or early: a run stopped because the store
        # could not be written (a full disk), which it could not record. Said once, here.
        if client is self._client and not client.status().running:
            with contextlib.suppress(NoMatches):  # the app is closing: nothing to show it on
                await self._stream_ended(client.status().failure, client.session_id)

    async def _stream_ended(self, failure: str, session_id: str) -> None:
        if not failure:
            return
        self._turn_running = False
        self.approvals.clear()
        await self.chat.say(
            f"the turn stopped: {failure}. What was stored is kept: once there is room, "
            f"`moot --resume {session_id}` finishes the turn.",
            warning=True,
        )

    @on(Streamed)
    async def _streamed(self, message: Streamed) -> None:
        if self._quiet is not None:
            self._quiet.touch()
        try:
            self._pane(WorkingLine).take_stream(message.kind, len(message.text))
            await self.chat.take_stream(message)
        except NoMatches:  # the app is shutting down: its panes are gone, the bridge not yet
            return

    @on(SessionEvent)
    async def _event(self, message: SessionEvent) -> None:
        if self._quiet is not None:
            self._quiet.touch()
        try:
            await self._show_event(message.event)
        except NoMatches:  # the app is shutting down (see `_streamed`)
            return

    async def _show_event(self, event: ev.Event) -> None:
        # One batch: the side panes' changes and the chat's new block are laid out and painted
        # together. Without it the chat's awaited mount yields, and the screen lays out (the
        # whole screen, every block of the transcript) and paints once for the panes, then again
        # for the block: ~25 ms more before a new message shows in a long session.
        with self.batch_update():
            self.trace.take(event)
            self._pane(ToolsPane).take(event)
            self._pane(StatusLine).take(event)
            self._pane(WorkingLine).take(event)
            await self.chat.take(event)
        match event:
            case ev.TurnStarted() | ev.RunResumed():
                self._turn_running = True
                self._sent.pop(event.submission_id, None)
            case ev.OpRefused() if event.submission_id in self._sent:
                # The chat shows why (a turn already runs, one a crash left open); the message
                # goes back into the prompt, to send again.
                self._give_back(self._sent.pop(event.submission_id))
            case ev.TurnFinished():
                self._turn_running = False
                self.approvals.clear()
            case ev.ApprovalRequested():
                self.approvals.add(event)
            case ev.ApprovalDecided():
                self.approvals.settled(event.call_id, event.tool_call_id)
            case ev.ModelChanged():  # the model's context window comes with its status
                status = self.client.status()
                self._pane(StatusLine).from_status(status, branch=status.git_branch)
            case ev.MemoryNoted():
                self.notify(f"noted in {event.path}")
            case ev.ContextCompacted():
                self.notify(
                    f"context compacted ({event.trigger}): "
                    f"~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
                )

    # ---- what the person does ------------------------------------------------------------------

    @on(PromptSubmitted)
    async def _submitted(self, message: PromptSubmitted) -> None:
        self._send(message.text)

    def _send(self, text: str) -> None:
        if self._client is None or self._switching:
            self._wait_for_session(text)
            return
        if self._commands:
            # A command still runs (`/new` opening the next session, `/model` switching): what
            # is sent after it goes after it, in order, and to the session it leaves.
            self._after_commands.append(text)
            self.notify("a command is still running: this goes once it is done")
            return
        # What the person sends shows where they look: the view follows again (a command
        # that scrolls, `/search`, does so after this).
        self.chat.follow()
        if is_command(text):
            self._run_command(self.registry.run(self, text.strip()))
            return
        if is_shell(text):  # `!command`: the person's own, through the session's sandbox
            self._run_command(run_shell(self, text))
            return
        if (note := memory_note(text)) is not None:
            self.submit(ops.NoteToMemory(text=note))
            return
        if self._turn_running and (to := self._addressed_agent(text)):
            # `@agent message` while a turn runs: for that agent, read at its next step.
            line = f"/msg {to} {text.strip()[len(to) + 1 :].strip()}"
            self._run_command(self.registry.run(self, line))
            return
        if self._turn_running:
            self.notify("a turn is running: wait for it, or press Esc to interrupt it")
            self._give_back(text)
            return
        if MENTION.search(text):  # `@server:uri`: its MCP resource is read first
            self.run_worker(self._send_with_resources(text), group="command")
            return
        if (submission := self.submit(ops.UserTurn(text=text), text=text)) is not None:
            self._sent[submission] = text

    def submit(self, op: ops.Op, *, text: str = "") -> str | None:
        """Submit `op` to the session shown; its submission id. A sessions database that
        cannot be written (a full disk) takes no op: that is told here, a message (`text`)
        goes back into the prompt, and None is returned."""
        try:
            return self.client.submit(op)
        except Exception as exc:
            from moot.client.errors import StoreError  # only when an op failed

            if not isinstance(exc, StoreError):
                raise
            self.notify(str(exc), severity="error", timeout=30)
            if text:
                self._give_back(text)
            return None

    def _give_back(self, text: str) -> None:
        """Put a message that was not sent back into the prompt, before what is typed there
        now, with the cursor at the end (typing goes on after it)."""
        typed = self.prompt.text
        self.prompt.load_text(f"{text}\n{typed}" if typed.strip() else text)
        self.prompt.move_cursor(self.prompt.document.end)

    def _run_command(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a command the person sent; what they send while it runs waits for its end."""
        self._commands += 1  # now, not when the worker starts: the next key may come first

        async def command() -> None:
            try:
                await work
            finally:
                self._commands -= 1
                if not self._commands:
                    after, self._after_commands = self._after_commands, []
                    for text in after:
                        self._send(text)

        self.run_worker(command(), group="command")

    def _wait_for_session(self, text: str) -> None:
        """Keep what is sent while the session opens; it goes, in order, once it is open. One
        message to the model at most (the session runs one turn at a time), as while a turn
        runs."""
        if _starts_a_turn(text) and (
            self._task_text or any(_starts_a_turn(t) for t in self._waiting)
        ):
            self.notify("a message already waits for the session to open: send this after it")
            self.prompt.load_text(text)
            self.prompt.move_cursor(self.prompt.document.end)
            return
        self._waiting.append(text)
        self.query_one(StatusLine).opening(self._model, waiting=len(self._waiting))
        self.notify("the session is still opening: this goes as soon as it is open")

    def _addressed_agent(self, text: str) -> str | None:
        """The agent `@name message` addresses (one of the session's, with a message)."""
        first, _, rest = text.strip().partition(" ")
        name = first[1:]
        if not first.startswith("@") or not rest.strip():
            return None
        return name if name in {a.name for a in self.client.status().agents} else None

    async def _send_with_resources(self, typed: str) -> None:
        text, found = await expand_mentions(self.client, typed)
        submission = self.submit(ops.UserTurn(text=text, attachments=found), text=typed)
        if submission is not None:
            self._sent[submission] = typed

    @on(Answered)
    def _answered(self, message: Answered) -> None:
        self.submit(message.op)  # type: ignore[arg-type]
        self.prompt.focus()

    @on(PromptInput.Typed)
    def _typed(self, message: PromptInput.Typed) -> None:
        if self._quiet is not None:
            self._quiet.typed()
        with contextlib.suppress(NoMatches):  # none until the first paint (`_begin_opening`)
            self.approvals.last_typed = self._clock()

    @on(TracePane.MessageAgent)
    def _message_agent(self, message: TracePane.MessageAgent) -> None:
        self.prompt.load_text(f"@{message.agent} ")
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    @on(TracePane.CancelAgent)
    def _cancel_agent(self, message: TracePane.CancelAgent) -> None:
        self.submit(ops.CancelAgent(task_id=message.call_id))
        self.notify(f"cancelling {message.agent} ({message.call_id})")

    @on(TracePane.Inspect)
    def _inspect(self, message: TracePane.Inspect) -> None:
        """A node's events with its subtree's, read from the store (bounded): a turn's run, an
        agent call's events and its callees', a tool call's output too."""
        from moot.commands.run_events import read, scope_of  # with the inspector, when asked

        scope = scope_of(message.events)
        if scope is None:  # a message, a hook, an error: its own events are all there is
            self.inspect(message.title, message.events)
            return
        shown = read(self.client.query, self.client.session_id, scope)
        self.inspect(message.title, shown.events, note=shown.note)

    def _command_completions(self, typed: str) -> list[tuple[str, str]]:
        name, _, rest = typed.partition(" ")
        if rest or typed.endswith(" "):
            command = self.registry.get(name)
            if command is None or command.complete is None:
                return []
            return [(f"{name} {c}", "") for c in command.complete(self, rest)]
        return [(c.name, c.description) for c in self.registry.completions(name, self)]

    # ---- actions (the keys table names them) ---------------------------------------------------

    def action_interrupt(self) -> None:
        commands = any(w.group == "command" and w.is_running for w in self.workers)
        if self._turn_running or commands:  # a `!command` stops too
            self.submit(ops.Interrupt())

    def action_quit(self) -> None:  # type: ignore[override]
        now = self._clock()
        if now - self._last_ctrl_c < QUIT_WINDOW_S:
            self.exit(0)
            return
        self._last_ctrl_c = now
        if self._turn_running:
            self.submit(ops.Interrupt())
        self.notify("press ctrl+c again to quit", timeout=QUIT_WINDOW_S)

    def action_quit_now(self) -> None:
        self.exit(0)

    def action_cycle_mode(self) -> None:
        mode = self.client.status().mode
        if mode is None:
            self.notify("this session has no permission modes")
            return
        from moot.commands.builtin import next_mode

        self.submit(ops.SetMode(mode=next_mode(mode)))  # type: ignore[arg-type]

    def action_help(self) -> None:
        self.show_help()

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
        if self._client is None and action in SESSION_ACTIONS:
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

    def validate_theme(self, name: str) -> str:
        # Every switch passes here (start, /theme, the palette, Textual's own picker).
        return fitted_theme(self, name)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        return system_commands(self, super().get_system_commands(screen))

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

    # ---- CommandContext: what slash commands may ask of the app --------------------------------

    @property
    def shows_refusals(self) -> bool:
        return True  # the chat shows the session's refused ops

    @property
    def columns(self) -> int:
        # A notice's text inside the chat: its padding and the scrollbar take a few columns.
        return max(20, self.chat.content_size.width - 4)

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        if markdown:
            from rich.markdown import Markdown

            self.run_worker(self.chat.say(Markdown(text), warning=warning), group="say")  # type: ignore[arg-type]
        else:
            self.run_worker(self.chat.say(text, warning=warning), group="say")

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        from moot.tui.screens.picker import (
            PickerScreen,
        )  # loads when first shown

        return await self.push_screen_wait(PickerScreen(title, choices))

    async def ask_secret(self, question: str) -> str | None:
        from moot.tui.screens.secret import SecretScreen  # loads when first shown

        return await self.push_screen_wait(SecretScreen(question))

    def theme_names(self) -> Sequence[str]:
        return sorted(self.available_themes)

    def set_theme(self, name: str) -> None:
        if name not in self.available_themes:
            raise CommandError(f"no theme {name!r}; one of: {', '.join(self.theme_names())}")
        self.chosen_theme = name
        self.theme = name
        self._prefs[THEME] = name
        save_prefs(self._prefs)

    def show_help(self) -> None:
        from moot.tui.screens.help import HelpScreen  # loads when first shown

        self.push_screen(HelpScreen(self.registry))

    async def copy(self, text: str) -> str:
        self.copy_to_clipboard(text)  # OSC 52: the terminal's clipboard, over SSH too
        from moot.commands.clipboard import copy_with_command

        used = await asyncio.to_thread(copy_with_command, text)
        return f"OSC 52 and {used}" if used else "OSC 52, if the terminal allows it"

    def offer(self, text: str, label: str) -> None:
        self.query_one(PromptArea).add_chip(text, label)
        self.notify("it goes with your next message; delete the chip to leave it out")

    def search(self, text: str) -> int:
        return self._search.run(self.chat, text)

    def inspect(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        from moot.tui.screens.inspector import (
            InspectorScreen,
        )  # loads when first shown

        self.push_screen(InspectorScreen(title, events, note=note))

    def panes(self) -> Panes:
        return self.side

    async def new_session(self) -> None:
        if self._open_client is None:
            raise CommandError("this app cannot open another session")
        if self._turn_running:
            raise CommandError("a turn is running: interrupt it first (Esc)")
        from moot.client import SetupError

        try:
            client = await self._open_another(self._open_client)
        except SetupError as exc:  # the settings or the model's key changed since the start
            raise CommandError(f"cannot start a new session: {exc}") from None
        await self._switch_client(client, show_history=False)
        await self.chat.say(f"new session {self.client.session_id}")
        for warning in use_session_commands(self.registry, self.client):
            await self.chat.say(warning, warning=True)

    def edit_file(self, path: str) -> None:
        """Open `path` in `$VISUAL`/`$EDITOR` with the app suspended (`/memory edit`); blocks
        until the editor exits, which is the point: the terminal is the editor's meanwhile."""
        import shlex
        import subprocess

        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        if self.is_headless:
            raise CommandError(f"no terminal to run {editor} in; open {path} yourself")
        with self.suspend():
            subprocess.run([*shlex.split(editor), path], check=False)

    async def open_session(self, session_id: str) -> None:
        """Show a stored session (its history, then live) instead of this one."""
        from moot.client import SetupError

        if self._open_session is None:
            self.say("this app cannot open another session", warning=True)
            return
        if self._turn_running:
            self.say("a turn is running: interrupt it first (Esc)", warning=True)
            return
        from moot.client.errors import SessionBusy

        opener = self._open_session
        try:
            client = await self._open_another(lambda: opener(session_id))
        except (SetupError, SessionBusy) as exc:
            self.say(f"cannot open {session_id}: {exc}", warning=True)
            return
        await self._switch_client(client, show_history=True)

    async def choose_model(self, name: str) -> None:
        """A model picked in the palette: `/model` when there is one, else the default for new
        sessions (remembered in the user settings)."""
        if self.registry.get("model") is not None:
            await self.registry.run(self, f"/model {name}")
            return
        from moot.setup_detect import remember_model

        try:
            remember_model(name)
        except SettingsError as exc:
            self.say(str(exc), warning=True)
            return
        self.say(f"new sessions use {name} (/new starts one); this one goes on with its own")

    async def on_unmount(self) -> None:
        if self._own_heap:
            loop = asyncio.get_running_loop()
            for number in _QUIT_SIGNALS:
                loop.remove_signal_handler(number)
        self._session_known.set()  # no `@` completion waits on a session that never comes
        if self._listing is not None:
            self._listing.shutdown(wait=False, cancel_futures=True)
        if self._client is None and self._opening is not None:
            # A session still opening is waited for, so that it is closed, not left behind; one
            # that could not be opened was reported by `_await_session`.
            with contextlib.suppress(Exception):
                self._client = await asyncio.shield(self._opening)
        if self._client is not None:
            from moot.client.errors import StoreError  # only here: the app's end

            # A run the store stopped (a full disk) was told in the chat (`_stream_ended`);
            # closing raises it again.
            with contextlib.suppress(StoreError):
                await self._client.close()


_QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""What ends the app as quitting does (in moot's own process): a `kill`, a closed terminal."""


def _starts_a_turn(text: str) -> bool:
    """Whether sending `text` asks the model (not a command, `!command` or `#` note)."""
    return not (is_command(text) or is_shell(text) or memory_note(text) is not None)

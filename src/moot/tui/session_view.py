"""`SessionView`: the session the app shows, from opening it to closing it.

It opens the session in a thread after the first paint (`open`), shows it (status, the tail
of a resumed one's history, the bridge's events, its notices, a turn a crash left to go on
with), replaces it with another (`open_another`, `switch_client`: every pane composed anew),
hands each event to the panes (`show_event`) and closes it when the app ends (`close`).

Its own object rather than more of the app (Textual wants one `App`, which stays the shell:
layout, keys, messages): the app owns it and routes to it, and it reaches the app only as a
Textual `App` and through the panes, so neither module imports the other's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.css.query import NoMatches

from moot.commands.files import use_session_commands
from moot.commands.registry import Registry
from moot.frontend.display import HISTORY_KINDS
from moot.frontend.fuzzy import PathIndex
from moot.frontend.network import as_approval
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import Client
from moot.tui import heap
from moot.tui.bridge import EventBridge
from moot.tui.options import AppOptions
from moot.tui.outbox import Outbox
from moot.tui.pane_lookup import PaneLookup
from moot.tui.scrollback import Visit
from moot.tui.side_history import side_history
from moot.tui.welcome import welcome
from moot.tui.widgets.prompt import PromptInput

if TYPE_CHECKING:
    from textual.widget import AwaitMount

HISTORY_TAIL = 100
"""Events of a resumed session shown at start (older ones page in on demand): a few screens
of it. Each is a block to mount and lay out before the session shows (200 took ~300 ms)."""
LATEST_USAGE = 50
"""Usage events read when a session resumes: the last of the person's agent says how full its
context is (its peers' come between)."""


class SessionView:
    """The session shown in `app`.

    Args:
        app: The app (its workers, messages, screens and notices).
        panes: The app's panes.
        outbox: What the person sends; told what the session answers.
        client: The session to show; None while `options.connect` opens it (or the first-run
            screen does).
        options: How the app started (`connect`, `workspace`, `show_history`, `own_heap`).
        registry: The slash commands (the session's own join them when it is shown).
        lay_out: Fits the layout to the terminal and focuses the prompt.
    """

    def __init__(
        self,
        app: App[Any],
        panes: PaneLookup,
        outbox: Outbox,
        client: Client | None,
        options: AppOptions,
        *,
        registry: Callable[[], Registry],
        lay_out: Callable[[], None],
    ) -> None:
        self._app = app
        self._panes = panes
        self._outbox = outbox
        self.client_or_none = client
        """The session shown; None while it opens (or before the first-run screen opens one)."""
        self._options = options
        self._registry = registry
        self._lay_out = lay_out
        self._show_history = options.show_history
        self._opening: asyncio.Task[Client] | None = None
        """The thread opening the session (`connect`), until it is open."""
        self._known = asyncio.Event()
        """Set once a session is shown or none can be: `@` completion waits for it, on the
        loop (a thread waiting for it held a worker the session's tools needed)."""
        if client is not None:
            self._known.set()
        self._listing: ThreadPoolExecutor | None = None
        self._paths: PathIndex | None = None
        """The last files listed for `@` completion (kept: sorting 100,000 takes ~0.1 s)."""
        """The one thread that lists the workspace's files for `@` completion (made at the
        first `@`): listing never takes a thread of the loop's executor, which runs tools."""
        self._switched = False
        self.error: str | None = None
        """Why the session could not be opened (the app then ends)."""
        self.visits: list[Visit] = []
        """The sessions shown, in order, each from where it was taken up (printed on exit)."""
        self.bridge: EventBridge | None = None
        """The bridge of the session shown (its worker pumps the events)."""

    @property
    def client(self) -> Client:
        """The session's client; there is none while the first-run screen shows."""
        if self.client_or_none is None:
            raise RuntimeError("no session is open yet (the first-run screen shows)")
        return self.client_or_none

    @property
    def has_session(self) -> bool:
        return self.client_or_none is not None

    def workspace(self) -> Path:
        """The workspace shown (the one `connect` opens, before it is open)."""
        if self.client_or_none is not None:
            return Path(self.client_or_none.status().workspace)
        assert self._options.workspace is not None, "an app that opens its session knows it"
        return self._options.workspace

    async def files(self) -> PathIndex:
        """The workspace's files for `@` completion, ready to rank: the session's, once one is
        shown. Listed and sorted in a thread of their own (the first time ~0.6 s for 100,000
        files, then ~20 ms while none came or went)."""
        await self._known.wait()
        client = self.client_or_none
        if client is None:
            return PathIndex(())
        if self._listing is None:
            self._listing = ThreadPoolExecutor(1, thread_name_prefix="moot-listing")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._listing, self._path_index, client)

    def _path_index(self, client: Client) -> PathIndex:
        """In the listing thread: the files, sorted for ranking again only when they changed."""
        listed = client.files()
        known = self._paths
        if known is None or known.paths != listed.paths or known.notes != listed.notes:
            known = self._paths = PathIndex(listed.paths, listed.notes)
        return known

    # ---- opening -------------------------------------------------------------------------------

    def open(self, mount_panes: Callable[[], Sequence[AwaitMount]]) -> None:
        """Open the session in a thread (`connect`); `mount_panes` mounts what waits for it
        (the side panes, the approval pane: not on the way to the first paint) once the status
        line shows the session open: mounted meanwhile, they held the opening thread back."""
        assert self._options.connect is not None
        self._opening = asyncio.create_task(asyncio.to_thread(self._options.connect))
        if self._show_history:
            # A resumed session's history renders markdown as soon as it is open: its modules
            # load meanwhile (the UI thread only waits for the session then), not on the UI
            # thread at the first answer shown (~100 ms).
            from moot.tui.warm import warm_up

            warm_up(then=self._settle_loaded)
        self._app.run_worker(self._await_session(mount_panes), group="session", exclusive=True)

    async def _await_session(self, mount_panes: Callable[[], Sequence[AwaitMount]]) -> None:
        """Once its thread has opened the session: its status line, painted; then the panes
        that waited (`mount_panes`); then the session shown, and what waited for it sent."""
        from moot.client import SetupError

        assert self._opening is not None
        try:
            # Shielded: an app that quits meanwhile still closes the session (`close`).
            client = await asyncio.shield(self._opening)
        except SetupError as exc:
            self.error = str(exc)
            self._app.exit()
            return
        finally:
            self._known.set()  # an `@` typed meanwhile goes on (with no files if none)
            if self._options.collector is not None:
                self._options.collector.let_go()  # held since `run_app` began
        self.client_or_none = client
        status = client.status()
        self._panes.status.from_status(status, branch=status.git_branch)
        painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._app.call_after_refresh(_settle, painted)
        await painted
        for mounted in mount_panes():
            await mounted
        await self.show(lay_out=False)
        self._outbox.send_waiting()
        if not self._show_history:  # a resumed session's began with the opening
            from moot.tui.warm import warm_up

            warm_up(then=self._settle_loaded)

    async def open_another(self, opener: Callable[[], Client]) -> Client:
        """Open another session in a thread, so the app goes on painting and taking keys (it
        blocked for the opening's ~150 ms, and what was typed meanwhile went to a prompt the
        switch then replaced); what is sent meanwhile waits for the new session."""
        self._outbox.switching = True
        try:
            return await asyncio.to_thread(opener)
        except BaseException:
            self._outbox.switching = False
            self._outbox.send_waiting()  # to the session still shown
            raise

    def _settle_loaded(self) -> None:
        """The answer's modules are loaded (`warm_up`): in moot's own process, freeze them with
        the rest. Loaded after the first freeze, their ~80k objects were scanned by every
        collection of the oldest generation (~100 ms of each, while an answer streams)."""
        if self._options.own_heap:
            heap.settle()

    # ---- showing -------------------------------------------------------------------------------

    async def show(self, *, lay_out: bool = True) -> None:
        """Show the session: status, history, the bridge, its notices, the task to send."""
        if lay_out:
            self._lay_out()
        client, chat = self.client, self._panes.chat
        status = client.status()
        self._panes.status.from_status(status, branch=status.git_branch)
        chat.workspace = status.workspace
        chat.thumbnails = self._options.thumbnails
        with contextlib.suppress(NoMatches):  # mounted after the first paint
            self._panes.tools.workspace = status.workspace
        # From seq 0 for a new session, not "from now": the task below may be answered before
        # the bridge's worker has subscribed, and nothing of it may be missed.
        after = await self._history_shown() if self._show_history else 0
        self.visits.append(Visit(client.session_id, after))
        self.bridge = EventBridge(client, self._app.post_message)
        self._app.run_worker(self._pump(after), group="bridge", exclusive=True, exit_on_error=False)
        if not self._show_history:
            await chat.say(welcome(status))
        for notice in client.status().notices:
            await chat.say(notice, warning=True)
        if status.open_run is not None and not status.running:
            # moot ended in the middle of a turn (killed, a crash): it goes on first, as
            # `moot --resume` does headless, asking again for an approval it waited on.
            self._outbox.turn_running = True
            self._outbox.submit(ops.ResumeRun())
        for warning in use_session_commands(self._registry(), client):
            await chat.say(warning, warning=True)
        self._outbox.send_task()
        if self._options.own_heap:
            heap.settle(collect=self._switched)

    async def switch_client(
        self, client: Client, *, show_history: bool, task: str | None = None
    ) -> None:
        """Show `client`'s session instead of the one shown (closed here): every pane is
        composed anew, so nothing of the session before stays."""
        old, self.client_or_none = self.client_or_none, client
        self._known.set()  # the first-run screen's session too: `@` waited for ever
        self._outbox.new_session(task)  # submission ids are the session's own
        if old is not None:
            from moot.client.errors import StoreError  # see `close`

            with contextlib.suppress(StoreError):  # a run the store stopped: told already
                await old.close()
        if self._options.own_heap:
            heap.release()  # the old session's panes go; collected before the next freeze
            self._switched = True
        self._show_history = show_history
        app = self._app
        while len(app.screen_stack) > 1:  # a picker or help over the old session's panes
            await app.pop_screen()
        # Typed, not sent: the new prompt takes it over (the setup screen has no prompt).
        prompts = app.query(PromptInput)
        draft = prompts.first().text if prompts else ""
        await app.recompose()
        if draft:
            self._panes.prompt.load_text(draft)
        await self.show()
        self._outbox.switching = False
        self._outbox.send_waiting()

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
        trace = self._panes.trace
        for event in side:
            trace.take(event)
        self._panes.tools.show_history(side)
        # Tokens and cost as they stood (the summary's totals: no scan of the log), and how
        # full the context was (the latest usage events; usage is not in the tail).
        latest = query.events(session_id, kinds=("usage",), limit=LATEST_USAGE)
        if summary is not None:
            self._panes.status.take_spent(summary.tokens, summary.cost_usd, latest)
        chat = self._panes.chat
        await chat.show_history(events, more_before=bool(events) and events[0].seq > 1)
        trace.apply_pending()
        return last

    def load_earlier(self, before_seq: int, limit: int) -> Sequence[ev.Event]:
        """Older events of the history, for the chat's "load earlier"."""
        return self.client.query.events(
            self.client.session_id, before_seq=before_seq, kinds=HISTORY_KINDS, limit=limit
        )

    # ---- the bridge ------------------------------------------------------------------------

    async def _pump(self, after_seq: int | None) -> None:
        assert self.bridge is not None
        client = self.client
        await self.bridge.run(after_seq)
        # The stream ends when the session closes, or early: a run stopped because the store
        # could not be written (a full disk), which it could not record. Said once, here.
        if client is self.client_or_none and not client.status().running:
            with contextlib.suppress(NoMatches):  # the app is closing: nothing to show it on
                await self._stream_ended(client.status().failure, client.session_id)

    async def _stream_ended(self, failure: str, session_id: str) -> None:
        if not failure:
            return
        self._outbox.turn_running = False
        self._panes.approvals.clear()
        await self._panes.chat.say(
            f"the turn stopped: {failure}. What was stored is kept: once there is room, "
            f"`moot --resume {session_id}` finishes the turn.",
            warning=True,
        )

    async def show_event(self, event: ev.Event) -> None:
        """An event of the session, in every pane that shows it."""
        panes = self._panes
        # One batch: the side panes' changes and the chat's new block are laid out and painted
        # together. Without it the chat's awaited mount yields, and the screen lays out (the
        # whole screen, every block of the transcript) and paints once for the panes, then again
        # for the block: ~25 ms more before a new message shows in a long session.
        with self._app.batch_update():
            panes.trace.take(event)
            panes.tools.take(event)
            panes.status.take(event)
            panes.working.take(event)
            await panes.chat.take(event)
        self._outbox.answered(event)
        match event:
            case ev.TurnFinished():
                panes.approvals.clear()
            case ev.ApprovalRequested():
                panes.approvals.add(event)
            case ev.ApprovalDecided():
                panes.approvals.settled(event.call_id, event.tool_call_id)
            case ev.NetworkAccessRequested():  # asked as an approval (`frontend.network`)
                panes.approvals.add(as_approval(event))
            case ev.NetworkAccessDecided():
                panes.approvals.settled("", event.request_id)
            case ev.McpQuestionAsked() | ev.McpQuestionAnswered():
                self._mcp_question(event)
            case ev.ModelChanged():  # the model's context window comes with its status
                status = self.client.status()
                panes.status.from_status(status, branch=status.git_branch)
            case ev.MemoryNoted():
                self._app.notify(f"noted in {event.path}")
            case ev.ContextCompacted():
                self._app.notify(
                    f"context compacted ({event.trigger}): "
                    f"~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
                )

    def _mcp_question(self, event: ev.McpQuestionAsked | ev.McpQuestionAnswered) -> None:
        """Put a server's question on its screen; close the screen once it is answered."""
        from moot.tui.screens.mcp_question import McpQuestionScreen

        if isinstance(event, ev.McpQuestionAnswered):
            for screen in self._app.screen_stack:
                if isinstance(screen, McpQuestionScreen) and screen.question.ask_id == event.ask_id:
                    screen.withdraw()
            return

        def answered(op: ops.AnswerMcpQuestion | None) -> None:
            if op is not None:
                self._outbox.submit(op)

        self._app.push_screen(McpQuestionScreen(event, clock=self._options.clock), answered)

    # ---- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """The app ends: close the session shown, or the one still opening."""
        self._known.set()  # no `@` completion waits on a session that never comes
        if self._listing is not None:
            self._listing.shutdown(wait=False, cancel_futures=True)
        if self.client_or_none is None and self._opening is not None:
            # A session still opening is waited for, so that it is closed, not left behind; one
            # that could not be opened was reported by `_await_session`.
            with contextlib.suppress(Exception):
                self.client_or_none = await asyncio.shield(self._opening)
        if self.client_or_none is not None:
            from moot.client.errors import StoreError  # only here: the app's end

            # A run the store stopped (a full disk) was told in the chat (`_stream_ended`);
            # closing raises it again.
            with contextlib.suppress(StoreError):
                await self.client_or_none.close()


def _settle(future: asyncio.Future[None]) -> None:
    """Resolve `future` (a paint it waited for came), unless it was cancelled meanwhile."""
    if not future.done():
        future.set_result(None)

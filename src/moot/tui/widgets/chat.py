"""The chat pane: the transcript of the session, streamed live and paged in from the store.

It uses `layout: stream` (Textual's fast layout for long lists of full-width blocks) and
anchors to the bottom while it follows the answer; when the person scrolls up, Textual
releases the anchor and new blocks collect below without moving the view.

The mounted transcript is bounded: Textual has no widget virtualization and every mount
reflows every widget, so past `HIGH_WATER` blocks the oldest are removed down to `LOW_WATER`
(only while following, so nothing moves under the person's eyes), and "load earlier" pages
them back in from the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from moot.frontend.attach import placeholders
from moot.frontend.display import HISTORY_KINDS
from moot.frontend.notices import notice, turn_spent, turn_stopped
from moot.protocol import events as ev
from moot.protocol.messages import Attachment
from moot.tui.messages import Streamed
from moot.tui.widgets.answer import AnswerBlock
from moot.tui.widgets.blocks import (
    ErrorBlock,
    NoticeBlock,
    PeerCallBlock,
    ThinkingBlock,
    UserBlock,
    halfcell_picture,
)
from moot.tui.widgets.tool_block import ToolBlock

HIGH_WATER = 200
"""Mounted blocks past which the oldest are pruned (see the module docstring)."""
LOW_WATER = 120
"""How many blocks remain after a prune."""
PAGE = 200
"""Events read from the store per "load earlier"."""

LoadEarlier = Callable[[int, int], Sequence[ev.Event]]
"""(before_seq, limit) -> the events before `before_seq` (the last `limit` of them)."""


class LoadEarlierButton(Static):
    """Shown at the top when older blocks are not mounted; a click pages them in."""

    DEFAULT_CSS = """
    LoadEarlierButton { color: $text-muted; text-style: underline; padding: 0 1; }
    """

    def on_click(self) -> None:
        chat = self.parent
        if isinstance(chat, ChatPane):
            self.app.run_worker(chat.load_earlier(), group="history", exclusive=True)


class ChatPane(VerticalScroll):
    """The transcript."""

    DEFAULT_CSS = """
    ChatPane { layout: stream; height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, load_earlier: LoadEarlier | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._load = load_earlier
        self._answers: dict[str, AnswerBlock] = {}
        self._thinking: dict[str, ThinkingBlock] = {}
        self._tools: dict[tuple[str, str], ToolBlock] = {}
        self._depth: dict[str, int] = {}
        self._batch: list[Widget] | None = None
        self.workspace = ""
        """The session's workspace: tool calls show paths inside it relative to it."""
        self.thumbnails = False
        """Draw a thumbnail under each image line of a message (`ui.imageThumbnails`)."""
        self.oldest_seq = 0
        """The seq of the oldest event shown; "load earlier" reads before it."""
        self.more_before = False

    def on_mount(self) -> None:
        self.anchor()

    # ---- what arrives --------------------------------------------------------------------

    async def take_stream(self, message: Streamed) -> None:
        """Streamed text or thinking for an agent call."""
        if message.kind == "thinking":
            block = self._thinking.get(message.call_id)
            if block is None:
                block = ThinkingBlock(depth=message.depth)
                self._thinking[message.call_id] = block
                await self._add(block)
            block.add(message.text)
            return
        answer = self._answers.get(message.call_id)
        if answer is None:
            answer = AnswerBlock(message.agent, depth=message.depth)
            self._answers[message.call_id] = answer
            await self._add(answer)
        await answer.write(message.text)

    async def _pictures(self, attachments: tuple[Attachment, ...]) -> list[Text | None]:
        """The thumbnail of each attachment when they are on: decoded in a thread (tens of ms
        an image), so the app keeps drawing meanwhile."""
        if not self.thumbnails or not attachments:
            return []
        return await asyncio.to_thread(lambda: [halfcell_picture(a) for a in attachments])

    async def take(self, event: ev.Event) -> None:
        """An event other than a delta."""
        depth = self._depth.get(event.call_id, 0)
        seq = event.seq
        if seq and (not self.oldest_seq or seq < self.oldest_seq):
            self.oldest_seq = seq
        match event:
            case ev.TurnStarted():
                self._depth[event.call_id] = 0
                files = [(f.path, f.note, bool(f.text)) for f in event.files]
                lines = placeholders(event.attachments)
                pictures = await self._pictures(event.attachments)
                await self._add(
                    UserBlock(
                        event.prompt, seq=seq, files=files, attachments=lines, pictures=pictures
                    )
                )
            case ev.AgentCalled():
                self._depth[event.call_id] = event.depth
                await self._add(
                    PeerCallBlock(
                        event.caller, event.agent, event.message, seq=seq, depth=event.depth
                    )
                )
            case ev.ModelResponded():
                await self._responded(event, depth)
            case ev.ToolStarted():
                # From the store (`_batch`), a call with no result yet is one a stopped run left:
                # it shows without a spinner, which would run until the run is resumed, if ever.
                block = ToolBlock(
                    event.tool,
                    event.arguments,
                    seq=seq,
                    depth=depth,
                    spin=self._batch is None,
                    workspace=self.workspace,
                )
                self._tools[(event.call_id, event.tool_call_id)] = block
                await self._add(block)
            case ev.ToolOutput():
                tool = self._tools.get((event.call_id, event.tool_call_id))
                if tool is not None:
                    tool.add_output(event.text)
            case ev.ToolFinished():
                tool = self._tools.pop((event.call_id, event.tool_call_id), None)
                if tool is None:  # its start is on a page not loaded
                    tool = ToolBlock(event.tool, {}, seq=seq, depth=depth)
                    await self._add(tool)
                tool.finish(
                    event.content,
                    is_error=event.is_error,
                    duration_ms=event.duration_ms,
                    display=event.display,
                )
            case ev.Error():
                await self._add(ErrorBlock(f"{event.source} error: {event.message}", seq=seq))
            case ev.TurnFinished():
                await self._finished(event)
            case _:
                shown = notice(event)
                if shown is not None:
                    at = depth if shown.in_call else 0
                    await self._notice(shown.text, seq, at, warning=shown.warning)

    async def _responded(self, event: ev.ModelResponded, depth: int) -> None:
        thinking = self._thinking.pop(event.call_id, None)
        if thinking is None and event.thinking and self._batch is not None:
            thinking = ThinkingBlock(seq=event.seq, depth=depth)
            thinking.add("\n".join(t.text for t in event.thinking))
            await self._add(thinking)
        answer = self._answers.pop(event.call_id, None)
        if answer is not None:
            await answer.finish(event.text)
        elif event.text:
            await self._add(
                AnswerBlock.finished_answer(event.text, event.agent, seq=event.seq, depth=depth)
            )

    async def _finished(self, event: ev.TurnFinished) -> None:
        for call_id in list(self._answers):
            await self._answers.pop(call_id).finish()
        self._thinking.clear()
        stopped = turn_stopped(event)
        if stopped is not None:
            await self._notice(stopped.text, event.seq, 0, warning=True)
        spent = Text(turn_spent(event), style="dim")
        await self._add(NoticeBlock(spent, seq=event.seq))

    async def _notice(self, text: str, seq: int, depth: int, *, warning: bool = False) -> None:
        block = NoticeBlock(text, seq=seq, depth=depth)
        block.set_class(warning, "-warning", update=False)  # styled once, when it mounts
        await self._add(block)

    async def say(self, text: str | Text, *, warning: bool = False) -> None:
        """A line from the app itself (a command's answer), shown as written: a command's
        answer quotes what files hold (a repository's hook command, its rules), and read as
        markup `[black on black]` would hide it."""
        block = NoticeBlock(Text(text) if isinstance(text, str) else text)
        block.set_class(warning, "-warning", update=False)
        await self._add(block)

    # ---- mounting, history and pruning ------------------------------------------------------

    async def _add(self, widget: Widget) -> None:
        if self._batch is not None:
            self._batch.append(widget)
            return
        await self.mount(widget)
        self._prune()

    async def show_history(self, events: Iterable[ev.Event], *, more_before: bool) -> None:
        """Show events from the store as finished blocks, mounted at once (one reflow)."""
        self._batch = []
        try:
            for event in events:
                await self.take(event)
        finally:
            blocks, self._batch = self._batch, None
        self.more_before = more_before
        if more_before:
            blocks.insert(0, LoadEarlierButton("▴ load earlier"))
        if blocks:
            await self.mount_all(blocks, before=0 if self.children else None)
        self.scroll_end(animate=False, immediate=True)

    async def load_earlier(self) -> None:
        """Page older events in from the store, above what is shown."""
        if self._load is None or not self.oldest_seq:
            return
        page = [e for e in self._load(self.oldest_seq, PAGE) if e.kind in HISTORY_KINDS]
        await self.query(LoadEarlierButton).remove()
        first_seq = self.oldest_seq
        self._batch = []
        try:
            for event in page:
                await self.take(event)
        finally:
            blocks, self._batch = self._batch, None
        self.oldest_seq = page[0].seq if page else first_seq
        self.more_before = bool(page) and page[0].seq > 1
        if self.more_before:
            blocks.insert(0, LoadEarlierButton("▴ load earlier"))
        if blocks:
            self.release_anchor()
            await self.mount_all(blocks, before=0)

    def _prune(self) -> None:
        """Remove the oldest blocks past the high-water mark, while following the answer."""
        children = [c for c in self.children if not isinstance(c, LoadEarlierButton)]
        if len(children) <= HIGH_WATER or not self.following:
            return
        gone = children[: len(children) - LOW_WATER]
        seqs = [getattr(c, "seq", 0) for c in children[len(gone) :] if getattr(c, "seq", 0)]
        self.oldest_seq = min(seqs) if seqs else self.oldest_seq
        for widget in gone:
            for key, block in list(self._tools.items()):
                if block is widget:
                    del self._tools[key]
        self.remove_children(gone)
        if not self.query(LoadEarlierButton):
            self.more_before = True
            self.mount(LoadEarlierButton("▴ load earlier"), before=0)

    @property
    def following(self) -> bool:
        """The view follows new blocks: anchored, and the person has not scrolled away."""
        # `is_anchored` says only that `anchor()` was called: while the person has scrolled up,
        # Textual keeps the anchor, released (`_anchor_released`; 8.2 has no public name).
        return self.is_anchored and not self._anchor_released

    def follow(self) -> None:
        """Scroll to the bottom and stay there as blocks arrive."""
        self.anchor()

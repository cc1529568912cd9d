"""The run-trace pane: a live tree of the session.

Turns hold agent calls (forward to the callee, return with its stop reason), which hold their
tool calls, approvals and hooks, each with timings, tokens and cost. Events are applied at most
`UPDATES_PER_S` times a second (a tree rebuilds its lines on every change, and lays the screen
out again): the first after a quiet spell at once, in the frame that shows it in the chat too
(a frame of its own would cost a whole layout and paint more), the ones that follow it within
the interval collected for one timer. A finished subtree collapses. Selecting a node posts
`TracePane.Inspect` with its own events (the app reads its subtree's from the store).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from moot.frontend.display import one_line
from moot.protocol import events as ev
from moot.protocol.activity import CallActivity
from moot.protocol.states import RunState
from moot.tui.keys import bindings_for

UPDATES_PER_S = 10

PASSED_OVER = frozenset({"text_delta", "thinking_delta", "state_changed", "tool_output"})
"""Kinds the trace passes over, live (`take`) and from the store: no line shows them, and no
call's state moves on tool output (`CallActivity`: a call that waits runs no tool, and a
waiting `get_messages` waits for its own result), of which a command may print thousands of
lines (each would have woken the pane's batch timer)."""
TRACED_KINDS = tuple(sorted(ev.EVENT_KINDS - PASSED_OVER - ev.SESSION_KINDS))
"""What the trace of a resumed session is read from (`tui/side_history.py`): every kind that
may change a line, so the tree equals the live one. Session events belong to no call."""

Node = TreeNode[list[ev.Event]]


class AgentCall:
    """What an agent call's line shows: who, what it was asked, its state (the rule of
    `protocol.activity`, as `format_trace` and `get_agent_status` read it) and its spend."""

    def __init__(self, called: ev.AgentCalled) -> None:
        self.called = called
        self.activity = CallActivity()
        self.tokens = 0
        self.cost_usd = 0.0

    @property
    def returned(self) -> ev.AgentReturned | None:
        ended = self.activity.ended
        return ended if isinstance(ended, ev.AgentReturned) else None

    def label(self) -> Text:
        called = self.called
        arrow = ("⇢ ", "magenta") if called.background else ("→ ", "cyan")
        line = Text.assemble(arrow, (called.agent, "bold"), f" {one_line(called.message, 30)}")
        if self.returned is not None:
            seconds = (self.returned.ts - called.ts).total_seconds()
            line.append(f"  ← {self.returned.stop_reason}", _state_style(self.returned.state))
            line.append(f" · {seconds:.1f}s", "dim")
        else:
            line.append(f"  {self.activity.state}", "yellow")
        if self.tokens:
            line.append(f" · {self.tokens:,} tok · ${self.cost_usd:.4f}", "dim")
        return line


class RootCall:
    """The line of a turn's first call: its agent, and what it waits for while it waits (the
    turn's line above it says how the turn ended; the chat shows it running)."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.activity = CallActivity()

    def label(self) -> Text:
        line = Text(self.agent, style="bold")
        if self.activity.waiting:
            line.append(f"  {self.activity.state}", "yellow")
        return line


def _state_style(state: RunState) -> str:
    return "green" if state is RunState.COMPLETED else "red"


class TracePane(Tree[list[ev.Event]]):
    """The call tree of the session, updated in batches."""

    DEFAULT_CSS = """
    TracePane {
        height: 1fr; padding: 0 1; background: $surface;
        border-top: solid $panel; border-title-color: $text-muted; border-title-style: bold;
        border-title-align: left;
        /* A finished turn's line (task, time, tokens, cost) is wider than the column: the pane
           still scrolls sideways to it, but draws no bar, whose thumb on the pane's last row
           (beside the prompt's border) showed as a stray block glyph. */
        scrollbar-size-horizontal: 0;
    }
    """

    BINDINGS = bindings_for("trace")  # type: ignore[assignment]

    # Plain classes, not dataclasses (~0.7 ms each to create, before the app's first paint).
    class Inspect(Message):
        """The person selected a node: these are its own events (its first says what it is)."""

        def __init__(self, title: str, events: list[ev.Event]) -> None:
            super().__init__()
            self.title, self.events = title, events

    class MessageAgent(Message):
        """The person wants to message the agent of the highlighted call."""

        def __init__(self, agent: str) -> None:
            super().__init__()
            self.agent = agent

    class CancelAgent(Message):
        """The person cancels the highlighted call (and everything it started)."""

        def __init__(self, call_id: str, agent: str) -> None:
            super().__init__()
            self.call_id, self.agent = call_id, agent

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, **kw: object) -> None:
        super().__init__("session", data=[], **kw)  # type: ignore[arg-type]
        self.border_title = "run trace"
        self._clock = clock
        self._applied_at = -1.0 / UPDATES_PER_S
        """When a batch was last applied."""
        self.show_root = False
        self.guide_depth = 2
        self._pending: list[ev.Event] = []
        self._calls: dict[str, Node] = {}
        self._tools: dict[tuple[str, str], Node] = {}
        self._agent_calls: dict[str, AgentCall] = {}
        self._roots: dict[str, RootCall] = {}
        self._timer: Timer | None = None
        self.updates = 0
        """How many batches were applied (benchmarks read it)."""

    def take(self, event: ev.Event) -> None:
        """Take an event: applied now after a quiet spell, else at the next batch."""
        if event.kind in PASSED_OVER:
            return
        self._pending.append(event)
        if self._timer is not None:
            return
        wait = self._applied_at + 1 / UPDATES_PER_S - self._clock()
        if wait <= 0:
            self.apply_pending()
        else:
            self._timer = self.set_timer(wait, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer = None
        self.apply_pending()

    def apply_pending(self) -> None:
        """Apply every queued event now (one rebuild of the tree's lines)."""
        if self._timer is not None:  # applied before its timer: it has nothing left to do
            self._timer.stop()
            self._timer = None
        pending, self._pending = self._pending, []
        if not pending:
            return
        for event in pending:
            self._apply(event)
        # The lines rebuilt now rather than when first drawn: their new height and width (the
        # tree's virtual size, which asks for a layout) are then laid out in the same frame as
        # the change, not in a second one.
        _ = self.last_line
        self._applied_at = self._clock()
        self.updates += 1

    def _apply(self, event: ev.Event) -> None:
        self._track(event)
        match event:
            case ev.TurnStarted() | ev.AgentCalled() | ev.AgentReturned():
                self._call_line(event)
            case ev.ToolStarted() | ev.ToolFinished():
                self._tool_line(event)
            case ev.ApprovalRequested() | ev.ApprovalDecided():
                self._approval_line(event)
            case ev.MessageSent():
                parent = self._calls.get(event.call_id, self.root)
                who = f"message {event.sender} → {event.to_agent}: "
                parent.add_leaf(Text(who + one_line(event.text, 40), style="magenta"), data=[event])
            case ev.HookRan():
                parent = self._calls.get(event.call_id, self.root)
                parent.add_leaf(
                    Text(f"hook {event.hook_event}: {event.decision}", style="dim"), data=[event]
                )
            case ev.UsageRecorded():
                self._spent(event)
            case ev.Error() | ev.LimitHit():
                parent = self._calls.get(event.call_id, self.root)
                what = event.message if isinstance(event, ev.Error) else event.detail
                parent.add_leaf(Text(one_line(what, 50), style="red"), data=[event])
            case ev.TurnFinished():
                self._turn_finished(event)

    def _call_line(self, event: ev.TurnStarted | ev.AgentCalled | ev.AgentReturned) -> None:
        """A turn and its first call, a peer's call under its caller, or a call's return."""
        match event:
            case ev.TurnStarted():
                label = Text.assemble(("turn ", "bold"), one_line(event.prompt, 40))
                run = self.root.add(label, data=[event], expand=True)
                root = self._roots[event.call_id] = RootCall(event.agent)
                call = run.add(root.label(), data=[event], expand=True)
                self._calls[event.call_id] = call
            case ev.AgentCalled():
                parent = self._calls.get(event.parent_call_id or "", self.root)
                called = self._agent_calls[event.call_id] = AgentCall(event)
                self._calls[event.call_id] = parent.add(called.label(), data=[event], expand=True)
            case ev.AgentReturned():
                node = self._calls.get(event.call_id)
                returning = self._agent_calls.get(event.call_id)
                if node is not None and returning is not None:
                    node.data.append(event)  # type: ignore[union-attr]
                    node.collapse()

    def _tool_line(self, event: ev.ToolStarted | ev.ToolFinished) -> None:
        if isinstance(event, ev.ToolStarted):
            parent = self._calls.get(event.call_id, self.root)
            label = Text.assemble(("… ", "yellow"), (event.tool, "bold"))
            node = parent.add_leaf(label, data=[event])
            self._tools[(event.call_id, event.tool_call_id)] = node
            return
        found = self._tools.get((event.call_id, event.tool_call_id))
        if found is not None:
            found.data.append(event)  # type: ignore[union-attr]
            mark = ("✗ ", "red") if event.is_error else ("✓ ", "green")
            found.set_label(
                Text.assemble(mark, (event.tool, "bold"), (f" {event.duration_ms:.0f}ms", "dim"))
            )

    def _approval_line(self, event: ev.ApprovalRequested | ev.ApprovalDecided) -> None:
        key = (event.call_id, "approval:" + event.tool_call_id)
        node = self._tools.get(key)
        if isinstance(event, ev.ApprovalRequested):
            if node is not None:
                node.data.append(event)  # type: ignore[union-attr]
                return  # asked again after a resume: the same question, one node
            parent = self._calls.get(event.call_id, self.root)
            self._tools[key] = parent.add_leaf(
                Text.assemble(("? ", "yellow"), f"approve {event.tool}"), data=[event]
            )
            return
        verdict = ("allowed", "green") if event.approved else ("refused", "red")
        label = Text.assemble(verdict, f" by {event.by}")
        if node is None:
            parent = self._calls.get(event.call_id, self.root)
            parent.add_leaf(label, data=[event])
        else:
            node.data.append(event)  # type: ignore[union-attr]
            node.set_label(label)

    def _spent(self, event: ev.UsageRecorded) -> None:
        node = self._calls.get(event.call_id)
        if node is not None:
            node.data.append(event)  # type: ignore[union-attr]
        spender = self._agent_calls.get(event.call_id)
        if spender is not None:
            spender.tokens += event.usage.input_tokens + event.usage.output_tokens
            spender.cost_usd += event.cost_usd
            self._redraw(event.call_id)

    def _turn_finished(self, event: ev.TurnFinished) -> None:
        """The turn's line says how it ended, what it took and cost; it collapses."""
        root_call = self._calls.get(event.call_id)
        run = root_call.parent if root_call is not None else None
        if run is None:
            return
        run.data.append(event)  # type: ignore[union-attr]
        tokens = event.usage.input_tokens + event.usage.output_tokens
        run.set_label(
            Text.assemble(
                run.label,
                (
                    f"  {event.stop_reason} · {event.duration_ms / 1000:.1f}s · "
                    f"{tokens:,} tok · ${event.cost_usd:.4f}",
                    _state_style(event.state),
                ),
            )
        )
        run.collapse()

    def get_label_width(self, node: Node) -> int:
        # The tree measures every shown line on each rebuild (for its virtual width), and
        # Tree's own way renders each label to measure it: most of an update with thousands of
        # nodes. The same width, without building a Text: the expand icon and the label.
        icon = ""
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
        label = node.label
        return cell_len(icon) + (label.cell_len if isinstance(label, Text) else cell_len(label))

    def _track(self, event: ev.Event) -> None:
        """Give an event to its call's activity; redraw the call's line if its state moved."""
        call: AgentCall | RootCall | None = self._agent_calls.get(event.call_id)
        if call is None:
            call = self._roots.get(event.call_id)
        if call is None:
            return
        before = (call.activity.state, call.activity.waiting)
        call.activity.apply(event)
        if (call.activity.state, call.activity.waiting) != before:
            self._redraw(event.call_id)

    def _redraw(self, call_id: str) -> None:
        """Redraw a call's line after its state or spend changed."""
        node = self._calls.get(call_id)
        call: AgentCall | RootCall | None = self._agent_calls.get(call_id)
        if call is None:
            call = self._roots.get(call_id)
        if call is not None and node is not None:
            node.set_label(call.label())

    def _highlighted_call(self) -> AgentCall | None:
        node = self.cursor_node
        first = node.data[0] if node is not None and node.data else None
        if isinstance(first, ev.AgentCalled):
            return self._agent_calls.get(first.call_id)
        return None

    def action_message_agent(self) -> None:
        if (call := self._highlighted_call()) is not None:
            self.post_message(self.MessageAgent(call.called.agent))

    def action_cancel_agent(self) -> None:
        call = self._highlighted_call()
        if call is not None and call.returned is None:
            self.post_message(self.CancelAgent(call.called.call_id, call.called.agent))

    def on_tree_node_selected(self, message: Tree.NodeSelected[list[ev.Event]]) -> None:
        message.stop()
        node = message.node
        self.post_message(self.Inspect(str(node.label), list(node.data or [])))

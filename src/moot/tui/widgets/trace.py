"""The run-trace pane: a live tree of the session.

Turns hold agent calls (forward to the callee, return with its stop reason), which hold their
tool calls, approvals and hooks, each with timings, tokens and cost. Events collect and are
applied at most `UPDATES_PER_S` times a second (a tree rebuilds its lines on every change), and a
finished subtree collapses. Selecting a node posts `TracePane.Inspect` with its events.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from moot.protocol import events as ev
from moot.protocol.states import RunState

UPDATES_PER_S = 10

Node = TreeNode[list[ev.Event]]


def _state_style(state: RunState) -> str:
    return "green" if state is RunState.COMPLETED else "red"


class TracePane(Tree[list[ev.Event]]):
    """The call tree of the session, updated in batches."""

    DEFAULT_CSS = """
    TracePane { height: 1fr; padding: 0 1; background: $surface; }
    """

    @dataclass
    class Inspect(Message):
        """The person selected a node: show these events."""

        title: str
        events: list[ev.Event]

    def __init__(self, **kw: object) -> None:
        super().__init__("session", data=[], **kw)  # type: ignore[arg-type]
        self.show_root = False
        self.guide_depth = 2
        self._pending: list[ev.Event] = []
        self._calls: dict[str, Node] = {}
        self._tools: dict[tuple[str, str], Node] = {}
        self._timer: Timer | None = None
        self.updates = 0
        """How many batches were applied (benchmarks read it)."""

    def take(self, event: ev.Event) -> None:
        """Queue an event; it shows at the next batch."""
        if isinstance(event, ev.TextDelta | ev.ThinkingDelta | ev.StateChanged):
            return
        self._pending.append(event)
        if self._timer is None:
            self._timer = self.set_timer(1 / UPDATES_PER_S, self.apply_pending)

    def apply_pending(self) -> None:
        """Apply every queued event now (one rebuild of the tree's lines)."""
        self._timer = None
        pending, self._pending = self._pending, []
        if not pending:
            return
        for event in pending:
            self._apply(event)
        self.updates += 1

    def _apply(self, event: ev.Event) -> None:
        match event:
            case ev.TurnStarted():
                label = Text.assemble(("turn ", "bold"), _short(event.prompt, 40))
                run = self.root.add(label, data=[event], expand=True)
                call = run.add(Text(event.agent, style="bold"), data=[event], expand=True)
                self._calls[event.call_id] = call
            case ev.AgentCalled():
                parent = self._calls.get(event.parent_call_id or "", self.root)
                label = Text.assemble(
                    ("→ ", "cyan"), (event.agent, "bold"), f" {_short(event.message, 30)}"
                )
                self._calls[event.call_id] = parent.add(label, data=[event], expand=True)
            case ev.AgentReturned():
                node = self._calls.get(event.call_id)
                if node is not None:
                    node.data.append(event)  # type: ignore[union-attr]
                    node.label = Text.assemble(
                        node.label,
                        (f"  ← {event.stop_reason}", _state_style(event.state)),
                    )
                    node.collapse()
            case ev.ToolStarted():
                parent = self._calls.get(event.call_id, self.root)
                label = Text.assemble(("… ", "yellow"), (event.tool, "bold"))
                node = parent.add_leaf(label, data=[event])
                self._tools[(event.call_id, event.tool_call_id)] = node
            case ev.ToolFinished():
                node = self._tools.get((event.call_id, event.tool_call_id))
                if node is not None:
                    node.data.append(event)  # type: ignore[union-attr]
                    mark = ("✗ ", "red") if event.is_error else ("✓ ", "green")
                    node.set_label(
                        Text.assemble(
                            mark, (event.tool, "bold"), (f" {event.duration_ms:.0f}ms", "dim")
                        )
                    )
            case ev.ApprovalRequested():
                parent = self._calls.get(event.call_id, self.root)
                node = parent.add_leaf(
                    Text.assemble(("? ", "yellow"), f"approve {event.tool}"), data=[event]
                )
                self._tools[(event.call_id, "approval:" + event.tool_call_id)] = node
            case ev.ApprovalDecided():
                node = self._tools.get((event.call_id, "approval:" + event.tool_call_id))
                verdict = ("allowed", "green") if event.approved else ("refused", "red")
                label = Text.assemble(verdict, f" by {event.by}")
                if node is None:
                    parent = self._calls.get(event.call_id, self.root)
                    parent.add_leaf(label, data=[event])
                else:
                    node.data.append(event)  # type: ignore[union-attr]
                    node.set_label(label)
            case ev.HookRan():
                parent = self._calls.get(event.call_id, self.root)
                parent.add_leaf(
                    Text(f"hook {event.hook_event}: {event.decision}", style="dim"), data=[event]
                )
            case ev.UsageRecorded():
                node = self._calls.get(event.call_id)
                if node is not None:
                    node.data.append(event)  # type: ignore[union-attr]
            case ev.Error() | ev.LimitHit():
                parent = self._calls.get(event.call_id, self.root)
                what = event.message if isinstance(event, ev.Error) else event.detail
                parent.add_leaf(Text(_short(what, 50), style="red"), data=[event])
            case ev.TurnFinished():
                root_call = self._calls.get(event.call_id)
                turn = root_call.parent if root_call is not None else None
                if turn is not None:
                    run = turn
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

    def on_tree_node_selected(self, message: Tree.NodeSelected[list[ev.Event]]) -> None:
        message.stop()
        node = message.node
        self.post_message(self.Inspect(str(node.label), list(node.data or [])))


def _short(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"

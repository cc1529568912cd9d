"""Event scripts for the app's tests (not a test module): sessions written by hand, as the
runtime would record them, for `moot.testing.FakeClient` to play."""

from __future__ import annotations

from datetime import UTC, datetime

from moot.protocol import events as ev
from moot.protocol.messages import ToolCall, Usage
from moot.protocol.states import RunState, StopReason
from moot.testing import FakeClient

T0 = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)

DIFF = """\
--- a/greeting.py
+++ b/greeting.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return "hi " + name
+    return f"hello, {name}!"
"""

PLAN = """\
## Plan

1. Change `greet` to say *hello*.
2. Run the tests.
"""


class Run:
    """Builds the events of one run, ids and times filled in."""

    def __init__(self, run_id: str = "run_1", agent: str = "moot") -> None:
        self.run_id, self.agent = run_id, agent
        self.events: list[ev.Event] = []

    def _ids(
        self, call_id: str | None = None, agent: str | None = None, parent: str | None = None
    ) -> dict:
        return {
            "run_id": self.run_id,
            "call_id": call_id or self.run_id,
            "agent": agent or self.agent,
            "parent_call_id": parent,
            "ts": T0,
        }

    def add(self, event: ev.Event) -> Run:
        self.events.append(event)
        return self

    def start(self, prompt: str) -> Run:
        return self.add(ev.TurnStarted(**self._ids(), prompt=prompt, mode="default"))

    def text(self, text: str, *, pieces: int = 4, **ids: str) -> Run:
        step = max(1, len(text) // pieces)
        for i in range(0, len(text), step):
            self.add(ev.TextDelta(**self._ids(**ids), text=text[i : i + step]))
        return self

    def responded(self, text: str = "", calls: tuple[ToolCall, ...] = (), **ids: str) -> Run:
        return self.add(
            ev.ModelResponded(**self._ids(**ids), model="scripted", text=text, tool_calls=calls)
        )

    def tool(
        self,
        tool_call_id: str,
        tool: str,
        arguments: dict,
        content: str,
        *,
        display: dict | None = None,
        is_error: bool = False,
        **ids: str,
    ) -> Run:
        self.add(
            ev.ToolStarted(
                **self._ids(**ids), tool_call_id=tool_call_id, tool=tool, arguments=arguments
            )
        )
        return self.add(
            ev.ToolFinished(
                **self._ids(**ids),
                tool_call_id=tool_call_id,
                tool=tool,
                content=content,
                is_error=is_error,
                duration_ms=12.0,
                display=display or {},
            )
        )

    def ask(self, tool_call_id: str, tool: str, arguments: dict, preview: str, **ids: str) -> Run:
        return self.add(
            ev.ApprovalRequested(
                **self._ids(**ids),
                tool_call_id=tool_call_id,
                tool=tool,
                arguments=arguments,
                preview=preview,
                reason="edits a file",
                suggested_rules=(f"Edit({arguments.get('path', '*')})",),
            )
        )

    def decided(self, tool_call_id: str, approved: bool = True, **ids: str) -> Run:
        return self.add(
            ev.ApprovalDecided(
                **self._ids(**ids), tool_call_id=tool_call_id, approved=approved, by="user"
            )
        )

    def finish(self, output: str, state: RunState = RunState.COMPLETED) -> Run:
        reason = StopReason.COMPLETED if state is RunState.COMPLETED else StopReason.USER_CANCELLED
        return self.add(
            ev.TurnFinished(
                **self._ids(),
                state=state,
                stop_reason=reason,
                output=output,
                turns=2,
                usage=Usage(input_tokens=1200, output_tokens=80),
                cost_usd=0.0042,
                duration_ms=2300.0,
            )
        )


def edit_session() -> list[ev.Event]:
    """A read, an edit that asks for approval (with its diff), and an answer."""
    run = Run().start("make greet say hello")
    run.text("Let me look at the file first.").responded(
        "Let me look at the file first.",
        (ToolCall(id="t1", name="read", arguments={"path": "greeting.py"}),),
    )
    run.tool(
        "t1", "read", {"path": "greeting.py"}, "1\tdef greet(name):\n2\t    return 'hi ' + name"
    )
    args = {"path": "greeting.py", "old": "'hi ' + name", "new": "f'hello, {name}!'"}
    run.responded("", (ToolCall(id="t2", name="edit", arguments=args),))
    run.ask("t2", "edit", args, DIFF)
    run.decided("t2")
    run.tool(
        "t2", "edit", args, "Edited greeting.py: 1 replacement, at line 2.", display={"diff": DIFF}
    )
    answer = "Done: `greet` now says **hello**."
    run.text(answer).responded(answer)
    return run.finish(answer).events


def plan_session() -> list[ev.Event]:
    """A turn in plan mode that ends in a plan approval."""
    run = Run().start("plan the change")
    run.responded("", (ToolCall(id="p1", name="exit_plan_mode", arguments={"plan": PLAN}),))
    return run.ask("p1", "exit_plan_mode", {"plan": PLAN}, PLAN).events


def peer_session() -> list[ev.Event]:
    """The lead calls two peers in parallel; each runs a tool; the lead answers."""
    run = Run(agent="lead").start("review the change")
    calls = (
        ToolCall(
            id="c1",
            name="call_agent",
            arguments={"agent_name": "reviewer", "message": "read the diff"},
        ),
        ToolCall(
            id="c2",
            name="call_agent",
            arguments={"agent_name": "tester", "message": "run the tests"},
        ),
    )
    run.responded("I'll ask two peers.", calls)
    for tid, (peer, call_id, tool, arg) in {
        "c1": ("reviewer", "call_r", "git_diff", {}),
        "c2": ("tester", "call_t", "bash", {"command": "pytest -q"}),
    }.items():
        run.add(
            ev.ToolStarted(
                **run._ids(), tool_call_id=tid, tool="call_agent", arguments={"agent_name": peer}
            )
        )
        run.add(
            ev.AgentCalled(
                **run._ids(call_id, peer, run.run_id),
                caller="lead",
                message=f"{peer}: go",
                depth=1,
                tool_call_id=tid,
            )
        )
        run.tool("x" + tid, tool, arg, "ok", call_id=call_id, agent=peer, parent=run.run_id)
        run.text(f"{peer} says fine.", call_id=call_id, agent=peer, parent=run.run_id)
        run.responded(f"{peer} says fine.", call_id=call_id, agent=peer, parent=run.run_id)
        run.add(
            ev.AgentReturned(
                **run._ids(call_id, peer, run.run_id),
                state=RunState.COMPLETED,
                stop_reason=StopReason.COMPLETED,
                output=f"{peer} says fine.",
            )
        )
        run.add(
            ev.ToolFinished(
                **run._ids(), tool_call_id=tid, tool="call_agent", content="fine", duration_ms=40.0
            )
        )
    run.text("Both peers agree.").responded("Both peers agree.")
    return run.finish("Both peers agree.").events


def traced_session() -> list[ev.Event]:
    """Everything the trace shows, over two turns: the first is `peer_session` where the
    tester asks an approval, the reviewer messages the lead and each peer spends; in the second
    (a stopped run) a background helper waits for a message and the lead spends."""
    events: list[ev.Event] = []
    for event in peer_session():
        peer = {"call_r": "reviewer", "call_t": "tester"}.get(event.call_id)
        ids = {"run_id": "run_1", "call_id": event.call_id, "agent": event.agent, "ts": T0}
        ids["parent_call_id"] = event.parent_call_id
        if peer == "tester" and isinstance(event, ev.ToolStarted):
            who = {"call_id": event.call_id, "agent": peer, "parent": "run_1"}
            asked = Run().ask(event.tool_call_id, event.tool, event.arguments, "$ pytest", **who)
            events += asked.decided(event.tool_call_id, **who).events
        if peer == "reviewer" and isinstance(event, ev.ToolStarted):
            to = {"to_call_id": "run_1", "to_agent": "lead"}
            events.append(ev.MessageSent(**ids, sender="reviewer", **to, text="one moment"))
        if peer is not None and isinstance(event, ev.AgentReturned):
            spent = Usage(input_tokens=1000, output_tokens=200)
            events.append(ev.UsageRecorded(**ids, model="scripted", usage=spent, cost_usd=0.25))
        events.append(event)
    run = Run(run_id="run_2", agent="lead").start("dig in the background")
    helper = run._ids("call_h", "helper", "run_2")
    run.add(ev.AgentCalled(**helper, caller="lead", message="dig", depth=1, background=True))
    run.add(ev.ToolStarted(**helper, tool_call_id="g1", tool="get_messages", arguments={}))
    run.add(ev.WaitingForMessage(**helper, timeout_s=30, tool_call_id="g1"))
    spent = Usage(input_tokens=500, output_tokens=50)
    run.add(ev.UsageRecorded(**helper, model="scripted", usage=spent, cost_usd=0.1))
    return events + run.events


class Interrupted(FakeClient):
    """A session moot ended in the middle of a turn: its status names the run left open
    (not running) until the front end sends its first op."""

    def status(self):  # type: ignore[no-untyped-def]
        import msgspec

        status = super().status()
        if self.ops:
            return status
        return msgspec.structs.replace(status, open_run="run_left_open", running=False)

"""The run-trace pane's live call tree: agent calls (background ones too) with their state and
spend, and the keys that message or cancel the highlighted agent."""

from __future__ import annotations

import pytest

from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import ToolCall, Usage
from moot.protocol.states import RunState
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.widgets.blocks import NoticeBlock
from tui_apps import app_for, shown
from tui_scripts import Run, traced_session


def helper_label(app: MootApp) -> str:
    trace = app.trace
    trace.apply_pending()
    node = trace._calls["call_h"]
    return str(node.label)


async def test_a_background_agent_shows_its_state_and_spend_and_can_be_messaged_or_cancelled() -> (
    None
):
    run = Run(agent="lead").start("dig in the background")
    called = ev.AgentCalled(
        **run._ids("call_h", "helper", "run_1"),
        caller="lead",
        message="dig into the parser",
        depth=1,
        background=True,
    )
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.emit(*run.events, called)
        await pilot.pause()
        assert helper_label(app).startswith("⇢ helper dig into the parser  running")

        ask = Run(agent="lead").ask(
            "t9", "edit", {"path": "p.py"}, "-a\n+b", call_id="call_h", agent="helper",
            parent="run_1",
        )  # fmt: skip
        client.emit(ask.events[-1])
        await pilot.pause()
        assert "waiting for approval" in helper_label(app)
        usage = ev.UsageRecorded(
            **run._ids("call_h", "helper", "run_1"),
            model="scripted",
            usage=Usage(input_tokens=1000, output_tokens=200),
            cost_usd=0.25,
        )
        client.emit(usage)
        await pilot.pause()
        assert "1,200 tok · $0.2500" in helper_label(app)
        decided = Run(agent="lead").decided("t9", call_id="call_h", agent="helper", parent="run_1")
        client.emit(decided.events[-1])
        await pilot.pause()
        assert "  running · 1,200 tok" in helper_label(app)

        trace = app.trace
        trace.focus()
        trace.move_cursor(trace._calls["call_h"])
        await pilot.press("x")
        await pilot.pause()
        assert client.ops[-1] == ops.CancelAgent(task_id="call_h")
        await pilot.press("m")
        await pilot.pause()
        assert app.prompt.text == "@helper " and app.focused is app.prompt

        client.emit(
            ev.AgentReturned(
                **run._ids("call_h", "helper", "run_1"),
                state="cancelled",  # type: ignore[arg-type]
                stop_reason="user_cancelled",  # type: ignore[arg-type]
                output="",
            )
        )
        await pilot.pause()
        label = helper_label(app)
        assert "← user_cancelled" in label and "1,200 tok" in label and "running" not in label


def root_label(app: MootApp) -> str:
    app.trace.apply_pending()
    return str(app.trace._calls["run_1"].label)


async def test_an_agent_waiting_for_a_message_says_so_until_its_next_event() -> None:
    """The lead's answer waits for its background helper; the helper waits in get_messages.
    Each line says "waiting for a message" until what ends that wait (the lead's delivery, the
    helper's get_messages result, not another tool's), as format_trace and get_agent_status
    read the same events."""
    run = Run(agent="lead").start("dig in the background")
    called = ev.AgentCalled(
        **run._ids("call_h", "helper", "run_1"),
        caller="lead",
        message="dig into the parser",
        depth=1,
        background=True,
    )
    helper = run._ids("call_h", "helper", "run_1")
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.emit(*run.events, called)
        await pilot.pause()
        assert root_label(app) == "lead"  # running: the chat shows it; the line stays plain
        client.emit(
            ev.WaitingForMessage(**run._ids()),
            ev.ToolStarted(**helper, tool_call_id="g1", tool="get_messages", arguments={}),
            ev.WaitingForMessage(**helper, timeout_s=30, tool_call_id="g1"),
            ev.ToolStarted(**helper, tool_call_id="r1", tool="read", arguments={}),
            ev.ToolFinished(**helper, tool_call_id="r1", tool="read", content="x"),
        )
        await pilot.pause()
        assert root_label(app) == "lead  waiting for a message"
        assert helper_label(app).endswith("dig into the parser  waiting for a message")

        client.emit(
            ev.ToolFinished(**helper, tool_call_id="g1", tool="get_messages", content="m"),
            ev.StateChanged(
                **run._ids(), from_state=RunState.DECISION_RECEIVED, to_state=RunState.MODEL_PENDING
            ),
        )
        await pilot.pause()
        assert helper_label(app).endswith("dig into the parser  running")
        assert root_label(app) == "lead  waiting for a message"  # a state change is no wake
        client.emit(ev.MessagesDelivered(**run._ids(), count=1))
        await pilot.pause()
        assert root_label(app) == "lead"


async def test_a_message_to_the_person_shows_in_the_chat_and_under_its_sender_in_the_trace() -> (
    None
):
    run = Run(agent="lead").start("dig")
    called = ev.AgentCalled(
        **run._ids("call_h", "helper", "run_1"), caller="lead", message="dig", depth=1
    )
    sent = ev.MessageSent(
        **run._ids("call_h", "helper", "run_1"),
        sender="helper",
        to_call_id=None,
        to_agent="user",
        text="Which branch\nshould I use?",
    )
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.emit(*run.events, called, sent)
        await pilot.pause()
        app.trace.apply_pending()
        (leaf,) = [
            n for n in app.trace._calls["call_h"].children if isinstance(n.data[0], ev.MessageSent)
        ]
        assert str(leaf.label) == "message helper → user: Which branch should I use?"
        said = [str(b.render()) for b in app.query(NoticeBlock)]
        assert "message helper → user: Which branch should I use?" in said


async def test_the_trace_measures_each_line_as_the_tree_itself_would() -> None:
    """`TracePane.get_label_width` (measured without rendering) gives Tree's own widths: for an
    expanded and a collapsed node, a leaf, and labels with wide characters."""
    from textual.widgets import Tree

    client = FakeClient(autoplay=False)
    app = app_for(client)
    events = Run(run_id="run_1").start("fix the 日本語 parser").finish("done").events
    events += Run(run_id="run_2").start("and the lexer ✓").events
    async with app.run_test(size=(160, 48)) as pilot:
        trace = app.trace
        for event in events:
            trace.take(event)
        trace.apply_pending()
        trace._calls["run_2"].add_leaf("✓ read 3ms")
        await pilot.pause()
        nodes, todo = [], [trace.root]
        while todo:
            node = todo.pop()
            nodes.append(node)
            todo += node.children
        assert {n.is_expanded for n in nodes if n.allow_expand} == {True, False}
        assert any(not n.allow_expand for n in nodes)
        for node in nodes:
            assert trace.get_label_width(node) == Tree.get_label_width(trace, node)


def trace_lines(app: MootApp) -> list[str]:
    """Every node of the trace (folded ones too), indented by depth, marked + when expanded."""
    app.trace.apply_pending()
    lines: list[str] = []

    def walk(node, depth: int) -> None:  # type: ignore[no-untyped-def]
        for child in node.children:
            mark = "+" if child.is_expanded else "-"
            lines.append(f"{'  ' * depth}{mark} {child.label}")
            walk(child, depth + 1)

    walk(app.trace.root, 0)
    return lines


async def side_panes_shown(*, resumed: bool) -> tuple[list[str], list[str], list[str]]:
    """The trace's lines, the tools pane's rows and the chat's notices of `traced_session`,
    played live or shown as a resumed session's history."""
    from textual.widgets import OptionList

    from moot.tui.widgets.tools_pane import ToolsPane

    client = FakeClient(traced_session(), autoplay=False)
    if resumed:
        client.play()
    app = app_for(client, show_history=resumed)
    async with app.run_test(size=(160, 48)) as pilot:
        if resumed:
            await pilot.pause()
        else:
            client.play()
            await shown(pilot)  # a fixed pause missed events under load
        options = app.query_one(ToolsPane).query_one(OptionList)
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        said = [str(b.render()) for b in app.query(NoticeBlock)]
        notices = [text for text in said if not text.startswith("moot in ")]  # but the welcome
        return trace_lines(app), rows, notices


async def test_a_resumed_session_shows_the_trace_tools_and_messages_the_live_app_showed() -> None:
    """Resumed, the trace has the live tree (callees returned and folded, their spend, the
    approval, the message, the background helper still waiting), the tools pane the live rows
    and the chat the live notices (the message between peers among them)."""
    live = await side_panes_shown(resumed=False)
    resumed = await side_panes_shown(resumed=True)
    assert resumed == live
    trace, rows, notices = live
    assert "    - → reviewer reviewer: go  ← completed · 0.0s · 1,200 tok · $0.2500" in trace
    assert "      - allowed by user" in trace
    assert "      - message reviewer → lead: one moment" in trace
    assert "    + ⇢ helper dig  waiting for a message · 550 tok · $0.1000" in trace
    assert trace[0].startswith("- turn review the change  completed")  # folded once finished
    assert "✓ tester: bash allowed (once)" in rows and "… get_messages" in rows
    assert "message reviewer → lead: one moment" in notices


async def test_a_resumed_chat_shows_a_refused_op_as_the_live_one_did() -> None:
    refused = ev.OpRefused(
        session_id="ses_test", op="user_turn", reason="no agent 'ghost' in this run"
    )
    client = FakeClient([*traced_session(), refused], autoplay=False)
    client.play()
    app = app_for(client, show_history=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        notices = [str(b.render()) for b in app.query(NoticeBlock)]
    assert "user_turn: no agent 'ghost' in this run" in notices


async def test_a_long_resumed_session_traces_the_tail_it_shows_from_its_first_runs_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chat's tail begins inside run 28: the trace shows runs 28 and 29 whole, nothing
    older, and no read of the log is unbounded."""
    from moot.tui import session_view as app_module

    monkeypatch.setattr(app_module, "HISTORY_TAIL", 10)  # six events a turn: 1⅔ turns
    script: list[ev.Event] = []
    for i in range(30):
        run = Run(run_id=f"run_{i}").start(f"question {i}")
        run.responded("", (ToolCall(id=f"t{i}", name="read", arguments={"path": "a.py"}),))
        run.tool(f"t{i}", "read", {"path": "a.py"}, "1\tx = 1")
        script += run.responded(f"answer {i}").finish(f"answer {i}").events
    client = FakeClient(script, autoplay=False)
    client.play()
    reads: list[dict[str, object]] = []
    real_events = client.query.events

    def events(session_id: str, **kw: object) -> list[ev.Event]:
        reads.append(kw)
        return real_events(session_id, **kw)  # type: ignore[arg-type]

    client.query.events = events  # type: ignore[method-assign]
    app = app_for(client, show_history=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        turns = [line for line in trace_lines(app) if line.lstrip("+- ").startswith("turn ")]
        assert [t.split("  ")[0] for t in turns] == ["- turn question 28", "- turn question 29"]
        assert "    - ✓ read 12ms" in trace_lines(app)
    assert reads and all(r.get("limit") for r in reads)


def nested_calls() -> list[ev.Event]:
    """The lead calls a reviewer, which calls a linter; the lead's own tool runs meanwhile."""
    run = Run(agent="lead").start("review it")
    reviewer = {"call_id": "call_r", "agent": "reviewer", "parent": "run_1"}
    linter = {"call_id": "call_l", "agent": "linter", "parent": "call_r"}
    run.add(ev.AgentCalled(**run._ids(**reviewer), caller="lead", message="review", depth=1))
    run.tool("r1", "read", {"path": "a.py"}, "x = 1", **reviewer)
    run.add(ev.AgentCalled(**run._ids(**linter), caller="reviewer", message="lint", depth=2))
    run.tool("o1", "grep", {"pattern": "x"}, "a.py:1", **{**reviewer, "call_id": "run_1"})
    run.tool("l1", "bash", {"command": "ruff check"}, "clean", **linter)
    run.text("clean", **linter).responded("clean", **linter)
    for ids in (linter, reviewer):
        run.add(
            ev.AgentReturned(
                **run._ids(**ids), state="completed", stop_reason="completed", output="ok"
            )  # type: ignore[arg-type]
        )
    return run.responded("done").finish("done").events


async def test_selecting_a_call_in_the_trace_inspects_its_events_and_its_callees() -> None:
    """Keyboard only: the trace focused, the turn unfolded, the reviewer's line selected. The
    inspector shows the reviewer's events and its linter's, in order, without the lead's tool
    that ran meanwhile or the deltas; the turn's line shows its whole run."""
    from moot.tui.screens.inspector import InspectorScreen

    client = FakeClient(nested_calls(), autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.play()
        await pilot.pause()
        app.trace.apply_pending()
        app.trace.focus()
        await pilot.press("down", "space", "down", "down")  # the turn, unfolded; lead; reviewer
        assert str(app.trace.cursor_node.label).startswith("→ reviewer review")  # type: ignore[union-attr]
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert [(e.kind, e.call_id) for e in screen._events] == [
            ("agent_called", "call_r"),
            ("tool_started", "call_r"),
            ("tool_finished", "call_r"),
            ("agent_called", "call_l"),
            ("tool_started", "call_l"),
            ("tool_finished", "call_l"),
            ("model_responded", "call_l"),
            ("agent_returned", "call_l"),
            ("agent_returned", "call_r"),
        ]
        assert screen._note.startswith("text and thinking deltas left out")
        await pilot.press("escape")
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert [e.seq for e in screen._events] == [
            e.seq for e in client.log if not isinstance(e, ev.TextDelta)
        ]


async def test_an_approval_asked_again_after_a_resume_is_one_node() -> None:
    """A turn resumed at an approval asks it again (`approval_requested` once more for the
    same call): the trace keeps one question, answered once."""
    run = Run().start("edit it")
    run.ask("t1", "edit", {"path": "a.py"}, "--- a/a.py\n")
    resumed = ev.RunResumed(**run._ids(), interrupted_tool_calls=())
    run.add(resumed)
    run.ask("t1", "edit", {"path": "a.py"}, "--- a/a.py\n").decided("t1")
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.emit(*run.events)
        await pilot.pause()
        lines = trace_lines(app)
        assert [line.strip() for line in lines if "approve" in line or "allowed" in line] == [
            "- allowed by user"
        ]


async def test_a_line_wider_than_the_trace_pane_draws_no_scrollbar_beside_the_prompt() -> None:
    """A finished turn's line (its task, time, tokens and cost) is wider than the side column.
    The trace scrolls sideways to it, but draws no horizontal scrollbar: on the pane's last row,
    beside the prompt's border, its thumb showed as a stray block glyph (issue 29)."""
    from textual.scrollbar import ScrollBar

    client = FakeClient(autoplay=False)
    app = app_for(client)
    task = "edit @hello.py so that it greets the whole world, then run the tests"
    async with app.run_test(size=(120, 32)) as pilot:
        client.emit(*Run().start(task).finish("done").events)
        await pilot.pause()
        trace = app.trace
        trace.apply_pending()
        await pilot.pause()
        assert trace.virtual_size.width > trace.content_region.width  # wider than the pane
        region = trace.region
        bottom_row = [
            app.get_widget_at(x, region.bottom - 1)[0] for x in range(region.x, region.right)
        ]
        assert not any(isinstance(w, ScrollBar) for w in bottom_row)
        assert trace.content_region.bottom == region.bottom  # the row is the tree's own

"""The contract: every event and op survives a JSON round trip unchanged."""

from __future__ import annotations

import typing
from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest

from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import AttachedFile, Attachment, Thinking, ToolCall, Usage
from moot.protocol.states import RunState, StopReason

IDS = {
    "seq": 42,
    "session_id": "ses_1",
    "run_id": "run_1",
    "agent": "critic",
    "call_id": "call_2",
    "parent_call_id": "run_1",
    # A non-UTC offset and microseconds must both survive.
    "ts": datetime(
        2026, 11, 29, 12, 30, 1, 123456, tzinfo=timezone(timedelta(hours=5, minutes=30))
    ),
}
IMAGE = Attachment(mime_type="image/png", data="iVBORw0KGgo=", name="shot.png")
CALL = ToolCall(id="t1", name="read", arguments={"path": "a.py", "lines": [1, 2], "opt": None})
BROKEN = ToolCall(id="t2", name="edit", arguments_error="not JSON", raw_arguments='{"old": ')

EXAMPLES: list[ev.Event] = [
    ev.TurnStarted(
        **IDS,
        prompt="fix ünïcode ✓ in @a.py",
        attachments=(IMAGE,),
        files=(AttachedFile(path="a.py", text="x = 1"), AttachedFile(path="b", note="a dir")),
        limits={"max_turns": 5},
        pool=("critic", "main"),
    ),
    ev.AgentCalled(**IDS, caller="main", message="check this", depth=2, tool_call_id="t9"),
    ev.AgentReturned(**IDS, state=RunState.STOPPED, stop_reason=StopReason.MAX_TURNS, output="x"),
    ev.TurnFinished(
        **IDS,
        state=RunState.COMPLETED,
        stop_reason=StopReason.COMPLETED,
        output="done",
        turns=3,
        usage=Usage(input_tokens=10, output_tokens=5, cache_read_tokens=2, cache_write_tokens=1),
        cost_usd=0.0125,
        duration_ms=12.5,
    ),
    ev.RunResumed(**IDS, interrupted_tool_calls=("t1", "t2")),
    ev.AutoCommitted(**IDS, sha="0123abcd", subject="fix the typo", files=("README.md",)),
    ev.StateChanged(
        **IDS, from_state=RunState.TOOL_RUNNING, to_state=RunState.OBSERVATION_RECORDED
    ),
    ev.LimitHit(**IDS, stop_reason=StopReason.MAX_COST, detail="spent 1.2 USD of 1"),
    ev.Error(**IDS, source="provider", message="HTTP 529", retryable=True),
    ev.TextDelta(**IDS, text="Hel"),
    ev.ThinkingDelta(**IDS, text="hmm"),
    ev.ModelResponded(
        **IDS,
        model="scripted",
        text="ok",
        thinking=(Thinking(text="why", signature="sig=="),),
        tool_calls=(CALL, BROKEN),
        finish_reason="tool_use",
        partial=False,
    ),
    ev.UsageRecorded(**IDS, model="m", usage=Usage(input_tokens=1), cost_usd=0.5),
    ev.GateDecided(**IDS, action="replace", text="new", tool_calls=(CALL,)),
    ev.ApprovalRequested(
        **IDS, tool_call_id="t1", tool="bash", arguments={"cmd": "ls"}, preview="ls"
    ),
    ev.ApprovalDecided(**IDS, tool_call_id="t1", approved=False, by="user", feedback="no"),
    ev.ModeChanged(session_id="s1", seq=4, mode="acceptEdits", previous="plan", by="plan_approval"),
    ev.ModelChanged(
        session_id="s1", seq=6, agent="moot", model="openai/gpt-5", previous="anthropic/x"
    ),
    ev.ToolRan(
        session_id="s1",
        seq=7,
        tool="grep",
        arguments={"pattern": "x"},
        content="a.py:1:x",
        is_error=False,
        duration_ms=2.5,
        display={"found": 1},
        submission_id="sub_4",
    ),
    ev.OpRefused(
        session_id="s1",
        seq=5,
        op="approve",
        reason="no approval waits for t9",
        submission_id="sub_3",
    ),
    ev.MemoryNoted(session_id="s1", seq=6, path="/w/AGENTS.md", note="use tabs"),
    ev.RunToolsInterrupted(
        session_id="s1", seq=7, tools=("bash", "grep"), submissions=("sub_2", "sub_3")
    ),
    ev.FilesRestored(
        session_id="s1",
        seq=8,
        before_run="run_1",
        restored=("a.py", "ünï/b.txt"),
        failures=("c.bin: permission denied",),
    ),
    ev.McpServerApproved(session_id="s1", seq=9, server="repo", note="approved repo (node x)"),
    ev.McpServerRestarted(session_id="s1", seq=10, server="repo", note="restarting repo"),
    ev.NetworkConnection(
        session_id="s1",
        seq=11,
        host="pypi.org",
        port=443,
        allowed=True,
        how="connect",
        reason="allowed by sandbox.network.allowedDomains (pypi.org)",
        bytes_up=517,
        bytes_down=40960,
    ),
    ev.NetworkAccessRequested(
        session_id="s1", seq=12, request_id="net_1", host="example.com", port=443
    ),
    ev.NetworkAccessDecided(
        session_id="s1",
        seq=13,
        request_id="net_1",
        host="example.com",
        approved=True,
        scope="always",
        note="added example.com to .moot/settings.local.json",
        submission_id="sub_9",
    ),
    ev.McpQuestionAsked(
        session_id="s1",
        seq=14,
        ask_id="ask_1",
        server="everything",
        message="Your name?",
        schema={"type": "object", "properties": {"name": {"type": "string"}}},
    ),
    ev.McpQuestionAnswered(
        session_id="s1", seq=15, ask_id="ask_1", server="everything", action="accept"
    ),
    ev.McpSampled(
        session_id="s1",
        seq=16,
        server="everything",
        model="openai/gpt-5",
        usage=Usage(input_tokens=30, output_tokens=6),
        cost_usd=0.0002,
    ),
    ev.SessionRenamed(session_id="s1", seq=7, title="fix the parser", previous="fix it"),
    ev.SessionRenamed(
        session_id="s1",
        seq=9,
        title="Parser fix",
        previous="fix the parser",
        by="model",
        model="anthropic/claude-haiku-4-5",
        usage=Usage(input_tokens=60, output_tokens=4),
        cost_usd=0.0001,
    ),
    ev.SessionResumed(
        session_id="s1", seq=8, model="openai/gpt-5", mode="plan", agents=("moot", "critic")
    ),
    ev.SessionForked(session_id="s2", seq=9, source="s1", at=8),
    ev.ContextCompacted(
        **IDS,
        summary="## Task\nfix it",
        replaced=4,
        elided=("t1",),
        trigger="auto",
        tokens_before=900,
        tokens_after=200,
    ),
    ev.HistoryCompacted(
        session_id="s1", seq=7, agent="main", summary="s", replaced=2, focus="the parser"
    ),
    ev.MessageSent(**IDS, sender="user", to_call_id="c1", to_agent="main", text="hurry"),
    ev.MessagesDelivered(**IDS, count=2),
    ev.WaitingForMessage(**IDS, timeout_s=30.0, tool_call_id="t1"),
    ev.HookRan(
        **IDS,
        hook_event="PreToolUse",
        tool_call_id="t1",
        commands=(
            ev.HookCommandRun(
                command="./guard.sh", exit_code=2, duration_ms=3.5, outcome="deny", stderr="no"
            ),
        ),
        decision="deny",
        reason="no",
        context="ctx",
        updated_input={"path": "a.py"},
        stop=True,
        stop_reason="frozen",
    ),
    ev.ApprovalDecided(
        **IDS, tool_call_id="t2", approved=True, by="user", scope="session", rule="Bash(ls:*)"
    ),
    ev.ToolStarted(**IDS, tool_call_id="t1", tool="read", arguments={"path": "a.py"}),
    ev.ToolOutput(**IDS, tool_call_id="t1", text="line\n"),
    ev.ToolFinished(
        **IDS,
        tool_call_id="t1",
        tool="read",
        content="1\tx",
        is_error=True,
        attachments=(IMAGE,),
        duration_ms=1.5,
        interrupted=True,
        display={"diff": "-a\n+b", "todos": [{"text": "x", "status": "done"}]},
    ),
]


def test_every_event_kind_has_an_example() -> None:
    union = typing.get_args(ev.Event)
    assert {t.__struct_config__.tag for t in union} == {e.kind for e in EXAMPLES}


def test_every_op_kind_has_an_example() -> None:
    union = typing.get_args(ops.Op)
    assert {t.__struct_config__.tag for t in union} == {o.kind for o in OPS}


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.kind)
def test_events_round_trip_through_json(event: ev.Event) -> None:
    text = ev.event_to_json(event)
    back = ev.event_from_json(text)
    assert back == event
    assert type(back) is type(event)
    assert ev.event_to_json(back) == text


def test_events_carry_the_common_fields_and_a_utc_default_time() -> None:
    event = ev.TextDelta(text="x")
    for name in ("seq", "session_id", "run_id", "agent", "call_id", "parent_call_id", "ts"):
        assert name in type(event).__struct_fields__
    assert event.ts.tzinfo is UTC


def test_events_are_frozen_and_refuse_unknown_fields() -> None:
    event = ev.TextDelta(text="x")
    with pytest.raises(AttributeError, match="immutable"):
        event.text = "y"  # type: ignore[misc]
    with pytest.raises(TypeError, match="surprise"):
        ev.TextDelta(text="x", surprise=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown field `surprise`"):
        ev.event_from_json('{"kind": "text_delta", "text": "x", "surprise": 1}')
    with pytest.raises(ValueError, match="kind"):
        ev.event_from_json('{"kind": "no_such_event"}')
    with pytest.raises(ValueError, match=r"Expected `int`, got `str` - at `\$.depth`"):
        ev.event_from_json('{"kind": "agent_called", "caller": "a", "message": "m", "depth": "1"}')


OPS = [
    ops.UserTurn(text="hi", attachments=(IMAGE,), agent="critic"),
    ops.ResumeRun(),
    ops.Interrupt(),
    ops.Approve(tool_call_id="t1"),
    ops.Approve(tool_call_id="t2", scope="always", rule="Bash(make:*)"),
    ops.SetMode(mode="acceptEdits"),
    ops.SetModel(model="openai/gpt-5"),
    ops.SetModel(model="scripted:x.yaml", agent="critic"),
    ops.RunTool(tool="grep", arguments={"pattern": "TODO", "path": "src"}),
    ops.RunTool(tool="undo"),
    ops.Approve(tool_call_id="t3", mode="acceptEdits"),
    ops.Deny(tool_call_id="t1", feedback="use b.txt"),
    ops.Shutdown(),
    ops.Rename(title="fix the parser"),
    ops.SendMessage(to="helper", text="also check the tests"),
    ops.CancelAgent(task_id="call_1"),
    ops.RunCommand(name="code-review", arguments="src/app.py"),
    ops.NoteToMemory(text="use tabs"),
    ops.Compact(focus="the parser", agent="main"),
    ops.RestoreFiles(run_id="run_1"),
    ops.ApproveMcpServer(name="repo"),
    ops.RestartMcpServer(name="repo"),
    ops.AnswerNetworkAccess(request_id="net_1", approved=True, scope="session"),
    ops.AnswerMcpQuestion(ask_id="ask_1", action="accept", content={"name": "Ada", "n": 3}),
]


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.kind)
def test_ops_round_trip_through_json(op: ops.Op) -> None:
    assert ops.op_from_json(msgspec.json.encode(op)) == op


def test_ops_from_outside_are_checked() -> None:
    with pytest.raises(ValueError, match=r"Invalid enum value 'sometimes' - at `\$.scope`"):
        ops.op_from_json('{"kind": "approve", "tool_call_id": "t1", "scope": "sometimes"}')
    with pytest.raises(ValueError, match="unknown field `text`"):
        ops.op_from_json('{"kind": "interrupt", "text": "stop"}')


def test_every_op_documents_the_events_that_answer_it() -> None:
    for op in OPS:
        doc = type(op).__doc__ or ""
        assert "Answered by" in doc or type(op) is ops.Shutdown, type(op).__name__


def test_token_counts_are_ints_whatever_the_server_sent() -> None:
    sent: dict[str, object] = {
        "input_tokens": 12.0,
        "cache_read_tokens": None,
        "cache_write_tokens": "x",
    }
    usage = Usage(output_tokens=3, **sent)  # type: ignore[arg-type]
    assert usage == Usage(input_tokens=12, output_tokens=3)
    assert all(type(getattr(usage, name)) is int for name in usage.__struct_fields__)
    assert Usage(input_tokens=float("nan")).input_tokens == 0


def test_an_op_built_in_code_is_checked_before_it_runs() -> None:
    listed = ops.UserTurn(text="x", attachments=[IMAGE])  # type: ignore[arg-type]
    assert ops.checked(listed).attachments == (IMAGE,)
    with pytest.raises(ValueError, match=r"user_turn does not fit its schema: .* `\$.text`"):
        ops.checked(ops.UserTurn(text=5))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Invalid enum value 'forever' - at `\$.scope`"):
        ops.checked(ops.Approve(tool_call_id="t1", scope="forever"))  # type: ignore[arg-type]

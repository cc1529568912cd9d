"""Plan mode end to end with the scripted provider and the real file tools: changes are refused
until the person approves the plan (`exit_plan_mode`), which switches the session's mode."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.permissions.decide import decide
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import PLAN_MODE_NOTE, ApprovalRequest
from moot.protocol.modes import PermissionMode
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.store.base import Store
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn
from moot.tools.base import SideEffect
from moot.tools.exit_plan_mode import exit_plan_mode_tool
from moot.tools.files import file_tools
from moot.workspace.paths import Workspace
from runtime_helpers import agent, call, of

PLAN = "## Plan\n1. Change `greeting.txt` to say hello.\n"
WRITE = call("write", path="greeting.txt", content="hello\n")


def planning_runtime(
    root: Path, *turns: object, store: Store | None = None
) -> tuple[Runtime, RulesPolicy]:
    policy = RulesPolicy(RuleSet(), root, mode=PermissionMode.PLAN)
    tools = [*file_tools(Workspace(root)), exit_plan_mode_tool()]
    options = RuntimeOptions(tools=tools, approval=policy)
    runtime = Runtime([agent("main", *turns)], store=store or MemoryStore(), options=options)
    return runtime, policy


async def answering(runtime: Runtime, answer: Callable[[ev.ApprovalRequested], ops.Op]) -> list:
    return (await drive_turn(runtime, "make it say hello", answer=answer)).events


async def test_a_change_waits_for_the_plan_then_runs_in_the_chosen_mode(tmp_path: Path) -> None:
    (tmp_path / "greeting.txt").write_text("hi\n")
    runtime, _ = planning_runtime(
        tmp_path,
        {"tool_calls": [call("read", path="greeting.txt"), WRITE]},
        {"tool_calls": [call("exit_plan_mode", plan=PLAN)]},
        {"tool_calls": [WRITE]},
        "Done: it says hello.",
    )
    events = await answering(
        runtime, lambda e: ops.Approve(tool_call_id=e.tool_call_id, mode="acceptEdits")
    )

    read, plan, wrote = of(events, ev.ToolFinished)
    assert "hi" in read.content and not read.is_error
    refused, approved = of(events, ev.ApprovalDecided)  # a refusal is the model's tool result
    assert (refused.approved, refused.by, approved.approved) == (False, "policy", True)
    assert "Plan mode" in refused.feedback and "exit_plan_mode" in refused.feedback
    (asked,) = of(events, ev.ApprovalRequested)  # the plan asks; the write in acceptEdits does not
    assert (asked.tool, asked.preview) == ("exit_plan_mode", PLAN)
    assert asked.suggested_rules == ()  # a plan is never approved "for the session"
    (changed,) = of(events, ev.ModeChanged)
    assert (changed.previous, changed.mode, changed.by) == ("plan", "acceptEdits", "plan_approval")
    assert (changed.run_id, changed.call_id) == ("", "")  # a session event
    assert events.index(changed) < events.index(plan)  # the tool runs in the new mode
    assert "acceptEdits" in plan.content and not plan.is_error
    assert not wrote.is_error
    assert (tmp_path / "greeting.txt").read_text() == "hello\n"
    assert runtime.mode == PermissionMode.ACCEPT_EDITS
    assert of(events, ev.TurnFinished)[0].output == "Done: it says hello."


async def test_feedback_on_a_plan_reaches_the_model_and_it_stays_in_plan_mode(
    tmp_path: Path,
) -> None:
    (tmp_path / "greeting.txt").write_text("hi\n")
    revised = PLAN + "2. Keep the trailing newline.\n"
    runtime, _ = planning_runtime(
        tmp_path,
        {"tool_calls": [call("exit_plan_mode", plan=PLAN)]},
        {"tool_calls": [call("exit_plan_mode", plan=revised)]},
        {"tool_calls": [call("read", path="greeting.txt"), WRITE]},
        "Done.",
    )
    answers = iter(
        [
            lambda e: ops.Deny(tool_call_id=e.tool_call_id, feedback="keep the newline"),
            lambda e: ops.Approve(tool_call_id=e.tool_call_id),
            lambda e: ops.Approve(tool_call_id=e.tool_call_id),
        ]
    )
    events = await answering(runtime, lambda e: next(answers)(e))

    first, second, write = of(events, ev.ApprovalRequested)
    assert (first.preview, second.preview) == (PLAN, revised)
    assert write.tool == "write"  # default mode after the plan: edits still ask
    denied = of(events, ev.ApprovalDecided)[0]
    assert (denied.approved, denied.feedback) == (False, "keep the newline")
    assert [e.tool for e in of(events, ev.ToolFinished)] == ["exit_plan_mode", "read", "write"]
    (changed,) = of(events, ev.ModeChanged)  # only the approval changed the mode
    assert (changed.previous, changed.mode) == ("plan", "default")
    assert (tmp_path / "greeting.txt").read_text() == "hello\n"
    assert runtime.mode == PermissionMode.DEFAULT


async def test_outside_plan_mode_the_plan_tool_just_runs(tmp_path: Path) -> None:
    runtime, _ = planning_runtime(
        tmp_path, {"tool_calls": [call("exit_plan_mode", plan=PLAN)]}, "ok"
    )
    runtime.submit(ops.SetMode(mode="default"))
    events = await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    assert not of(events, ev.ApprovalRequested)
    assert not of(events, ev.ModeChanged)
    (result,) = of(events, ev.ToolFinished)
    assert "Permission mode: default" in result.content


async def test_set_mode_between_turns_is_stored_as_a_session_event(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "moot.db")
    runtime, policy = planning_runtime(tmp_path, "first", "second", store=store)
    stream = runtime.events()
    await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    runtime.submit(ops.SetMode(mode="dontAsk"))
    runtime.submit(ops.SetMode(mode="dontAsk"))  # no change, no event
    await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    runtime.submit(ops.Shutdown())
    published = [e async for e in stream]
    (changed,) = of(published, ev.ModeChanged)
    assert (changed.previous, changed.mode, changed.by) == ("plan", "dontAsk", "user")
    store.close()

    reopened = SQLiteStore(tmp_path / "moot.db")
    stored = list(reopened.events(runtime.session_id))
    assert [e.kind for e in stored].count("mode_changed") == 1
    assert of(stored, ev.TurnFinished)[-1].output == "second"
    resumed = Runtime(
        [agent("main", "third")],
        store=reopened,
        session_id=runtime.session_id,
        options=RuntimeOptions(approval=policy),
    )
    assert resumed.conversation()[-1].content == "second"  # session events fold to nothing
    reopened.close()


@pytest.mark.parametrize(
    ("mode", "decision"),
    [
        (PermissionMode.PLAN, "ask"),
        (PermissionMode.DEFAULT, "allow"),
        (PermissionMode.ACCEPT_EDITS, "allow"),
        (PermissionMode.DONT_ASK, "allow"),
        (PermissionMode.BYPASS_PERMISSIONS, "allow"),
    ],
)
def test_the_plan_asks_only_in_plan_mode(tmp_path: Path, mode: PermissionMode, decision) -> None:
    request = ApprovalRequest("s", "main", "c", "t", "exit_plan_mode", SideEffect.READ_ONLY,
                              {"plan": PLAN})  # fmt: skip
    verdict = decide(request, mode, RuleSet(), tmp_path)
    assert verdict.decision == decision
    if decision == "ask":
        assert verdict.preview == PLAN


def test_a_deny_rule_on_the_plan_tool_wins(tmp_path: Path) -> None:
    request = ApprovalRequest("s", "main", "c", "t", "exit_plan_mode", SideEffect.READ_ONLY,
                              {"plan": PLAN})  # fmt: skip
    verdict = decide(request, PermissionMode.PLAN, RuleSet(deny=["exit_plan_mode"]), tmp_path)
    assert verdict.decision == "deny"


def test_headless_plan_mode_refuses_changes_and_cannot_approve_a_plan(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello wrold\n")
    script = """\
turns:
  - tool_calls: [{name: edit, arguments: {path: notes.txt, old: wrold, new: world}}]
  - tool_calls: [{name: exit_plan_mode, arguments: {plan: "1. fix the typo"}}]
  - text: "Plan: 1. fix the typo"
"""
    (tmp_path / "s.yaml").write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{tmp_path / 's.yaml'}",
         "--output-format", "events", "--permission-mode", "plan"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    edit, plan = of(events, ev.ApprovalDecided)
    assert not edit.approved and "Plan mode" in edit.feedback
    assert not plan.approved and "headless" in plan.feedback
    assert not of(events, ev.ModeChanged)
    assert (work / "notes.txt").read_text() == "hello wrold\n"
    assert of(events, ev.TurnFinished)[0].output == "Plan: 1. fix the typo"


def test_a_resumed_session_goes_on_in_the_mode_it_switched_to(tmp_path: Path) -> None:
    store_path = tmp_path / "moot.db"
    store = SQLiteStore(store_path)
    options = RuntimeOptions(approval=RulesPolicy(RuleSet(), tmp_path))
    runtime = Runtime([agent("main", "one", "two")], store=store, options=options)
    assert runtime.mode == "default"  # the policy's
    runtime.submit(ops.SetMode(mode="plan"))  # between runs: no checkpoint covers it yet
    assert runtime.mode == "plan"
    store.close()
    again = SQLiteStore(store_path)
    resumed = Runtime([agent("main")], store=again, session_id=runtime.session_id)
    assert resumed.mode == "plan"
    again.close()


async def test_the_mode_survives_a_checkpoint(tmp_path: Path) -> None:
    store_path = tmp_path / "moot.db"
    store = SQLiteStore(store_path)
    runtime, _ = planning_runtime(tmp_path, "first", store=store)
    runtime.submit(ops.SetMode(mode="acceptEdits"))
    await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))  # checkpointed
    store.close()
    again = SQLiteStore(store_path)
    first_after = again.latest_checkpoint(runtime.session_id, "session")
    assert first_after is not None and first_after[1]["mode"] == "acceptEdits"
    resumed = Runtime([agent("main")], store=again, session_id=runtime.session_id)
    assert resumed.mode == "acceptEdits"
    again.close()


async def test_a_run_begun_in_plan_mode_tells_the_model_and_a_resume_folds_the_same(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    def model(request: ModelRequest) -> str:
        seen.append(request.messages[-1].content)
        return "a plan"

    store = SQLiteStore(tmp_path / "moot.db")
    policy = RulesPolicy(RuleSet(), tmp_path, mode=PermissionMode.PLAN)
    runtime = Runtime([Agent("main", model=FunctionProvider(model))], store=store,
                      options=RuntimeOptions(approval=policy))  # fmt: skip
    await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    runtime.submit(ops.SetMode(mode="default"))
    await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    assert seen[0] == f"make it say hello\n\n{PLAN_MODE_NOTE}"
    assert seen[1] == "make it say hello"  # the next run began in default mode
    started = of(list(store.events(runtime.session_id)), ev.TurnStarted)
    assert [s.mode for s in started] == ["plan", "default"]
    store.close()
    again = SQLiteStore(tmp_path / "moot.db")
    resumed = Runtime([Agent("main", model="x/y")], store=again, session_id=runtime.session_id)
    contents = [m.content for m in resumed.conversation() if m.role == "user"]
    assert contents == [f"make it say hello\n\n{PLAN_MODE_NOTE}", "make it say hello"]
    again.close()


async def test_a_peer_called_in_plan_mode_is_told_too(tmp_path: Path) -> None:
    heard: dict[str, str] = {}

    def model(request: ModelRequest) -> object:
        heard.setdefault(request.agent, request.messages[-1].content)
        if request.agent == "lead" and len(heard) == 1:
            return {"tool_calls": [call("call_agent", agent_name="scout", message="look around")]}
        return "done"

    provider = FunctionProvider(model)
    policy = RulesPolicy(RuleSet(), tmp_path, mode=PermissionMode.PLAN)
    runtime = Runtime(
        [Agent("lead", model=provider), Agent("scout", model=provider)],
        store=MemoryStore(),
        options=RuntimeOptions(approval=policy),
    )
    events = await answering(runtime, lambda e: ops.Deny(tool_call_id=e.tool_call_id))
    assert heard["scout"] == f"look around\n\n{PLAN_MODE_NOTE}"
    assert of(events, ev.AgentCalled)[0].mode == "plan"

"""Resume after a real `kill -9`: the context is a fold of the log; nothing is re-run blindly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import crash_worker
from moot.core.limits import Limits
from moot.core.session import CHECKPOINT, load_session
from moot.core.trace import agent_status, format_trace
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.states import RunState
from moot.store.sqlite import SQLiteStore
from runtime_helpers import of

WORKER = Path(__file__).parents[1] / "crash_worker.py"
SRC = Path(__file__).parents[2] / "src"


def wait_for(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the worker never got there")
        time.sleep(0.02)


def crash(tmp_path: Path, scenario: str, ready) -> str:
    """Start the worker, wait until `ready(tmp_path)`, then SIGKILL it. Returns its session."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{WORKER.parent}"}
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(tmp_path / "s.db"), scenario, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        session_id = proc.stdout.readline().strip()
        wait_for(lambda: ready(tmp_path))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    return session_id


def ran(tmp_path: Path) -> list[str]:
    path = tmp_path / "ran.txt"
    return path.read_text().split() if path.exists() else []


def requests(tmp_path: Path) -> list[dict]:
    path = tmp_path / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def resume(tmp_path: Path, scenario: str, session_id: str):
    runtime = crash_worker.runtime(
        tmp_path / "s.db", scenario, tmp_path, block=False, session_id=session_id
    )
    assert runtime.unfinished_run is not None
    runtime.submit(ops.ResumeRun())
    # Busy is an answer, never an exception across the contract.
    refused = runtime.submit(ops.UserTurn(text="not while the run is being finished"))
    finished = await runtime.wait()
    events = runtime.store.events(session_id)
    (refusal,) = [e for e in events if isinstance(e, ev.OpRefused)]
    assert (refusal.op, refusal.submission_id) == ("user_turn", refused)
    assert refusal.reason.startswith("a turn is running")
    return finished, [e for e in events if e is not refusal]


async def test_a_tool_killed_mid_run_is_recorded_as_interrupted_not_rerun(tmp_path: Path) -> None:
    session_id = crash(tmp_path, "tool", lambda d: ran(d) == ["a"])
    finished, events = await resume(tmp_path, "tool", session_id)
    assert ran(tmp_path) == ["a"]  # never re-run
    (resumed,) = of(events, ev.RunResumed)
    (result,) = of(events, ev.ToolFinished)
    assert resumed.interrupted_tool_calls == (result.tool_call_id,)
    assert result.interrupted and result.is_error
    assert finished.state is RunState.COMPLETED
    assert finished.output.startswith("done: Interrupted")
    # The model was told: its last request ends with the interrupted result.
    last = requests(tmp_path)[-1]["messages"][-1]
    assert last["role"] == "tool" and last["content"].startswith("Interrupted")


async def test_killed_while_the_model_streams_resumes_with_the_same_context(tmp_path: Path) -> None:
    session_id = crash(tmp_path, "model", lambda d: len(requests(d)) == 2)
    before = requests(tmp_path)[-1]
    finished, events = await resume(tmp_path, "model", session_id)
    after = requests(tmp_path)[2]
    assert after == before  # system prompt, tools and every message, exactly
    assert finished.output == "the answer is 42"
    assert not of(events, ev.RunResumed)[0].interrupted_tool_calls
    assert finished.turns == 2  # the killed call left no response; it was asked again


async def test_a_peer_killed_inside_its_tool_resumes_its_own_call(tmp_path: Path) -> None:
    session_id = crash(tmp_path, "peer", lambda d: ran(d) == ["h"])
    finished, events = await resume(tmp_path, "peer", session_id)
    assert ran(tmp_path) == ["h"]
    (forward,) = of(events, ev.AgentCalled)
    (back,) = of(events, ev.AgentReturned)
    assert back.call_id == forward.call_id  # the same call went on; no second forward
    assert back.output == "helper done (Interrupted)"
    assert finished.output == "helper said: [helper]helper done (Interrupted)[/helper]"


async def test_three_background_agents_killed_mid_tool_each_finish_once_after_resume(
    tmp_path: Path,
) -> None:
    session_id = crash(tmp_path, "background", lambda d: sorted(ran(d)) == ["b1", "b2", "b3"])
    finished, events = await resume(tmp_path, "background", session_id)
    assert sorted(ran(tmp_path)) == ["b1", "b2", "b3"]  # no tool ran twice
    returns = of(events, ev.AgentReturned)
    assert sorted(e.output for e in returns) == ["helper done (Interrupted)"] * 3
    assert len({e.call_id for e in returns}) == 3  # each background agent ended exactly once
    assert {e.call_id for e in returns} == {e.call_id for e in of(events, ev.AgentCalled)}
    interrupted = [e for e in of(events, ev.ToolFinished) if e.interrupted]
    assert sorted(e.tool for e in interrupted) == ["slow_write"] * 3
    delivered = sum(e.count for e in of(events, ev.MessagesDelivered))
    assert delivered == 3 and finished.state is RunState.COMPLETED
    assert finished.output.startswith("got ")


async def test_a_message_waiting_when_the_process_died_is_read_once_after_resume(
    tmp_path: Path,
) -> None:
    session_id = crash(tmp_path, "message", lambda d: sorted(ran(d)) == ["h", "m"])
    before = SQLiteStore(tmp_path / "s.db").events(session_id)
    assert len(of(before, ev.MessageSent)) == 1 and not of(before, ev.MessagesDelivered)
    finished, events = await resume(tmp_path, "message", session_id)
    assert sorted(ran(tmp_path)) == ["h", "m"]  # nothing ran twice
    assert finished.output.count("[message from helper") == 1
    assert "note from helper" in finished.output
    assert sum(e.count for e in of(events, ev.MessagesDelivered)) == 2  # the note, the return


def stored_wait(tmp_path: Path) -> bool:
    """Whether the worker's log holds a `waiting_for_message` (it waits from then on)."""
    if not (tmp_path / "s.db").exists():
        return False
    store = SQLiteStore(tmp_path / "s.db")
    return any(of(store.events(s.id), ev.WaitingForMessage) for s in store.sessions())


async def test_an_agent_killed_while_it_waits_for_a_message_resumes_without_waiting_again(
    tmp_path: Path,
) -> None:
    session_id = crash(tmp_path, "wait", stored_wait)
    before = SQLiteStore(tmp_path / "s.db").events(session_id)
    (waited,) = of(before, ev.WaitingForMessage)
    assert waited.timeout_s == 60 and waited.tool_call_id is not None
    # What the log says it was doing when the process died, as every view reads it.
    assert "Status: waiting for a message" in agent_status(before, waited.run_id)
    assert format_trace(before).splitlines()[0].endswith("(waiting for a message)")
    finished, events = await resume(tmp_path, "wait", session_id)
    (resumed,) = of(events, ev.RunResumed)
    assert resumed.interrupted_tool_calls == (waited.tool_call_id,)  # never waits again
    (result,) = of(events, ev.ToolFinished)
    assert result.tool == "get_messages" and result.interrupted
    assert finished.output == "main done (Interrupted)"
    assert "Status: completed" in agent_status(events, waited.run_id)


async def test_starting_agents_killed_in_their_tools_each_finish_once_after_resume(
    tmp_path: Path,
) -> None:
    session_id = crash(tmp_path, "starting", lambda d: sorted(ran(d)) == ["h", "m"])
    finished, events = await resume(tmp_path, "starting", session_id)
    assert sorted(ran(tmp_path)) == ["h", "m"]
    assert finished.agent == "user" and finished.output == (
        "[main]main done (Interrupted)[/main]\n[helper]helper done (Interrupted)[/helper]"
    )
    assert sorted(e.agent for e in of(events, ev.AgentReturned)) == ["helper", "main"]


async def test_resume_folds_to_the_same_state_the_live_run_had(tmp_path: Path) -> None:
    """The fold of the stored log equals the state the live process built as it went."""
    runtime = crash_worker.runtime(tmp_path / "s.db", "model", tmp_path, block=False)
    runtime.submit(ops.UserTurn(text="please do it"))
    await runtime.wait()
    live = runtime.conversation()
    runtime.submit(ops.Shutdown())  # one runtime per session: the next one claims it
    reloaded = crash_worker.runtime(
        tmp_path / "s.db", "model", tmp_path, block=False, session_id=runtime.session_id
    )
    assert reloaded.conversation() == live
    assert reloaded.unfinished_run is None
    store = SQLiteStore(tmp_path / "s.db")
    assert store.open_run(runtime.session_id) is None


async def test_loading_a_session_starts_from_its_checkpoint(tmp_path: Path) -> None:
    """A session checkpoint at each turn's end spares the fold of every earlier turn."""
    runtime = crash_worker.runtime(tmp_path / "s.db", "model", tmp_path, block=False)
    for text in ("one", "two"):
        runtime.submit(ops.UserTurn(text=text))
        await runtime.wait()
    store = SQLiteStore(tmp_path / "s.db")
    seq, _ = store.latest_checkpoint(runtime.session_id, CHECKPOINT)
    assert seq == store.session(runtime.session_id).event_count  # the last turn_finished

    class NoCheckpoints:
        """The same store, minus checkpoints: load_session must fold the whole log."""

        def __getattr__(self, name):
            return getattr(store, name)

        def latest_checkpoint(self, session_id, run_id):
            return None

    full = load_session(NoCheckpoints(), runtime.session_id, Limits())
    fast = load_session(store, runtime.session_id, Limits())
    assert fast.history == full.history == {"main": runtime.conversation()}
    assert fast.models == full.models


async def test_a_new_turn_before_the_killed_one_is_resumed_is_refused_with_why(
    tmp_path: Path,
) -> None:
    """A front end that sends a message to a session a crash left mid-turn is told to resume
    that turn first (the app and the REPL do so when they open it); the session goes on."""
    session_id = crash(tmp_path, "tool", lambda d: ran(d) == ["a"])
    runtime = crash_worker.runtime(
        tmp_path / "s.db", "tool", tmp_path, block=False, session_id=session_id
    )
    events = runtime.subscribe()
    runtime.submit(ops.UserTurn(text="hello?"))
    refused = await anext(e async for e in events if isinstance(e, ev.OpRefused))
    assert refused.op == "user_turn" and "interrupted" in refused.reason
    assert "resume" in refused.reason

    runtime.submit(ops.ResumeRun())  # the stream is still alive, and the run goes on
    finished = await runtime.wait()
    assert finished.state is RunState.COMPLETED
    events.close()

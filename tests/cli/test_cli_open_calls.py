"""`moot` ends the calls a run made before the run itself, whatever ends it, and a session an
older moot left with calls open (or without its `turn_finished`) still resumes and finishes.
Real subprocesses, a scripted model, the real store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from call_ends import ends_in_order
from moot.protocol import events as ev
from moot.protocol.states import RunState, StopReason
from moot.store.sqlite import SQLiteStore
from moot_cli import moot_command, moot_env
from old_logs import OldLog, ask, callee_left_open_after_its_caller_went_on

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait
S = RunState


def scripted(tmp_path: Path, turns: list[object]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def run_moot(tmp_path: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        moot_command(*args),
        cwd=tmp_path / "work",
        env={**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"},
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        **{"capture_output": True, **kw},  # type: ignore[arg-type]
    )


def log_of(tmp_path: Path, session_id: str) -> list[ev.Event]:
    with SQLiteStore(tmp_path / "home" / "data" / "sessions.db") as store:
        return store.events(session_id)


def test_a_reader_gone_as_a_peer_call_is_made_ends_it_first_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """`moot -p ... --output-format events | head -5` at the moment between the answer
    that calls a peer and the start of that call: the reader is gone before moot writes its
    first line, which it writes once the run's first step has reached the peer call (nothing
    in between hands the event loop back). Fails on the old code: the callee, cancelled before
    its first step, never ended; `turn_finished` broke rule b (a traceback), the session stayed
    `running`, and every `moot --resume` crashed the same way."""
    (tmp_path / "work").mkdir()
    ask = {"name": "call_agent", "arguments": {"agent_name": "moot", "message": "help"}}
    model = scripted(tmp_path, [{"tool_calls": [ask]}, "the next answer"])
    read, write = os.pipe()
    os.close(read)  # the reader went away
    try:
        done = run_moot(
            tmp_path,
            *("-p", "hi", "--model", model, "--output-format", "events"),
            stdout=write,
            stderr=subprocess.PIPE,
            capture_output=False,
        )
    finally:
        os.close(write)

    assert done.returncode == 1, done.stderr
    said = done.stderr.splitlines()[-1]  # after the notice that commands run unsandboxed
    assert said.startswith("moot: output closed early; session ses_"), done.stderr
    assert "Traceback" not in done.stderr
    session_id = said.split("session ")[1]
    log = log_of(tmp_path, session_id)
    ends_in_order(log)
    assert [e.kind for e in log[-4:]] == [
        "agent_called",
        "agent_returned",
        "tool_finished",
        "turn_finished",
    ]
    assert log[-1].stop_reason is StopReason.USER_CANCELLED  # type: ignore[attr-defined]
    listed = run_moot(tmp_path, "sessions", "list")
    assert "cancelled" in listed.stdout and "running" not in listed.stdout
    again = run_moot(tmp_path, "-p", "and now?", "--resume", session_id, "--model", model)
    assert (again.returncode, again.stdout) == (0, "the next answer\n"), again.stderr


def background_agent_left_open_after_its_caller_returned(log: OldLog) -> None:
    """A callee spawned a background agent and returned without it ever ending (the old code
    cancelled it before its first step); the run's `turn_finished` was then refused."""
    log.start()
    first = ask("tc_1", "help")
    log.answer(log.run_id, tool=first)
    log.call(log.run_id, "call_a", first, depth=1)
    spawn = ask("tc_2", "dig", background=True)
    log.answer("call_a", tool=spawn)
    log.call("call_a", "call_b", spawn, depth=2, background=True)
    log.result("call_a", spawn, "Started moot in the background; its task id is call_b.")
    log.move("call_a", S.OBSERVATION_RECORDED)
    log.answer("call_a", text="A done")
    # An older moot had no rule that a call ends after the calls it made.
    log.store._log(log.session_id)._replaying = True  # type: ignore[attr-defined]
    returned = ev.AgentReturned(
        state=S.COMPLETED, stop_reason=StopReason.COMPLETED, output="A done"
    )
    log.add("call_a", returned)
    log.store._log(log.session_id)._replaying = False  # type: ignore[attr-defined]
    log.result(log.run_id, first, "[moot]A done[/moot]")


@pytest.mark.parametrize(
    "broken",
    [
        callee_left_open_after_its_caller_went_on,
        background_agent_left_open_after_its_caller_returned,
    ],
)
def test_a_session_an_older_moot_left_with_calls_open_resumes_and_finishes(
    tmp_path: Path, broken: object
) -> None:
    """Fails on the old code: the resumed run went on without the calls nothing would drive
    again, and its `turn_finished` broke rule b, every time (`moot --resume` crashed)."""
    (tmp_path / "work").mkdir()
    responses = {callee_left_open_after_its_caller_went_on: 1}.get(broken, 3)  # type: ignore[call-overload]
    model = scripted(tmp_path, [*(["played"] * responses), "finished after all"])
    db = tmp_path / "home" / "data" / "sessions.db"
    with SQLiteStore(db) as store:
        session_id = store.create_session(title="hi", workspace=str(tmp_path / "work")).id
        broken(OldLog(store, session_id, model))  # type: ignore[operator]
    before = len(log_of(tmp_path, session_id))

    resumed = run_moot(
        tmp_path, "--resume", session_id, "--model", model, "--output-format", "json"
    )

    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["output"] == "finished after all"
    log = log_of(tmp_path, session_id)
    made = {e.call_id for e in log if isinstance(e, ev.AgentCalled | ev.TurnStarted)}
    assert {e.call_id for e in log if isinstance(e, ev.AgentReturned | ev.TurnFinished)} == made
    assert isinstance(log[-1], ev.TurnFinished)
    went_on = log[before:]
    assert [e.kind for e in went_on[:3]] == ["session_resumed", "run_resumed", "agent_returned"]
    orphans = [e for e in went_on if isinstance(e, ev.AgentReturned)]
    assert [e.stop_reason for e in orphans] == [StopReason.USER_CANCELLED]
    assert "completed" in run_moot(tmp_path, "sessions", "list").stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_while_a_peer_call_runs_ends_it_then_the_run(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """SIGTERM, and SIGHUP (the terminal closed), end a run as Ctrl-C does: every open call's
    end is recorded, innermost first, then the run's. Fails on the old code for SIGHUP: moot
    died at once and left the run open."""
    (tmp_path / "work").mkdir()
    ask = {"name": "call_agent", "arguments": {"agent_name": "moot", "message": "help"}}
    waits = {"text": "never", "delay": 60}  # the callee's model, until the signal
    model = scripted(tmp_path, [{"tool_calls": [ask]}, waits])
    process = subprocess.Popen(
        moot_command("-p", "hi", "--model", model, "--output-format", "events"),
        cwd=tmp_path / "work",
        env=moot_env(tmp_path / "home"),
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            event = ev.event_from_json(line)
            if isinstance(event, ev.StateChanged) and event.parent_call_id is not None:
                break  # the callee took its first step: it asks its model now
        process.send_signal(signum)
        code = process.wait(timeout=TIMEOUT)
    finally:
        process.kill()
        process.wait()
    assert code == 130, process.stderr.read() if process.stderr else ""
    log = log_of(tmp_path, event.session_id)
    ends_in_order(log)
    assert [e.kind for e in log[-3:]] == ["agent_returned", "tool_finished", "turn_finished"]
    assert log[-1].stop_reason is StopReason.USER_CANCELLED  # type: ignore[attr-defined]

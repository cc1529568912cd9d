"""Hook commands as real processes: exit codes, JSON answers, timeouts, parallel runs, stdin."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from moot.hooks import Hooks, parse_hooks
from moot.hooks.outcome import HookOutcome
from moot.hooks.scripts import protected_scripts


def script(where: Path, name: str, body: str) -> str:
    """An executable shell script in `where`; returns the command that runs it."""
    path = where / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return f"./{name}"


def hooks_for(where: Path, event: str, *commands: str, matcher: str = "", **hook: object) -> Hooks:
    group = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": c, **hook} for c in commands],
    }
    return Hooks(parse_hooks({event: [group]}), where)


async def pre_tool(hooks: Hooks, tool: str = "bash", **tool_input: object) -> HookOutcome:
    payload = {"session_id": "ses_1", "permission_mode": "default", "tool_name": tool}
    outcome = await hooks.run("PreToolUse", {**payload, "tool_input": tool_input}, subject=tool)
    assert outcome is not None
    return outcome


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes: it only waits for its parent to reap it.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


async def dies(pid: int, within: float = 5.0) -> bool:
    """Whether `pid` is gone within `within` seconds: SIGKILL is delivered asynchronously, so a
    killed process may still show as running for a moment (bounded polling of another process)."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def test_exit_2_refuses_a_tool_call_with_stderr_as_the_reason(tmp_path: Path) -> None:
    guard = script(tmp_path, "guard.sh", "echo 'no rm -rf here' >&2\nexit 2\n")
    outcome = await pre_tool(hooks_for(tmp_path, "PreToolUse", guard), command="rm -rf /")
    assert (outcome.decision, outcome.reason) == ("deny", "no rm -rf here")
    (run,) = outcome.commands
    assert (run.exit_code, run.outcome, run.stderr) == (2, "deny", "no rm -rf here\n")


@pytest.mark.parametrize("decision", ["allow", "deny", "ask"])
async def test_json_permission_decisions(tmp_path: Path, decision: str) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": f"policy says {decision}",
        }
    }
    said = script(tmp_path, "said.sh", f"echo '{json.dumps(answer)}'\n")
    outcome = await pre_tool(hooks_for(tmp_path, "PreToolUse", said))
    assert (outcome.decision, outcome.reason) == (decision, f"policy says {decision}")
    assert outcome.commands[0].outcome == decision


async def test_a_hook_changes_a_tool_calls_input(tmp_path: Path) -> None:
    # Reads the call from stdin and answers with the same path and new content.
    body = """python3 -c '
import json, sys
call = json.load(sys.stdin)
new = {"path": call["tool_input"]["path"], "content": "changed by the hook"}
print(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": new}}))
'
"""
    change = script(tmp_path, "change.sh", body)
    outcome = await pre_tool(
        hooks_for(tmp_path, "PreToolUse", change), "write", path="a.txt", content="x"
    )
    assert outcome.decision == "allow"
    assert outcome.updated_input == {"path": "a.txt", "content": "changed by the hook"}


async def test_context_from_json_and_from_plain_stdout(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"additionalContext": "the build is green"}}
    as_json = script(tmp_path, "json.sh", f"echo '{json.dumps(answer)}'\n")
    as_text = script(tmp_path, "text.sh", "echo 'branch: main'\n")
    hooks = hooks_for(tmp_path, "UserPromptSubmit", as_json, as_text)
    outcome = await hooks.run("UserPromptSubmit", {"prompt": "fix it"})
    assert outcome is not None and outcome.decision == "none"
    assert outcome.context == "the build is green\nbranch: main"
    # Plain stdout is context only where the event takes it; PostToolUse takes JSON context.
    post = hooks_for(tmp_path, "PostToolUse", as_json, as_text)
    outcome = await post.run("PostToolUse", {"tool_name": "bash"}, subject="bash")
    assert outcome is not None and outcome.context == "the build is green"


async def test_deny_beats_ask_beats_allow(tmp_path: Path) -> None:
    def answering(decision: str) -> str:
        out = {"hookSpecificOutput": {"permissionDecision": decision}}
        return script(tmp_path, f"{decision}.sh", f"echo '{json.dumps(out)}'\n")

    allow, ask, deny = answering("allow"), answering("ask"), answering("deny")
    assert (await pre_tool(hooks_for(tmp_path, "PreToolUse", allow, ask))).decision == "ask"
    both = await pre_tool(hooks_for(tmp_path, "PreToolUse", ask, deny, allow))
    assert both.decision == "deny"
    assert [c.outcome for c in both.commands] == ["ask", "deny", "allow"]  # settings order


async def test_other_exit_codes_and_bad_json_are_non_blocking_errors(tmp_path: Path) -> None:
    broken = script(tmp_path, "broken.sh", "echo 'oops' >&2\nexit 1\n")
    bad_json = script(
        tmp_path, "bad.sh", """echo '{"hookSpecificOutput": {"permissionDecision": "maybe"}}'\n"""
    )
    outcome = await pre_tool(hooks_for(tmp_path, "PreToolUse", broken, bad_json))
    assert outcome.decision == "none" and not outcome.blocked
    assert [(c.exit_code, c.outcome) for c in outcome.commands] == [(1, "error"), (0, "error")]
    assert outcome.errors[0] == "hook `./broken.sh` failed with status 1: oops"
    # Exit 2 blocks only where blocking means something.
    hooks = hooks_for(tmp_path, "Notification", script(tmp_path, "two.sh", "exit 2\n"))
    note = await hooks.run("Notification", {"message": "hi"})
    assert note is not None and note.decision == "none" and note.commands[0].outcome == "error"


async def test_continue_false_stops_with_its_reason(tmp_path: Path) -> None:
    stop = script(tmp_path, "stop.sh", """echo '{"continue": false, "stopReason": "freeze"}'\n""")
    outcome = await pre_tool(hooks_for(tmp_path, "PreToolUse", stop))
    assert (outcome.stop, outcome.stop_reason, outcome.commands[0].outcome) == (
        True,
        "freeze",
        "stop",
    )


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    # The hook leaves a grandchild behind and hangs; the kill must take both.
    slow = script(tmp_path, "slow.sh", "sleep 60 &\necho $! > child.pid\nsleep 60\n")
    started = time.monotonic()
    outcome = await pre_tool(hooks_for(tmp_path, "PreToolUse", slow, timeout=0.5))
    assert time.monotonic() - started < 10
    (run,) = outcome.commands
    assert (run.outcome, run.exit_code) == ("timeout", None)
    assert outcome.decision == "none"  # a non-blocking error
    assert "timed out" in outcome.errors[0]
    assert await dies(int((tmp_path / "child.pid").read_text()))


async def test_cancelling_a_run_kills_its_hooks(tmp_path: Path) -> None:
    slow = script(tmp_path, "slow.sh", "echo $$ > hook.pid\nsleep 60\n")
    task = asyncio.create_task(pre_tool(hooks_for(tmp_path, "PreToolUse", slow)))
    pid_file = tmp_path / "hook.pid"
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await dies(int(pid_file.read_text()))


async def test_matching_hooks_run_in_parallel_and_identical_ones_once(tmp_path: Path) -> None:
    # Each waits for the other's flag: run one after the other, both would time out.
    wait_for = (
        "touch {me}\ni=0\n"
        "while [ ! -e {other} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
        "[ -e {other} ]\n"
    )
    a = script(tmp_path, "a.sh", wait_for.format(me="a.flag", other="b.flag"))
    b = script(tmp_path, "b.sh", wait_for.format(me="b.flag", other="a.flag"))
    count = script(tmp_path, "count.sh", "echo ran >> count.txt\n")
    config = parse_hooks(
        {
            "Stop": [
                {"hooks": [{"command": a, "timeout": 20}, {"command": count}]},
                {"matcher": "*", "hooks": [{"command": b, "timeout": 20}, {"command": count}]},
            ]
        }
    )
    outcome = await Hooks(config, tmp_path).run("Stop", {"stop_hook_active": False})
    assert outcome is not None
    assert [(c.command, c.exit_code) for c in outcome.commands] == [(a, 0), (count, 0), (b, 0)]
    assert (tmp_path / "count.txt").read_text() == "ran\n"


async def test_the_json_on_stdin_the_directory_and_the_environment(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    record = script(
        work, "record.sh", 'cat > stdin.json\npwd > cwd.txt\necho "$MOOT_PROJECT_DIR" > env.txt\n'
    )
    hooks = hooks_for(work, "PreToolUse", record, matcher="edit")
    await pre_tool(hooks, "edit", path="a.py", old="x", new="y")
    sent = json.loads((work / "stdin.json").read_text())
    assert sent == {
        "session_id": "ses_1",
        "permission_mode": "default",
        "tool_name": "edit",
        "tool_input": {"path": "a.py", "old": "x", "new": "y"},
        "cwd": str(work),
        "hook_event_name": "PreToolUse",
    }
    assert (work / "cwd.txt").read_text().strip() == str(work)
    assert (work / "env.txt").read_text().strip() == str(work)
    assert not hooks.wants("PreToolUse", "bash") and hooks.wants("PreToolUse", "edit")


async def test_pre_compact_runs_standalone(tmp_path: Path) -> None:
    record = script(tmp_path, "record.sh", "cat > stdin.json\necho 'kept'\n")
    hooks = hooks_for(tmp_path, "PreCompact", record, matcher="auto")
    assert await hooks.run_pre_compact({"session_id": "s"}, trigger="manual") is None
    outcome = await hooks.run_pre_compact({"session_id": "s"}, trigger="auto")
    assert outcome is not None and outcome.commands[0].outcome == "ok"
    sent = json.loads((tmp_path / "stdin.json").read_text())
    assert (sent["hook_event_name"], sent["trigger"], sent["custom_instructions"]) == (
        "PreCompact",
        "auto",
        "",
    )


@pytest.mark.parametrize("change", ["rewritten", "re-linked", "appeared"])
async def test_a_hook_whose_script_changed_since_the_session_began_is_not_run(
    tmp_path: Path, change: str
) -> None:
    """Hooks run on the host: a script is run only as it was when the session began, however
    it changed since (the sandbox keeps it read-only; this holds for any other way too)."""
    marker = tmp_path / "ran"
    (tmp_path / "scripts").mkdir()
    real = script(tmp_path / "scripts", "real.sh", f"touch {marker}\n")
    evil = script(tmp_path / "scripts", "evil.sh", f"touch {marker}-evil\n")
    if change == "re-linked":
        (tmp_path / "run.sh").symlink_to("scripts/real.sh")
    elif change == "rewritten":
        script(tmp_path, "run.sh", f"touch {marker}\n")
    hooks = hooks_for(tmp_path, "Notification", "./run.sh")
    if change == "rewritten":
        (tmp_path / "run.sh").write_text(f"#!/bin/sh\ntouch {marker}-evil\n")
    elif change == "re-linked":
        (tmp_path / "run.sh").unlink()
        (tmp_path / "run.sh").symlink_to("scripts/evil.sh")
    else:
        (tmp_path / "run.sh").symlink_to("scripts/evil.sh")
    assert real and evil
    outcome = await hooks.run("Notification", {"message": "hi"})
    assert outcome is not None
    (run,) = outcome.commands
    assert run.exit_code is None and run.outcome == "error"
    assert "run.sh changed since the session began" in run.stderr
    assert not (tmp_path / "ran-evil").exists() and not marker.exists()


async def test_an_unchanged_script_runs_every_time(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    hooks = hooks_for(tmp_path, "Notification", script(tmp_path, "n.sh", f"echo x >> {counter}\n"))
    for _ in range(3):
        outcome = await hooks.run("Notification", {"message": "hi"})
        assert outcome is not None and outcome.commands[0].exit_code == 0
    assert counter.read_text() == "x\nx\nx\n"


async def test_a_symlink_loop_where_a_script_was_neither_crashes_nor_runs(tmp_path: Path) -> None:
    hooks = hooks_for(tmp_path, "Notification", script(tmp_path, "run.sh", "exit 0\n"))
    (tmp_path / "run.sh").unlink()
    (tmp_path / "run.sh").symlink_to("run.sh")  # a loop
    outcome = await hooks.run("Notification", {"message": "hi"})
    assert outcome is not None
    (run,) = outcome.commands
    assert run.exit_code is None and "changed since the session began" in run.stderr
    looped = Hooks(parse_hooks({"Stop": [{"hooks": [{"command": "./run.sh"}]}]}), tmp_path)
    assert looped.wants("Stop")  # a session can still begin with the loop in place


@pytest.mark.parametrize("where", ["bin", "ABSOLUTE"])
@pytest.mark.parametrize("change", ["rewritten", "planted ahead"])
async def test_a_program_a_hook_finds_on_a_workspace_path_entry_runs_only_as_it_was(
    tmp_path: Path, where: str, change: str
) -> None:
    """`prettier --write` with `node_modules/.bin` (or an activated `.venv/bin`) on `PATH` runs
    the workspace's program on the host: rewritten by a model, or planted ahead of the one
    that ran at the start, it must not run."""
    marker = tmp_path / "ran"
    (tmp_path / "bin").mkdir()
    (tmp_path / "late").mkdir()
    entry = str(tmp_path / "bin") if where == "ABSOLUTE" else "bin"
    if change == "rewritten":
        script(tmp_path / "bin", "fmt", f"touch {marker}\n")
    else:  # the program is found after bin/ at first
        script(tmp_path / "late", "fmt", f"touch {marker}\n")
    config = parse_hooks({"Notification": [{"hooks": [{"type": "command", "command": "fmt x"}]}]})
    hooks = Hooks(config, tmp_path, environ={"PATH": f"{entry}:{tmp_path / 'late'}:/usr/bin:/bin"})
    first = await hooks.run("Notification", {"message": "hi"})
    assert first is not None and first.commands[0].exit_code == 0 and marker.exists()
    marker.unlink()

    script(tmp_path / "bin", "fmt", f"touch {marker}-evil\n")
    outcome = await hooks.run("Notification", {"message": "hi"})

    assert outcome is not None
    (run,) = outcome.commands
    assert run.exit_code is None and "bin/fmt changed since the session began" in run.stderr
    assert not (tmp_path / "ran-evil").exists()
    assert "bin/fmt" in protected_scripts(["fmt x"], str(tmp_path), f"{entry}:/usr/bin")

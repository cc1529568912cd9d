"""Headless runs (`moot -p`): one turn, its output on stdout, an exit code for scripts.

Exit codes: 0 completed, 1 stopped or failed, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from argparse import Namespace
from pathlib import Path
from typing import TextIO

import msgspec

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.permissions.modes import PermissionMode
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.states import RunState, StopReason
from moot.providers.registry import UnknownModel, resolve_model
from moot.session_setup import (
    Session,
    SetupError,
    hook_config,
    open_session,
    session_environ,
    session_rules,
)
from moot.settings import SettingsError, load_settings, print_warnings
from moot.settings_review import repository_notice
from moot.workspace.paths import Workspace

EXIT_OK, EXIT_STOPPED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

INSTRUCTIONS = (
    "You are moot, a coding agent working in the person's repository. Be exact and brief; "
    "use your tools to look before you change anything."
)


def exit_code(finished: ev.TurnFinished | None) -> int:
    if finished is None:
        return EXIT_STOPPED
    if finished.state is RunState.COMPLETED:
        return EXIT_OK
    if finished.state is RunState.CANCELLED:
        return EXIT_INTERRUPTED
    return EXIT_STOPPED


def result_object(finished: ev.TurnFinished, session_id: str, error: str = "") -> dict[str, object]:
    """The `--output-format json` object. `error` says why a run that did not complete ended
    (the provider's message, the limit hit); it is null for a completed run."""
    return {
        "session_id": session_id,
        "run_id": finished.run_id,
        "state": finished.state,
        "stop_reason": finished.stop_reason,
        "output": finished.output,
        "turns": finished.turns,
        "usage": msgspec.structs.asdict(finished.usage),
        "cost_usd": finished.cost_usd,
        "duration_ms": round(finished.duration_ms, 1),
        "error": None if finished.state is RunState.COMPLETED else error or None,
    }


def _fail(message: str) -> int:
    print(f"moot: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_headless(options: Namespace, out: TextIO | None = None) -> int:
    from moot.store import SessionBusy, StoreError, open_store

    out = out or sys.stdout
    cwd = Path.cwd()
    try:
        settings = load_settings(cwd)
        hooks = hook_config(settings, cwd)
    except SettingsError as exc:  # HookConfigError included
        return _fail(str(exc))
    print_warnings(settings.warnings)
    if notice := repository_notice(settings, cwd):
        print(f"moot: {notice}", file=sys.stderr)
    options.model = options.model or settings.model
    if not options.model:
        return _fail(
            "no model: pass --model provider/model (or set MOOT_MODEL, or `model` in settings)"
        )
    try:
        # A bad name, script or missing key is a usage error, before any session.
        resolve_model(options.model, session_environ(settings), models=settings.models)
        rules = session_rules(
            settings, _rule_list(options.allowed_tools), _rule_list(options.disallowed_tools)
        )
    except (UnknownModel, SetupError) as exc:
        return _fail(str(exc))
    # The runtime gets the name, not the provider: it resolves names itself and moves a scripted
    # provider past the turns a resumed session has already played (Runtime._provider_for).
    agent = Agent("moot", role="coding agent", instructions=INSTRUCTIONS, model=options.model)
    limits = Limits(max_turns=options.max_turns) if options.max_turns else Limits()
    try:
        store = open_store()
    except StoreError as exc:
        return _store_failed(exc, None)
    session_id: str | None = options.resume
    try:
        if options.resume is not None and store.session(options.resume) is None:
            return _fail(f"no session {options.resume!r}")
        title = options.prompt.strip().splitlines()[0][:80] if options.prompt else ""
        session_id = options.resume or store.create_session(title=title, workspace=str(cwd)).id
        try:
            session = open_session(
                store,
                session_id,
                cwd,
                settings=settings,
                agent=agent,
                rules=rules,
                mode=PermissionMode(options.permission_mode) if options.permission_mode else None,
                hooks=hooks,
                limits=limits,
                can_ask=False,
            )
        except SetupError as exc:
            return _fail(str(exc))
        runtime = session.runtime
        if session.shell.backend == "host":
            reason = session.shell.reason
            if settings.sandbox == "none" and not os.environ.get("MOOT_SANDBOX"):
                # Chosen in a file, maybe the repository's own: say which, not "on purpose".
                reason = f'"sandbox": "none" in {settings.origins["sandbox"]}'
            print(f"moot: shell commands run on the host, unsandboxed ({reason})", file=sys.stderr)
        if options.prompt is not None and runtime.unfinished_run:
            return _fail(
                f"session {session_id} has an unfinished run; finish it first with "
                f"`moot --resume {session_id}` (no -p)"
            )
        if options.prompt is None and not runtime.unfinished_run:
            return _fail(f"session {session_id} has no unfinished run to resume")
        try:
            code = asyncio.run(_drive(session, options, out))
            if (os.environ.get("MOOT_AUTO_COMMIT") or settings.auto_commit) and options.prompt:
                _auto_commit(session.workspace, session_id, options.prompt)
            return code
        except BrokenPipeError:
            # The reader went away (`moot -p ... | head -1`). asyncio.run has cancelled a run
            # still going, so its log ends with turn_finished. Point stdout at devnull so the
            # interpreter's last flush does not raise again (the advice in Python's `signal` docs).
            if out is sys.stdout:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(f"moot: output closed early; session {session_id}", file=sys.stderr)
            return EXIT_STOPPED
    except SessionBusy as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_STOPPED
    except StoreError as exc:
        return _store_failed(exc, session_id)
    finally:
        store.close()


def _store_failed(exc: Exception, session_id: str | None) -> int:
    """The sessions database failed (damaged, read-only, a full disk): one line, exit 1."""
    where = f" (session {session_id})" if session_id else ""
    print(f"moot: {exc}{where}", file=sys.stderr)
    return EXIT_STOPPED


def _ends_the_run(event: ev.Event) -> bool:
    """Whether `event` says why the person's turn ended: a limit (limits bound the whole run),
    or a provider's or moot's own error in the turn's first call. A sandbox refusal is a tool
    result the model saw, and a peer's failure is its caller's tool result; neither ends it."""
    if isinstance(event, ev.LimitHit):
        return True
    return (
        isinstance(event, ev.Error)
        and event.parent_call_id is None
        and event.source in ("provider", "internal")
    )


def _rule_list(values: list[str]) -> list[str]:
    """Rules from `--allowedTools "Read,Bash(git diff:*)" Edit`: split on commas and spaces
    outside parentheses."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, []
        for char in value:
            depth += char == "("
            depth -= char == ")"
            if char in ", " and depth == 0:
                if current:
                    rules.append("".join(current))
                current = []
            else:
                current.append(char)
        if current:
            rules.append("".join(current))
    return rules


def _auto_commit(workspace: Workspace, session_id: str, prompt: str) -> None:
    """Commit the files the turn changed as an agent commit (`moot undo` takes it back)."""
    from moot.workspace.git import GIT_ERRORS, AutoCommit

    try:
        made = AutoCommit(workspace, session_id, lambda: set(workspace.changed)).commit_turn(prompt)
    except GIT_ERRORS as exc:
        print(f"moot: auto-commit skipped: {exc}", file=sys.stderr)
        return
    if made is not None:
        print(f"moot: committed {made.sha[:10]} {made.subject}", file=sys.stderr)


async def _drive(session: Session, options: Namespace, out: TextIO) -> int:
    try:
        return await _turn(session.runtime, options, out)
    finally:
        await session.close()  # background shells and the sandbox end with the session


def stop_on_signals(runtime: Runtime) -> None:
    """The first SIGINT or SIGTERM interrupts the run, which records its end; a second one
    ends moot at once, whatever the run still waits for (a tool's thread, a store that stays
    locked), so Ctrl-C always ends moot. Nothing is lost: every event is stored as it happens,
    the session's claim is an OS lock the kernel frees, and `--resume` finishes the run."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)

    def again(signum: int, frame: object) -> None:
        resume = f"moot --resume {runtime.session_id}"
        os.write(2, f"moot: stopped at once; `{resume}` finishes the run\n".encode())
        os._exit(EXIT_INTERRUPTED)

    def first() -> None:
        runtime.submit(ops.Interrupt())
        for number in signals:
            # A plain handler, not the loop's: it runs even while the loop is stuck.
            loop.remove_signal_handler(number)
            signal.signal(number, again)

    for number in signals:
        loop.add_signal_handler(number, first)


async def _turn(runtime: Runtime, options: Namespace, out: TextIO) -> int:
    stop_on_signals(runtime)
    events = runtime.events()
    if options.prompt is not None:
        runtime.submit(ops.UserTurn(text=options.prompt))
    else:
        runtime.submit(ops.ResumeRun())
    streaming = options.output_format == "stream-json"
    problem = ""
    async for event in events:
        if _ends_the_run(event):
            problem = getattr(event, "detail", "") or getattr(event, "message", "")
        if streaming:
            out.write(ev.event_to_json(event) + "\n")
            out.flush()
        if isinstance(event, ev.TurnFinished):
            break
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    if finished is None:  # pragma: no cover - a run always ends with turn_finished
        return EXIT_STOPPED
    if finished.stop_reason is StopReason.USER_CANCELLED:
        problem = ""  # the person's interrupt is the whole reason
    if options.output_format == "json":
        out.write(json.dumps(result_object(finished, runtime.session_id, problem)) + "\n")
    elif options.output_format == "text" and finished.output:
        out.write(finished.output.rstrip("\n") + "\n")
    if finished.state is not RunState.COMPLETED:
        print(
            f"moot: run {finished.state} ({finished.stop_reason}"
            f"{': ' + problem if problem else ''}); session {runtime.session_id}",
            file=sys.stderr,
        )
    return exit_code(finished)

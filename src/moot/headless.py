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
from typing import TYPE_CHECKING, Any, TextIO

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.permissions.headless import NoAsking
from moot.permissions.masks import mask_source
from moot.permissions.modes import PermissionMode
from moot.permissions.plan import exit_plan_mode_tool
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet, read_denied, tool_hidden
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.states import RunState
from moot.providers.registry import UnknownModel, resolve_model
from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.select import SandboxChoice, choose_sandbox
from moot.settings import SettingsError, load_settings
from moot.tools.builtin import builtin_tools, outputs_dir, session_workspace
from moot.workspace.paths import Workspace

if TYPE_CHECKING:
    from moot.hooks import HookConfig, Hooks

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


def result_object(finished: ev.TurnFinished, session_id: str) -> dict[str, object]:
    """The `--output-format json` object."""
    return {
        "session_id": session_id,
        "run_id": finished.run_id,
        "state": finished.state,
        "stop_reason": finished.stop_reason,
        "output": finished.output,
        "turns": finished.turns,
        "usage": finished.usage.model_dump(),
        "cost_usd": finished.cost_usd,
        "duration_ms": round(finished.duration_ms, 1),
    }


def _fail(message: str) -> int:
    print(f"moot: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_headless(options: Namespace, out: TextIO | None = None) -> int:
    from moot.store import open_store

    out = out or sys.stdout
    cwd = Path.cwd()
    try:
        settings = load_settings(cwd)
        hook_config = _hook_config(settings.hooks, cwd)
    except SettingsError as exc:  # HookConfigError included
        return _fail(str(exc))
    options.model = options.model or settings.model
    if not options.model:
        return _fail(
            "no model: pass --model provider/model (or set MOOT_MODEL, or `model` in settings)"
        )
    try:
        resolve_model(options.model)  # a bad name or script is a usage error, before any session
    except UnknownModel as exc:
        return _fail(str(exc))
    try:
        rules = RuleSet(
            allow=[*settings.permissions.allow, *_rule_list(options.allowed_tools)],
            ask=settings.permissions.ask,
            deny=[*settings.permissions.deny, *_rule_list(options.disallowed_tools)],
        )
    except ValueError as exc:
        return _fail(f"permission rules: {exc}")
    mode = PermissionMode(
        options.permission_mode or settings.permissions.default_mode or PermissionMode.DEFAULT
    )
    # The runtime gets the name, not the provider: it resolves names itself and moves a scripted
    # provider past the turns a resumed session has already played (Runtime._provider_for).
    agent = Agent("moot", role="coding agent", instructions=INSTRUCTIONS, model=options.model)
    limits = Limits(max_turns=options.max_turns) if options.max_turns else Limits()
    store = open_store()
    try:
        if options.resume is not None and store.session(options.resume) is None:
            return _fail(f"no session {options.resume!r}")
        title = options.prompt.strip().splitlines()[0][:80] if options.prompt else ""
        session_id = options.resume or store.create_session(title=title, workspace=str(cwd)).id
        workspace = session_workspace(store, session_id, cwd)
        workspace.hidden = read_denied(rules, workspace.root)
        masks = mask_source(rules, workspace.root)  # what shell commands cannot see or edit
        # Hooks run on the host: the scripts they name are protected like `.moot/`.
        scripts = hook_config.scripts(workspace.root) if hook_config else ()
        sandbox_policy = SandboxPolicy(
            workspace.root,
            output_dir=outputs_dir(session_id),
            masks=masks,
            protected=(*SandboxPolicy.protected, *scripts),
        )
        try:
            shell = choose_sandbox(
                os.environ.get("MOOT_SANDBOX") or settings.sandbox or "auto",
                sandbox_policy,
                bypass=mode is PermissionMode.BYPASS_PERMISSIONS,
                session_id=session_id,
            )
        except ValueError as exc:
            return _fail(f"MOOT_SANDBOX: {exc}")
        if shell.backend == "host":
            print(
                f"moot: shell commands run on the host, unsandboxed ({shell.reason})",
                file=sys.stderr,
            )
        shells = BackgroundShells()
        rules_policy = RulesPolicy(
            rules, workspace.root, mode=mode, shell=shell.backend, protected=scripts
        )
        policy = NoAsking(rules_policy, workspace.root)
        tools = [
            t
            for t in [
                *builtin_tools(store, session_id, workspace, shell, shells),
                exit_plan_mode_tool(policy),
            ]
            if not tool_hidden(t.name, rules)
        ]
        runtime = Runtime(
            [agent],
            store=store,
            session_id=session_id,
            tools=tools,
            limits=limits,
            approval=policy,
            hooks=_hooks(hook_config, workspace.root),
        )
        if runtime.mode and not options.permission_mode:
            # The mode belongs to the session: a resumed one goes on in the mode it switched to,
            # unless the command line names one.
            policy.set_mode(runtime.session_id, runtime.mode)
        if options.prompt is not None and runtime.unfinished_run:
            return _fail(
                f"session {runtime.session_id} has an unfinished run; finish it first with "
                f"`moot --resume {runtime.session_id}` (no -p)"
            )
        if options.prompt is None and not runtime.unfinished_run:
            return _fail(f"session {runtime.session_id} has no unfinished run to resume")
        try:
            code = asyncio.run(_drive(runtime, options, out, shell, shells))
            if (os.environ.get("MOOT_AUTO_COMMIT") or settings.auto_commit) and options.prompt:
                _auto_commit(workspace, session_id, options.prompt)
            return code
        except BrokenPipeError:
            # The reader went away (`moot -p ... | head -1`). asyncio.run has cancelled a run
            # still going, so its log ends with turn_finished. Point stdout at devnull so the
            # interpreter's last flush does not raise again (the advice in Python's `signal` docs).
            if out is sys.stdout:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(f"moot: output closed early; session {runtime.session_id}", file=sys.stderr)
            return EXIT_STOPPED
    finally:
        store.close()


def _hook_config(hooks: dict[str, Any], cwd: Path) -> HookConfig | None:
    """The settings' hooks, checked; None when none are set.

    Raises:
        HookConfigError: A settings file's `hooks` do not fit.
    """
    if not hooks:
        return None
    from moot.hooks import hooks_from_settings  # lazy: no hooks set, moot.hooks is never imported

    return hooks_from_settings(hooks, cwd)


def _hooks(config: HookConfig | None, root: Path) -> Hooks | None:
    """The session's hook runner; None (no cost, no hook events) when no command is set."""
    if not config:
        return None
    from moot.hooks import Hooks  # lazy, as in _hook_config

    return Hooks(config, root, can_ask=False)


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


async def _drive(
    runtime: Runtime,
    options: Namespace,
    out: TextIO,
    shell: SandboxChoice,
    shells: BackgroundShells,
) -> int:
    try:
        return await _turn(runtime, options, out)
    finally:
        # Background shells and the sandbox (a Docker container) end with the session.
        await shells.close()
        if shell.sandbox is not None:
            await shell.sandbox.close()


async def _turn(runtime: Runtime, options: Namespace, out: TextIO) -> int:
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, runtime.submit, ops.Interrupt())
    loop.add_signal_handler(signal.SIGTERM, runtime.submit, ops.Interrupt())
    events = runtime.events()
    if options.prompt is not None:
        runtime.submit(ops.UserTurn(text=options.prompt))
    else:
        runtime.submit(ops.ResumeRun())
    streaming = options.output_format == "stream-json"
    problem = ""
    async for event in events:
        if isinstance(event, ev.LimitHit | ev.Error):
            problem = getattr(event, "detail", "") or getattr(event, "message", "")
        if streaming:
            out.write(event.model_dump_json() + "\n")
            out.flush()
        if isinstance(event, ev.TurnFinished):
            break
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    if finished is None:  # pragma: no cover - a run always ends with turn_finished
        return EXIT_STOPPED
    if options.output_format == "json":
        out.write(json.dumps(result_object(finished, runtime.session_id)) + "\n")
    elif options.output_format == "text" and finished.output:
        out.write(finished.output.rstrip("\n") + "\n")
    if finished.state is not RunState.COMPLETED:
        print(
            f"moot: run {finished.state} ({finished.stop_reason}"
            f"{': ' + problem if problem else ''}); session {runtime.session_id}",
            file=sys.stderr,
        )
    return exit_code(finished)

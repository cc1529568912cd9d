"""`moot sandbox status | run -- <command>`: which sandbox runs shell commands, and a try of one.

The setting comes from `MOOT_SANDBOX` (auto, bubblewrap, landlock, seatbelt, docker or
none), else the
settings' `sandbox`, else auto. The workspace is the current directory, contained as a
session's shell commands are: what the settings' deny rules cover is masked, and the scripts
hooks run are read-only, so `moot sandbox run -- cat .env` shows what the model's commands
would see.

`run` prints what the command prints as it arrives, stdout and stderr together on stdout (as
`2>&1` would), and its own notes on stderr.

`run` exit codes: the command's own; 128+N when signal N ended it; 124 on timeout (as
`timeout(1)`); 125 when no sandbox works (as `docker run` when the engine fails); 2 for usage.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import msgspec

if TYPE_CHECKING:
    from moot.sandbox.base import Sandbox

EXIT_USAGE, EXIT_TIMEOUT, EXIT_NO_SANDBOX, EXIT_INTERRUPTED = 2, 124, 125, 130


def run_sandbox_cli(
    options: argparse.Namespace,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> int:
    """Run `moot sandbox status` or `moot sandbox run` as parsed into `options`.

    Args:
        options: `action` ("status" or "run"); for run, `argv` and `timeout`.
        out, err: Where to print; stdout and stderr when None.
        environ: Where `MOOT_SANDBOX` is read and commands start from; `os.environ` when None.
        cwd: The workspace; the current directory when None.

    Returns:
        The exit code (see the module docstring).
    """
    from moot.client.environment import (
        hook_config,
        hook_scripts,
        sandbox_policy,
        sandbox_setting,
        session_environ,
    )
    from moot.client.errors import SetupError
    from moot.client.rules import session_rules
    from moot.sandbox.select import SETTING_VARIABLE, choose_sandbox
    from moot.settings import SettingsError, load_settings, network_settings, sandbox_backend

    out, err = out or sys.stdout, err or sys.stderr
    env = os.environ if environ is None else environ
    root = Path(os.path.realpath(cwd or Path.cwd()))
    try:
        settings = load_settings(root, env)
        rules = session_rules(settings)
        scripts = hook_scripts(hook_config(settings, root), root)
    except (SettingsError, SetupError) as exc:
        print(f"moot: {exc}", file=err)
        return EXIT_USAGE
    setting = sandbox_setting(settings, env)
    env = session_environ(settings, env)  # commands start from a session's environment
    policy = sandbox_policy(root, rules, scripts, env_names=settings.env)
    if (network := network_settings(settings)) is not None:  # nobody is asked here
        from moot.sandbox.net_proxy import NetworkProxy
        from moot.sandbox.net_rules import NetworkRules

        lists = NetworkRules(tuple(network.allowed_domains), tuple(network.denied_domains))
        policy = msgspec.structs.replace(policy, proxy=NetworkProxy(lists))
    try:
        choice = choose_sandbox(setting, policy)
    except ValueError as exc:
        print(f"moot: {SETTING_VARIABLE}: {exc}", file=err)
        return EXIT_USAGE
    if options.action == "status":
        from moot.sandbox.status import setting_source, status_lines

        print(f"setting: {setting_source(setting, bool(sandbox_backend(settings)), env)}", file=out)
        print("\n".join(status_lines(choice, policy)), file=out)
        return 0 if choice.sandbox is not None else 1
    command = _command_line(options.argv)
    if not command:
        print("moot: sandbox run: give a command, e.g. `moot sandbox run -- ls -la`", file=err)
        return EXIT_USAGE
    if choice.sandbox is None:
        print(f"moot: {choice.describe()}", file=err)
        return EXIT_NO_SANDBOX
    if choice.backend == "host":
        print("moot: running on the host: NO sandbox", file=err)
    try:
        return asyncio.run(_run(choice.sandbox, command, policy.workspace, env, options, out, err))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _command_line(argv: list[str]) -> str:
    """One argument is a shell line (`-- 'ls | wc -l'`); several are quoted as a command."""
    if argv[:1] == ["--"]:
        argv = argv[1:]
    return argv[0] if len(argv) == 1 else shlex.join(argv)


async def _run(
    sandbox: Sandbox,
    command: str,
    workspace: Path,
    env: Mapping[str, str],
    options: argparse.Namespace,
    out: TextIO,
    err: TextIO,
) -> int:
    from moot.tools.bash import OutputWatch, sandbox_violation
    from moot.workspace.paths import Workspace

    watch = OutputWatch()

    def show(text: str) -> None:
        watch(text)
        out.write(text)
        out.flush()

    try:
        result = await sandbox.run(
            command, cwd=workspace, env=env, timeout=options.timeout, on_output=show
        )
    except OSError as exc:
        print(f"moot: could not run the command ({sandbox.name}): {exc}", file=err)
        return EXIT_NO_SANDBOX
    finally:
        await sandbox.close()
    if result.output_file is not None:
        print(f"moot: the full output is in {result.output_file}", file=err)
    code = result.exit_code
    if code is None:
        print(f"moot: timed out after {options.timeout:g} s; killed", file=err)
        return EXIT_TIMEOUT
    if code != 0:
        violation = sandbox_violation(watch.rules, result.backend, Workspace(workspace))
        if violation is not None:
            print(f"moot: sandbox: {violation}", file=err)
    return 128 - code if code < 0 else code

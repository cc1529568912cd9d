"""The command line: parse arguments, build config, runtime and a front end; nothing else."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from moot._version import __version__

EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        # The fast path: `moot --version` imports nothing else (start-up is a benchmark).
        print(f"moot {__version__}")
        return 0
    from moot.cli_args import parse

    options = parse(args)
    if options.command == "sessions":
        from moot.sessions_cli import run_sessions

        return run_sessions(options)
    if options.command == "doctor":
        from moot.doctor import run_doctor

        return run_doctor(options)
    if options.command == "sandbox":
        from moot.sandbox_cli import run_sandbox_cli

        return run_sandbox_cli(options)
    if options.command == "undo":
        from moot.workspace.git import GIT_ERRORS, undo_last_agent_commit

        try:
            undone = undo_last_agent_commit(".")
        except GIT_ERRORS as exc:
            print(f"moot: {exc}", file=sys.stderr)
            return 1
        print(f"took back {undone.sha[:10]} {undone.subject} ({len(undone.files)} files)")
        return 0
    if options.command == "login":
        from moot.login import run_login

        return run_login(options)
    if options.prompt is None and options.resume is None:
        print(
            "moot: the interactive app is not part of this build yet; "
            'run a task headless with `moot -p "task" --model ...` (see `moot --help`)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    from moot.headless import run_headless

    return run_headless(options)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

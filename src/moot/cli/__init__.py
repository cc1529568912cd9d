"""The command line: parse arguments, build config, runtime and a front end; nothing else."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from moot._version import __version__

if TYPE_CHECKING:
    from argparse import Namespace

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_READER_GONE = 141
"""What a shell reports for a program a closed pipe ended (128 + SIGPIPE), as `| head` ends
unix tools."""
EXIT_HUNG_UP = 129
"""What a shell reports for a program its terminal's hang-up ended (128 + SIGHUP): the app and
the REPL end so when their terminal goes away, signalled or not."""

Command = Callable[["Namespace"], int]


def main(argv: Sequence[str] | None = None, *, attach: bool = True) -> int:
    """Run `moot` with `argv`, or with this process's own arguments when None; `attach`: as
    the program itself, in a child of the resident process when there is one to use
    (`moot.cli.resident`), which runs this again without."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        # The fast path: `moot --version` imports nothing else (start-up is a benchmark).
        print(f"moot {__version__}")
        return 0
    # As the program itself (not called in-process), the heap is the process's alone to tune.
    program = argv is None
    start_resident = False
    if program and attach and args[:1] != ["resident"]:
        from moot.cli.resident.switch import wanted

        if wanted():
            from moot.cli.resident import client

            code, start_resident = client.attach(args)
            if code is not None:
                return code
    try:
        return _run(args, program=program)
    finally:
        if start_resident:
            from moot.cli.resident import client

            client.spawn()


def _run(args: list[str], *, program: bool) -> int:
    if program:
        import gc

        # Start-up builds a large, long-lived heap (every module, the models); scanning
        # it again and again while it grows costs ~10 ms, and it is all kept anyway. It is
        # frozen once loaded, so later collections skip it.
        gc.disable()
        from moot.cli.lean_httpx import keep_httpx_cli_unloaded

        keep_httpx_cli_unloaded()
    from moot.cli.args import PICK, parse

    options = parse(args)
    if options.command is None and (options.continue_ or options.resume == PICK):
        from moot.cli.sessions import settle_session

        if (failed := settle_session(options)) is not None:
            return failed
    command = _command(options, program=program)
    if program:
        gc.freeze()
        gc.enable()
    on_terminal = sys.stdin.isatty()
    try:
        with _inert_on_terminals(options):
            code = command(options)
            sys.stdout.flush()  # here, not at exit: a reader that went away is found inside
    except KeyboardInterrupt:
        # Ctrl-C before a command sets its own handling (reading settings, opening the
        # store): end quietly, as an interrupt.
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _reader_gone()
    except OSError:
        if on_terminal and _hung_up():  # a last word (the session to go on with) found it gone
            return _terminal_gone()
        raise
    if on_terminal and _hung_up():
        return _terminal_gone()
    if program:
        # Leave what is left to the OS: the interpreter's exit would otherwise collect every
        # cycle in the heap one last time (~50 ms of `moot -p`). atexit handlers still run
        # and the standard streams are still flushed.
        gc.freeze()
    return code


_PRINTS_WHAT_OTHERS_WROTE = frozenset(
    {"sessions", "skills", "mcp", "trust", "cost", "undo", "doctor", "init"}
)
"""Commands that print what a repository or a model wrote (a skill's description, a server's
definition, a session's title, a commit's subject)."""


def _inert_on_terminals(options: Namespace) -> contextlib.AbstractContextManager[object]:
    """For those commands, stdout and stderr made inert where they are terminals
    (`moot.frontend.inert`): a repository's `SKILL.md` describing itself with `ESC ] 52 ;`
    set the clipboard of whoever ran `moot skills list`. Pipes get every character."""
    if (
        options.command not in _PRINTS_WHAT_OTHERS_WROTE
        or getattr(options, "action", "") == "serve"
    ):
        return contextlib.nullcontext()
    from moot.frontend.inert import on_terminal

    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(on_terminal(sys.stdout)))
    stack.enter_context(contextlib.redirect_stderr(on_terminal(sys.stderr)))
    return stack


def _reader_gone() -> int:
    """The reader of stdout went away (`moot sessions list | head -1`): end quietly, as unix
    tools do, with no traceback. Python ignores SIGPIPE, so the write raised instead of ending
    the process; stdout now points at /dev/null so that the interpreter's last flush of what is
    still buffered says nothing either."""
    import contextlib
    import os

    with contextlib.suppress(OSError, ValueError):  # no stdout left: nothing to flush either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_READER_GONE


def _hung_up() -> bool:
    """The terminal on stdin hung up (a closed window, a dropped connection): `poll` asked for
    nothing reports only that. Asked only of a stdin that was a terminal at the start, since a
    pipe whose writer closed reports a hang-up too."""
    import select

    poller = select.poll()
    try:
        poller.register(0, 0)
        events = poller.poll(0)
    except (OSError, ValueError):
        return False
    return any(mask & (select.POLLHUP | select.POLLERR) for _, mask in events)


def _terminal_gone() -> int:
    """The terminal went away under the app or the REPL (each ended as quitting does, its
    session closed): end with the hang-up's status and no traceback. stdout and stderr now
    point at /dev/null, so that the interpreter's last flush into the dead terminal (which
    fails with EIO, an exit status of 120) says nothing."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(devnull, fd)
    return EXIT_HUNG_UP


def _command(options: Namespace, *, program: bool = False) -> Command:
    """The function that runs `options.command`, its module imported; `program`: this process
    is `moot` itself, whose heap is its own to tune."""
    if options.command == "sessions":
        from moot.cli.sessions import run_sessions

        return run_sessions
    if options.command == "cost":
        from moot.cli.cost import run_cost

        return run_cost
    if options.command == "doctor":
        from moot.cli.doctor import run_doctor

        return run_doctor
    if options.command == "sandbox":
        from moot.cli.sandbox import run_sandbox_cli

        return run_sandbox_cli
    if options.command == "undo":
        return _undo
    if options.command == "skills":
        from moot.cli.skills import run_skills

        return run_skills
    if options.command == "init":
        return _init
    if options.command == "trust":
        from moot.cli.trust import run_trust

        return run_trust
    if options.command == "login":
        from moot.cli.login import run_login

        return run_login
    if options.command == "mcp" and options.action == "serve":
        from moot.mcp_server import run_serve

        return run_serve
    if options.command == "mcp":
        from moot.mcp.cli import run_mcp_cli

        return run_mcp_cli
    if options.command == "acp":
        from moot.acp import run_acp

        return run_acp
    if options.command == "resident":
        from moot.cli.resident.command import run_resident

        return run_resident
    streamed = options.input_format == "stream-json"  # an Agent SDK drives it: headless
    if options.prompt is None and not streamed and (options.resume is None or sys.stdout.isatty()):
        import os

        from moot.repl.look import app_unfit

        if options.plain or app_unfit(os.environ, sys.stdin, sys.stdout):
            from functools import partial

            from moot.repl import run_repl  # prompt_toolkit loads only for the REPL

            return partial(run_repl, own_heap=program)
        from moot.tui import run_app  # textual loads only for the app

        return run_app
    from functools import partial

    from moot.cli.headless import run_headless

    return partial(run_headless, own_heap=program)


INIT_RULES = ["Edit(./AGENTS.md)"]
"""What `moot init` may do without asking: write the workspace's AGENTS.md, and nothing else."""


def _init(options: Namespace) -> int:
    """`moot init`: the `/init` command headless, allowed to write AGENTS.md (`INIT_RULES`)."""
    from moot.cli.headless import run_headless

    options.prompt = " ".join(["/init", *options.note])
    options.allowed_tools = [*options.allowed_tools, *INIT_RULES]
    return run_headless(options)


def _undo(options: Namespace) -> int:
    from moot.workspace.agent_commits import undo_last_agent_commit
    from moot.workspace.git import GIT_ERRORS

    try:
        undone = undo_last_agent_commit(".")
    except GIT_ERRORS as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    print(f"took back {undone.sha[:10]} {undone.subject} ({len(undone.files)} files)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The plain REPL: `moot --plain`, and `moot` where the app cannot run (`TERM=dumb`, output
not a terminal). The only package that imports prompt_toolkit.

`run_repl` opens the session's client (the front-end contract) and runs `Repl` over it.
prompt_toolkit loads inside the function, so `moot -p` and `moot.cli` never pay for it;
`moot.repl.look` (which `moot.cli` asks whether the app can run) imports none of it.
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from moot.frontend.flags import rule_list
from moot.frontend.heap import HeldCollector
from moot.paths import workspace_root

if TYPE_CHECKING:
    from moot.protocol.client import Client
    from moot.repl.look import Look
    from moot.repl.repl import Repl
    from moot.settings.review import HeldSettings

EXIT_USAGE = 2


def run_repl(options: Namespace, *, own_heap: bool = False) -> int:
    """Open (or resume) a session and run the plain REPL until the person quits.

    `own_heap`: this process is `moot` itself, so its collector may be tuned: it is held from
    here until the session is open (prompt_toolkit, then the session's modules load meanwhile)
    and the heap frozen then, as `moot -p` does (`moot.frontend.heap.HeldCollector`).
    """
    if not sys.stdin.isatty():
        print(
            "moot: the REPL reads keys from a terminal; run a task headless with "
            '`moot -p "task" --model ...` (see `moot --help`)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    collector = HeldCollector(held=own_heap)
    cwd = workspace_root(Path.cwd())  # the git root, as the app
    # `moot -c` and `moot -r` without an id were settled into `options.resume` by `moot.cli`.
    session_id = options.resume or None

    from moot.frontend.history import history_file
    from moot.repl.look import choose_look
    from moot.settings import SettingsError, load_settings

    try:
        settings = load_settings(cwd)
    except SettingsError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if settings.held:
        _ask_trust(cwd, settings.held)
    look = choose_look(
        os.environ,
        sys.stdout,
        {"repl": {"toolbar": settings.repl.toolbar, "plainOutput": settings.repl.plain_output}},
        toolbar_flag=not getattr(options, "no_toolbar", False),
    )
    from moot.repl.repl import Repl  # prompt_toolkit loads here

    connect = _Connect(options, cwd, collector)
    repl = Repl(
        lambda: connect(session_id),  # in a thread, while the prompt shows
        look=look,
        out=sys.stdout,
        task=options.task,
        show_history=session_id is not None,
        open_client=lambda: connect(None),
        open_session=connect,
        # The app's file for this workspace (it names the workspace by its real path).
        history_path=history_file(Path(os.path.realpath(cwd))),
    )
    if settings.ui.image_thumbnails and not look.plain:
        from moot.frontend.thumbnails import graphics_protocol

        repl.transcript.thumbnails = graphics_protocol(os.environ)
    try:
        code = _run(repl, look)
    except KeyboardInterrupt:  # a ctrl+c outside any prompt: the session is closed already
        return 130
    finally:
        collector.let_go()  # the REPL ended before its session opened
    if repl.error:
        print(f"moot: {repl.error}", file=sys.stderr)
    return code


class _Connect:
    """Opens this command line's session in `cwd`: a new one, or one by id."""

    def __init__(self, options: Namespace, cwd: Path, collector: HeldCollector) -> None:
        self._options = options
        self._cwd = cwd
        self._collector = collector

    def __call__(self, resume: str | None) -> Client:
        try:
            return self._open(resume)
        finally:
            self._collector.let_go()  # the session is open (or could not be)

    def _open(self, resume: str | None) -> Client:
        # The session's modules (the runtime, the store, the tools' specs) load here, in the
        # thread that opens it while the prompt already shows.
        from moot.client.local import SessionOptions, open_client

        options = self._options
        task = options.task or ""
        return open_client(
            SessionOptions(
                cwd=self._cwd,
                model=options.model,
                permission_mode=options.permission_mode,
                allowed_tools=rule_list(options.allowed_tools),
                disallowed_tools=rule_list(options.disallowed_tools),
                agents=options.agents,
                session_id=resume,
                title=task.strip().splitlines()[0][:80] if task.strip() else "",
                max_turns=options.max_turns,
                asks_about_network=True,  # `network_access_requested` is asked as approvals are
                asks_mcp_questions=True,  # the prompt puts the servers' questions
            )
        )


def _run(repl: Repl, look: Look) -> int:
    """Run `repl` to its end on the terminal, through an output fitted to its `look`."""
    import asyncio

    from moot.repl.line_output import prompt_output
    from moot.repl.look import DUMB_TERMS

    if look.dumb and os.environ.get("TERM", "").lower() not in DUMB_TERMS:
        # Output into a pipe (`moot | tee log`): prompt_toolkit would draw its prompt there as
        # text, redraws included; its dumb prompt writes only what is typed, and it takes a
        # dumb terminal from `TERM` alone.
        os.environ["TERM"] = "dumb"
    output = prompt_output(look, sys.stdout)  # plain looks: no cursor tricks (line_output.py)
    if output is None:
        return asyncio.run(repl.run())
    from prompt_toolkit.application.current import create_app_session

    with create_app_session(output=output):
        return asyncio.run(repl.run())


def _ask_trust(workspace: Path, held: tuple[HeldSettings, ...]) -> None:
    """Before the session opens, ask about the repository's settings that wait for approval
    (`moot.settings.review`): only `y` or `yes` approves, and keys typed before the question
    are dropped, so nothing typed ahead answers it."""
    import contextlib
    import termios

    from moot.settings.review import SettingsApprovals

    print("This repository's settings ask to turn on what could run code or act unasked:")
    for file in held:
        print(f"{file.file}:")
        for grant in file.grants:
            print(f"  - {grant}")
    with contextlib.suppress(termios.error, OSError):
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    try:
        answer = input(f"Approve it for {workspace}? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        print("kept off: this session runs without it (/trust asks again)")
        return
    approvals = SettingsApprovals()
    try:
        for file in held:  # the content shown, not what the files hold by now
            approvals.approve(workspace, file)
    except OSError as exc:
        print(f"moot: cannot remember the approval: {exc}", file=sys.stderr)

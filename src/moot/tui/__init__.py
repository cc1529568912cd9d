"""The Textual app: `moot` with no `-p`. The only package that imports textual.

`run_app` opens the session's client (the front-end contract) and runs `MootApp` over it.
Textual loads here, inside the function, so that `moot -p` never pays for it.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path

EXIT_USAGE = 2


def run_app(options: Namespace) -> int:
    """Open (or resume) a session and run the app until the person quits."""
    from moot.client import SetupError
    from moot.client.local import SessionOptions, open_client, open_queries

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "moot: the app needs a terminal; run a task headless with "
            '`moot -p "task" --model ...` (see `moot --help`)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    cwd = Path.cwd()
    session_id = options.resume or None
    if getattr(options, "continue_", False):
        queries = open_queries()
        try:
            latest = queries.sessions(workspace=str(cwd), limit=1)
        finally:
            queries.close()
        if not latest:
            print("moot: no earlier session in this directory to continue", file=sys.stderr)
            return EXIT_USAGE
        session_id = latest[0].id

    def session(resume: str | None) -> SessionOptions:
        return SessionOptions(
            cwd=cwd,
            model=options.model,
            permission_mode=options.permission_mode,
            session_id=resume,
            title=(options.task or "").strip().splitlines()[0][:80] if options.task else "",
            max_turns=options.max_turns,
        )

    try:
        client = open_client(session(session_id))
    except SetupError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from moot.tui.app import MootApp  # textual loads here

    app = MootApp(
        client,
        task=options.task,
        show_history=session_id is not None,
        open_client=lambda: open_client(session(None)),
    )
    code = app.run(inline=bool(getattr(options, "no_alt_screen", False)))
    return code or 0

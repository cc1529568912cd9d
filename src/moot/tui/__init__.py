"""The Textual app: `moot` with no `-p`. The only package that imports textual.

`run_app` runs `MootApp` with a way to open the session's client (the front-end contract): the
app paints its prompt first and opens the session in a thread meanwhile (assembling it, the
store, the runtime and the tools' modules take about as long as Textual takes to load), so the
person types while it opens. With no model configured it runs the app on its first-run screen
instead, which opens the session once the person has picked a model (or the demo). Textual
loads here, inside the function, so that `moot -p` never pays for it.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from moot.client.local import SessionOptions
    from moot.protocol.client import Client
    from moot.settings import TerminalOptions
    from moot.settings.review import HeldSettings
    from moot.tui.screens.setup import FirstRun
    from moot.tui.scrollback import Format, Visit

EXIT_USAGE = 2
FRAMES_PER_S = 120
"""Textual paints at most this many frames a second (its default is 60), and a change waits for
the next tick of its update timer. With an answer streaming at 1,000 tokens a second, a key
typed in the prompt showed 24 ms later at the median at 60 and 17 ms at 120 (p95 49 → 40 ms,
max 72 → 48 ms, four runs of each); streaming frames stay as many (the bridge sends text at
most 30 times a second), and an idle app runs no timer either way. `TEXTUAL_FPS` set in the
environment wins."""


def _set_frame_rate() -> None:
    """Have Textual read `FRAMES_PER_S` (it reads `TEXTUAL_FPS` once, when its constants load),
    without leaving the variable in moot's environment for the commands it runs."""
    import os

    if "TEXTUAL_FPS" in os.environ or "textual.constants" in sys.modules:
        return
    os.environ["TEXTUAL_FPS"] = str(FRAMES_PER_S)
    try:
        import textual.constants  # noqa: F401
    finally:
        del os.environ["TEXTUAL_FPS"]


_set_frame_rate()


def run_app(options: Namespace) -> int:
    """Open (or resume) a session and run the app until the person quits."""
    from moot.client import setup_detect
    from moot.paths import workspace_root

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "moot: the app needs a terminal; run a task headless with "
            '`moot -p "task" --model ...` (see `moot --help`)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    cwd = workspace_root(Path.cwd())  # the git root: `moot` in a subdirectory is the repository
    # `moot -c` and `moot -r` without an id were settled into `options.resume` by `moot.cli`.
    session_id = options.resume or None
    sessions = _Sessions(options, cwd)
    first_run = None
    connect: Callable[[], Client] | None = None
    if session_id is None and setup_detect.needs_setup(cwd, options.model):
        first_run = _first_run(cwd, sessions.new)
    elif session_id is None:
        connect = sessions.new
    else:
        connect = sessions.resumed

    from moot.frontend.heap import HeldCollector

    # Held until the session is open (`SessionView._await_session`).
    collector = HeldCollector(held=connect is not None)
    from moot.tui import inert_text
    from moot.tui.app import MootApp  # textual loads here

    inert_text.install()  # no control character of what the app shows reaches the terminal
    from moot.tui.options import AppOptions
    from moot.tui.scrollback import scrollback_format

    ui, held = _settings_at_start(cwd)
    inline = bool(getattr(options, "no_alt_screen", False)) or not ui.alt_screen
    how = scrollback_format(ui.scrollback, inline=inline, flag=getattr(options, "scrollback", None))
    app = MootApp(
        None,
        AppOptions(
            connect=connect,
            workspace=cwd,
            model=options.model,
            task=options.task,
            show_history=session_id is not None,
            open_client=sessions.new,
            first_run=first_run,
            open_session=sessions.stored,
            mouse=ui.mouse and not getattr(options, "no_mouse", False),
            thumbnails=ui.image_thumbnails,
            own_heap=True,
            collector=collector,
            held=held,  # asked about before `connect` opens the session
        ),
    )
    # Inline, the last frame stays on screen at exit unless the conversation is printed instead.
    try:
        code = app.run(inline=inline, inline_no_clear=inline and how == "off")
    finally:
        collector.let_go()  # the app ended before its session opened
    if app.view.error:  # the session could not be opened (a missing key, an unknown session)
        print(f"moot: {app.view.error}", file=sys.stderr)
        return EXIT_USAGE
    if app.view.visits:
        _after_the_app(app.view.visits, how)
    return code or 0


class _Sessions:
    """How the app opens sessions for this command line: a new one (`/new` too), the one
    `moot -r ID` resumes, a stored one (the palette's sessions, `/resume`)."""

    def __init__(self, options: Namespace, cwd: Path) -> None:
        self._options = options
        self._cwd = cwd

    def _options_for(
        self, resume: str | None, *, where: Path | None = None, model: str | None = None
    ) -> SessionOptions:
        from moot.client.local import SessionOptions
        from moot.frontend.flags import rule_list

        options = self._options
        return SessionOptions(
            cwd=where or self._cwd,
            model=model or options.model,
            permission_mode=options.permission_mode,
            session_id=resume,
            title=(options.task or "").strip().splitlines()[0][:80] if options.task else "",
            max_turns=options.max_turns,
            allowed_tools=rule_list(options.allowed_tools),
            disallowed_tools=rule_list(options.disallowed_tools),
            agents=options.agents,
            asks_about_network=True,  # `network_access_requested` is asked as approvals are
            asks_mcp_questions=True,  # the approval pane puts the servers' questions
        )

    def new(self, model: str | None = None) -> Client:
        # The session's modules (the runtime, the store, the tools' specs) load here: in the
        # thread that opens the session while the app already shows its prompt.
        from moot.client.local import open_client

        return open_client(self._options_for(None, model=model))

    def resumed(self) -> Client:
        # `moot -r ID` goes on in this workspace (the palette's sessions open in their own).
        from moot.client.local import open_client

        return open_client(self._options_for(self._options.resume or None))

    def stored(self, stored: str) -> Client:
        """A stored session, opened in the workspace it belongs to."""
        from moot.client import SetupError
        from moot.client.local import open_client, open_queries

        queries = open_queries()
        try:
            summary = queries.session(stored)
        finally:
            queries.close()
        if summary is None:
            raise SetupError(f"no session {stored!r}")
        where = Path(summary.workspace) if summary.workspace else self._cwd
        if not where.is_dir():
            raise SetupError(f"its workspace {where} is not there any more")
        return open_client(self._options_for(stored, where=where))


def _after_the_app(visits: Sequence[Visit], how: Format) -> None:
    """Print the conversation into the terminal's scrollback (`how`), and which session to go
    on with."""
    from moot.client.local import open_queries
    from moot.tui.scrollback import print_conversation

    queries = open_queries()
    try:
        if how != "off":
            print_conversation(queries, visits, how)
        # A session left without a turn is not kept; one that is can be gone on with.
        last = visits[-1].session_id
        if queries.session(last) is not None:
            # On stdout, after the conversation: the app drew on stderr, as Textual does.
            print(f"moot: session {last}; `moot -c` goes on with it")
    finally:
        queries.close()


def _first_run(cwd: Path, open_model: Callable[[str], Client]) -> FirstRun:
    """What the first-run screen opens: a session with the model picked, or the demo."""
    from moot.client import setup_detect
    from moot.client.local import SessionOptions, open_client
    from moot.tui.screens.setup import FirstRun

    def open_demo() -> Client:
        # The demo works in its own scratch folder, in the default mode: its edit asks.
        return open_client(
            SessionOptions(
                cwd=setup_detect.demo_workspace(),
                model=setup_detect.demo_model(),
                permission_mode="default",
                title="demo",
            )
        )

    return FirstRun(
        open_model=open_model, open_demo=open_demo, detect=lambda: setup_detect.detect(cwd)
    )


def _settings_at_start(cwd: Path) -> tuple[TerminalOptions, tuple[HeldSettings, ...]]:
    """The settings' `ui`, and the project files whose grants wait for the person's approval
    (a broken settings file is reported when the session opens)."""
    from moot.settings import SettingsError, TerminalOptions, load_settings

    try:
        settings = load_settings(cwd)
    except SettingsError:
        return TerminalOptions(), ()
    return settings.ui, settings.held

"""`moot sessions list | show | export | delete | fork | prune`, and which session `moot -c`
and `moot -r` (no id) go on with. Sessions are read through the query interface and changed
through `SessionUpkeep`; nothing here touches the store."""

from __future__ import annotations

import sys
from argparse import Namespace
from datetime import timedelta
from pathlib import Path
from typing import TextIO

from moot.client.errors import SessionBusy, StoreError
from moot.client.queries import StoreQueries
from moot.client.stored import open_queries, open_upkeep
from moot.frontend.inert import inert, inert_lines
from moot.paths import default_db_path, workspace_root
from moot.protocol.client import SessionSummary

EXIT_USAGE = 2


def run_sessions(options: Namespace) -> int:
    if not default_db_path().exists():  # nothing stored yet: make nothing either
        if options.action in ("list", "prune"):
            print("no sessions yet")
            return 0
        print(f"moot: no session {options.session_id!r}", file=sys.stderr)
        return EXIT_USAGE
    if options.action in ("delete", "fork", "prune"):
        return _change(options)
    try:
        queries = open_queries()
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    try:
        return _answer(queries, options)
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    finally:
        queries.close()


def session_line(s: SessionSummary) -> str:
    """One session as lists show it: id, time, turns, cost, state, title."""
    when = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    state, cost = s.state or "-", f"${s.cost_usd:.4f}"
    # A title is a prompt's first line or a model's words: printed, never a sequence that runs.
    return f"{s.id}  {when}  {s.turns:>4} turns  {cost:<9} {state:<10}  {inert(s.title)}"


def listed(
    queries: StoreQueries, workspace: str, *, every: bool, limit: int
) -> list[SessionSummary]:
    """This workspace's sessions, newest first; with `every`, the others after them."""
    here = queries.sessions(workspace=workspace, limit=limit)
    if not every or len(here) >= limit:
        return here
    seen = {s.id for s in here}
    others = [s for s in queries.sessions(limit=limit) if s.id not in seen]
    return [*here, *others][:limit]


def _answer(queries: StoreQueries, options: Namespace) -> int:
    if options.action == "list":
        here = str(workspace_root(Path.cwd()))
        sessions = listed(queries, here, every=options.all, limit=options.limit)
        if not sessions:
            print("no sessions yet" if options.all else "no sessions here yet (--all: every one)")
        for s in sessions:
            # Another workspace's session (--all) says whose: the line alone would not.
            where = f"  in {s.workspace}" if s.workspace != here else ""
            print(session_line(s) + inert(where))
        return 0
    info = queries.session(options.session_id)
    if info is None:
        print(f"moot: no session {options.session_id!r}", file=sys.stderr)
        return EXIT_USAGE

    kind = options.format if options.action == "export" else "md"
    text = queries.export(info.id, kind)
    if options.action == "show" or (kind != "json" and sys.stdout.isatty()):
        # What the session read and said, on a terminal: no control character of it runs there.
        text = inert_lines(text)
    print(text, end="" if text.endswith("\n") else "\n")
    if options.action == "export" and kind == "md":
        _write_attachments(queries, info.id)
    return 0


def _write_attachments(queries: StoreQueries, session_id: str) -> None:
    """The images and PDFs a markdown export links to, as files in the folder it names
    (relative to the current directory), said on stderr; nothing when there are none."""
    from moot.frontend.attachment_files import attachment_files, folder_of, write_files

    files = attachment_files(queries.events(session_id, kinds=("turn_started", "tool_finished")))
    if not files:
        return
    folder = Path(folder_of(session_id))
    try:
        write_files(folder, files)  # no symlink followed: nothing lands outside the folder named
    except OSError as exc:
        print(
            f"moot: cannot write the attachments to {folder}/: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return
    print(f"moot: wrote {len(files)} attachments to {folder}/", file=sys.stderr)


def _change(options: Namespace) -> int:
    try:
        upkeep = open_upkeep()
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    try:
        if options.action == "delete":
            upkeep.delete(options.session_id)
            print(f"deleted {options.session_id}")
        elif options.action == "fork":
            fork = upkeep.fork(options.session_id, options.at)
            print(f"forked {options.session_id} as {fork}; go on with: moot -r {fork}")
        else:
            gone = upkeep.prune(timedelta(seconds=options.older_than))
            print(f"pruned {len(gone)} session{'s' * (len(gone) != 1)}")
        return 0
    except KeyError as exc:
        print(f"moot: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except SessionBusy as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    finally:
        upkeep.close()


def settle_session(options: Namespace) -> int | None:
    """Set `options.resume` for `moot -c` (the latest session of this directory) or `moot -r`
    without an id (a picker, on a terminal). Returns an exit code when there is none to go on
    with, else None."""
    cwd = str(workspace_root(Path.cwd()))  # sessions belong to the git root
    if not default_db_path().exists():
        return _no_session("no earlier session in this directory to continue")
    try:
        queries = open_queries()
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    try:
        if options.continue_:
            latest = queries.sessions(workspace=cwd, limit=1)
            if not latest:
                return _no_session("no earlier session in this directory to continue")
            options.resume, options.continue_ = latest[0].id, False
            return None
        sessions = listed(queries, cwd, every=False, limit=20)
    finally:
        queries.close()
    if not sessions:
        return _no_session("no earlier session in this directory to resume")
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return _no_session("name the session: moot -r SESSION (moot sessions list shows them)")
    chosen = pick(sessions, sys.stdin, sys.stderr)
    if chosen is None:
        return 0
    options.resume = chosen
    return None


def pick(sessions: list[SessionSummary], keys: TextIO, shown: TextIO) -> str | None:
    """Number the sessions on `shown`, read a number or a search word from `keys`; the id
    picked, or None (an empty line, end of input)."""
    choices = sessions
    while True:
        for number, s in enumerate(choices, 1):
            print(f"{number:>3}  {session_line(s)}", file=shown)
        shown.write("resume which (number, or words to search; Enter cancels): ")
        shown.flush()
        typed = keys.readline()
        answer = typed.strip()
        if not answer:
            return None
        if answer.isdigit() and 0 < int(answer) <= len(choices):
            return choices[int(answer) - 1].id
        words = answer.lower().split()
        found = [s for s in sessions if all(w in f"{s.title} {s.id}".lower() for w in words)]
        if found:
            choices = found
        else:
            print(f"no session matches {answer!r}", file=shown)


def _no_session(message: str) -> int:
    print(f"moot: {message}", file=sys.stderr)
    return EXIT_USAGE

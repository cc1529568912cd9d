"""`moot sessions list | show | export`: read the store, print, change nothing."""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from typing import TYPE_CHECKING

import msgspec

from moot.transcript import markdown

if TYPE_CHECKING:
    from moot.store.sqlite import SQLiteStore


def run_sessions(options: Namespace) -> int:
    from moot.paths import default_db_path
    from moot.store import StoreError, open_store

    path = default_db_path()
    if not path.exists():  # nothing stored yet: make nothing either
        if options.action == "list":
            print("no sessions yet")
            return 0
        print(f"moot: no session {options.session_id!r}", file=sys.stderr)
        return 2
    try:
        store = open_store(path)
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    try:
        return _answer(store, options)
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()


def _answer(store: SQLiteStore, options: Namespace) -> int:
    if options.action == "list":
        sessions = store.sessions()
        if not sessions:
            print("no sessions yet")
        for s in sessions:
            when = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
            state = s.last_run_state or "-"
            print(f"{s.id}  {when}  {s.event_count:>6} events  {state:<10}  {s.title}")
        return 0
    info = store.session(options.session_id)
    if info is None:
        print(f"moot: no session {options.session_id!r}", file=sys.stderr)
        return 2
    events = store.events(info.id)
    if options.action == "export" and options.format == "json":
        session = {
            "id": info.id,
            "title": info.title,
            "workspace": info.workspace,
            "created_at": info.created_at.isoformat(),
            "updated_at": info.updated_at.isoformat(),
        }
        body = {"session": session, "events": msgspec.to_builtins(events)}
        print(json.dumps(body, ensure_ascii=False, indent=1))
        return 0
    print(f"# {info.title or info.id}\n\nsession `{info.id}` in `{info.workspace}`\n")
    print("\n\n".join(markdown(events)))
    return 0

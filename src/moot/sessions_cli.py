"""`moot sessions list | show | export`: read the store, print, change nothing."""

from __future__ import annotations

import json
import sys
from argparse import Namespace

import msgspec

from moot.transcript import markdown


def run_sessions(options: Namespace) -> int:
    from moot.store import open_store

    store = open_store()
    try:
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
    finally:
        store.close()

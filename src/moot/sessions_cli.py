"""`moot sessions list | show | export`: read the sessions through the query interface, print,
change nothing."""

from __future__ import annotations

import sys
from argparse import Namespace

from moot.client.local import open_queries
from moot.transcript import as_json, as_markdown


def run_sessions(options: Namespace) -> int:
    queries = open_queries()
    try:
        if options.action == "list":
            sessions = queries.sessions()
            if not sessions:
                print("no sessions yet")
            for s in sessions:
                when = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
                state, cost = s.state or "-", f"${s.cost_usd:.4f}"
                print(f"{s.id}  {when}  {s.turns:>4} turns  {cost:<9} {state:<10}  {s.title}")
            return 0
        info = queries.session(options.session_id)
        if info is None:
            print(f"moot: no session {options.session_id!r}", file=sys.stderr)
            return 2
        events = queries.events(info.id)
        if options.action == "export" and options.format == "json":
            print(as_json(info, events))
            return 0
        print(as_markdown(info, events), end="")
        return 0
    finally:
        queries.close()

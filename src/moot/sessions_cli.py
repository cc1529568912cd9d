"""`moot sessions list | show | export`: read the sessions through the query interface, print,
change nothing."""

from __future__ import annotations

import sys
from argparse import Namespace

from moot.client.errors import StoreError
from moot.client.local import open_queries
from moot.client.queries import StoreQueries
from moot.paths import default_db_path
from moot.transcript import as_html, as_json, as_markdown


def run_sessions(options: Namespace) -> int:
    if not default_db_path().exists():  # nothing stored yet: make nothing either
        if options.action == "list":
            print("no sessions yet")
            return 0
        print(f"moot: no session {options.session_id!r}", file=sys.stderr)
        return 2
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


def _answer(queries: StoreQueries, options: Namespace) -> int:
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
    if options.action == "export" and options.format == "html":
        print(as_html(info, events), end="")
        return 0
    print(as_markdown(info, events), end="")
    return 0

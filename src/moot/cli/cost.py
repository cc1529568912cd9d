"""`moot cost [--since DATE] [--all-workspaces]`: the cost ledger across sessions, read through
the query interface; changes nothing."""

from __future__ import annotations

import sys
from argparse import Namespace
from datetime import UTC, datetime
from pathlib import Path

from moot.client.errors import StoreError
from moot.client.local import open_queries
from moot.commands.cost import ledger_text
from moot.paths import default_db_path, workspace_root


def parse_since(text: str) -> datetime:
    """`YYYY-MM-DD` (midnight, local time) or an ISO time; naive times are local.

    Raises:
        ValueError: not a date.
    """
    when = datetime.fromisoformat(text.strip())
    return when.astimezone(UTC) if when.tzinfo is None else when


def run_cost(options: Namespace) -> int:
    try:
        since = parse_since(options.since) if options.since else None
    except ValueError:
        print(f"moot: --since {options.since!r} is no date (YYYY-MM-DD)", file=sys.stderr)
        return 2
    if not default_db_path().exists():
        print("no model usage recorded")
        return 0
    try:
        queries = open_queries()
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    try:
        here = workspace_root(Path.cwd())  # sessions belong to the git root
        workspace = None if options.all_workspaces else str(here)
        lines = queries.costs(since=since, workspace=workspace)
    except StoreError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    finally:
        queries.close()
    print(ledger_text(lines, per_session=True))
    return 0

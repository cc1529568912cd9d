"""How many bytes the built-in tools cost on every model request.

Every request carries every tool's name, description and JSON schema, so each byte here is
paid again on every turn. Measured as compact JSON (no spaces, UTF-8), the way the providers
send it, of `{"name", "description", "parameters"}` per tool: the file tools, the git tools,
and `call_agent` (for a roster of three peers) and `finish`. Each wire format wraps this in a
few bytes more per tool (`"type":"function"` and the like).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from moot.core.agent import Agent
from moot.core.peers import FINISH_SPEC, call_agent_spec
from moot.tools.base import tool_spec
from moot.tools.files import file_tools
from moot.tools.git_tools import git_tools
from moot.workspace import Workspace
from report import Row, table

NAME = "schemas"
TARGET = "<= 12 KB"
_ROSTER = (Agent("main", "talks to the person"), Agent("coder"), Agent("reviewer"))


def _size(spec: Mapping[str, Any]) -> int:
    return len(json.dumps(spec, separators=(",", ":"), ensure_ascii=False).encode())


def _kb(size: int) -> str:
    return f"{size / 1024:.2f} KB ({size:,} B)"


def specs() -> dict[str, dict[str, dict[str, Any]]]:
    """The built-in tools' specs by group, then by tool name."""
    with tempfile.TemporaryDirectory(prefix="moot-bench-schemas-") as scratch:
        ws = Workspace(scratch)
        groups = {
            "file tools": [tool_spec(t) for t in file_tools(ws)],
            "git tools": [tool_spec(t) for t in git_tools(ws)],
        }
    peers = [call_agent_spec(_ROSTER), FINISH_SPEC]
    groups["call_agent + finish"] = [
        {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
        for s in peers
    ]
    return {group: {spec["name"]: spec for spec in items} for group, items in groups.items()}


def run(*, quick: bool) -> list[Row]:
    """Size every group and the whole set; `quick` changes nothing (it is instant)."""
    rows = []
    total = count = 0
    largest = ("", 0)
    for group, by_name in specs().items():
        sizes = {name: _size(spec) for name, spec in by_name.items()}
        group_size = sum(sizes.values())
        total += group_size
        count += len(sizes)
        biggest = max(sizes, key=sizes.__getitem__)
        largest = max(largest, (biggest, sizes[biggest]), key=lambda pair: pair[1])
        rows.append(Row(f"tool schemas: {group} ({len(sizes)})", _kb(group_size)))
    rows.append(Row(f"tool schemas: largest ({largest[0]})", _kb(largest[1])))
    rows.append(Row(f"tool schemas: all {count} built-in tools", _kb(total), TARGET))
    return rows


def main() -> int:
    """Print the table for this benchmark alone; `--verbose` adds one row per tool."""
    rows = run(quick="--quick" in sys.argv)
    if "--verbose" in sys.argv:
        for group, by_name in specs().items():
            rows += [Row(f"  {group}: {name}", f"{_size(s):,} B") for name, s in by_name.items()]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The built-in tools' specs as data: `builtin_specs.json`, generated from the tools themselves.

`moot -p` sends its first request with every built-in tool's name, description and JSON schema.
Reading them from this file costs well under a millisecond; building them means importing
every tool's module and building its pydantic argument model (tens of milliseconds of
start-up). The file is generated, never edited: `scripts/gen-tool-specs`
(`moot.tools.spec_gen`) writes it, and `tests/tools/test_builtin_specs.py` fails when it no longer
matches the tools.

Each entry is `{"description", "side_effect", "parameters"}`; a description that depends on
the session is an object with one text per variant (`bash`: where commands run). The last
entry is plan mode's `exit_plan_mode` (`moot.tools.exit_plan_mode`), which every session also gets.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SPECS_FILE = Path(__file__).with_name("builtin_specs.json")

BashVariant = str
"""Where `bash` runs its commands: "none" (refused), "host" or "sandboxed"."""
BASH_VARIANTS: tuple[BashVariant, ...] = ("none", "host", "sandboxed")


@cache
def load_specs() -> dict[str, dict[str, Any]]:
    """The checked-in specs, by tool name, in the order the model sees the tools."""
    specs: dict[str, dict[str, Any]] = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return specs

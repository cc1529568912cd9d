"""The built-in tools' specs as data: `builtin_specs.json`, generated from the tools themselves.

`moot -p` sends its first request with every built-in tool's name, description and JSON schema.
Reading them from this file costs well under a millisecond; building them means importing
every tool's module and building its pydantic argument model (tens of milliseconds of
start-up). The file is generated, never edited: `scripts/gen-tool-specs` (this module's
`main`) writes it, and `tests/test_builtin_specs.py` fails when it no longer matches the tools.

Each entry is `{"description", "side_effect", "parameters"}`; a description that depends on
the session is an object with one text per variant (`bash`: where commands run). The last
entry is plan mode's `exit_plan_mode` (`moot.permissions.plan`), which every session also gets.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moot.tools.base import Tool

SPECS_FILE = Path(__file__).with_name("builtin_specs.json")

BashVariant = str
"""Where `bash` runs its commands: "none" (refused), "host" or "sandboxed"."""
BASH_VARIANTS: tuple[BashVariant, ...] = ("none", "host", "sandboxed")


@cache
def load_specs() -> dict[str, dict[str, Any]]:
    """The checked-in specs, by tool name, in the order the model sees the tools."""
    specs: dict[str, dict[str, Any]] = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return specs


def generate_specs() -> dict[str, dict[str, Any]]:
    """The specs as the built-in tools give them now, built in a scratch workspace."""
    specs: dict[str, dict[str, Any]] = {}
    for variant in BASH_VARIANTS:
        for tool in built_tools(variant):
            spec = {
                "description": tool.description,
                "side_effect": tool.side_effect.value,
                "parameters": tool.parameters,
            }
            if tool.name == "bash":
                described = specs.setdefault("bash", {**spec, "description": {}})
                described["description"][variant] = tool.description
            else:
                specs.setdefault(tool.name, spec)
    plan = _exit_plan_mode()
    specs[plan.name] = {
        "description": plan.description,
        "side_effect": plan.side_effect.value,
        "parameters": plan.parameters,
    }
    return specs


def built_tools(variant: BashVariant) -> list[Tool]:
    """Every built-in tool, really built (modules imported, argument models made), for a
    session whose shell commands run as `variant` says."""
    import tempfile

    from moot.sandbox.background import BackgroundShells
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.host import HostSandbox
    from moot.sandbox.select import SandboxChoice
    from moot.store.memory import MemoryStore
    from moot.tools.builtin import tool_builders
    from moot.workspace.paths import Workspace

    with tempfile.TemporaryDirectory(prefix="moot-tool-specs-") as scratch:
        store = MemoryStore()
        session_id = store.create_session(title="", workspace=scratch).id
        sandbox: Any = None
        if variant == "host":
            sandbox = HostSandbox(SandboxPolicy(Path(scratch)))
        elif variant == "sandboxed":
            sandbox = _NamedSandbox()
        shell = SandboxChoice("auto", sandbox, "")
        builders = tool_builders(store, session_id, Workspace(scratch), shell, BackgroundShells())
        return [build() for build in builders.values()]


def _exit_plan_mode() -> Tool:
    """Plan mode's `exit_plan_mode`, really built: every session gets it besides the built-in
    tools (`moot.permissions.plan_tool`)."""
    from moot.permissions.plan_tool import build_exit_plan_mode

    return build_exit_plan_mode()


class _NamedSandbox:
    """Stands in for a real sandbox: building `bash` reads only its name."""

    name = "bubblewrap"


def render(specs: dict[str, dict[str, Any]]) -> str:
    """The file's text: stable, readable JSON."""
    return json.dumps(specs, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write `builtin_specs.json` from the tools (`scripts/gen-tool-specs`)."""
    text = render(generate_specs())
    if SPECS_FILE.exists() and SPECS_FILE.read_text(encoding="utf-8") == text:
        print(f"{SPECS_FILE.name} is up to date")
        return 0
    SPECS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {SPECS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

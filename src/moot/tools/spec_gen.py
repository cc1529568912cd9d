"""Generating `builtin_specs.json` from the built-in tools themselves (`scripts/gen-tool-specs`).

Apart from `moot.tools.builtin_specs`, which only reads the file: generating builds every tool,
so it imports `moot.tools.builtin`, which reads the specs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.tools.builtin_specs import BASH_VARIANTS, SPECS_FILE, BashVariant

if TYPE_CHECKING:
    from moot.tools.base import Tool


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
    tools (`moot.tools.exit_plan_mode_tool`)."""
    from moot.tools.exit_plan_mode_tool import build_exit_plan_mode

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

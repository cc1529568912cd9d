"""Agent definitions: markdown files in `.moot/agents/`, the user's `agents/` and moot's own.

Each file is one peer that joins the session's agents, reachable with `call_agent`:

```
---
name: diff-reviewer                 # required: letters, digits, - and _
description: Reviews the diff ...   # required: the role the other agents see in the roster
model: anthropic/claude-haiku-4-5   # optional: `provider/model`; the session's when omitted
tools: Read, git_diff, git_status   # optional: what it may use; every tool when omitted
---
The instructions: this agent's own system prompt.
```

`tools` takes tool names and permission rules: `Read` gives every reading tool, `Bash(pytest:*)`
gives the shell for that command only (others are refused, `moot.skills.policy.ToolLimit`). The
closest file of a name wins, as for skills; a name the session already has is refused.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

import msgspec

from moot.skills.files import Denied, FileRefused, folder_entries, is_dir, read_text
from moot.skills.frontmatter import FrontmatterError, split_document
from moot.skills.places import Places
from moot.skills.values import Problem, Source, check_rules, ignored_fields, split_tools

MAX_AGENT_BYTES = 64 * 1024
MAX_ROLE = 1024
KNOWN_FIELDS = ("name", "description", "model", "tools")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
INHERIT = ("", "inherit")
"""`model` values that mean the session's own model."""


class AgentDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """One agent file, checked."""

    name: str
    description: str
    instructions: str
    path: str
    source: Source
    model: str = ""
    """`provider/model`; empty: the session's model."""
    tools: tuple[str, ...] | None = None
    """Tool names and rules it is limited to; None: every tool of the session."""


def discover_agents(
    places: Places, taken: Collection[str] = (), *, deep: bool = False
) -> tuple[dict[str, AgentDefinition], list[Problem]]:
    """Every agent definition `places` hold, closest first; `taken` names are refused.

    `deep` also compiles `Bash(...)` rules in `tools` (see `check_rules`)."""
    found: dict[str, AgentDefinition] = {}
    problems: list[Problem] = []
    for place in places.folders("agents"):
        for path in folder_entries(place.root, place.folder, problems):
            if not path.name.endswith(".md") or path.name.startswith(".") or is_dir(path):
                continue
            agent, issues = load_agent(
                place.root, path, place.source, deep=deep, denied=places.denied
            )
            problems += issues
            if agent is None:
                continue
            if agent.name in taken:
                problems.append(
                    Problem(
                        str(path),
                        f"the session already has an agent named {agent.name!r}; rename this one",
                    )
                )
            elif agent.name in found:
                winner = found[agent.name].path
                problems.append(Problem(str(path), f"shadowed by {winner}", "warning"))
            else:
                found[agent.name] = agent
    return found, problems


def load_agent(
    root: Path, path: Path, source: Source, *, deep: bool = True, denied: Denied | None = None
) -> tuple[AgentDefinition | None, list[Problem]]:
    """Read and check one agent file; never raises for a bad file (`deep`: see
    `discover_agents`)."""
    try:
        text, _, _ = read_text(root, path, cap=MAX_AGENT_BYTES, denied=denied)
        fields, body = split_document(text)
    except (FileRefused, FrontmatterError, OSError) as exc:
        return None, [Problem(str(path), getattr(exc, "why", None) or str(exc))]
    if fields is None:
        return None, [
            Problem(
                str(path),
                "no frontmatter: start the file with a `---` block naming `name` and `description`",
            )
        ]
    errors: list[str] = []
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        errors.append("`name` is required: up to 64 letters, digits, - and _")
    elif name == "user":
        errors.append("`user` is the person's name in every run; pick another")
    if not isinstance(description, str) or not description.strip():
        errors.append("`description` is required: the role the other agents see")
    elif len(description) > MAX_ROLE:
        errors.append(f"`description` is {len(description)} characters; at most {MAX_ROLE}")
    model = fields.get("model", "")
    if not isinstance(model, str):
        errors.append("`model` must be a string: provider/model, or inherit")
    tools: tuple[str, ...] | None = None
    if "tools" in fields:
        rules, wrong = split_tools(fields["tools"])
        wrong = wrong or check_rules(rules, deep=deep)
        if wrong:
            errors.append(f"`tools` {wrong}")
        tools = tuple(rules)
    problems = [Problem(str(path), message) for message in errors]
    if ignored := ignored_fields(fields, KNOWN_FIELDS):
        problems.append(Problem(str(path), ignored, "warning"))
    if not body.strip():
        problems.append(Problem(str(path), "no instructions after the frontmatter", "warning"))
    if errors:
        return None, problems
    assert isinstance(name, str) and isinstance(description, str) and isinstance(model, str)
    definition = AgentDefinition(
        name=name,
        description=" ".join(description.split()),
        instructions=body.strip(),
        path=str(path),
        source=source,
        model="" if model.strip() in INHERIT else model.strip(),
        tools=tools,
    )
    return definition, problems

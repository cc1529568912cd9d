"""One skill: a folder holding `SKILL.md` in the open Agent Skills format.

```
code-review/
  SKILL.md        frontmatter (name, description, ...) and the instructions
  scripts/        optional: programs the instructions may tell the model to run
  references/     optional: documents it reads when it needs them
  assets/         optional: templates and other files
```

The frontmatter rules are the format's (agentskills.io) plus the fields other coding agents
added that moot honours; every rule is checked here, and a file that breaks one is left out
with a `Problem` that says which, never an exception.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from moot.skills.files import Denied, FileRefused, read_text
from moot.skills.frontmatter import FrontmatterError, split_document
from moot.skills.values import Problem, Source, check_rules, ignored_fields, split_tools

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 128 * 1024
"""A `SKILL.md` larger than this is refused (the format asks for under 500 lines)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""Lowercase letters and digits in words joined by single hyphens."""
KNOWN_FIELDS = (
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "disable-model-invocation",
    "user-invocable",
    "argument-hint",
)


class Skill(msgspec.Struct, frozen=True, kw_only=True):
    """A valid skill, as discovered."""

    name: str
    description: str
    """What it does and when to use it: the model decides by this alone."""
    body: str
    """The instructions after the frontmatter: what the model reads when it activates it."""
    path: str
    """Its `SKILL.md`."""
    directory: str
    """The real path of its folder (its `scripts/`, `references/`, `assets/` are below)."""
    source: Source
    allowed_tools: tuple[str, ...] = ()
    """Permission rules that run without asking while the skill is active."""
    model_invocable: bool = True
    """False (`disable-model-invocation: true`): only the person starts it, by `/name`."""
    user_invocable: bool = True
    """False (`user-invocable: false`): no `/name` command; only the model loads it."""
    argument_hint: str = ""
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = msgspec.field(default_factory=dict)


def load_skill(
    root: Path, folder: Path, source: Source, *, denied: Denied | None = None
) -> tuple[Skill | None, list[Problem]]:
    """Read and check the skill in `folder`.

    Args:
        root: The real path every file must lie in (see `moot.skills.files`).
        folder: The skill's folder, as found (its name must be the skill's).
        source: Where it was found.
        denied: The person's `Read(...)` deny rules.

    Returns:
        The skill (None when it breaks a rule) and what is wrong with it.
    """
    path = folder / SKILL_FILE
    try:
        text, _, real = read_text(root, path, cap=MAX_SKILL_BYTES, denied=denied)
    except FileNotFoundError:
        return None, [Problem(str(folder), f"no {SKILL_FILE} in this skill folder")]
    except (FileRefused, OSError) as exc:
        return None, [Problem(str(path), getattr(exc, "why", None) or str(exc))]
    try:
        fields, body = split_document(text)
    except FrontmatterError as exc:
        return None, [Problem(str(path), str(exc))]
    if fields is None:
        return None, [
            Problem(
                str(path),
                "no frontmatter: start the file with a `---` block naming `name` and `description`",
            )
        ]
    errors, warnings, values = check_fields(fields, folder.name)
    problems = [Problem(str(path), m) for m in errors]
    problems += [Problem(str(path), m, "warning") for m in warnings]
    if errors:
        return None, problems
    if not body.strip():
        problems.append(
            Problem(str(path), "the instructions after the frontmatter are empty", "warning")
        )
    skill = Skill(
        body=body.strip("\n"),
        path=str(path),
        directory=str(real.parent),
        source=source,
        **values,
    )
    return skill, problems


def check_fields(fields: dict[str, Any], folder_name: str) -> tuple[list[str], list[str], dict]:
    """Every frontmatter rule, in the order a person fixes them.

    Returns:
        The errors (the skill is left out), the warnings, and the checked values for `Skill`.
    """
    errors: list[str] = []
    warnings: list[str] = []
    values: dict[str, Any] = {}
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        errors.append("`name` is required: lowercase letters, digits and hyphens, as the folder")
    elif len(name) > MAX_NAME:
        errors.append(f"`name` is {len(name)} characters; at most {MAX_NAME}")
    elif not NAME.fullmatch(name):
        errors.append(
            f"`name` {name!r} may hold only lowercase letters, digits and single hyphens, "
            "and may not start or end with a hyphen"
        )
    elif name != folder_name:
        errors.append(f"`name` {name!r} must be the folder's name, {folder_name!r}")
    else:
        values["name"] = name
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        errors.append("`description` is required: what the skill does and when to use it")
    elif len(description) > MAX_DESCRIPTION:
        errors.append(f"`description` is {len(description)} characters; at most {MAX_DESCRIPTION}")
    else:
        values["description"] = " ".join(description.split())
    for key in ("license", "argument-hint"):
        if key in fields:
            if isinstance(fields[key], str):
                values[key.replace("-", "_")] = fields[key]
            else:
                errors.append(f"`{key}` must be a string")
    if "compatibility" in fields:
        compatibility = fields["compatibility"]
        if not isinstance(compatibility, str) or not compatibility.strip():
            errors.append("`compatibility` must be a non-empty string")
        elif len(compatibility) > MAX_COMPATIBILITY:
            errors.append(
                f"`compatibility` is {len(compatibility)} characters; at most {MAX_COMPATIBILITY}"
            )
        else:
            values["compatibility"] = compatibility
    if "metadata" in fields:
        metadata = fields["metadata"]
        if not isinstance(metadata, dict):
            errors.append("`metadata` must be a mapping of names to strings")
        else:
            odd = sorted(str(k) for k, v in metadata.items() if not isinstance(v, str))
            if odd:
                warnings.append(f"`metadata` values should be strings: {', '.join(odd)}")
            values["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    if "allowed-tools" in fields:
        rules, wrong = split_tools(fields["allowed-tools"])
        wrong = wrong or check_rules(rules)
        if wrong:
            errors.append(f"`allowed-tools` {wrong}")
        else:
            values["allowed_tools"] = tuple(rules)
    for key, attribute, flip in (
        ("disable-model-invocation", "model_invocable", True),
        ("user-invocable", "user_invocable", False),
    ):
        if key in fields:
            if isinstance(fields[key], bool):
                values[attribute] = fields[key] != flip
            else:
                errors.append(f"`{key}` must be true or false")
    if values.get("model_invocable") is False and values.get("user_invocable") is False:
        warnings.append("neither the model nor the person can start it (both switched off)")
    if ignored := ignored_fields(fields, KNOWN_FIELDS):
        warnings.append(ignored)
    return errors, warnings, values

"""Helpers that lay out skills, commands, agents and memory as real files for the tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def skill(
    folder: Path,
    name: str | None = None,
    description: str = "Does a thing. Use when asked.",
    *,
    extra: str = "",
    body: str = "Do the thing with $ARGUMENTS.",
) -> Path:
    """Write `folder/<name>/SKILL.md` (the folder's name when `name` is None); its path."""
    name = name if name is not None else folder.name
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {description}"]
    if extra:
        lines.append(extra.strip("\n"))
    path = folder / "SKILL.md"
    path.write_text("\n".join([*lines, "---", body, ""]), encoding="utf-8")
    return path


def git_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root

"""`moot skills list | show | validate`: for people writing skills. Reads files, changes nothing.

- `list`: every skill this directory sees (the project's, the user's, moot's own), closest
  first, with where each comes from, what shadows what, and every problem found.
- `show NAME`: one skill as the model would load it, with its folder's files.
- `validate [PATH...]`: check skill folders against every frontmatter rule; without paths,
  every skill, custom command and agent definition this directory sees. Exit 1 on an error.
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from pathlib import Path

from moot.paths import config_dir, workspace_root
from moot.skills.guidance import Guidance, load_guidance
from moot.skills.skill import SKILL_FILE, load_skill
from moot.skills.values import Problem

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def run_skills(options: Namespace) -> int:
    if options.action == "validate" and options.paths:
        return _validate_paths([Path(p) for p in options.paths])
    guidance = load_guidance(workspace_root(Path.cwd()), config_dir())
    if options.action == "list":
        return _list(guidance)
    if options.action == "show":
        return _show(guidance, options.name)
    return _validate_all(guidance)


def _list(guidance: Guidance) -> int:
    skills = guidance.skills
    if not skills.skills:
        print("no skills here")
    index = guidance.index
    for skill in skills.skills.values():
        marks = []
        if not skill.model_invocable:
            marks.append("only /name")
        if not skill.user_invocable:
            marks.append("only the model")
        if skill.name in index.left_out:
            marks.append("over the index budget")
        extra = f"  ({', '.join(marks)})" if marks else ""
        print(f"{skill.name:<24} {skill.source:<8} {_short(skill.description)}{extra}")
        print(f"{'':<24} {skill.path}")
    problems = [p for p in skills.problems]
    _print_problems(problems)
    return EXIT_OK


def _show(guidance: Guidance, name: str) -> int:
    skill = guidance.skills.skills.get(name)
    if skill is None:
        names = ", ".join(guidance.skills.skills) or "none"
        print(f"moot: no skill {name!r} here (skills: {names})", file=sys.stderr)
        return EXIT_USAGE
    print(f"{skill.name} ({skill.source}): {skill.path}")
    print(f"description: {skill.description}")
    for label, value in (
        ("argument-hint", skill.argument_hint),
        ("allowed-tools", " ".join(skill.allowed_tools)),
        ("license", skill.license),
        ("compatibility", skill.compatibility),
    ):
        if value:
            print(f"{label}: {value}")
    if not skill.model_invocable:
        print("disable-model-invocation: true (only the person starts it, with /name)")
    if not skill.user_invocable:
        print("user-invocable: false (only the model loads it)")
    files = sorted(_files(Path(skill.directory)))
    if files:
        print("files: " + ", ".join(files))
    print()
    print(skill.body)
    return EXIT_OK


def _validate_all(guidance: Guidance) -> int:
    from moot.skills.agents import discover_agents

    found = len(guidance.skills.skills) + len(guidance.commands)
    _, agent_problems = discover_agents(guidance.places, taken={"moot"}, deep=True)
    others = [p for p in guidance.problems if not _is_agent_problem(p, guidance)]
    problems = [*others, *agent_problems]
    _print_problems(problems)
    errors = sum(p.severity == "error" for p in problems)
    print(f"{found} skills and commands, {len(guidance.agents)} agents; {errors} errors")
    return EXIT_PROBLEMS if errors else EXIT_OK


def _is_agent_problem(problem: Problem, guidance: Guidance) -> bool:
    folders = [str(place.folder) for place in guidance.places.folders("agents")]
    return any(problem.path.startswith(folder + os.sep) for folder in folders)


def _validate_paths(paths: list[Path]) -> int:
    errors = 0
    for path in paths:
        folder = path.parent if path.name == SKILL_FILE else path
        if not folder.is_dir():
            print(f"error: {path}: not a skill folder (a folder holding {SKILL_FILE})")
            errors += 1
            continue
        root = Path(os.path.realpath(folder))
        skill, problems = load_skill(root, folder, "project")
        _print_problems(problems)
        errors += sum(p.severity == "error" for p in problems)
        if skill is not None:
            print(f"ok: {skill.name} ({folder})")
    return EXIT_PROBLEMS if errors else EXIT_OK


def _print_problems(problems: list[Problem] | tuple[Problem, ...]) -> None:
    for problem in problems:
        print(str(problem))


def _files(folder: Path) -> list[str]:
    found: list[str] = []
    for directory, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")][:50]
        for name in files[:200]:
            rel = os.path.relpath(os.path.join(directory, name), folder)
            if rel != SKILL_FILE:
                found.append(rel)
    return found[:200]


def _short(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"

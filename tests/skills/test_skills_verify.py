"""The verification loop in what moot tells the model: the system prompt and the shipped
`write-tests` and `code-review` skills name the `lint` and `test` tools, which every session
has."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from moot.shipped import shipped_dir
from moot.tools.builtin_specs import load_specs


def test_the_lint_and_test_tools_are_built_in() -> None:
    assert {"lint", "test"} <= set(load_specs())


def test_the_system_prompt_says_when_to_run_lint_and_test() -> None:
    prompt = files("moot.prompts").joinpath("system.md").read_text(encoding="utf-8")
    line = next(line for line in prompt.splitlines() if "`lint` and `test`" in line)
    assert "After a change" in line and "before you say you are done" in line


@pytest.mark.parametrize("skill", ["write-tests", "code-review"])
def test_the_shipped_skills_run_the_checks_with_the_tools(skill: str) -> None:
    folder = shipped_dir("skills")
    assert folder is not None
    text = (folder / skill / "SKILL.md").read_text(encoding="utf-8")
    assert re.search(r"`test`", text) and re.search(r"`lint`", text)

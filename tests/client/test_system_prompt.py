"""The system prompt as a reviewed text: a snapshot of the whole prompt the person's agent
starts from, for a fixed environment, with memory, the skills section and the shipped peers.

A change to `src/moot/prompts/*.md` (or to how they are put together) changes the snapshot in
`tests/__snapshots__/test_system_prompt.ambr`; update it with
`scripts/test tests/client/test_system_prompt.py --snapshot-update` and review the diff as text.
"""

from __future__ import annotations

from pathlib import Path

from moot.client.briefing import brief
from moot.client.facts import SessionFacts, _counts, sandbox_words
from moot.client.prompt import system_prompt
from moot.core.agent import Agent
from moot.core.peers import system_prompt as with_roster
from moot.prompts import template
from moot.skills.guidance import load_guidance

FACTS = SessionFacts(
    cwd="/home/ada/src/shop",
    platform="Linux 6.8.0",
    shell="bash (the person's own shell is zsh)",
    date="2026-01-15",
    git="on branch main; 1 staged, 2 modified (`git_status` lists them)",
    sandbox=sandbox_words("bubblewrap", False),
    mode="default",
)


def test_the_whole_system_prompt_for_a_fixed_environment(tmp_path: Path, snapshot) -> None:
    (tmp_path / "AGENTS.md").write_text("# Shop\n\nRun the tests with `make test`.\n")
    guidance = load_guidance(tmp_path, None)
    agent = Agent("moot", role="coding agent", model="scripted:x")

    briefing = brief(guidance, agent, FACTS, [], check_model=lambda name: None)
    entry = briefing.agents[0]
    text = with_roster(entry, briefing.agents, "user")

    assert text == snapshot
    assert "## AGENTS.md\n\n# Shop\n\nRun the tests with `make test`." in text


def test_the_template_stays_under_4_kb_before_memory_and_skills() -> None:
    text, parts = system_prompt(FACTS, skills=False, memory="")
    assert parts.template == len(text.encode()) <= 4096
    assert (parts.skills, parts.memory) == (0, 0)
    with_all, parts = system_prompt(FACTS, skills=True, memory="## AGENTS.md\n\nx")
    assert parts.skills > 0 and parts.memory > 0
    assert with_all.startswith(text)


def test_every_placeholder_is_filled() -> None:
    text, _ = system_prompt(FACTS, skills=True, memory="m")
    assert "{{" not in text and "}}" not in text
    for name in ("system", "environment", "skills", "memory", "init"):
        assert not template(name).startswith("<!--")  # the version comment is not sent


def test_the_short_git_status() -> None:
    porcelain = b"M  staged.py\0 M changed.py\0MM both.py\0R  new.py\0old.py\0?? new.txt\0"
    assert _counts(porcelain) == (
        "3 staged, 2 modified, 1 untracked (`git_status` lists them and any untracked files)"
    )
    assert _counts(b"") == "no tracked file changed (`git_status` lists any untracked files)"

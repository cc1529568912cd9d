"""Every peer example in examples/peers runs against the scripted provider and prints what the
seed's examples promise."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples" / "peers"

EXPECTED = {
    "quick_start.py": [
        "[researcher]Agents, small models and long context.[/researcher]\n"
        "[writer]A draft on AI trends.[/writer]\n"
        "[reviewer]Checked: accurate.[/reviewer]"
    ],
    "background.py": [
        "Message sent to writer (task_id: run_",
        "Status: completed\nMessages (3):",
        "[message] user -> writer: Add a section about GPT-5.",
        "\nReport on AI trends, with a section on GPT-5.\n",
    ],
    "on_message.py": ["[writer] Need your input\nFinal report (Approved, proceed.)"],
    "tool_overrides.py": ["[0.85] Analysis complete"],
    "extra_instructions.py": [
        "entry -> writer soul=True; [researcher]researcher soul=False[/researcher]",
        "all -> writer soul=True; [researcher]researcher soul=True[/researcher]",
    ],
    "tracing.py": [
        "  lead → researcher [call_",
        "  ← researcher completed: finding 3\n← lead completed: Summary of three findings.",
        "]: chips\n",
    ],
    "run_agents.py": [
        "[researcher]found[/researcher]\n[writer]wrote[/writer]\n",
        "warning: starting agents ['reviewer'] are not in run_agents",
    ],
    "history.py": [
        "I have seen 2 requests: ['Research AI trends.', 'Write about what you found.']"
    ],
    "streaming.py": [
        "[agent_returned] researcher",
        "[messages_delivered] writer",
        "Done: Report done.",
    ],
}


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_example_prints_what_it_promises(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    out = capsys.readouterr().out
    for expected in EXPECTED[name]:
        assert expected in out, f"{name}: {expected!r} not in\n{out}"

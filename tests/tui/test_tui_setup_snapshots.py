"""Pictures of the first-run screen at fixed sizes (pytest-textual-snapshot; `pytest
--snapshot-update` writes them). The docstring says what a reviewer should see."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from moot.client import setup_detect
from moot.client.setup_detect import Detection, LocalServer
from moot.frontend.history import PromptHistory
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.screens.setup import FirstRun


def detection(home: Path) -> Detection:
    """A fixed finding: an Anthropic key in the environment, Ollama serving two models, no LM
    Studio."""
    keys = setup_detect.detect_keys({"MOOT_HOME": str(home), "ANTHROPIC_API_KEY": "sk-x"})
    servers = (
        LocalServer(
            "ollama",
            "Ollama",
            "http://localhost:11434",
            True,
            ("ollama/qwen3-coder", "ollama/llama3.1:8b"),
            host="localhost:11434",
        ),
        LocalServer(
            "lmstudio",
            "LM Studio",
            "http://localhost:1234/v1",
            False,
            note="no answer",
            host="localhost:1234",
        ),
    )
    return Detection(keys, servers)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_the_first_run_screen(snap_compare, size: tuple[int, int], private_moot_home: Path) -> None:
    """The first-run screen in a rounded frame: "moot · first run", one line saying no model is
    set up, then what was found: ✓ anthropic key (ANTHROPIC_API_KEY), ✓ Ollama
    (localhost:11434): 2 models, a dim "LM Studio (localhost:1234): no answer", and a dim list
    of the providers with no key. Below: the Key row (a provider picker showing anthropic, a
    field for the key, Save), the Model row (a filter field), and the list of models, the two
    Ollama models and the Anthropic ones first and marked ready, the others "no key", with
    context window and prices; the first is highlighted and the list has focus. At the bottom
    the Start and Try the demo buttons and "ctrl+c twice quits". At 80x24 the list shows a few
    models and scrolls; at 160x48 the frame is 110 columns wide and the list is long."""
    found = detection(private_moot_home)
    first_run = FirstRun(
        open_model=lambda name: FakeClient(), open_demo=FakeClient, detect=lambda: found
    )
    app = MootApp(None, AppOptions(first_run=first_run, history=PromptHistory(None)))

    async def run_before(pilot: Pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)

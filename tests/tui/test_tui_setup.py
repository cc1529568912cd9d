"""The first-run screen on the fake client: what was found is shown, a pasted key is saved 0600
(in the test's MOOT_HOME), a model picked is remembered and its session opens, and the demo
starts a session that plays to its approval. Detection is real: the test's environment, the key
file, and a real HTTP server on 127.0.0.1 playing Ollama."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from model_server import ModelServer, Reply
from moot.client import SetupError, setup_detect
from moot.frontend.history import PromptHistory
from moot.protocol import ops
from moot.protocol.client import Client
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.screens.setup import FirstRun, SetupScreen
from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.prompt import PromptArea
from moot.tui.widgets.status_line import StatusLine
from tui_scripts import edit_session


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key or endpoint from the machine running the tests; nothing answers where Ollama and
    LM Studio would."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL")) or name in ("OLLAMA_HOST", "MOOT_MODEL"):
            monkeypatch.delenv(name)
    for name in ("OLLAMA_HOST", "LMSTUDIO_BASE_URL"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{closed_port()}")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Openers:
    """Records what the screen opened; hands out fake clients."""

    def __init__(self, demo: FakeClient | None = None, fail: str | None = None) -> None:
        self.models: list[str] = []
        self.demos = 0
        self.client = FakeClient(edit_session())
        self.demo = demo or FakeClient(edit_session())
        self.fail = fail

    def open_model(self, name: str) -> Client:
        if self.fail:
            raise SetupError(self.fail)
        self.models.append(name)
        return self.client

    def open_demo(self) -> Client:
        self.demos += 1
        return self.demo

    def first_run(self, detect: Callable[[], setup_detect.Detection] | None = None) -> FirstRun:
        return FirstRun(
            open_model=self.open_model,
            open_demo=self.open_demo,
            # Nothing here waits out the timeout (a closed port refuses at once), so a long
            # one costs nothing, and a loaded machine's slow answer still counts.
            detect=detect or (lambda: setup_detect.detect(timeout=10.0)),
        )


def app_for(openers: Openers, **kw: object) -> MootApp:
    return MootApp(
        None, AppOptions(first_run=openers.first_run(), history=PromptHistory(None), **kw)
    )  # type: ignore[arg-type]


async def detected(pilot: Pilot) -> SetupScreen:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, SetupScreen)
    return screen


def found_text(screen: SetupScreen) -> str:
    return str(screen.query_one("#found").render())


async def test_what_was_found_is_shown_and_ready_models_come_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-never-shown")
    with ModelServer() as ollama:
        body = json.dumps({"models": [{"name": "qwen3-coder:latest"}]}).encode()
        ollama.reply(Reply(body=body, content_type="application/json"))
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        async with app_for(Openers()).run_test(size=(120, 40)) as pilot:
            screen = await detected(pilot)
            found = found_text(screen)
            assert "✓ openai key (OPENAI_API_KEY)" in found
            assert f"✓ Ollama (127.0.0.1:{ollama.port}): 1 models" in found
            assert "LM Studio (127.0.0.1:" in found and "no answer" in found
            assert "no key for anthropic, gemini" in found
            models = screen.query_one("#models")
            first = [models.get_option_at_index(i).id for i in range(3)]  # type: ignore[attr-defined]
            assert first == ["ollama/qwen3-coder", "openai/gpt-5", "openai/gpt-5-mini"]
            assert pilot.app.focused is models  # something can start: the list has focus
            assert "sk-openai-never-shown" not in pilot.app.export_screenshot()


async def test_a_pasted_key_is_saved_0600_never_shown_and_readies_its_models(
    private_moot_home: Path,
) -> None:
    async with app_for(Openers()).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        assert pilot.app.focused is screen.query_one("#key")  # nothing can start without a key
        assert not any(c.ready for c in screen._choices)
        await pilot.press(*"sk-ant-pasted-secret", "enter")
        await detected(pilot)
        keys = private_moot_home / "config" / "keys.json"
        assert json.loads(keys.read_text()) == {"anthropic": "sk-ant-pasted-secret"}
        assert stat.S_IMODE(keys.stat().st_mode) == 0o600
        note = str(screen.query_one("#key-note").render())
        assert note == f"saved the anthropic key to {keys} (readable only by you)"
        assert "✓ anthropic key (key file)" in found_text(screen)
        assert next(c.name for c in screen._choices if c.ready) == "anthropic/claude-sonnet-4-5"
        assert "pasted-secret" not in pilot.app.export_screenshot()


async def test_a_key_that_cannot_be_used_is_refused_and_nothing_saved(
    private_moot_home: Path,
) -> None:
    async with app_for(Openers()).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        await pilot.press("enter")  # nothing typed
        assert "no key given" in str(screen.query_one("#key-note").render())
        screen.query_one("#key").value = "sk-ant\x07bell"  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert "control or non-ASCII" in str(screen.query_one("#key-note").render())
        assert not (private_moot_home / "config" / "keys.json").exists()


async def test_a_model_picked_opens_its_session_and_is_remembered(
    monkeypatch: pytest.MonkeyPatch, private_moot_home: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    openers = Openers()
    async with app_for(openers, task="make greet say hello").run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        screen.query_one("#model-filter").focus()
        await pilot.press(*"haiku", "enter")
        await pilot.pause()
        assert openers.models == ["anthropic/claude-haiku-4-5"]
        settings = json.loads((private_moot_home / "config" / "settings.json").read_text())
        assert settings == {"model": "anthropic/claude-haiku-4-5"}
        assert not isinstance(pilot.app.screen, SetupScreen)
        app = pilot.app
        assert isinstance(app, MootApp) and app.client is openers.client
        assert app.query_one(StatusLine).facts.session_id == "ses_fake"
        await pilot.pause()
        # The task given on the command line goes out once the session is open.
        assert openers.client.ops[0] == ops.UserTurn(text="make greet say hello")
        assert [v.session_id for v in app.view.visits] == ["ses_fake"]
    assert setup_detect.needs_setup(private_moot_home, None) is False


async def test_typing_on_the_model_list_filters_it_as_its_placeholder_says(
    monkeypatch: pytest.MonkeyPatch, private_moot_home: Path
) -> None:
    """The list has the focus when a model is ready; letters typed there go to the filter
    ("type to filter the models"), and Enter starts the one they leave highlighted."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    openers = Openers()
    async with app_for(openers).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        assert pilot.app.focused is screen.query_one("#models")
        await pilot.press(*"haiku")
        assert screen.query_one("#model-filter").value == "haiku"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert openers.models == ["anthropic/claude-haiku-4-5"]


async def test_a_model_without_a_key_says_so_and_opens_nothing() -> None:
    openers = Openers()
    async with app_for(openers).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        screen.query_one("#model-filter").focus()
        await pilot.press(*"gpt-5-mini", "enter")
        problem = str(screen.query_one("#problem").render())
        assert problem == "no key for openai: paste one above, then start"
        assert openers.models == []
        assert pilot.app.focused is screen.query_one("#key")
        assert str(screen.query_one("#key-provider").value) == "openai"  # type: ignore[attr-defined]


async def test_a_session_that_cannot_open_is_told_on_the_screen(
    monkeypatch: pytest.MonkeyPatch, private_moot_home: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    openers = Openers(fail="model 'anthropic/x' is not one anthropic serves")
    async with app_for(openers).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        await pilot.press("enter")  # the highlighted (first ready) model
        assert "is not one anthropic serves" in str(screen.query_one("#problem").render())
        assert isinstance(pilot.app.screen, SetupScreen)
        assert not (private_moot_home / "config" / "settings.json").exists()


async def test_the_demo_starts_a_session_that_sends_its_task_and_asks() -> None:
    openers = Openers()
    async with app_for(openers).run_test(size=(120, 40)) as pilot:
        await detected(pilot)
        await pilot.click("#demo")
        for _ in range(3):
            await pilot.pause()
        assert openers.demos == 1 and openers.models == []
        assert openers.demo.ops[0] == ops.UserTurn(text=setup_detect.DEMO_TASK)
        assert pilot.app.query_one(ApprovalPane).current is not None  # the edit asks


async def test_keys_that_act_on_a_session_do_nothing_before_one_is_open() -> None:
    async with app_for(Openers()).run_test(size=(120, 40)) as pilot:
        await detected(pilot)
        await pilot.press("shift+tab", "f2", "f3", "ctrl+left", "escape", "end", "ctrl+p")
        assert isinstance(pilot.app.screen, SetupScreen)  # no palette, no crash
        await pilot.press("ctrl+c", "ctrl+c")
    assert pilot.app.return_code == 0


async def test_at_completion_works_in_a_session_the_first_run_screen_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29, item 1: the session the first-run screen opened never told `@` completion it
    was open, so each key's listing waited for ever in a thread of the loop's executor (six
    filled it), and the session's tools, which need those threads, spun for ever."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    openers = Openers()
    openers.client = FakeClient(edit_session(), files=["hello.py", "src/help.py"])
    async with app_for(openers).run_test(size=(120, 40)) as pilot:
        screen = await detected(pilot)
        screen.query_one("#model-filter").focus()
        await pilot.press(*"haiku", "enter")
        await pilot.pause()
        app = pilot.app
        assert isinstance(app, MootApp) and app.client is openers.client
        for key in "@hel":  # one key at a time, as a person types
            await pilot.press(key)
        for worker in [w for w in app.workers if w.group == "paths"]:
            await worker.wait()
        await pilot.pause()
        listed = app.query_one(PromptArea).options
        shown = [listed.get_option_at_index(i).id for i in range(listed.option_count)]
        assert sorted(shown) == ["@hello.py", "@src/help.py"]

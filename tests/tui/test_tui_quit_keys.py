"""ctrl+d quits the app from an empty prompt, as it ends a shell; in a prompt holding text it
deletes to the right (the text field's own key, which took it before, so it never quit)."""

from __future__ import annotations

from moot.frontend.history import PromptHistory
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.widgets.prompt import PromptInput
from tui_scripts import edit_session


def _app() -> MootApp:
    client = FakeClient(edit_session())
    return MootApp(client, AppOptions(history=PromptHistory(None), clock=lambda: 1000.0))


async def test_ctrl_d_in_an_empty_prompt_quits() -> None:
    app = _app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.focused, PromptInput)
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.return_code == 0  # the app exited


async def test_ctrl_d_in_a_prompt_holding_text_deletes_to_the_right() -> None:
    app = _app()
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("a", "b", "left", "ctrl+d")
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        assert prompt.text == "a" and app.return_code is None

"""The styled REPL loads rich's markdown in a thread once its session is open
(`moot.repl.markdown.warm_up`): only after the session's line is on the terminal, since the
thread's imports would share the GIL with the redraw around that line and delay it
(`scripts/bench --only repl`: session line shown / a bare prompt)."""

from __future__ import annotations

import threading

import pytest

import moot.repl.markdown
from moot.testing import FakeClient
from repl_harness import STYLED, running_repl
from tui_scripts import edit_session


async def test_the_markdown_warm_up_starts_once_the_session_line_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen_at_warm_up: list[str] = []
    warm_up = moot.repl.markdown.warm_up

    def noting_warm_up() -> threading.Thread:
        seen_at_warm_up.append(session.text)
        return warm_up()

    monkeypatch.setattr(moot.repl.markdown, "warm_up", noting_warm_up)
    async with running_repl(FakeClient(edit_session()), look=STYLED) as session:
        await session.until(lambda: seen_at_warm_up, "the warm-up")

        assert "session " in seen_at_warm_up[0], seen_at_warm_up[0]

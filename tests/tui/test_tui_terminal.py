"""The app and the terminal, on the fake client: mouse capture switched with f4 (and off from
the start), tiny sizes and back, the conversation printed on exit, 16-colour themes, and the
notification of an approval while the terminal looks elsewhere (cleaned of control characters,
at most once a second). What only a real terminal shows is in `test_tui_tmux.py`."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.theme import BUILTIN_THEMES

from clocks import Clock
from moot.frontend.history import PromptHistory
from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.notify import GAP_S, Notifier, clean, sequences
from moot.tui.options import AppOptions
from moot.tui.screens.setup import FirstRun, SetupScreen
from moot.tui.scrollback import Visit, conversation, print_conversation, scrollback_format
from moot.tui.terminal import ANSI_FALLBACK, few_colours
from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.status_line import StatusLine
from tui_apps import app_for
from tui_scripts import Run, edit_session


async def send(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text, "enter")
    for _ in range(3):
        await pilot.pause()


# ---- the mouse --------------------------------------------------------------------------------


async def test_f4_switches_mouse_capture_and_says_who_selects_text() -> None:
    async with app_for(FakeClient()).run_test(size=(120, 40), notifications=True) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp) and app.mouse_reporting
        await pilot.press("f4")
        assert not app.mouse_reporting
        await pilot.press("f4")
        assert app.mouse_reporting
        said = [n.message for n in app._notifications]
        assert said == [
            "mouse: the terminal selects text (f4: give it back to moot)",
            "mouse: moot (f4: let the terminal select text)",
        ]


async def test_the_mouse_can_start_off_and_f4_works_on_the_first_run_screen() -> None:
    first_run = FirstRun(open_model=lambda m: FakeClient(), open_demo=FakeClient)
    app = MootApp(None, AppOptions(first_run=first_run, history=PromptHistory(None), mouse=False))
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.mouse_reporting
        await pilot.press("f4")
        assert app.mouse_reporting and isinstance(app.screen, SetupScreen)


# ---- sizes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tiny", [(20, 5), (10, 3), (1, 1)], ids=["20x5", "10x3", "1x1"])
async def test_tiny_sizes_do_not_crash_and_the_layout_comes_back(tiny: tuple[int, int]) -> None:
    client = FakeClient(edit_session())
    async with app_for(client, clock=Clock()).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        await send(pilot, "make greet say hello")  # an approval waits, the chat has blocks
        await pilot.resize_terminal(*tiny)
        await pilot.pause()
        await pilot.press("ctrl+right", "ctrl+left", "ctrl+right")
        assert app.side.width >= 24
        assert app.export_screenshot()  # it draws at that size
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not app.has_class("-narrow")
        assert app.query_one("#side").region.width > 0
        status = app.query_one(StatusLine)
        assert status.region.y == 39 and status.region.width == 120
        assert app.query_one(ApprovalPane).current is not None


async def test_the_first_run_screen_survives_tiny_sizes() -> None:
    first_run = FirstRun(open_model=lambda m: FakeClient(), open_demo=FakeClient)
    app = MootApp(None, AppOptions(first_run=first_run, history=PromptHistory(None)))
    async with app.run_test(size=(80, 24)) as pilot:
        for size in ((20, 5), (1, 1), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        assert app.screen.query_one("#start").region.width > 0


# ---- the conversation on exit -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "inline", "flag", "expected"),
    [
        ("auto", True, None, "markdown"),
        ("auto", False, None, "off"),
        ("text", False, None, "text"),
        ("auto", True, "off", "off"),
        ("off", False, "markdown", "markdown"),
    ],
)
def test_what_is_printed_on_exit(
    setting: str, inline: bool, flag: str | None, expected: str
) -> None:
    assert scrollback_format(setting, inline=inline, flag=flag) == expected


async def test_the_conversation_is_printed_after_the_app_as_text_or_markdown() -> None:
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await send(pilot, "make greet say hello")
        pilot.app.query_one(ApprovalPane).answer("approve_once")
        for _ in range(3):
            await pilot.pause()
    app = pilot.app
    assert isinstance(app, MootApp) and app.view.visits == [Visit("ses_fake", 0)]
    text = io.StringIO()
    assert print_conversation(client.query, app.view.visits, "text", text)
    printed = text.getvalue()
    assert printed.startswith(
        "## moot session ses_fake\n\n### user → moot\n\n> make greet say hello"
    )
    assert "`edit` result" in printed and "Done: `greet` now says **hello**." in printed
    rendered = io.StringIO()
    assert print_conversation(client.query, app.view.visits, "markdown", rendered)
    assert "Done: greet now says hello." in rendered.getvalue()  # rendered: no markup left
    assert "**" not in rendered.getvalue()
    assert not print_conversation(client.query, app.view.visits, "off", io.StringIO())


def test_a_resumed_session_prints_what_this_run_added_and_where_the_rest_is() -> None:
    first = Run("run_1").start("the first question").text("old").responded("old").finish("old")
    client = FakeClient(first.events)
    client.play()
    taken_up = len(client.log)
    second = Run("run_2").start("now").text("new").responded("new").finish("new")
    client.emit(*second.events)
    printed = conversation(client.query, [Visit("ses_fake", taken_up)])
    assert "the first question" not in printed and "> now" in printed
    assert "*(earlier turns: `moot sessions show ses_fake`)*" in printed
    assert conversation(client.query, [Visit("ses_gone")]) == ""  # nothing, no error


# ---- colours ----------------------------------------------------------------------------------


def test_sixteen_colour_terminals_get_the_ansi_theme_of_each_shipped_theme() -> None:
    assert few_colours("standard") and few_colours("windows") and few_colours(None)
    assert not few_colours("256") and not few_colours("truecolor")
    shipped = {p.stem for p in (Path(__file__).parents[2] / "themes").glob("*.toml")}
    assert set(ANSI_FALLBACK) == shipped  # every shipped theme has its 16-colour stand-in
    assert all(
        name in BUILTIN_THEMES and BUILTIN_THEMES[name].ansi for name in ANSI_FALLBACK.values()
    )


async def test_headless_the_theme_is_the_one_asked_for() -> None:
    async with app_for(FakeClient()).run_test(size=(80, 24)) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        assert app.theme == app.chosen_theme == "moot-dark"
        app.commands.set_theme("moot-light")
        assert app.theme == app.chosen_theme == "moot-light"


# ---- an approval while the terminal looks elsewhere -------------------------------------------


def test_what_goes_into_a_notification_cannot_act_on_the_terminal() -> None:
    hostile = "rev\x1b]0;owned\x07iewer\x9b31m asks to run\nrm\x7f"
    assert clean(hostile) == "rev ]0;owned iewer 31m asks to run rm"
    written = sequences(hostile)
    assert written.count("\x1b") == 2 and written.count("\x07") == 2  # the two frames only
    assert written.startswith("\x1b]9;moot: rev ]0;owned")
    assert "\x9b" not in written and "\n" not in written
    assert len(clean("x" * 1000)) == 160
    wrapped = sequences("hi", tmux=True)
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]9;") and wrapped.endswith("\x1b\\")


def blurred_approval(agent: str) -> list[ev.Event]:
    """A turn whose agent (named by a project, say) asks to edit."""
    run = Run(agent=agent).start("go")
    run.ask("t1", "edit", {"path": "greeting.py"}, "--- a/greeting.py\n+++ b/greeting.py\n")
    return run.events


async def test_an_approval_rings_and_notifies_once_only_while_the_terminal_is_unfocused() -> None:
    clock = Clock()
    written: list[str] = []
    rings: list[int] = []
    client = FakeClient(blurred_approval("rev\x1b]0;owned\x07iewer"), autoplay=False)
    async with app_for(client, clock=clock).run_test(size=(120, 40)) as pilot:
        pane = pilot.app.query_one(ApprovalPane)
        pane.notifier = Notifier(written.append, lambda: rings.append(1), clock)
        pilot.app.post_message(events.AppBlur())
        await pilot.pause()
        client.play()  # the approval arrives while the terminal looks elsewhere
        await pilot.pause()
        await pilot.pause()
        assert pane.current is not None
        assert pane.notifier.sent == ["rev ]0;owned iewer asks to run edit"]
        assert rings == [1] and written[0].count("\x1b") == 2
        again: Callable[[], None] = lambda: pane._notify_terminal(pane.current)  # noqa: E731
        again()  # a second question within the gap: no second ring
        assert len(rings) == 1
        clock.now += GRACE_GAP
        again()
        assert len(rings) == 2
        pilot.app.post_message(events.AppFocus())
        await pilot.pause()
        pane.add(pane.current)  # focused: shown, never rung
        assert len(rings) == 2


GRACE_GAP = GAP_S + 0.01

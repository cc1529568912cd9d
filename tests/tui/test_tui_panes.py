"""The side panes on the fake client, at 160x48 and at 80x24: `f2`/`f3` show and hide them
(below 110 columns over the chat, folded again by the same key), both hidden give the chat the
whole width, `ctrl+left`/`ctrl+right` size the column and `ctrl+up`/`ctrl+down` its split,
`/panes` does the same by name, and what the person sets is there at the next start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot

from moot.frontend.history import PromptHistory
from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.widgets.answer import AnswerBlock
from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.blocks import NoticeBlock
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.prompt import PromptInput
from tui_scripts import Run, edit_session

WIDE, NARROW = (160, 48), (80, 24)


def app_for(script: list[ev.Event] | None = None) -> MootApp:
    client = FakeClient(edit_session() if script is None else script)
    return MootApp(client, AppOptions(history=PromptHistory(None), clock=lambda: 1000.0))


async def with_a_finished_turn(pilot: Pilot) -> None:
    """Send the edit session's task, approve its edit, and wait until the turn has ended."""
    app = pilot.app
    assert isinstance(app, MootApp)
    await pilot.press(*"make greet say hello", "enter")
    pane = app.query_one(ApprovalPane)
    for _ in range(100):  # bounded: the bridge worker takes the events in its own time
        if pane.current is not None:
            break
        await pilot.pause()
    pane.answer("approve_once")
    for _ in range(100):
        if not app.outbox.turn_running and app.trace.root.children:
            break
        await pilot.pause()
    await pilot.pause()


def hidden(app: MootApp, selector: str) -> bool:
    """Whether the widget does not show (itself or a parent is not displayed)."""
    return not all(node.display for node in app.query_one(selector).ancestors_with_self)


def box(app: MootApp, selector: str) -> Region:
    """Where the widget shows on screen (it must)."""
    assert not hidden(app, selector), f"{selector} does not show"
    return app.query_one(selector).region


async def press(pilot: Pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def kept(home: Path) -> dict[str, object]:
    prefs = json.loads((home / "config" / "tui.json").read_text())
    return prefs["panes"]


async def test_at_160x48_f2_and_f3_hide_each_pane_and_both_hidden_give_the_chat_the_width(
    private_moot_home: Path,
) -> None:
    async with app_for().run_test(size=WIDE) as pilot:
        app = pilot.app
        await with_a_finished_turn(pilot)
        chat, side = box(app, "#chat"), box(app, "#side")
        assert (chat.width, side.x, side.width) == (112, 112, 48)
        tools, trace = box(app, "#tools"), box(app, "#trace")
        assert tools.bottom == trace.y and abs(tools.height - trace.height) <= 1  # an even split

        await press(pilot, "f2")
        trace = box(app, "#trace")
        assert hidden(app, "#tools")
        assert trace.height == side.height  # the trace pane alone takes the column
        assert kept(private_moot_home)["tools"] is False

        await press(pilot, "f3")
        assert hidden(app, "#side")
        chat, prompt = box(app, "#chat"), box(app, "#prompt-area")
        assert chat.width == prompt.width == 160  # no empty column: the chat has it all

        await press(pilot, "f2", "f3")
        assert not hidden(app, "#tools") and not hidden(app, "#trace")
        assert box(app, "#chat").width == 112
        assert kept(private_moot_home) == {"tools": True, "trace": True, "width": 48, "split": 50}


async def test_at_80x24_f3_brings_the_trace_pane_over_the_chat_and_f3_folds_it_again(
    private_moot_home: Path,
) -> None:
    async with app_for().run_test(size=NARROW) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        await with_a_finished_turn(pilot)
        assert hidden(app, "#side")  # folded away by default
        assert box(app, "#chat").width == 80

        await press(pilot, "f3")
        trace, prompt = box(app, "#trace"), box(app, "#prompt-area")
        assert hidden(app, "#chat") and hidden(app, "#tools")
        assert (trace.x, trace.y, trace.width) == (0, 0, 80)  # the chat's place, full width
        assert prompt.y == trace.bottom and prompt.bottom == 23  # the prompt stays below it
        assert isinstance(app.focused, PromptInput)  # and keeps the focus: typing goes on
        assert "make greet say hello" in str(app.trace.root.children[0].label)

        await press(pilot, "f2")  # both: they share the chat's place
        tools, trace = box(app, "#tools"), box(app, "#trace")
        assert tools.width == trace.width == 80 and tools.bottom == trace.y
        assert trace.bottom == prompt.y

        await press(pilot, "f2")
        assert hidden(app, "#tools") and box(app, "#trace").height == trace.bottom

        await press(pilot, "f3")
        assert hidden(app, "#side") and box(app, "#chat").width == 80
        await press(pilot, "ctrl+right")  # no column shows: the app says what changed
        said = [n.message for n in app._notifications]
        assert said[-1] == "side column: 56 columns, on a terminal 110 or wider"
    # What a narrow terminal brings up lasts while it is narrow: only the width is kept.
    assert kept(private_moot_home) == {"tools": True, "trace": True, "width": 56, "split": 50}


async def test_an_answer_that_comes_while_the_chat_is_covered_shows_its_end_after() -> None:
    """The chat is hidden, not gone: it takes the turn meanwhile, and still follows it."""
    answer = "\n\n".join(f"paragraph {n}" for n in range(40))
    run = Run().start("tell me a lot")
    run.text(answer).responded(answer)
    async with app_for(run.finish(answer).events).run_test(size=NARROW) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        await press(pilot, "f3")
        await pilot.press(*"tell me a lot", "enter")
        for _ in range(100):  # bounded: until the turn has ended
            if app.trace.root.children and not app.outbox.turn_running:
                break
            await pilot.pause()
        await press(pilot, "f3")
        await pilot.pause()
        chat = app.query_one(ChatPane)
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y
        last = app.query(AnswerBlock).last().region
        assert chat.region.y < last.bottom <= chat.region.bottom  # its last lines in view


async def test_what_is_brought_up_on_a_narrow_terminal_lasts_while_it_stays_narrow() -> None:
    async with app_for([]).run_test(size=WIDE) as pilot:
        app = pilot.app
        await press(pilot, "f2")  # the person's choice for a wide terminal: no tools pane
        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        assert hidden(app, "#side")
        await press(pilot, "f2")  # over the chat, whatever the wide choice
        assert not hidden(app, "#tools") and hidden(app, "#chat")
        await pilot.resize_terminal(100, 30)  # still narrow
        await pilot.pause()
        assert box(app, "#tools").width == 100
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert hidden(app, "#tools") and not hidden(app, "#trace")
        assert box(app, "#chat").width == 112
        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        assert hidden(app, "#side") and not hidden(app, "#chat")  # folded again


async def test_ctrl_up_and_down_move_the_split_and_ctrl_left_and_right_size_the_column(
    private_moot_home: Path,
) -> None:
    async with app_for([]).run_test(size=WIDE) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        await press(pilot, "ctrl+up", "ctrl+up")
        assert app.side.sizes.split == 70 and abs(box(app, "#tools").height - 0.7 * 47) <= 1
        await press(pilot, *["ctrl+down"] * 9)
        assert app.side.sizes.split == 10  # each pane keeps a tenth of the column
        assert box(app, "#tools").height >= 4

        assert isinstance(app.focused, PromptInput) and not app.prompt.text
        await press(pilot, "ctrl+right")  # from the empty prompt
        assert box(app, "#side").width == 56
        await press(pilot, *["ctrl+right"] * 20)
        assert box(app, "#chat").width == 40  # the chat keeps 40
        await press(pilot, *["ctrl+left"] * 20)
        assert box(app, "#side").width == 24

        await press(pilot, *"two words")
        await press(pilot, "ctrl+left")  # a prompt with text keeps the key for its words
        assert box(app, "#side").width == 24
        assert app.prompt.cursor_location == (0, 4)
        await press(pilot, "f1", "ctrl+right", "ctrl+up")  # over the help, not the panes'
        assert app.side.sizes.width == 24 and app.side.sizes.split == 10
        assert kept(private_moot_home) == {"tools": True, "trace": True, "width": 24, "split": 10}


async def test_the_panes_start_as_the_person_left_them(private_moot_home: Path) -> None:
    async with app_for([]).run_test(size=WIDE) as pilot:
        await press(pilot, "f3", "ctrl+right", "ctrl+up")
    async with app_for([]).run_test(size=WIDE) as pilot:
        app = pilot.app
        assert not hidden(app, "#tools") and hidden(app, "#trace")
        assert box(app, "#side").width == 56
        assert app.side.sizes.split == 60


@pytest.mark.parametrize("saved", [{"width": "wide"}, ["tools"], {"split": 500, "width": 3}])
async def test_panes_kept_in_a_form_not_understood_start_as_they_always_do(
    private_moot_home: Path, saved: object
) -> None:
    config = private_moot_home / "config"
    config.mkdir(parents=True)
    (config / "tui.json").write_text(json.dumps({"panes": saved}))
    async with app_for([]).run_test(size=WIDE) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        sizes = app.side.sizes
        assert sizes.tools and sizes.trace and sizes.width >= 24 and 10 <= sizes.split <= 90
        assert box(app, "#side").width == sizes.width


# ---- /panes -----------------------------------------------------------------------------------


async def run_command(pilot: Pilot, line: str) -> str:
    """Send `/panes ...` and wait for it; what the app said last."""
    await pilot.press(*line, "enter")
    for _ in range(3):
        busy = [w for w in pilot.app.workers if w.group in ("command", "say")]
        if busy:  # an empty list would wait for every worker, the bridge's too
            await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()
    from moot.tui.search import block_text

    return block_text(pilot.app.query(NoticeBlock).last())


async def test_slash_panes_shows_hides_and_sizes_them_as_the_keys_do(
    private_moot_home: Path,
) -> None:
    async with app_for([]).run_test(size=WIDE) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        assert app.commands.completions("panes tr") == [
            ("panes trace", ""),
            ("panes trace on", ""),
            ("panes trace off", ""),
        ]
        said = await run_command(pilot, "/panes trace off")
        assert hidden(app, "#trace") and not hidden(app, "#tools")
        assert (
            said
            == "tools shown, trace hidden; side column 48 columns wide, tools 50% of its height"
        )
        await run_command(pilot, "/panes width 60")
        await run_command(pilot, "/panes split 30")
        assert box(app, "#side").width == 60
        assert kept(private_moot_home) == {"tools": True, "trace": False, "width": 60, "split": 30}
        said = await run_command(pilot, "/panes tools off")
        assert hidden(app, "#side") and box(app, "#chat").width == 160
        said = await run_command(pilot, "/panes reset")
        assert said.startswith("tools shown, trace shown; side column 48 columns wide")

        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        said = await run_command(pilot, "/panes trace on")
        assert hidden(app, "#chat") and box(app, "#trace").width == 80
        assert said.startswith("a narrow terminal (80 < 110 columns): tools hidden, trace shown")

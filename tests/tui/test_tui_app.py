"""The app on the fake client: the right ops for each key, and what shows for each event."""

from __future__ import annotations

import ast

import pytest

from clocks import Clock
from moot.protocol import events as ev
from moot.protocol import ops
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.widgets.answer import AnswerBlock
from moot.tui.widgets.approval import GRACE_S, ApprovalPane
from moot.tui.widgets.blocks import NoticeBlock
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.tool_block import ToolBlock
from tui_scripts import Interrupted, Run, edit_session, plan_session


def app_for(client: FakeClient, clock: Clock | None = None, **kw: object) -> MootApp:
    from moot.frontend.history import PromptHistory

    return MootApp(client, AppOptions(history=PromptHistory(None), clock=clock or Clock(), **kw))  # type: ignore[arg-type]


async def type_and_send(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text)
    await pilot.press("enter")
    await pilot.pause()


async def shown(pilot) -> ApprovalPane:  # type: ignore[no-untyped-def]
    """The approval pane once it shows a request: events reach the app through a worker, and
    a request shown after the test's clock moved on would still be in its grace period."""
    pane = pilot.app.query_one(ApprovalPane)
    for _ in range(100):  # bounded: each pause lets the app take what is queued
        if pane.current is not None:
            return pane
        await pilot.pause()
    raise AssertionError("no approval was shown")


async def focused_after_a_pause(pilot, clock: Clock) -> ApprovalPane:  # type: ignore[no-untyped-def]
    """The edit approval of "go", focused as its timer focuses it once the person paused."""
    await type_and_send(pilot, "go")
    pane = await shown(pilot)
    pane.focus()
    clock.now += GRACE_S + 1
    await pilot.pause()
    return pane


async def test_a_message_is_sent_as_one_user_turn_and_its_answer_streams_in() -> None:
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "make greet say hello")
        assert client.ops == [ops.UserTurn(text="make greet say hello")]
        await pilot.pause()
        chat = pilot.app.query_one(ChatPane)
        tools = list(chat.query(ToolBlock))
        assert [t.tool for t in tools] == ["read"]  # the edit waits for approval
        assert pilot.app.query_one(ApprovalPane).current is not None


async def test_keys_in_the_grace_period_never_answer_and_y_after_it_approves_once() -> None:
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")
        pane = pilot.app.query_one(ApprovalPane)
        asked = pane.current
        assert isinstance(asked, ev.ApprovalRequested)
        pane.focus()
        await pilot.press("y", "n", "a", "s")  # typed on at once: the prompt's, no answer
        assert client.ops == [ops.UserTurn(text="go")]
        assert pilot.app.prompt.text == "ynas"
        clock.now += GRACE_S + 0.01
        pane.focus()  # as its timer does once the person has paused
        await pilot.press("y")
        await pilot.pause()
        assert client.ops[1:] == [ops.Approve(tool_call_id="t2", call_id=asked.call_id)]
        assert pane.current is None  # decided: the queue moved on
        answers = pilot.app.query_one(ChatPane).query(AnswerBlock)
        assert answers.last().text == "Done: `greet` now says **hello**."


async def test_typing_in_the_prompt_holds_an_approval_off() -> None:
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")
        clock.now += 5
        pane = pilot.app.query_one(ApprovalPane)
        await pilot.press("h", "i")  # still typing in the prompt
        pane.focus()
        await pilot.press("y")  # typed on: the prompt's
        assert len(client.ops) == 1 and pilot.app.prompt.text == "hiy"
        clock.now += GRACE_S + 0.01
        pane.focus()
        await pilot.pause()  # the focus lands before the key (under load the key came first)
        await pilot.press("y")
        assert isinstance(client.ops[-1], ops.Approve)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (
            ("s",),
            ops.Approve(
                tool_call_id="t2", call_id="run_1", scope="session", rule="Edit(greeting.py)"
            ),
        ),
        (
            ("a",),
            ops.Approve(
                tool_call_id="t2", call_id="run_1", scope="always", rule="Edit(greeting.py)"
            ),
        ),
        (("n", "enter"), ops.Deny(tool_call_id="t2", call_id="run_1", feedback="")),
        (
            ("n", *"not yet", "enter"),
            ops.Deny(tool_call_id="t2", call_id="run_1", feedback="not yet"),
        ),
    ],
)
async def test_each_answer_key_sends_its_op(keys: tuple[str, ...], expected: ops.Op) -> None:
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await focused_after_a_pause(pilot, clock)
        await pilot.press(keys[0])
        await pilot.pause()  # `n` focuses the feedback field: the rest is typed there
        await pilot.press(*keys[1:])
        await pilot.pause()
        assert client.ops[-1] == expected


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (("y",), ops.Approve(tool_call_id="p1", call_id="run_1", mode="default")),
        (("a",), ops.Approve(tool_call_id="p1", call_id="run_1", mode="acceptEdits")),
        (
            ("n", *"smaller steps", "enter"),
            ops.Deny(tool_call_id="p1", call_id="run_1", feedback="smaller steps"),
        ),
    ],
)
async def test_a_plan_approval_approves_in_either_mode_or_asks_for_a_revision(
    keys: tuple[str, ...], expected: ops.Op
) -> None:
    """y: approve and ask before each edit (the default mode); a: approve and accept edits;
    n: revise, with what to change. One op each, and nothing else."""
    clock = Clock()
    client = FakeClient(plan_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "plan it")
        pane = await shown(pilot)
        pane.focus()
        clock.now += GRACE_S + 1
        await pilot.press(keys[0])
        await pilot.pause()  # `n` focuses the feedback field: the rest is typed there
        await pilot.press(*keys[1:])
        await pilot.pause()
        assert client.ops == [ops.UserTurn(text="plan it"), expected]


async def test_f1_lists_every_key_of_the_table_by_place() -> None:
    """Each key of the table shows once, under the heading of the place where it works; f1
    (a key of the help screen's own) closes it again."""
    from moot.tui.keys import KEYS, PLACES
    from moot.tui.screens.help import HelpScreen

    async with app_for(FakeClient()).run_test(size=(120, 40)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen)
        table = pilot.app.screen.query_one("Static").content
        keys, descriptions = (list(map(str, column.cells)) for column in table.columns)
        rows = list(zip(keys, descriptions, strict=True))
        headings = {f"[u]{place}[/u]": where for where, place in PLACES.items()}
        place_of_row = []
        place = None
        for key, _ in rows:
            place = headings.get(key, place)
            place_of_row.append(place)
        for key in KEYS:
            at = [i for i, row in enumerate(rows) if row == (key.key, key.description)]
            assert len(at) == 1, key
            assert place_of_row[at[0]] == key.where, key
        await pilot.press("f1")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, HelpScreen)


async def test_escape_interrupts_a_running_turn_and_shift_tab_cycles_the_mode() -> None:
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("escape")  # nothing runs: no op
        assert client.ops == []
        await type_and_send(pilot, "go")
        pilot.app.query_one("#prompt").focus()
        await pilot.press("escape")
        assert client.ops[-1] == ops.Interrupt()
        await pilot.pause()
        await pilot.press("shift+tab")
        await pilot.press("shift+tab")
        modes = [o.mode for o in client.ops if isinstance(o, ops.SetMode)]
        assert modes == ["acceptEdits", "plan"]


async def test_a_slash_command_never_reaches_the_model() -> None:
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "/nosuch thing")
        await type_and_send(pilot, "/mode plan")
        await pilot.pause()
        assert client.ops == [ops.SetMode(mode="plan")]
        said = " ".join(str(b.render()) for b in pilot.app.query("NoticeBlock"))
        assert "no command /nosuch" in said


async def test_ctrl_c_twice_quits() -> None:
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        assert pilot.app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert client.closed


async def test_what_the_session_publishes_while_the_app_closes_is_dropped() -> None:
    """A turn runs on while the person quits: its events reach an app whose panes are gone."""
    from moot.tui.messages import SessionEvent

    events = edit_session()
    app = app_for(FakeClient())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
    for event in events:
        await app._event(SessionEvent(event))  # no NoMatches: nothing to show it in


async def test_up_walks_the_history_and_ctrl_r_picks_an_earlier_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from moot.frontend.history import PromptHistory

    history = tmp_path / "history.jsonl"
    history.write_text(
        "".join(json.dumps(m) + "\n" for m in ["fix the flaky test", "explain\nthe build"])
    )
    client = FakeClient()
    app = MootApp(client, AppOptions(history=PromptHistory(history), clock=Clock()))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("up")
        assert app.prompt.text == "explain\nthe build"  # the newest first
        app.prompt.load_text("")
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press(*"flaky", "enter")
        await pilot.pause()
        assert app.prompt.text == "fix the flaky test"
        assert app.focused is app.prompt
        await pilot.press("enter")
        await pilot.pause()
    assert [op.text for op in client.ops if isinstance(op, ops.UserTurn)] == ["fix the flaky test"]


async def test_a_resumed_session_shows_what_it_spent_in_the_status_line() -> None:
    from moot.tui.widgets.status_line import StatusLine

    client = FakeClient(edit_session())
    client.submit(ops.UserTurn(text="make greet say hello"))
    client.submit(ops.Approve(tool_call_id="t2", call_id="run_1"))
    async with app_for(client, show_history=True).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        facts = pilot.app.query_one(StatusLine).facts
        assert (facts.cost_usd, facts.tokens) == (pytest.approx(0.0042), 1280)


async def test_approvals_from_parallel_peers_queue_each_naming_its_agent() -> None:
    from textual.widgets import Static

    from tui_scripts import Run

    run = Run(agent="lead").start("review and test")
    run.ask("x1", "edit", {"path": "a.py"}, "-old\n+new", call_id="call_r", agent="reviewer")
    run.ask("x2", "bash", {"command": "pytest"}, "$ pytest", call_id="call_t", agent="tester")
    clock = Clock()
    client = FakeClient(autoplay=False)
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        client.emit(*run.events)
        await pilot.pause()
        pane = pilot.app.query_one(ApprovalPane)
        title = pane.query_one(".title", Static)
        assert str(title.render()) == "reviewer asks to run edit  (1 of 2)"
        pane.focus()
        clock.now += GRACE_S + 1
        await pilot.pause()  # the focus lands before the key (under load the key came first)
        await pilot.press("y")
        await pilot.pause()
        assert client.ops[-1:] == [ops.Approve(tool_call_id="x1", call_id="call_r")]
        client.emit(run.decided("x1", call_id="call_r", agent="reviewer").events[-1])
        await pilot.pause()
        assert str(title.render()).startswith("tester asks to run bash")
        assert "of 2" not in str(title.render())


async def test_a_paste_is_never_sent_line_by_line_and_a_large_one_is_a_chip() -> None:
    """Pastes go to the app, as the terminal driver sends them, which hands them on."""
    from textual import events

    client = FakeClient([])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        prompt = pilot.app.prompt
        pilot.app.post_message(events.Paste("first line\r\nsecond line"))
        await pilot.pause()
        assert prompt.text == "first line\nsecond line" and client.ops == []
        await pilot.press("ctrl+j", *"third")
        assert prompt.text == "first line\nsecond line\nthird"
        await pilot.press("enter")
        await pilot.pause()
        big = "\n".join(f"line {i}" for i in range(40))
        pilot.app.post_message(events.Paste(big))
        await pilot.pause()
        assert prompt.text == "[pasted 40 lines #1]"
        await pilot.press(*" explain", "enter")
        await pilot.pause()
    sent = [op.text for op in client.ops if isinstance(op, ops.UserTurn)]
    assert sent == ["first line\nsecond line\nthird", big + " explain"]


async def test_a_tool_call_expands_into_a_log_and_a_long_diff_shows_all_on_a_click() -> None:
    from textual.widgets import Log

    from moot.tui.widgets.diff_view import CAP, DiffView
    from tui_scripts import Run

    output = "\n".join(f"test {i} ok" for i in range(300))
    diff = "--- a/big.py\n+++ b/big.py\n@@ -1,60 +1,60 @@\n" + "".join(
        f"-old {i}\n+new {i}\n" for i in range(60)
    )
    run = Run().start("run the tests and fix big.py")
    run.tool("b1", "bash", {"command": "pytest -q"}, output)
    run.tool("e1", "edit", {"path": "big.py"}, "edited big.py", display={"diff": diff})
    run.tool("x1", "bash", {"command": "false"}, "exit 1", is_error=True)
    run.finish("done")
    client = FakeClient(run.events)
    async with app_for(client).run_test(size=(120, 50)) as pilot:
        await type_and_send(pilot, "go")
        bash, edit, failed = pilot.app.query(ToolBlock).results()
        assert "(+299 lines)" in str(bash._line.render()) and not bash.query(Log)
        bash.focus()
        await pilot.press("enter")
        await pilot.pause()
        (log,) = bash.query(Log)
        assert log.line_count == 300 and log.max_lines is not None
        assert failed.has_class("-error") and "exit 1" in str(failed._line.render())

        view = edit.query_one(DiffView)  # an edit shows its diff at once, capped
        assert not view.all_shown and len(diff.splitlines()) > CAP
        await pilot.click(".more")
        await pilot.pause()
        assert view.all_shown and not view.query(".more")
        assert edit.expanded and edit.query(DiffView)  # the click did not fold the block


async def test_an_edit_shows_the_errors_a_language_server_found_under_its_diff() -> None:
    from textual.widgets import Static

    from moot.tui.widgets.diff_view import DiffView
    from tui_scripts import DIFF, Run

    note = "[pyright: 1 new error in greeting.py after this change]\ngreeting.py:2:5: error: bad"
    run = Run().start("edit it")
    display = {"diff": DIFF, "diagnostics": note}
    run.tool("e1", "edit", {"path": "greeting.py"}, f"Edited.\n{note}", display=display)
    run.finish("done")
    client = FakeClient(run.events)
    async with app_for(client).run_test(size=(120, 50)) as pilot:
        await type_and_send(pilot, "go")
        (edit,) = pilot.app.query(ToolBlock).results()
        assert edit.query(DiffView)
        (shown,) = edit.query(".diagnostics").results(Static)
        assert "greeting.py:2:5: error: bad" in str(shown.render())


def _is_key(node: ast.expr) -> bool:
    """`key` or `<something>.key`: what a key handler compares with a key's name."""
    return getattr(node, "id", None) == "key" or getattr(node, "attr", None) == "key"


def _names_a_key(node: ast.expr) -> bool:
    """A string, or a tuple, list or set of strings: a key's name written out."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(
        _names_a_key(e) for e in node.elts
    )


def hard_coded_keys(source: str) -> list[str]:
    """What in a module binds a key outside the table: a `Binding`, `BINDINGS` not read
    from it, a `key_*` method (Textual calls it for that key), or a key compared with a
    name written out (`event.key == "y"`, `key in ("up", "down")`, `match event.key`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Binding":
            found.append(f"line {node.lineno}: a Binding")
        elif isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "BINDINGS" for t in node.targets
        ):
            called = getattr(getattr(node.value, "func", None), "id", "")
            if called not in ("app_bindings", "bindings_for"):
                found.append(f"line {node.lineno}: BINDINGS not from the key table")
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                name = getattr(method, "name", "")
                if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    name.startswith(("key_", "_key_"))
                ):
                    found.append(f"line {method.lineno}: method {name}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(map(_is_key, sides)) and any(map(_names_a_key, sides)):
                found.append(f"line {node.lineno}: a key compared with its name")
        elif isinstance(node, ast.Match) and _is_key(node.subject):
            found.append(f"line {node.lineno}: match on a key")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "class P:\n    def on_key(self, event):\n        if event.key == 'y': ...\n",
        "class P:\n    def on_key(self, event):\n        if event.key in ('y', 'n'): ...\n",
        "def f(key):\n    return key == 'enter'\n",
        "class P:\n    def key_enter(self): ...\n",
        "class P:\n    BINDINGS = [('q', 'quit', 'Quit')]\n",
        "B = Binding('q', 'quit')\n",
        "class P:\n    def on_key(self, event):\n        match event.key:\n"
        "            case 'y': ...\n",
    ],
)
def test_the_key_check_catches_each_way_of_hard_coding_a_key(source: str) -> None:
    assert hard_coded_keys(source)


def test_every_binding_of_the_app_and_its_screens_comes_from_the_one_table() -> None:
    """`f1` lists every key there is: no screen or widget binds a key of its own, or compares
    a key with a name it wrote out; every action the table names is one its place does."""
    from pathlib import Path

    import moot.tui
    from moot.tui.keys import KEYS, PLACES
    from moot.tui.screens.help import HelpScreen
    from moot.tui.screens.inspector import InspectorScreen
    from moot.tui.screens.picker import PickerScreen
    from moot.tui.widgets import approval, prompt
    from moot.tui.widgets.blocks import ThinkingBlock
    from moot.tui.widgets.trace import TracePane

    for path in Path(moot.tui.__file__).parent.rglob("*.py"):
        if path.name != "keys.py":
            assert not hard_coded_keys(path.read_text()), (path, hard_coded_keys(path.read_text()))

    bound = {
        "app": MootApp,
        "tool": ToolBlock,
        "thinking": ThinkingBlock,
        "trace": TracePane,
        "picker": PickerScreen,
        "help": HelpScreen,
        "inspector": InspectorScreen,
    }
    looked_up = {
        "prompt": prompt.PROMPT_ACTIONS,
        "completion": prompt.COMPLETION_ACTIONS,
        "approval": approval.ACTIONS,
    }
    assert set(PLACES) == set(bound) | set(looked_up)
    for key in KEYS:
        action = key.action.split("(")[0]
        if key.where in bound:
            assert hasattr(bound[key.where], f"action_{action}"), key
        else:
            assert action in looked_up[key.where], key


async def test_the_prompt_and_the_approval_do_what_the_table_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Change a row and the key changes: sending on `ctrl+s`, approving once on `o`."""
    from msgspec.structs import replace

    from moot.tui import keys

    moved = {("prompt", "submit"): "ctrl+s", ("approval", "approve_once"): "o"}
    table = tuple(replace(k, key=moved.get((k.where, k.action), k.key)) for k in keys.KEYS)
    monkeypatch.setattr(keys, "KEYS", table)
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await pilot.press(*"go", "enter")
        assert client.ops == [] and pilot.app.prompt.text == "go\n"  # enter: a new line
        pilot.app.prompt.load_text("go")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert client.ops == [ops.UserTurn(text="go")]
        pane = await shown(pilot)
        clock.now += GRACE_S + 1
        pane.focus()
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert client.ops[-1] == ops.Approve(tool_call_id="t2", call_id="run_1")


async def test_at_agent_message_while_a_turn_runs_messages_that_agent() -> None:
    """`@moot ...` during a turn is a message for the running agent, read at its next step;
    `@src/x.py ...` (not an agent) stays a message for the next turn."""
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")  # the script stops at its approval: the turn runs
        await type_and_send(pilot, "@moot also update the docstring")
        for _ in range(20):  # the command runs in a worker: a few message-loop rounds
            if isinstance(client.ops[-1], ops.SendMessage):
                break
            await pilot.pause()
        assert client.ops[-1] == ops.SendMessage(to="moot", text="also update the docstring")
        await type_and_send(pilot, "@greeting.py looks odd")
        assert not isinstance(client.ops[-1], ops.UserTurn)  # a turn runs: kept in the prompt
        assert pilot.app.prompt.text == "@greeting.py looks odd"


async def test_a_call_a_stopped_run_left_shows_from_history_without_a_spinner() -> None:
    """Its spinner would run (and repaint ten times a second) until the run is resumed."""
    from tui_scripts import Run

    run = Run().start("run the slow thing")
    run.add(
        ev.ToolStarted(
            **run._ids(), tool_call_id="b1", tool="bash", arguments={"command": "sleep 100"}
        )
    )
    client = FakeClient(run.events)
    client.play()
    async with app_for(client, show_history=True).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        (block,) = pilot.app.query(ToolBlock).results()
        assert block.running and block._timer is None


async def test_escape_in_the_reason_field_goes_back_to_the_choices_and_interrupts_nothing() -> None:
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        pane = await focused_after_a_pause(pilot, clock)
        await pilot.press("n")
        await pilot.pause()
        assert pane.has_class("-feedback")
        await pilot.press("escape")
        await pilot.pause()
        assert not pane.has_class("-feedback") and pilot.app.focused is pane
        assert client.ops == [ops.UserTurn(text="go")]  # no Interrupt: the turn goes on


async def test_typing_on_at_a_focused_approval_goes_back_to_the_prompt_and_answers_nothing() -> (
    None
):
    """The pane took the focus while the person paused; they type on: "hey" reaches the
    prompt whole (its y too, typed after the h had moved the focus back), no answer is sent,
    and the pane takes the focus again only once they pause."""
    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        pane = await focused_after_a_pause(pilot, clock)
        assert pilot.app.focused is pane
        await pilot.press(*"hey")
        await pilot.pause()
        assert pilot.app.prompt.text == "hey" and pilot.app.focused is pilot.app.prompt
        assert client.ops == [ops.UserTurn(text="go")] and pane.current is not None
        # What the pane's timer does a moment later (the test calls it: no waiting here).
        pane._take_focus()
        assert pilot.app.focused is pilot.app.prompt  # still typing: the prompt keeps it
        clock.now += GRACE_S + 0.01
        pane._take_focus()
        await pilot.pause()
        assert pilot.app.focused is pane


async def test_a_session_left_mid_turn_goes_on_with_that_turn_when_it_opens() -> None:
    client = Interrupted(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert client.ops == [ops.ResumeRun()]  # sent once, before anything else
        await pilot.pause()
        assert pilot.app.query_one(ApprovalPane).current is not None  # asked again
        await type_and_send(pilot, "hello?")
        assert client.ops == [ops.ResumeRun()]  # a turn runs: the message waits in the prompt


def held_opening():  # type: ignore[no-untyped-def]
    """A session shown (`first`) and an opener of the next (`second`) that holds until
    `release` is set: what the app does while another session opens."""
    import threading

    release = threading.Event()
    first, second = FakeClient([]), FakeClient([], session_id="ses_second")

    def open_second() -> FakeClient:
        release.wait(10)
        return second

    return release, first, second, open_second


async def until_switched(pilot, second: FakeClient, *, sent: bool = False) -> None:  # type: ignore[no-untyped-def]
    for _ in range(500):  # the switch takes a few of the app's steps
        if pilot.app.client is second and (second.ops or not sent):
            return
        await pilot.pause()


async def test_what_is_typed_and_sent_while_new_opens_goes_to_the_new_session() -> None:
    """`/new` opens the next session in a thread: the app goes on taking keys, a message sent
    meanwhile waits and goes to the new session, and a draft moves into the new prompt."""
    release, first, second, open_second = held_opening()
    async with app_for(first, open_client=open_second).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "/new")
        await type_and_send(pilot, "go")
        await pilot.press(*"draft")
        assert first.ops == [] and second.ops == []
        release.set()
        await until_switched(pilot, second)
        await pilot.pause()
        assert first.ops == [] and second.ops == [ops.UserTurn(text="go")]
        assert pilot.app.prompt.text == "draft"


async def test_a_character_typed_with_the_focus_off_the_prompt_goes_to_the_prompt() -> None:
    """After a click on a tool call or a `tab` away, typing goes on in the prompt (it was
    dropped); a key bound where the focus is keeps its action."""
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")
        block = pilot.app.query_one(ChatPane).query(ToolBlock).first()
        block.focus()
        await pilot.press("enter")  # the block's own key: it unfolds
        assert pilot.app.focused is block and block.expanded
        await pilot.press(*"/he")
        await pilot.pause()
        assert pilot.app.focused is pilot.app.prompt and pilot.app.prompt.text == "/he"
        pilot.app.query_one(ChatPane).focus()
        await pilot.press("y")
        await pilot.pause()
        assert pilot.app.prompt.text == "/hey" and client.ops == [ops.UserTurn(text="go")]


@pytest.mark.parametrize(
    ("reaches", "burst"),
    [("the pane", "ok yes"), ("the app", "sure, go ahead")],
)
async def test_a_burst_of_keys_at_a_focused_approval_is_typing_in_order(
    reaches: str, burst: str
) -> None:
    """After a pause the pane has the focus, and an answer key alone answers; but keys that
    arrive together (a stall, "sure, go ahead" in one read of the terminal) are typing, even
    one that reaches the pane before the prompt has taken the keys before it: nothing is
    answered, and the prompt gets them in the order typed. Backspace edits the draft there."""
    from textual import events

    clock = Clock()
    client = FakeClient(edit_session())
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        pane = await focused_after_a_pause(pilot, clock)
        target = pane if reaches == "the pane" else pilot.app
        for char in burst:
            target.post_message(events.Key("space" if char == " " else char, char))
        await pilot.pause()
        assert client.ops == [ops.UserTurn(text="go")] and pane.current is not None
        assert pilot.app.prompt.text == burst
        clock.now += GRACE_S + 1
        pane.focus()
        await pilot.press("backspace", "backspace")  # after a pause too: it edits the draft
        assert pilot.app.prompt.text == burst[:-2]
        assert client.ops == [ops.UserTurn(text="go")]


async def test_what_is_sent_while_a_command_runs_goes_after_it_in_order() -> None:
    """`/new` then a message at once: the message waits for the command (it went to the old
    session, or was lost with the prompt the switch replaced) and goes to the new one."""
    release, first, second, open_second = held_opening()
    async with app_for(first, open_client=open_second).run_test(size=(120, 40)) as pilot:
        await pilot.press(*"/new", "enter", *"go", "enter")  # no pause between them
        await pilot.press(*"/status", "enter")
        release.set()
        await until_switched(pilot, second, sent=True)
        assert first.ops == [] and second.ops == [ops.UserTurn(text="go")]


async def test_a_key_a_focused_block_has_no_use_for_is_typed_in_the_prompt() -> None:
    """`f` shows all of an edit's diff; on a block with no diff it is the first letter typed
    (it was swallowed: "fix it" came out "ix it")."""
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")
        read = pilot.app.query_one(ChatPane).query(ToolBlock).first()
        assert read.tool == "read" and not read.diff()
        read.focus()
        await pilot.press(*"fix it")
        await pilot.pause()
        assert pilot.app.prompt.text == "fix it"


async def test_a_message_sent_while_a_turn_runs_comes_back_with_the_cursor_after_it() -> None:
    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")  # the turn waits for its approval
        await type_and_send(pilot, "and then")
        await pilot.press(*" more")
        assert pilot.app.prompt.text == "and then more"


async def test_the_working_line_says_what_the_turn_does_and_goes_when_it_ends() -> None:
    """Issue 29, item 2: while a request was in flight nothing showed that the model worked.
    Now the line under the chat and the status line name the phase and its time, and both go
    (with the line's timer) when the turn ends."""
    from moot.tui.widgets.status_line import StatusLine
    from moot.tui.widgets.working import WorkingLine
    from test_tui_perf import running_timers

    run = Run().start("fix it")
    client = FakeClient(
        run.text("Looking.").tool("t1", "bash", {"command": "ls"}, "a.py").finish("done").events,
        autoplay=False,
    )
    clock = Clock()
    app = app_for(client, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        working = app.query_one(WorkingLine)
        status = app.query_one(StatusLine)
        assert not working.display
        client.play(until="turn_started")
        await pilot.pause()
        assert working.display
        assert "waiting for the model 0s" in str(working.render())
        assert "waiting for the model 0s" in str(status.render())
        clock.now += 7
        working._tick()
        assert "waiting for the model 7s" in str(working.render())
        client.play(until="tool_started")
        await pilot.pause()
        assert app.view.bridge is not None
        app.view.bridge.flush()
        await pilot.pause()
        assert "running bash 0s · turn 7s" in str(working.render())
        assert "running bash" in str(status.render())
        client.play()
        await pilot.pause()
        assert not working.display
        assert "running bash" not in str(status.render())
        assert working._timer is None
        assert [t for t in running_timers(app) if t in working._timers] == []


async def test_messages_sent_before_the_turn_shows_are_refused_and_come_back(
    tmp_path,
    private_moot_home,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """A real session: two Enters before `turn_started` reaches the app (the app counts a
    turn as running only then), and an `@server:uri` message, whose worker submits after an
    await. Fails on the old code: the second `submit` raised `RuntimeBusy` in the app's
    handler, and in the worker it closed the app."""
    import json

    from moot.client.local import SessionOptions, open_client
    from moot.frontend.history import PromptHistory
    from moot.tui.messages import PromptSubmitted

    monkeypatch.setenv("MOOT_SANDBOX", "none")
    workspace = tmp_path / "project"
    workspace.mkdir()
    script = tmp_path / "slow.json"
    script.write_text(json.dumps([{"text": "done", "delay": 600}]))  # runs until the app quits
    client = open_client(SessionOptions(cwd=workspace, model=f"scripted:{script}"))
    app = MootApp(client, AppOptions(history=PromptHistory(None), clock=Clock()))
    async with app.run_test(size=(120, 40)) as pilot:
        for text in ("one", "two", "see @docs:notes://a"):
            app.post_message(PromptSubmitted(text))  # handled before any event of the turn
        for _ in range(200):  # bounded: each pause lets the app take what is queued
            if len(app.prompt.text.splitlines()) == 2:
                break
            await pilot.pause()
        assert app.is_running and app.return_code is None
        assert sorted(app.prompt.text.splitlines()) == ["see @docs:notes://a", "two"]
        assert client.status().running
        refused = client.query.events(client.session_id, kinds=("op_refused",))
        assert [(e.op, e.reason) for e in refused] == [
            ("user_turn", "a turn is running: wait for it to end, or interrupt it")
        ] * len(refused)
        (started,) = client.query.events(client.session_id, kinds=("turn_started",))
        assert started.prompt == "one"


async def test_a_disk_that_fills_during_a_turn_is_told_once_and_the_app_goes_on(
    tmp_path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """A real full disk (a small tmpfs for MOOT_HOME) while a command's output is recorded:
    the app says why the turn stopped, in one line, and takes the next key. Fails on the old
    code: the turn looked as if it ran on for ever, with nothing said."""
    import json

    from moot.client.local import SessionOptions, open_client
    from moot.frontend.history import PromptHistory
    from moot.tui.messages import PromptSubmitted
    from small_disk import mounted_small_disk

    with mounted_small_disk(tmp_path / "home") as home:
        monkeypatch.setenv("MOOT_HOME", str(home))
        monkeypatch.setenv("MOOT_SANDBOX", "none")
        workspace = tmp_path / "project"
        workspace.mkdir()
        command = "yes 'a line of output' | head -c 20000000"
        script = tmp_path / "full.json"
        script.write_text(
            json.dumps([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}])
        )
        options = SessionOptions(
            cwd=workspace, model=f"scripted:{script}", permission_mode="bypassPermissions"
        )
        client = open_client(options)
        app = MootApp(client, AppOptions(history=PromptHistory(None), clock=Clock()))
        async with app.run_test(size=(120, 40)) as pilot:
            app.post_message(PromptSubmitted("print a lot"))
            chat = app.query_one(ChatPane)

            def notices() -> list[str]:
                return [str(b.render()) for b in chat.query(NoticeBlock)]

            for _ in range(2000):  # bounded: each pause lets the app take what is queued
                if any("the turn stopped" in n for n in notices()):
                    break
                await pilot.pause()
            said = [n for n in notices() if "the turn stopped" in n]
            assert len(said) == 1, notices()
            assert "the disk is full" in said[0] and f"moot --resume {client.session_id}" in said[0]
            assert not app.outbox.turn_running
            await type_and_send(pilot, "next")  # the app takes what is sent next
            assert app.is_running


@pytest.mark.parametrize("width", [60, 80, 120])
async def test_an_approvals_choices_wrap_whole_each_key_beside_its_words(width: int) -> None:
    """On a terminal too narrow for the choices on one line, a choice that would not fit
    starts the next line: no key is left at a line's end with its words on the next (`a` then
    "always: saves ..." below it, at 120 columns and narrower, issue 29)."""
    from textual.widgets import Static

    client = FakeClient(edit_session())
    async with app_for(client).run_test(size=(width, 40)) as pilot:
        await type_and_send(pilot, "go")
        pane = await shown(pilot)
        await pilot.pause()
        choices = pane.query_one(".choices", Static)
        lines = [strip.text.rstrip() for strip in choices.render_lines(choices.size.region)]
        lines = [line for line in lines if line]
        rule = "Edit(greeting.py)"
        for choice in (
            " y  yes, once",
            f" s  yes, this session ({rule})",
            f" a  always: saves {rule}",
            " n  no (then say why, or Enter)",
        ):
            assert any(choice in line for line in lines), lines  # whole, on one line
        assert all(len(line) <= choices.size.width for line in lines)


@pytest.mark.parametrize(
    ("key", "approved", "scope"),
    [("y", True, "once"), ("s", True, "session"), ("n", False, "once")],
)
async def test_a_network_question_shows_in_the_approval_pane_and_answers_with_its_op(
    key: str, approved: bool, scope: str
) -> None:
    clock = Clock()
    asked = ev.NetworkAccessRequested(request_id="net_1", host="pypi.org", port=443)
    client = FakeClient([*Run().start("install the deps").events, asked])
    async with app_for(client, clock).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "install the deps")
        pane = await shown(pilot)
        title = str(pane.query_one(".title").render())
        assert "a sandboxed command asks to reach pypi.org:443" in title
        assert "saves pypi.org in .moot/settings.local.json" in str(pane._choices(pane.current))
        clock.now += GRACE_S + 0.01
        pane.focus()
        await pilot.press(key)
        await pilot.pause()
        assert client.ops[1:] == [
            ops.AnswerNetworkAccess(request_id="net_1", approved=approved, scope=scope)
        ]

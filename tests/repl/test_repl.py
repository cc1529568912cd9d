"""The plain REPL in-process: keys through prompt_toolkit's pipe input, a `FakeClient` session
that records every op, the transcript printed into a buffer."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from moot.client import SetupError
from moot.commands.builtin import builtin_commands
from moot.commands.registry import CommandContext
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import SessionSummary
from moot.repl.question import GRACE_S
from moot.testing import FakeClient
from repl_harness import PLAIN, STYLED, running_repl
from tui_scripts import Interrupted, Run, edit_session, plan_session, traced_session

ENTER, ALT_ENTER, CTRL_J = "\r", "\x1b\r", "\n"
CTRL_C, CTRL_D, CTRL_R, SHIFT_TAB, UP = "\x03", "\x04", "\x12", "\x1b[Z", "\x1b[A"


async def test_a_message_is_sent_as_one_user_turn_and_its_answer_printed() -> None:
    async with running_repl(FakeClient(edit_session())) as repl:
        await repl.prompt_ready()
        repl.type("make greet say hello" + ENTER)

        await repl.printed("moot asks to run edit")

        assert [op.text for op in repl.ops(ops.UserTurn)] == ["make greet say hello"]
        assert "Let me look at the file first." in repl.text
        assert "> make greet say hello" not in repl.text  # typed at the prompt: shown there


async def test_keys_typed_before_an_approval_never_answer_it() -> None:
    """The `y` typed right after the message (before the question appeared) and the one in the
    grace period answer nothing; only a `y` after the grace period approves, once. The early
    `y` was part of the next message: it comes back in the prompt."""
    async with running_repl(FakeClient(edit_session())) as repl:
        await repl.prompt_ready()
        repl.type("make greet say hello" + ENTER + "y")

        await repl.printed("answer [y/s/a/n]: ")
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.type("y")
        await repl.printed("that answers nothing: press y, s, a or n, after a pause in typing")
        assert repl.ops(ops.Approve) == []

        repl.clock.advance(GRACE_S + 0.1)
        repl.type("y")
        await repl.until(lambda: repl.ops(ops.Approve), "the approval")

        [approve] = repl.ops(ops.Approve)
        assert (approve.tool_call_id, approve.call_id, approve.scope) == ("t2", "run_1", "once")
        await repl.printed("Done: greet now says hello.")
        await repl.prompt_ready()
        assert repl.repl._prompt is not None
        await repl.until(lambda: repl.repl._prompt.default_buffer.text == "y", "the draft back")


async def test_keys_waiting_unread_when_the_question_appears_are_dropped() -> None:
    """Type-ahead still in the input when the question is asked is thrown away."""
    client = FakeClient(edit_session(), autoplay=False)
    async with running_repl(client) as repl:
        await repl.prompt_ready()
        client.play(until="approval_requested")
        repl.clock.advance(GRACE_S + 1)  # were the keys read late, the grace would be over
        repl.type("yyyy")
        await repl.printed("answer [y/s/a/n]: ")
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")

        assert repl.ops(ops.Approve) == []


async def test_a_word_typed_at_an_approval_answers_nothing() -> None:
    """Long after the question appeared, the person types on as if at the prompt: `because`
    holds an `a` (always: a rule saved for good) and an `s`, but each comes within the grace
    interval of the key before it, so neither answers. The `y` after a pause does."""
    async with running_repl(FakeClient(edit_session())) as repl:
        await repl.prompt_ready()
        repl.type("go" + ENTER)
        await repl.printed("pause, then answer [y/s/a/n]: ")  # the line says how to answer
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 5)
        repl.type("because")
        await repl.printed("that answers nothing: press y, s, a or n, after a pause in typing")
        assert repl.ops(ops.Approve) == []

        repl.clock.advance(GRACE_S + 0.1)
        repl.type("y")
        await repl.until(lambda: repl.ops(ops.Approve), "the approval")

        assert repl.ops(ops.Approve) == [ops.Approve(tool_call_id="t2", call_id="run_1")]
        assert repl.text.count("that answers nothing") == 1  # told once, not per key


async def test_a_burst_that_starts_with_an_answer_key_answers_nothing() -> None:
    """After a pause, "sure, go ahead" arrives in one read (typed during a stall, or pasted):
    its `s` has the rest of the burst behind it, so it is typing, not an answer."""
    async with running_repl(FakeClient(edit_session())) as repl:
        await repl.prompt_ready()
        repl.type("go" + ENTER)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 5)
        repl.type("sure, go ahead")
        await repl.printed("that answers nothing: press y, s, a or n, after a pause in typing")
        assert repl.ops(ops.Approve) == []


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("y", ops.Approve(tool_call_id="t2", call_id="run_1")),
        (
            "s",
            ops.Approve(
                tool_call_id="t2", call_id="run_1", scope="session", rule="Edit(greeting.py)"
            ),
        ),
        (
            "a",
            ops.Approve(
                tool_call_id="t2", call_id="run_1", scope="always", rule="Edit(greeting.py)"
            ),
        ),
        ("n", ops.Deny(tool_call_id="t2", call_id="run_1", feedback="use a template")),
    ],
)
async def test_each_answer_key_sends_its_op(key: str, expected: ops.Op) -> None:
    async with running_repl(FakeClient(edit_session())) as repl:
        await repl.prompt_ready()
        repl.type("go" + ENTER)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 0.1)
        repl.type(key)
        if key == "n":
            await repl.until(lambda: (repl.repl.asking or "").startswith("why not?"), "why")
            repl.type("use a template" + ENTER)
        await repl.until(lambda: repl.ops(type(expected)), "the answer")

        assert repl.ops(type(expected)) == [expected]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("y", ops.Approve(tool_call_id="p1", call_id="run_1", mode="default")),
        ("a", ops.Approve(tool_call_id="p1", call_id="run_1", mode="acceptEdits")),
        ("n", ops.Deny(tool_call_id="p1", call_id="run_1", feedback="smaller steps")),
    ],
)
async def test_a_plan_approval_offers_what_the_app_offers(key: str, expected: ops.Op) -> None:
    async with running_repl(FakeClient(plan_session())) as repl:
        await repl.prompt_ready()
        repl.type("plan it" + ENTER)
        await repl.printed("answer [y/a/n]: ")
        assert "approve, ask before each edit" in repl.text
        assert "approve, accept edits" in repl.text
        assert "revise: say what to change" in repl.text
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 0.1)
        repl.type("s")  # `s` is no choice for a plan
        await repl.printed("that answers nothing: press y, a or n")
        repl.clock.advance(GRACE_S + 0.1)  # a pause after it
        repl.type(key)
        if key == "n":
            await repl.until(lambda: (repl.repl.asking or "").startswith("why not?"), "why")
            repl.type("smaller steps" + ENTER)
        await repl.until(lambda: repl.ops(type(expected)), "the answer")

        assert [op for op in repl.client.ops if isinstance(op, ops.Approve | ops.Deny)] == [
            expected
        ]


async def test_ctrl_c_in_a_running_turn_interrupts_it_and_shift_tab_cycles_the_mode() -> None:
    client = FakeClient(edit_session(), autoplay=False)
    async with running_repl(client) as repl:
        await repl.prompt_ready()
        client.play(count=2)  # the turn has started and streams
        await repl.until(lambda: repl.repl.session.turn_running, "the turn running")
        repl.type(SHIFT_TAB)
        await repl.until(lambda: repl.ops(ops.SetMode), "the mode switch")
        repl.type(CTRL_C)
        await repl.until(lambda: repl.ops(ops.Interrupt), "the interrupt")

        assert repl.ops(ops.SetMode) == [ops.SetMode(mode="acceptEdits")]
        assert len(repl.ops(ops.Interrupt)) == 1
        assert not repl.task.done()  # ctrl+c in a turn never quits


TAB, DOWN = "\t", "\x1b[B"


def _listed(buffer: Any, text: str) -> bool:
    """Whether the prompt's completion list offers `text`."""
    state = buffer.complete_state
    return state is not None and any(c.text == text for c in state.completions)


@pytest.mark.parametrize("pick", [TAB, DOWN], ids=["tab", "down"])
async def test_a_completion_taken_then_one_enter_runs_the_command(pick: str) -> None:
    """As in the app: Tab takes the highlighted completion and closes the list, and Enter on a
    command picked from the list (with Tab or the arrows) runs it; one Enter, not two (the
    first used to close the list only, so the person saw nothing happen)."""
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        repl.type("/stat")
        # The list is made as completions come in (a thread's): a key before the first is
        # not a key on the list.
        await repl.until(lambda: _listed(buffer, "/status"), "the completion list")
        repl.type(pick)
        await repl.until(lambda: buffer.text == "/status", "/status taken")
        if pick == TAB:
            await repl.until(lambda: buffer.complete_state is None, "the list closed")
        repl.type(ENTER)
        await repl.printed("sandbox  bubblewrap")


async def test_tab_then_enter_sends_a_message_with_the_path_taken() -> None:
    """`@gre` Tab takes `@greeting.py` and closes the list; Enter then sends the message."""
    async with running_repl(FakeClient([], files=["greeting.py", "README.md"])) as repl:
        await repl.prompt_ready()
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        repl.type("read @gre")
        await repl.until(lambda: _listed(buffer, "@greeting.py"), "the completion list")
        repl.type(TAB)
        await repl.until(lambda: buffer.complete_state is None, "the list closed")
        repl.type(ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the message sent")
        assert repl.ops(ops.UserTurn)[0].text == "read @greeting.py"


async def test_a_slash_command_runs_and_never_reaches_the_model() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("/status" + ENTER)
        await repl.printed("sandbox  bubblewrap")
        repl.type("/panes trace" + ENTER)  # the app's: the REPL says so
        await repl.printed("the plain REPL has no side panes: /panes is for the app")
        repl.type("/nope" + ENTER)
        await repl.printed("no command /nope")
        repl.type("/help" + ENTER)
        await repl.printed("alt+enter, ctrl+j")

        assert "/status" in repl.text and "The session: model, mode, sandbox, tools" in repl.text
        assert repl.ops(ops.UserTurn) == []


async def test_theme_lists_the_apps_themes_numbered_and_sets_the_one_it_starts_with(
    private_moot_home: Path,
) -> None:
    """The REPL draws no theme, but `/theme` is the app's picker as a numbered list: the
    shipped themes and the person's own; the one chosen is what the app starts with next
    (its `tui.json`), and the REPL says its own colours stay the terminal's."""
    themes = private_moot_home / "config" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "#ff8800"\n')
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("/theme dark" + ENTER)
        await repl.printed("no theme 'dark'; one of: mine, moot-dark, moot-high-contrast")
        repl.type("/theme" + ENTER)
        await repl.until(lambda: repl.repl.asking, "the picker's question")
        for line in ("  1. mine", "  2. moot-dark", "  3. moot-high-contrast", "  4. moot-light"):
            assert line in repl.text
        repl.type("4" + ENTER)
        await repl.printed("theme: moot-light, for the app (moot starts with it)")

        assert "the plain REPL keeps the terminal's own colours" in repl.text
    prefs = json.loads((private_moot_home / "config" / "tui.json").read_text())
    assert prefs["theme"] == "moot-light"


async def test_a_message_while_a_turn_runs_is_kept_for_later() -> None:
    client = FakeClient(edit_session(), autoplay=False)
    async with running_repl(client) as repl:
        await repl.prompt_ready()
        client.play(count=1)
        await repl.until(lambda: repl.repl.session.turn_running, "the turn running")
        repl.type("and also this" + ENTER)

        await repl.printed("a turn is running")
        await repl.prompt_ready()
        assert repl.repl._prompt is not None
        assert repl.repl._prompt.default_buffer.text == "and also this"
        assert repl.ops(ops.UserTurn) == []


async def test_ctrl_c_twice_at_an_empty_prompt_quits() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("draft" + CTRL_C)  # clears the line: no step towards quitting
        await repl.until(lambda: repl.repl._prompt.default_buffer.text == "", "a cleared line")
        repl.type(CTRL_C)
        await repl.printed("press ctrl+c again to quit")
        repl.type(CTRL_C)
        await repl.until(lambda: repl.task.done(), "the REPL quitting")

        assert repl.task.result() == 0
        assert repl.client.closed


async def test_ctrl_d_at_an_empty_prompt_quits() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type(CTRL_D)
        await repl.until(lambda: repl.task.done(), "the REPL quitting")

        assert repl.client.closed


async def test_alt_enter_and_ctrl_j_add_lines_and_a_paste_is_one_message() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("one" + ALT_ENTER + "two" + CTRL_J + "three" + ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the first message")
        await repl.prompt_ready()
        repl.repl.session.turn_running = False  # the fake has no script: no turn really started
        repl.type("\x1b[200~pasted\rblock\r\x1b[201~" + ENTER)
        await repl.until(lambda: len(repl.ops(ops.UserTurn)) == 2, "the pasted message")

        assert [op.text for op in repl.ops(ops.UserTurn)] == ["one\ntwo\nthree", "pasted\nblock\n"]


async def test_the_history_is_the_apps_file_and_ctrl_r_searches_it(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text(
        "".join(json.dumps(m) + "\n" for m in ["fix the flaky test", "explain\nthe build"])
    )
    async with running_repl(FakeClient([]), history_path=history) as repl:
        await repl.prompt_ready()
        buffer = repl.repl._prompt.default_buffer
        # The file is read in a thread: press up until it has been (each try is bounded).
        while not buffer.text:
            repl.type(UP)
            with contextlib.suppress(AssertionError):
                await repl.until(lambda: buffer.text, "the history read", timeout=0.2)
        assert buffer.text == "explain\nthe build"  # the newest first
        repl.type(CTRL_R + "flaky" + ENTER)  # Enter takes the search's result
        await repl.until(
            lambda: repl.repl._prompt.default_buffer.text == "fix the flaky test",
            "the search result",
        )
        repl.type(ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the message")

        assert repl.ops(ops.UserTurn)[0].text == "fix the flaky test"
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    assert lines == ["fix the flaky test", "explain\nthe build", "fix the flaky test"]


async def test_a_command_that_picks_takes_a_number_or_a_name() -> None:
    registry = builtin_commands()

    @registry.command("choose", "Pick a session")
    async def choose(context: CommandContext, args: str) -> None:
        choices = [("ses_1", "fix the build"), ("ses_2", "write the docs")]
        context.say(f"picked {await context.pick('session', choices)}")

    async with running_repl(FakeClient([]), registry=registry) as repl:
        for typed, expected in (("2", "ses_2"), ("ses_1", "ses_1"), ("", "None")):
            await repl.prompt_ready()
            repl.type("/choose" + ENTER)
            await repl.until(lambda: repl.repl.asking, "the pick's question")
            assert "  2. write the docs" in repl.text
            repl.type(typed + ENTER)
            await repl.printed(f"picked {expected}")


async def test_words_typed_at_a_picker_search_it_and_it_asks_again_with_the_matches() -> None:
    """`/resume`'s picker (the registry's, as every picker's) takes words that are no number
    or name as a search of titles and ids, any case: the matches come back numbered, and a
    number picks from them. Words that match nothing say so and ask again."""
    when = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    others = [
        SessionSummary(sid, title, "/workspace", when, when, 2, 0.01, "completed", 9)
        for sid, title in [
            ("ses_a", "fix the parser"),
            ("ses_b", "Renamed: write the docs"),
            ("ses_c", "renamed again"),
        ]
    ]
    opened: list[str] = []

    def open_session(session_id: str) -> FakeClient:
        opened.append(session_id)
        return FakeClient([], session_id=session_id)

    async with running_repl(FakeClient([], sessions=others), open_session=open_session) as repl:
        await repl.prompt_ready()
        repl.type("/resume" + ENTER)
        await repl.until(lambda: repl.repl.asking, "the picker's question")
        assert "  3. renamed again" in repl.text
        repl.type("RENAMED" + ENTER)
        await repl.printed("resume which session, matching 'RENAMED':")
        matches = repl.text.rsplit("matching 'RENAMED':", 1)[1]
        assert "  1. Renamed: write the docs" in matches and "  2. renamed again" in matches
        assert "fix the parser" not in matches
        repl.type("nothing like it" + ENTER)
        await repl.printed("nothing in the list matches 'nothing like it'")
        repl.type("2" + ENTER)  # the second of the matches
        await repl.printed("session ses_c")

        assert opened == ["ses_c"]


async def test_the_plain_look_prints_whole_lines_without_escapes() -> None:
    async with running_repl(FakeClient(edit_session()), look=PLAIN) as repl:
        await repl.prompt_ready()
        repl.type("go" + ENTER)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 0.1)
        repl.type("y")
        await repl.printed("Done: `greet` now says **hello**.")  # markdown left as written

        assert "\x1b" not in repl.out.getvalue()
        assert "tool edit greeting.py: ok" in repl.text


async def test_a_task_given_at_start_is_sent_and_echoed() -> None:
    async with running_repl(FakeClient(edit_session()), task="make greet say hello") as repl:
        await repl.printed("> make greet say hello")

        assert [op.text for op in repl.ops(ops.UserTurn)] == ["make greet say hello"]


async def test_new_starts_another_session() -> None:
    second = FakeClient([], session_id="ses_second")
    first = FakeClient([])
    async with running_repl(first, open_client=lambda: second) as repl:
        await repl.prompt_ready()
        repl.type("/new" + ENTER)
        await repl.printed("session ses_second")

        assert first.closed and repl.repl.client is second


async def test_resume_goes_on_with_a_stored_session_and_shows_its_end() -> None:
    stored = FakeClient(edit_session(), session_id="ses_stored")
    stored.submit(ops.UserTurn(text="make greet say hello"))
    first = FakeClient([])
    opened: list[str] = []

    def open_session(session_id: str) -> FakeClient:
        opened.append(session_id)
        return stored

    async with running_repl(first, open_session=open_session) as repl:
        await repl.prompt_ready()
        await repl.repl.commands.open_session("ses_stored")
        await repl.printed("session ses_stored")
        await repl.printed("make greet say hello")  # its history, from the store

        assert opened == ["ses_stored"] and first.closed and repl.repl.client is stored


def answered(prompt: str) -> list[ev.Event]:
    run = Run().start(prompt)
    return run.text("greeting changed").responded("greeting changed").finish("done").events


async def test_after_a_fork_the_history_shows_the_prompts_typed_here_before_it() -> None:
    """A fork copies its events' submission ids: the turn typed here before `/fork` is the
    new session's history, and prints with its prompt (the REPL forgets, at a switch, which
    turns it echoed itself)."""
    first = FakeClient(answered("change the greeting"))
    fork = FakeClient(answered("change the greeting"), session_id="ses_fake_fork1")
    fork.submit(ops.UserTurn(text="change the greeting"))  # the same submission id, `sub_1`
    async with running_repl(first, open_session=lambda session_id: fork) as repl:
        await repl.prompt_ready()
        repl.type("change the greeting" + ENTER)
        await repl.printed("greeting changed")
        assert "> change the greeting" not in repl.text  # typed at the prompt: shown there
        await repl.prompt_ready()
        repl.type("/fork" + ENTER)
        await repl.printed("session ses_fake_fork1")

        after = repl.text.split("session ses_fake_fork1", 1)[1]
        assert "> change the greeting" in after and "greeting changed" in after


async def test_the_rewind_list_numbers_each_turn_once() -> None:
    """The REPL numbers the list; the label names the turn's number after its words."""
    first = FakeClient(answered("change the greeting"))
    async with running_repl(first) as repl:
        await repl.prompt_ready()
        repl.type("change the greeting" + ENTER)
        await repl.printed("greeting changed")
        await repl.prompt_ready()
        repl.type("/rewind" + ENTER)
        await repl.until(lambda: repl.repl.asking, "the picker's question")

        assert "  1. change the greeting  ·  turn 1  ·  " in repl.text
        assert "1. 1." not in repl.text


def test_approval_requests_carry_what_the_question_needs() -> None:
    """The REPL keys its questions by (agent call, tool call), as the contract does."""
    request = plan_session()[-1]
    assert isinstance(request, ev.ApprovalRequested)
    assert (request.call_id, request.tool_call_id) == ("run_1", "p1")


async def test_a_resumed_session_shows_its_end_and_what_it_cost() -> None:
    client = FakeClient(edit_session())
    client.submit(ops.UserTurn(text="make greet say hello"))
    client.submit(ops.Approve(tool_call_id="t2", call_id="run_1"))
    async with running_repl(client, show_history=True) as repl:
        await repl.prompt_ready()
        await repl.printed("2 model turns")

        assert "> make greet say hello" in repl.text
        assert "Done: greet now says hello." in repl.text
        assert repl.repl.facts.cost_usd == pytest.approx(0.0042)
        assert repl.repl._toolbar_line().strip().endswith("$0.0042")


async def test_a_resumed_session_shows_its_messages_refusals_and_sittings() -> None:
    """As live: the messages between agents, a refused op, where a sitting resumed it."""
    refused = ev.OpRefused(
        session_id="ses_test", op="user_turn", reason="no agent 'ghost' in this run"
    )
    sitting = ev.SessionResumed(
        session_id="ses_test", model="anthropic/claude-haiku-4-5", mode="plan", agents=("lead",)
    )
    client = FakeClient([*traced_session(), refused, sitting])
    client.play()
    async with running_repl(client, show_history=True) as repl:
        await repl.prompt_ready()
        await repl.printed("message reviewer → lead: one moment")
        await repl.printed("user_turn: no agent 'ghost' in this run")
        await repl.printed("resumed · anthropic/claude-haiku-4-5 · plan")


async def test_a_session_that_cannot_open_ends_the_repl_with_its_reason() -> None:
    def refuse() -> FakeClient:
        raise SetupError("no model: pass --model provider/model")

    async with running_repl(FakeClient([]), connect=refuse) as repl:
        await repl.until(lambda: repl.task.done(), "the REPL ending")

        assert repl.task.result() == 2
        assert repl.repl.error == "no model: pass --model provider/model"


async def test_an_approvals_choices_never_print_the_models_escapes() -> None:
    """The rule an answer would keep is made of the model's arguments."""
    run = Run().start("go")
    run.add(
        ev.ApprovalRequested(
            **run._ids(),
            tool_call_id="t1",
            tool="bash",
            arguments={"command": "ls"},
            preview="ls",
            suggested_rules=("Bash(ls\x1b]52;c;cm0gLXJm\x07\x1b[2J)",),
        )
    )
    async with running_repl(FakeClient(run.events)) as repl:
        await repl.prompt_ready()
        repl.type("go" + ENTER)
        await repl.printed("answer [y/s/a/n]: ")

        assert "yes, this session (Bash(ls))" in repl.text  # the sequences gone whole
        assert "\x1b]" not in repl.out.getvalue() and "\x1b[2J" not in repl.out.getvalue()


async def test_the_toolbar_follows_a_model_switch() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("/model openai/gpt-5" + ENTER)
        await repl.until(lambda: repl.repl.facts.model == "openai/gpt-5", "the new model shown")
        assert "openai/gpt-5" in repl.repl._toolbar_line()


async def test_ctrl_c_drops_what_a_shell_command_offered() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.repl.commands.offer("$ ls\nREADME.md", "!ls")
        await repl.printed("goes with your next message")
        repl.type(CTRL_C)
        await repl.printed("dropped what !command offered")
        repl.type("hello" + ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the message")

        assert [op.text for op in repl.ops(ops.UserTurn)] == ["hello"]
        assert not repl.task.done()  # that ctrl+c was no step towards quitting


async def test_a_session_left_mid_turn_goes_on_with_that_turn_when_it_opens() -> None:
    client = Interrupted(edit_session())
    async with running_repl(client) as repl:
        await repl.printed("moot asks to run edit")  # the turn went on and asks again
        assert client.ops == [ops.ResumeRun()]


async def test_a_command_the_session_refuses_is_told_once() -> None:
    """The refusal is the session's `op_refused`, which the transcript prints; the command
    does not say it again (it did: two lines for one refusal)."""
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.type("/msg nobody hi" + ENTER)
        await repl.printed("send_message: no running agent 'nobody'")  # the event's line
        await repl.prompt_ready()
        assert repl.text.count("no running agent 'nobody'") == 1


async def test_the_toolbar_and_the_live_area_say_what_the_turn_does() -> None:
    """Issue 29, item 2: the REPL showed nothing while the model worked. The live area's last
    line and the toolbar name the phase and its time; the plain look says once that the turn is
    under way (it redraws nothing)."""
    run = Run().start("fix it")
    events = run.tool("t1", "bash", {"command": "ls"}, "a.py").finish("done").events
    client = FakeClient(events, autoplay=False)
    async with running_repl(client) as repl:
        await repl.prompt_ready()
        client.play(until="turn_started")
        await repl.until(lambda: repl.repl.progress.phase, "the turn's start")
        repl.clock.advance(3)
        repl.repl._tick()
        assert "… waiting for the model 3s" in repl.repl._live[-1]
        assert "waiting for the model 3s: ctrl+c stops it" in repl.repl._toolbar_line()
        client.play(until="tool_started")
        await repl.until(lambda: repl.repl.progress.phase == "running bash", "the tool")
        repl.repl._tick()
        assert "running bash 0s · turn 3s" in repl.repl._live[-1]
        client.play()
        await repl.until(lambda: repl.repl.progress.phase is None, "the turn's end")
        repl.repl._tick()
        assert not any("waiting for" in line for line in repl.repl._live)
        assert "ctrl+c" not in repl.repl._toolbar_line()

    plain = FakeClient(Run().start("go").finish("done").events, autoplay=False)
    async with running_repl(plain, look=PLAIN) as repl:
        await repl.prompt_ready()
        plain.play()
        await repl.printed("waiting for the model… (ctrl+c stops it)")


@pytest.mark.parametrize("look", ["styled", "plain"])
async def test_a_message_the_session_refuses_comes_back_and_nothing_waits_for_it(
    look: str,
) -> None:
    """The session answers a turn it cannot take with `op_refused` (one a crash left open,
    one that runs already): the REPL prints why, waits for no turn and gives the message
    back. Fails on the old code: it waited for a `turn_finished` that never came (the plain
    look hung; the styled one refused every later message itself)."""
    client = FakeClient([], autoplay=False)
    async with running_repl(client, look=PLAIN if look == "plain" else STYLED) as repl:
        await repl.prompt_ready()
        repl.type("hello there" + ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the turn submitted")
        client.emit(ev.OpRefused(op="user_turn", reason="a turn is running", submission_id="sub_1"))

        await repl.printed("user_turn: a turn is running")
        await repl.prompt_ready()
        assert not repl.repl.session.turn_running
        assert repl.repl._prompt is not None
        await repl.until(
            lambda: repl.repl._prompt.default_buffer.text == "hello there", "the message back"
        )


async def test_test_offers_its_failures_and_enter_alone_sends_them_to_the_model() -> None:
    failures = "The project's test run failed. Please fix it:\n\nFAILED tests/test_x.py::test_a"
    canned = {"content": "pytest: exit 1; 0 passed, 1 failed", "display": {"failures": failures}}
    async with running_repl(FakeClient([], tool_results={"test": canned})) as repl:
        await repl.prompt_ready()
        repl.type("/test" + ENTER)
        await repl.printed("[output of /test] goes with your next message (Enter alone sends it")
        assert "pytest: exit 1; 0 passed, 1 failed" in repl.text
        repl.type(ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the failures sent")

        [sent] = repl.ops(ops.UserTurn)
        assert sent.text.startswith(failures)


@pytest.mark.parametrize(
    ("key", "approved", "scope"),
    [("y", True, "once"), ("s", True, "session"), ("n", False, "once")],
)
async def test_a_network_question_is_asked_as_an_approval(
    key: str, approved: bool, scope: str
) -> None:
    """A sandboxed command's connection to a host on neither `sandbox.network` list: the REPL
    asks it as it asks an approval (after a pause in typing), and answers with the op."""
    run = Run().start("install the deps")
    asked = ev.NetworkAccessRequested(request_id="net_1", host="pypi.org", port=443)
    client = FakeClient([*run.events, asked], autoplay=False)
    async with running_repl(client) as repl:
        await repl.prompt_ready()
        client.play(until="network_access_requested")
        await repl.printed("a sandboxed command asks to reach pypi.org:443")
        await repl.printed("always: saves pypi.org in .moot/settings.local.json")
        await repl.printed("answer [y/s/a/n]: ")
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 0.1)
        repl.type(key)
        await repl.until(lambda: repl.ops(ops.AnswerNetworkAccess), "the answer")
    [answer] = repl.ops(ops.AnswerNetworkAccess)
    assert (answer.request_id, answer.approved, answer.scope) == ("net_1", approved, scope)
    assert repl.ops(ops.Approve) == repl.ops(ops.Deny) == []

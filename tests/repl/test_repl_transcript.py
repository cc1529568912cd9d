"""The plain REPL's transcript: events (the app's hand-written scripts, `tui_scripts.py`) as the
lines printed into scrollback, and the live part that is never printed."""

from __future__ import annotations

import re

from moot.protocol import events as ev
from moot.repl.stream import AnswerStream, Piece
from moot.repl.transcript import Transcript
from tui_scripts import DIFF, T0, Run, edit_session, peer_session, plan_session

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


class Screen:
    """What a transcript printed, and the transcript itself."""

    def __init__(self, *, plain: bool = True, width: int = 80) -> None:
        self.chunks: list[str] = []
        self.now = 0.0
        self.transcript = Transcript(
            self.chunks.append, plain=plain, width=lambda: width, clock=lambda: self.now
        )

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    @property
    def lines(self) -> list[str]:
        return ESCAPE.sub("", self.text).splitlines()

    def play(self, events: list[ev.Event]) -> Screen:
        for event in events:
            if isinstance(event, ev.ApprovalRequested):
                self.transcript.approval(event)
            self.transcript.take(event)
        return self


def test_an_edit_session_prints_text_tool_lines_the_preview_once_and_what_it_cost() -> None:
    screen = Screen().play(edit_session())

    assert screen.lines == [
        "> make greet say hello",
        "Let me look at the file first.",
        "tool read greeting.py: ok (0.0s) 1 def greet(name): (+1 lines)",
        "moot asks to run edit",
        "edits a file",
        *["  " + line for line in DIFF.rstrip("\n").split("\n")],
        "allowed by you",
        # The diff was shown in the approval: it is not printed again under the edit.
        "tool edit greeting.py: ok (0.0s) Edited greeting.py: 1 replacement, at line 2.",
        "Done: `greet` now says **hello**.",
        "2 model turns · 1,280 tokens · $0.0042 · 2.3s",
    ]
    assert "\x1b" not in screen.text  # the plain look prints no escape at all


def test_the_styled_look_colours_the_diff_and_renders_markdown() -> None:
    screen = Screen(plain=False).play(edit_session())

    assert '\x1b[31m-    return "hi " + name\x1b[0m' in screen.text
    assert '\x1b[32m+    return f"hello, {name}!"\x1b[0m' in screen.text
    assert "Done: greet now says hello." in screen.lines  # markdown rendered, not shown raw
    assert "✓ read greeting.py  0.0s  1 def greet(name): (+1 lines)" in screen.lines


def test_a_diff_not_shown_in_an_approval_is_printed_under_its_tool() -> None:
    run = Run().start("what changed?")
    run.tool("t1", "git_diff", {}, DIFF, display={"diff": DIFF})
    screen = Screen().play(run.finish("ok").events)

    at = screen.lines.index("tool git_diff: ok (0.0s) --- a/greeting.py (+5 lines)")
    assert screen.lines[at + 1 : at + 4] == [
        "  --- a/greeting.py",
        "  +++ b/greeting.py",
        "  @@ -1,2 +1,2 @@",
    ]


def test_peers_are_indented_under_their_caller() -> None:
    screen = Screen().play(peer_session())

    lines = screen.lines
    at = lines.index("  lead -> reviewer: reviewer: go")
    assert lines[at + 1 : at + 4] == [
        "  tool git_diff: ok (0.0s) ok",
        "  reviewer says fine.",
        "  <- reviewer returned",
    ]
    assert lines[at + 4] == "tool call_agent reviewer: ok (0.0s) fine"
    assert lines[-2] == "Both peers agree."


def test_peers_answering_at_once_are_named_whenever_the_speaker_changes() -> None:
    run = Run(agent="lead").start("ask both")
    for peer in ("reviewer", "tester"):
        run.add(
            ev.AgentCalled(
                **run._ids(f"call_{peer}", peer, "run_1"), caller="lead", message="go", depth=1
            )
        )
    for peer, text in (("reviewer", "r1\n"), ("tester", "t1\n"), ("reviewer", "r2\n")):
        run.add(ev.TextDelta(**run._ids(f"call_{peer}", peer, "run_1"), text=text))
    screen = Screen().play(run.events)

    assert screen.lines[-6:] == ["  reviewer:", "  r1", "  tester:", "  t1", "  reviewer:", "  r2"]


def test_a_plan_is_previewed_as_markdown_in_the_styled_look() -> None:
    screen = Screen(plain=False).play(plan_session())

    assert "moot asks approval of a plan" in screen.lines
    assert "## Plan" not in screen.text  # rendered, not raw
    assert any("Change greet to say hello." in line for line in screen.lines)


def test_only_finished_lines_print_and_the_rest_is_live() -> None:
    screen = Screen()
    run = Run().start("go")
    screen.play(run.events)
    ids = {"run_id": "run_1", "call_id": "run_1", "agent": "moot", "ts": T0}

    screen.transcript.take(ev.TextDelta(**ids, text="first line\nsecond li"))

    assert screen.lines[-1] == "first line"
    assert screen.transcript.live() == ["second li"]

    screen.transcript.take(ev.TextDelta(**ids, text="ne\n```py\nx = 1\n"))

    assert screen.lines[-1] == "second line"  # the fence is held until it closes
    assert screen.transcript.live() == ["```py", "x = 1"]

    screen.transcript.take(ev.TextDelta(**ids, text="```\n"))

    assert screen.lines[-3:] == ["```py", "x = 1", "```"]
    assert screen.transcript.live() == []


def test_a_running_tool_is_live_until_it_finishes() -> None:
    screen = Screen()
    run = Run().start("test it")
    run.add(
        ev.ToolStarted(
            **run._ids(), tool_call_id="t1", tool="bash", arguments={"command": "pytest -q"}
        )
    )
    run.add(ev.ToolOutput(**run._ids(), tool_call_id="t1", text="collected 3 items\n"))
    screen.play(run.events)
    screen.now = 4.2

    assert screen.transcript.live() == ["running bash pytest -q  4s  collected 3 items"]

    screen.play(
        [
            ev.ToolFinished(
                **run._ids(), tool_call_id="t1", tool="bash", content="3 passed", duration_ms=4200
            )
        ]
    )
    assert screen.transcript.live() == []
    assert screen.lines[-1] == "tool bash pytest -q: ok (4.2s) 3 passed"


def test_escape_sequences_from_the_model_and_tools_never_reach_the_terminal() -> None:
    """A tool's output (or a model's text) could clear the screen, move the cursor, retitle the
    terminal or write the clipboard (OSC 52) if printed as it is."""
    hostile = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;cm0gLXJmIH4=\x07\r\x9b31m"
    run = Run().start("go" + hostile)
    run.text(f"look{hostile}\n", pieces=2).responded(f"look{hostile}\n")
    run.tool("t1", "bash", {"command": "cat x"}, f"out{hostile}")
    run.tool("t2", f"made_up{hostile}", {"path": hostile}, "no such tool", is_error=True)
    run.add(
        ev.ApprovalRequested(
            **run._ids(),
            tool_call_id="t3",
            tool=f"bash{hostile}",
            arguments={"command": hostile},
            reason=hostile,
        )
    )
    for plain in (True, False):
        screen = Screen(plain=plain).play(run.finish("done").events)
        screen.transcript.say(f"a title{hostile}")

        printed = ESCAPE.sub("", screen.text)  # moot's own colours are the only escapes left
        assert "\x1b" not in printed and "\r" not in printed and "\x9b" not in printed
        assert "look" in printed and "out" in printed


def test_history_from_the_store_prints_whole_answers() -> None:
    """A resumed session's events come without deltas: `model_responded` holds the text."""
    run = Run().start("hi")
    run.responded("line one\nline two")
    screen = Screen().play(run.finish("line one\nline two").events)

    assert screen.lines[1:3] == ["line one", "line two"]


def test_an_answer_stream_cuts_lines_and_holds_fences_and_tables() -> None:
    stream = AnswerStream()
    text = "a **b**\n\n```py\nx=1\n```\n| a | b |\n|---|---|\n| 1 | 2 |\nafter\nlast"
    pieces = [p for i in range(0, len(text), 3) for p in stream.feed(text[i : i + 3])]
    pieces += stream.finish()

    assert pieces == [
        Piece("a **b**"),
        Piece(""),
        Piece("```py\nx=1\n```", block=True),
        Piece("| a | b |\n|---|---|\n| 1 | 2 |", block=True),
        Piece("after"),
        Piece("last"),
    ]


def test_a_compaction_is_told_in_one_line() -> None:
    run = edit_session()
    started = next(e for e in run if isinstance(e, ev.TurnStarted))
    compacted = ev.ContextCompacted(
        run_id=started.run_id, call_id=started.call_id, agent=started.agent, trigger="auto",
        replaced=12, summary="## Task", tokens_before=130_000, tokens_after=40_000,
    )  # fmt: skip
    screen = Screen().play([started, compacted])
    assert screen.lines[-1] == (
        "context compacted (auto): 12 older messages summarised; ~130,000 → ~40,000 tokens"
    )


def test_background_calls_and_messages_between_peers_are_printed() -> None:
    run = Run(agent="lead").start("ask")
    run.add(
        ev.AgentCalled(
            **run._ids("call_h", "helper", "run_1"),
            caller="lead",
            message="dig",
            depth=1,
            background=True,
        )
    )
    run.add(
        ev.MessageSent(
            **run._ids("call_h", "helper", "run_1"),
            sender="helper",
            to_call_id=None,
            to_agent="user",
            text="halfway",
        )
    )
    run.add(
        ev.WaitingForMessage(
            **run._ids("call_h", "helper", "run_1"), timeout_s=30, tool_call_id="tc_1"
        )
    )
    screen = Screen().play(run.events)

    assert screen.lines[-3:] == [
        "  lead -> helper (background): dig",
        "  message helper -> user: halfway",
        "  helper is waiting for a message, up to 30 s (/msg AGENT TEXT)",
    ]


def test_a_refused_call_has_its_line_with_who_refused_it_and_why() -> None:
    """A refused call never runs, so no tool line would say it was asked for: the refusal is
    its line, with its tool and key argument, in both looks."""
    events = edit_session()
    decided = next(e for e in events if isinstance(e, ev.ApprovalDecided))
    refused = ev.ApprovalDecided(
        session_id=decided.session_id,
        run_id=decided.run_id,
        call_id=decided.call_id,
        agent=decided.agent,
        tool_call_id=decided.tool_call_id,
        approved=False,
        by="user",
        feedback="use a template",
    )
    upto = events.index(decided)
    plain = Screen().play([*events[:upto], refused])
    assert plain.lines[-1] == "tool edit greeting.py: refused by you: use a template"
    styled = Screen(plain=False).play([*events[:upto], refused])
    assert styled.lines[-1] == "✗ edit greeting.py  refused by you: use a template"


def test_the_errors_a_language_server_found_after_an_edit_are_printed_under_it() -> None:
    note = "[pyright: 1 new error in greeting.py after this change]\ngreeting.py:2:5: error: bad"
    run = Run().start("edit it")
    run.tool(
        "e1",
        "edit",
        {"path": "greeting.py"},
        f"Edited.\n{note}",
        display={"diff": DIFF, "diagnostics": note},
    )
    screen = Screen().play(run.finish("ok").events)

    at = screen.lines.index("  [pyright: 1 new error in greeting.py after this change]")
    assert screen.lines[at + 1] == "  greeting.py:2:5: error: bad"
    assert screen.lines[at - 1] == "  " + DIFF.rstrip("\n").split("\n")[-1]  # under the diff

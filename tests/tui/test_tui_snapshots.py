"""Pictures of the app at fixed sizes (pytest-textual-snapshot; `pytest --snapshot-update`
writes them). Each docstring says what a reviewer should see in the picture."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from moot.frontend.history import PromptHistory
from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.widgets.approval import ApprovalPane
from tui_apps import send
from tui_scripts import edit_session, peer_session, plan_session


def app_for(script: list, **kw: object) -> MootApp:
    return MootApp(FakeClient(script), AppOptions(history=PromptHistory(None), **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_the_empty_app(snap_compare, size: tuple[int, int]) -> None:
    """A new session's chat holds only the welcome (the workspace, model and mode; how to send,
    / commands, @ files, ! a shell command, and the keys for the mode, help and quitting) and
    the prompt has focus. At 80x24 only the chat column shows; at
    160x48 the tools pane and the run-trace pane stand on the right. The status line at the
    bottom names the model (scripted:fake), the mode (default), 0 tokens, $0, bubblewrap and
    the session id."""
    assert snap_compare(app_for([]), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_a_streamed_answer_with_a_tool_call_and_a_diff(snap_compare, size: tuple[int, int]) -> None:
    """The person's message, the model's first words, a finished `read` (✓, its first line),
    `allowed by you`, the `edit` with its diff coloured and highlighted as Python (a red and a
    green line), the final answer rendered as markdown (bold *hello*), and the turn's
    figures. At 160x48 the trace pane shows the turn, collapsed, with its stop reason and cost;
    at 80x24 the side panes are folded away and the chat shows the end of the turn."""

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "make greet say hello")
        pane = pilot.app.query_one(ApprovalPane)
        pane.answer("approve_once")
        await pilot.pause()
        pilot.app.trace.apply_pending()
        await pilot.pause()

    assert snap_compare(app_for(edit_session()), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_a_pending_edit_approval(snap_compare, size: tuple[int, int]) -> None:
    """The approval pane above the prompt: "moot asks to run edit", the diff, and the keys
    y (once), s (this session, with the rule Edit(greeting.py)), a (always: saves that rule),
    n (no). The tools pane (160x48) lists the read (✓) and the edit waiting (?); the trace
    pane's line of the turn's agent says "waiting for approval", and so do the working line
    under the chat and the status line ("waiting for your approval 0s"). The prompt
    keeps focus (the pane's border is the warning colour): the clock stands still, so the pane
    never sees the person pause, however slowly the machine takes the picture."""

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "make greet say hello")
        pilot.app.query_one(ApprovalPane).focus()  # as it will be once the person pauses
        await pilot.pause()

    app = app_for(edit_session(), clock=lambda: 1000.0)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_a_plan_approval(snap_compare, size: tuple[int, int]) -> None:
    """A plan to approve: the plan rendered as markdown (a heading, a numbered list), and the
    three answers: y approve and ask before each edit, a approve and accept edits, n revise.
    The working line under the chat says "waiting for your approval".
    At 160x48 the trace pane's line of the turn's agent says "waiting for approval". At 80x24
    the same in the one column, the side panes folded away."""

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "plan the change")
        pilot.app.query_one(ApprovalPane).focus()  # as it will be once the person pauses
        await pilot.pause()

    app = app_for(plan_session(), clock=lambda: 1000.0)  # the prompt keeps focus, as above
    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def expanded_peer_turn(pilot: Pilot) -> None:
    """Send the peer session's task and expand its turn in the trace pane once it has ended."""
    await send(pilot, "review the change")
    trace = pilot.app.trace
    for _ in range(100):  # bounded: until the turn's end is in (it collapses the turn)
        trace.apply_pending()
        run = trace.root.children[0] if trace.root.children else None
        if run is not None and any(isinstance(e, ev.TurnFinished) for e in run.data or ()):
            break
        await pilot.pause()
    assert run is not None
    run.expand_all()
    await pilot.pause()


def test_the_trace_pane_with_nested_peer_calls(snap_compare) -> None:
    """The transcript shows the peers' work indented under the lead's call; the trace pane
    shows the turn expanded: lead, then → reviewer and → tester each with their tool (✓) and
    ← completed, and the lead's two call_agent tools. (At 160x48; at 80x24 the side panes fold
    away, and f3 brings the trace pane back over the chat: the next picture.)"""
    assert snap_compare(
        app_for(peer_session()), terminal_size=(160, 48), run_before=expanded_peer_turn
    )


def test_the_trace_pane_brought_up_over_the_chat_at_80x24(snap_compare) -> None:
    """At 80x24, after f3: the expanded turn of the picture above stands in the chat's place,
    at the terminal's full width (no chat, no tools pane, no side border): the turn's line with
    all its figures (completed · 2.3s · 1,280 tok · $0.0042), lead, → reviewer and → tester
    each with its tool (✓ git_diff, ✓ bash) and ← completed, and the lead's two call_agent
    tools. Below it the empty prompt (with the focus) and the status line, as in the empty
    app's 80x24 picture."""

    async def run_before(pilot: Pilot) -> None:
        await expanded_peer_turn(pilot)
        await pilot.press("f3")
        await pilot.pause()

    assert snap_compare(app_for(peer_session()), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("theme", ["moot-dark", "moot-light", "moot-high-contrast"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_each_shipped_theme(snap_compare, theme: str, size: tuple[int, int]) -> None:
    """The finished edit session in the named theme: colours change, the layout does not.
    Light is dark text on near-white; high contrast is white on black with saturated signals."""

    async def run_before(pilot: Pilot) -> None:
        pilot.app.theme = theme
        await send(pilot, "make greet say hello")
        pilot.app.query_one(ApprovalPane).answer("approve_once")
        await pilot.pause()

    assert snap_compare(app_for(edit_session()), terminal_size=size, run_before=run_before)


def test_the_help_screen_lists_every_key_by_place(snap_compare) -> None:
    """`f1` over the empty app: the keys of `tui/keys.py` listed by where they work, "anywhere"
    first: `escape`, `ctrl+c` "Quit (press twice)", `ctrl+d` "Quit (the prompt empty)" (in a
    prompt holding text it deletes to the right), `ctrl+p`, `f1`, `shift+tab`; then the side
    panes' `f2`, `f3` and `ctrl+arrows`."""

    async def run_before(pilot: Pilot) -> None:
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app_for([]), terminal_size=(160, 48), run_before=run_before)

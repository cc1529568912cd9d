"""The command palette's providers on the fake client: each lists its entries and acts on the
one chosen (models, modes, sessions, themes, slash commands), and the palette itself through
`ctrl+p`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from textual.command import CommandList, Provider
from textual.widgets import OptionList

from moot.client import SetupError
from moot.commands.builtin import builtin_commands
from moot.commands.registry import CommandContext, Registry
from moot.protocol import ops
from moot.protocol.client import Client, SessionSummary
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.palette import (
    CommandsProvider,
    ModelsProvider,
    ModesProvider,
    SessionsProvider,
    ThemesProvider,
)
from moot.tui.widgets.blocks import UserBlock
from moot.tui.widgets.chat import ChatPane
from tui_apps import app_for
from tui_scripts import Run, edit_session

WHEN = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def summary(session_id: str, title: str, workspace: str = "/workspace") -> SessionSummary:
    return SessionSummary(session_id, title, workspace, WHEN, WHEN, 1, 0.01, "completed", 9)


async def entries(app: MootApp, provider: type[Provider], query: str = "") -> list:  # type: ignore[type-arg]
    """What `provider` offers for `query` (all of it for an empty one), best match first."""
    found = provider(app.screen)
    await found.startup()
    hits = [h async for h in (found.search(query) if query else found.discover())]
    return sorted(hits, key=lambda h: -h.score) if query else hits


def texts(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.text for h in hits]


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Let what a choice started finish (the bridge's worker runs as long as the session)."""
    for _ in range(3):
        for worker in list(pilot.app.workers):
            if worker.group != "bridge" and not worker.is_finished:
                await worker.wait()
        await pilot.pause()


async def test_modes_are_listed_with_the_current_one_and_choosing_one_switches() -> None:
    client = FakeClient()
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        hits = await entries(pilot.app, ModesProvider)
        assert texts(hits) == [
            "mode: default (current)",
            "mode: acceptEdits",
            "mode: plan",
            "mode: dontAsk",
            "mode: bypassPermissions",
        ]
        (await entries(pilot.app, ModesProvider, "plan"))[0].command()
        assert client.ops == [ops.SetMode(mode="plan")]


async def test_themes_are_listed_and_choosing_one_switches_and_remembers_it(
    private_moot_home: Path,
) -> None:
    async with app_for(FakeClient()).run_test(size=(120, 40)) as pilot:
        hits = await entries(pilot.app, ThemesProvider)
        assert "theme: moot-dark (current)" in texts(hits)
        assert "theme: moot-high-contrast" in texts(hits)
        (await entries(pilot.app, ThemesProvider, "moot-light"))[0].command()
        assert pilot.app.theme == "moot-light"
    prefs = json.loads((private_moot_home / "config" / "tui.json").read_text())
    assert prefs["theme"] == "moot-light"


async def test_slash_commands_run_and_one_that_needs_an_argument_goes_to_the_prompt() -> None:
    registry = builtin_commands()
    opened: list[str] = []

    @registry.command("open", "Open a file", arguments="<path>")
    async def open_(context: CommandContext, args: str) -> None:
        opened.append(args)

    async with app_for(FakeClient(), registry=registry).run_test(size=(120, 40)) as pilot:
        hits = await entries(pilot.app, CommandsProvider)
        assert "/help" in texts(hits) and "/open <path>" in texts(hits)
        assert hits[texts(hits).index("/status")].help == "The session: model, mode, sandbox, tools"
        hits[texts(hits).index("/status")].command()
        await settle(pilot)
        said = "\n".join(str(b.render()) for b in pilot.app.query(ChatPane).first().children)
        assert "session  ses_fake" in said
        hits[texts(hits).index("/open <path>")].command()
        await settle(pilot)
        assert pilot.app.prompt.text == "/open "  # type: ignore[attr-defined]
        assert pilot.app.focused is pilot.app.prompt  # type: ignore[attr-defined]
        assert opened == []
        grep = next(h for h in hits if h.text.startswith("/grep "))  # `PATTERN [path]`
        grep.command()
        await settle(pilot)
        assert pilot.app.prompt.text == "/grep "  # type: ignore[attr-defined]


async def test_models_are_listed_and_one_chosen_switches_through_slash_model() -> None:
    client = FakeClient()
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        hits = await entries(pilot.app, ModelsProvider)
        assert "model: anthropic/claude-sonnet-4-5" in texts(hits)
        chosen = (await entries(pilot.app, ModelsProvider, "gpt-5-mini"))[0]
        assert chosen.text == "model: openai/gpt-5-mini"
        chosen.command()
        await settle(pilot)
    assert ops.SetModel(model="openai/gpt-5-mini") in client.ops


async def test_without_slash_model_a_chosen_model_is_remembered_for_new_sessions(
    private_moot_home: Path,
) -> None:
    registry = Registry()  # a front end whose commands have no /model

    async with app_for(FakeClient(), registry=registry).run_test(size=(120, 40)) as pilot:
        (await entries(pilot.app, ModelsProvider, "gpt-5-mini"))[0].command()
        await settle(pilot)
    settings = json.loads((private_moot_home / "config" / "settings.json").read_text())
    assert settings["model"] == "openai/gpt-5-mini"


def stored_session() -> FakeClient:
    """Another stored session, its one turn already in its log."""
    run = Run("run_old").start("the earlier question").text("an earlier answer")
    run.responded("an earlier answer").finish("an earlier answer")
    other = FakeClient(run.events, session_id="ses_other")
    other.play()
    return other


async def test_sessions_list_this_workspaces_first_and_one_chosen_opens_with_its_history() -> None:
    client = FakeClient(
        edit_session(),
        sessions=[
            summary("ses_far", "elsewhere", workspace="/elsewhere"),
            summary("ses_other", "the earlier question"),
        ],
    )
    other = stored_session()
    opened: list[str] = []

    def open_session(session_id: str) -> Client:
        opened.append(session_id)
        return other

    async with app_for(client, open_session=open_session).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        hits = await entries(app, SessionsProvider)
        assert texts(hits) == ["session: the earlier question", "session: elsewhere"]
        assert hits[1].help.endswith("· in /elsewhere")
        hits[0].command()
        await settle(pilot)
        assert opened == ["ses_other"]
        assert app.client is other and client.closed
        shown = [str(b.render()) for b in app.query(UserBlock)]
        assert any("the earlier question" in s for s in shown)
        assert [(v.session_id, v.after_seq) for v in app.view.visits] == [
            ("ses_fake", 0),
            ("ses_other", len(other.log)),
        ]


async def test_a_session_is_not_switched_while_a_turn_runs_or_when_it_cannot_open() -> None:
    def cannot(session_id: str) -> Client:
        raise SetupError(f"its workspace /gone is not there any more ({session_id})")

    client = FakeClient(edit_session(), sessions=[summary("ses_other", "earlier")])
    async with app_for(client, open_session=cannot).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        assert isinstance(app, MootApp)
        await app.commands.open_session("ses_other")
        await settle(pilot)
        said = "\n".join(str(b.render()) for b in app.chat.children)
        assert "cannot open ses_other: its workspace /gone is not there any more" in said
        await pilot.press(*"go", "enter")  # the edit waits: a turn is open
        await settle(pilot)
        await app.commands.open_session("ses_other")
        await settle(pilot)
        said = "\n".join(str(b.render()) for b in app.chat.children)
        assert "a turn is running: interrupt it first (Esc)" in said
        assert app.client is client


async def test_ctrl_p_opens_the_palette_and_a_choice_acts() -> None:
    client = FakeClient()
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"mode: plan")
        for _ in range(50):  # the palette searches in a worker: poll, bounded
            await pilot.pause(0.02)
            found = pilot.app.screen.query(CommandList)
            if found and found.first().option_count:
                break
        await pilot.press("enter")
        await settle(pilot)
        assert client.ops == [ops.SetMode(mode="plan")]


async def test_textuals_own_commands_fit_moot() -> None:
    async with app_for(FakeClient()).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Theme" not in commands  # the themes provider switches and remembers
        trace = app.query_one("#trace")
        shown = trace.display
        commands["Show or hide the run-trace pane"].callback()
        await pilot.pause()
        assert trace.display is not shown
        assert "Narrow the side panes" in commands and "Show or hide the tools pane" in commands
        commands["Quit"].callback()  # a palette choice is deliberate: no second press
        await pilot.pause()
    assert app.return_code == 0


async def test_slash_resume_picks_a_session_and_the_app_shows_it_with_its_history() -> None:
    """`/resume` in the app: the shared command's picker (title, time, turns, cost, state),
    then the chosen session, history first, in place of this one."""
    from moot.tui.screens.picker import PickerScreen

    client = FakeClient(
        edit_session(),
        sessions=[
            summary("ses_other", "the earlier question"),
            summary("ses_far", "elsewhere", workspace="/elsewhere"),
        ],
    )
    other = stored_session()
    opened: list[str] = []

    def open_session(session_id: str) -> Client:
        opened.append(session_id)
        return other

    async with app_for(client, open_session=open_session).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        await pilot.press(*"/resume", "enter")
        for _ in range(10):  # the command's worker pushes the picker
            if isinstance(app.screen, PickerScreen):
                break
            await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        shown = [str(o.prompt) for o in app.screen.query_one(OptionList).options]
        assert len(shown) == 1 and shown[0].startswith("the earlier question")  # this workspace
        assert "$0.0100" in shown[0] and "completed" in shown[0]
        await pilot.press("enter")
        await settle(pilot)
        assert opened == ["ses_other"] and app.client is other
        assert any("the earlier question" in str(b.render()) for b in app.query(UserBlock))

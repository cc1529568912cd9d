"""The app's commands on the fake client: `!command` (its output offered for the next message),
`@path` (completed, sent, and shown as attached), `/model` (a picker, then `SetModel`), and the
front end's own parts of `/search`, `/copy` and `/inspect`."""

from __future__ import annotations

import threading

from msgspec.structs import replace

from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import ModelChoice, WorkspaceFiles
from moot.protocol.messages import AttachedFile
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.screens.inspector import InspectorScreen
from moot.tui.screens.picker import PickerScreen
from moot.tui.search import MATCH
from moot.tui.widgets.blocks import NoticeBlock, UserBlock
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.prompt import LISTING, PromptArea, PromptInput
from moot.tui.widgets.status_line import StatusLine
from tui_apps import app_for
from tui_scripts import Run

MODELS = [
    ModelChoice("scripted:fake", True),
    ModelChoice("openai/gpt-5", True, 400_000),
    ModelChoice("anthropic/claude-sonnet-4-5", False, 200_000, "no key: set ANTHROPIC_API_KEY"),
]


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Wait for the commands' workers (and what they show) to finish; not the bridge's."""
    for _ in range(3):
        busy = [w for w in pilot.app.workers if w.group in ("command", "say", "paths")]
        if busy:  # an empty list would wait for every worker, the bridge's too
            await pilot.app.workers.wait_for_complete(busy)
        await pilot.pause()


async def type_and_send(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*text)
    await pilot.press("enter")
    await settle(pilot)


def said(app: MootApp) -> str:
    return "\n".join(block_text(b) for b in app.query(NoticeBlock))


def block_text(block: NoticeBlock) -> str:
    from moot.tui.search import block_text as text_of

    return text_of(block)


def answered(prompt: str, answer: str, files: tuple[AttachedFile, ...] = ()) -> list[ev.Event]:
    run = Run().start(prompt).text(answer).responded(answer).finish(answer)
    started = run.events[0]
    assert isinstance(started, ev.TurnStarted)
    run.events[0] = replace(started, files=files)
    return run.events


async def test_a_shell_line_runs_as_the_person_and_its_output_goes_with_the_next_message() -> None:
    client = FakeClient(answered("x", "y"), tool_results={"bash": "a.txt\nb.txt\n"}, autoplay=True)
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "!ls")
        assert client.ops == [ops.RunTool(tool="bash", arguments={"command": "ls"})]
        assert "a.txt\nb.txt" in said(pilot.app)
        prompt = pilot.app.query_one(PromptInput)
        assert prompt.text == "[output of !ls #1]\n"
        await type_and_send(pilot, "what are these?")
        sent = client.ops[-1]
        assert isinstance(sent, ops.UserTurn)
        assert sent.text == "I ran `ls`:\n```\na.txt\nb.txt\n```\nwhat are these?"


async def test_a_shell_lines_chip_deleted_leaves_the_output_out() -> None:
    client = FakeClient(answered("x", "y"), tool_results={"bash": "secret-ish\n"})
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "!cat notes")
        prompt = pilot.app.query_one(PromptInput)
        prompt.load_text("")  # the person deletes the chip
        await type_and_send(pilot, "hello")
        assert client.ops[-1] == ops.UserTurn(text="hello")


async def test_a_path_completes_goes_in_the_message_and_shows_as_attached() -> None:
    files = (AttachedFile(path="src/greet.py", text="def greet(): ..."),)
    client = FakeClient(
        answered("@src/greet.py fix it", "fixed", files), files=["README.md", "src/greet.py"]
    )
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("@", "g", "r", "e")
        await settle(pilot)  # the file list is read off the UI thread
        await pilot.press("tab")
        prompt = pilot.app.query_one(PromptInput)
        assert prompt.text == "@src/greet.py "
        await type_and_send(pilot, "fix it")
        assert client.ops == [ops.UserTurn(text="@src/greet.py fix it")]
        (user,) = pilot.app.query_one(ChatPane).query(UserBlock)
        assert block_text(user).splitlines() == ["@src/greet.py fix it", "@src/greet.py  attached"]


async def test_a_path_spread_over_its_file_name_ranks_first_as_in_the_repl() -> None:
    """`@trp`: `tests/repl/test_repl.py` (t, r, p in its name) before `src/moot/repl/prompt.py`
    (spread over its directories), as the REPL ranks them: one ranking, `commands/fuzzy.py`."""
    client = FakeClient(files=["src/moot/repl/prompt.py", "tests/repl/test_repl.py"])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("@", "t", "r", "p")
        await settle(pilot)  # the file list is read off the UI thread
        await pilot.press("tab")
        assert pilot.app.query_one(PromptInput).text == "@tests/repl/test_repl.py "


async def test_every_file_is_offered_and_files_made_since_are_offered_at_the_next_at() -> None:
    """The app listed the workspace once, and only its first 20,000 files (issue 31): a file
    past them, or one a turn made, was never offered."""
    paths = [f"pkg{group:02}/m{number:03}.py" for group in range(21) for number in range(1000)]
    client = FakeClient(files=[*paths, "zz/last_one.py"])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("@", *"last_one")
        await settle(pilot)  # the file list is read off the UI thread
        await pilot.press("tab")
        prompt = pilot.app.query_one(PromptInput)
        assert prompt.text == "@zz/last_one.py "

        client._files.append("zz/made_by_a_turn.py")
        await pilot.press("@", *"made_by")
        await settle(pilot)
        await pilot.press("tab")
        assert prompt.text == "@zz/last_one.py @zz/made_by_a_turn.py "


async def test_model_picks_from_the_catalog_and_the_status_line_follows() -> None:
    client = FakeClient(models=MODELS)
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press(*"/model", "enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, PickerScreen)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert client.ops == [ops.SetModel(model="openai/gpt-5")]
        assert pilot.app.query_one(StatusLine).facts.model == "openai/gpt-5"
        assert "model: openai/gpt-5 (was scripted:fake)" in said(pilot.app)
        await type_and_send(pilot, "/model nosuch/x")
        assert len(client.ops) == 2 and "unknown model 'nosuch/x'" in said(pilot.app)


async def test_search_copy_and_inspect_use_the_apps_own_parts() -> None:
    client = FakeClient([*answered("milk?", "buy **milk**"), *answered("eggs?", "no eggs")])
    client.play()
    async with app_for(client, show_history=True).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        chat = app.query_one(ChatPane)
        await type_and_send(pilot, "/search MILK")
        assert len(chat.query(f".{MATCH}")) == 2  # the question and the answer
        await type_and_send(pilot, "/search")
        assert len(chat.query(f".{MATCH}")) == 0
        await type_and_send(pilot, "/copy")
        assert app.clipboard == "no eggs"
        await type_and_send(pilot, "/inspect")
        assert isinstance(app.screen, InspectorScreen)


class SlowFiles(FakeClient):
    """A client whose file listing waits until the test lets it finish (a big repository's
    index still building)."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.listing = threading.Event()
        self.release = threading.Event()

    def files(self) -> WorkspaceFiles:
        self.listing.set()
        self.release.wait(30)
        return super().files()


async def test_the_list_says_the_files_are_being_listed_until_they_are() -> None:
    client = SlowFiles(files=["deep/a/b/c/pkg99/target.py"])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.press("@", *"pkg99")
        for _ in range(200):  # bounded: the listing thread starts
            if client.listing.is_set():
                break
            await pilot.pause(0.01)
        await pilot.pause()
        prompt = pilot.app.query_one(PromptArea)
        shown = [
            str(prompt.options.get_option_at_index(i).prompt)
            for i in range(prompt.options.option_count)
        ]
        assert shown == [f"[dim]{LISTING}[/dim]"]
        assert "listing" in LISTING

        client.release.set()
        await settle(pilot)
        await pilot.press("tab")
        assert pilot.app.query_one(PromptInput).text == "@deep/a/b/c/pkg99/target.py "


async def test_test_puts_its_failures_in_the_prompt_and_enter_sends_them() -> None:
    failures = "The project's test run failed. Please fix it:\n\nFAILED tests/test_x.py::test_a"
    canned = {"content": "pytest: exit 1; 0 passed, 1 failed", "display": {"failures": failures}}
    client = FakeClient(answered("x", "y"), tool_results={"test": canned}, autoplay=True)
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "/test")
        assert client.ops == [ops.RunTool(tool="test", arguments={"path": None, "filter": None})]
        assert "pytest: exit 1; 0 passed, 1 failed" in said(pilot.app)
        assert pilot.app.query_one(PromptInput).text == "[output of /test #1]\n"
        await pilot.press("enter")
        await settle(pilot)
        sent = client.ops[-1]
        assert isinstance(sent, ops.UserTurn)
        assert sent.text.startswith(failures)

"""Images and PDFs in the app's prompt: `@path` and a pasted path become chips, backspace
after a chip removes it, ctrl+v pastes the clipboard's image (a real X server's), and the
chat shows a line for each attachment of a message."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from textual import events

from images import jpeg, on_clipboard, png, x_clipboard
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment
from moot.testing import FakeClient
from moot.tui.app import MootApp
from pdf_files import pdf, photo
from tui_apps import app_for
from tui_scripts import Run


async def until(pilot: object, condition: Callable[[], object], what: str) -> None:
    """Let the app run until `condition()` holds (the clipboard is read in a thread)."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, f"never saw {what}"
        await pilot.pause(0.01)  # type: ignore[attr-defined]


def _answered() -> list[ev.Event]:
    return Run().start("look").text("I see it.").finish("I see it.").events


def app_in(workspace: Path, script: list[ev.Event] | None = None) -> tuple[MootApp, FakeClient]:
    client = FakeClient(script if script is not None else _answered())
    client._status = msgspec.structs.replace(client.status(), workspace=str(workspace))
    return app_for(client), client


async def test_an_at_path_image_becomes_a_chip_and_goes_as_an_attachment(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png(1280, 720))
    (tmp_path / "spec.pdf").write_bytes(pdf(12))
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"see @shot.png ")
        await until(pilot, lambda: "[image 1:" in app.prompt.text, "the chip")
        assert app.prompt.text == "see [image 1: shot.png 1280x720] "
        await pilot.press(*"and @spec.pdf")  # still at the end when sent: taken then
        await pilot.press("escape", "enter")  # escape closes the completion list
        await pilot.pause()
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert turn.text == "see [image 1: shot.png 1280x720] and [pdf 2: spec.pdf 12 pages]"
    assert [(a.mime_type, a.name) for a in turn.attachments] == [
        ("image/png", "shot.png"),
        ("application/pdf", "spec.pdf"),
    ]


async def test_backspace_after_a_chip_removes_it_and_its_attachment(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png())
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"@a.png ")
        await until(pilot, lambda: "[image 1:" in app.prompt.text, "the chip")
        assert app.prompt.text.startswith("[image 1: a.png 3x2]")
        await pilot.press("backspace", "backspace")  # the space, then the whole chip
        assert app.prompt.text == ""
        await pilot.press(*"plain", "enter")
        await pilot.pause()
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert (turn.text, turn.attachments) == ("plain", ())


async def test_a_pasted_path_of_an_image_becomes_a_chip(tmp_path: Path) -> None:
    (tmp_path / "drag me.png").write_bytes(png(7, 3))
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"see")
        app.post_message(events.Paste(f"file://{tmp_path}/drag%20me.png"))
        await pilot.pause()
        assert app.prompt.text == "see [image 1: drag me.png 7x3] "
        await pilot.press("enter")
        await pilot.pause()
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert [a.name for a in turn.attachments] == ["drag me.png"]


async def test_an_image_that_is_not_what_its_name_says_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("text")
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"see @fake.png", "escape", "enter")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert any("fake.png is named like a PNG image but is not" in m for m in said), said
        assert app.prompt.text == "see @fake.png"
    assert not [op for op in client.ops if isinstance(op, ops.UserTurn)]


async def test_the_attachment_is_the_runtimes_check_of_it_fitted_or_refused(
    tmp_path: Path,
) -> None:
    """The same check as `read` and headless: a photo is fitted (and its chip says so), a
    JPEG cut after its header is refused and nothing is sent."""
    (tmp_path / "big.jpg").write_bytes(photo(4000, 3000))
    (tmp_path / "cut.jpg").write_bytes(jpeg())
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"see @cut.jpg", "escape", "enter")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert any("cut.jpg is a damaged JPEG" in m for m in said), said
        assert not [op for op in client.ops if isinstance(op, ops.UserTurn)]
        app.prompt.load_text("")
        await pilot.press(*"see @big.jpg ")
        await until(pilot, lambda: "[image 1:" in app.prompt.text, "the chip")
        assert app.prompt.text == "see [image 1: big.jpg 2000x1500] "
        await pilot.press("enter")
        await pilot.pause()
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert [(a.width, a.height) for a in turn.attachments] == [(2000, 1500)]


async def test_a_typed_path_is_checked_off_the_apps_thread_while_typing_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fitting a photo takes a few hundred ms: the app's loop is not held for it, and what
    was typed meanwhile stays after the chip."""
    import threading

    from moot.client import attachments

    (tmp_path / "big.jpg").write_bytes(photo(4000, 3000))
    real, threads = attachments.attach_file, []

    def attach_file(path: Path, name: str) -> Attachment:  # the real check, its thread seen
        threads.append(threading.current_thread())
        return real(path, name)

    monkeypatch.setattr(attachments, "attach_file", attach_file)
    app, client = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"see @big.jpg ", *"and that")
        await until(pilot, lambda: "[image 1:" in app.prompt.text, "the chip")
        assert app.prompt.text == "see [image 1: big.jpg 2000x1500] and that"
        await pilot.press("enter")
        await pilot.pause()
    assert threads and threading.main_thread() not in threads
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert [(a.width, a.height) for a in turn.attachments] == [(2000, 1500)]


async def test_the_chat_shows_a_line_for_each_attachment(tmp_path: Path) -> None:
    run = Run()
    shot = Attachment(
        mime_type="image/png", data=base64.b64encode(png(64, 32)).decode(), name="shot.png"
    )
    script = (
        run.add(ev.TurnStarted(**run._ids(), prompt="what is this?", attachments=(shot,)))
        .text("A chart.")
        .finish("A chart.")
        .events
    )
    app, _ = app_in(tmp_path, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press(*"what is this?", "enter")
        await pilot.pause()
        from moot.tui.widgets.blocks import UserBlock

        (block,) = app.query(UserBlock)
        shown = str(block.render())
        assert f"[image 1: shot.png 64x32, {len(png(64, 32))} B]" in shown


async def test_ctrl_v_pastes_the_clipboards_image_as_a_chip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with x_clipboard(tmp_path) as env:
        monkeypatch.setenv("DISPLAY", env["DISPLAY"])
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        with on_clipboard(env, png(20, 10), "image/png"):
            app, client = app_in(tmp_path)
            async with app.run_test(size=(120, 30)) as pilot:
                await pilot.press(*"this:", "ctrl+v")
                await until(pilot, lambda: "[image" in app.prompt.text, "the chip")
                assert app.prompt.text == "this: [image 1: pasted.png 20x10] "
                await pilot.press("enter")
                await pilot.pause()
    (turn,) = [op for op in client.ops if isinstance(op, ops.UserTurn)]
    assert base64.b64decode(turn.attachments[0].data) == png(20, 10)


async def test_ctrl_v_pastes_text_when_the_clipboard_holds_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with x_clipboard(tmp_path) as env:
        monkeypatch.setenv("DISPLAY", env["DISPLAY"])
        with on_clipboard(env, b"from the clipboard", "UTF8_STRING"):
            app, _ = app_in(tmp_path)
            async with app.run_test(size=(120, 30)) as pilot:
                await pilot.press("ctrl+v")
                await until(pilot, lambda: app.prompt.text, "the text")
                assert app.prompt.text == "from the clipboard"


async def test_ctrl_v_without_a_clipboard_tool_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    app, _ = app_in(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("ctrl+v")
        await until(
            pilot, lambda: any("pasting" in n.message for n in app._notifications), "a notice"
        )
        said = [n.message for n in app._notifications]
        assert any("pasting an image needs xclip: install it" in m for m in said), said

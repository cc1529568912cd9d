"""Images and PDFs in the REPL's prompt: `@path` and a pasted path become chips, backspace
after a chip removes it, ctrl+v pastes the clipboard's image (a real X server's), and the
chat shows a line for each attachment of a message."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import msgspec
import pytest

from images import jpeg, on_clipboard, png, x_clipboard
from moot.frontend.attach import human_size
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment
from moot.testing import FakeClient
from pdf_files import pdf, photo
from repl_harness import running_repl
from tui_scripts import Run

ENTER, BACKSPACE, CTRL_V = "\r", "\x7f", "\x16"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _answered(prompt: str = "look") -> list[ev.Event]:
    return Run().start(prompt).text("I see it.").finish("I see it.").events


def _client(workspace: Path, script: list[ev.Event] | None = None) -> FakeClient:
    client = FakeClient(script if script is not None else _answered())
    client._status = msgspec.structs.replace(client.status(), workspace=str(workspace))
    return client


async def test_an_at_path_image_becomes_a_chip_and_goes_as_an_attachment(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png(1280, 720))
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type("what is wrong in @shot.png ")
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        await repl.until(lambda: "[image 1:" in buffer.text, "the chip")
        assert buffer.text == "what is wrong in [image 1: shot.png 1280x720] "
        repl.type("please" + ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the turn")
    (turn,) = repl.ops(ops.UserTurn)
    assert turn.text == "what is wrong in [image 1: shot.png 1280x720] please"
    ((attachment),) = turn.attachments
    assert (attachment.mime_type, attachment.name) == ("image/png", "shot.png")
    assert base64.b64decode(attachment.data) == png(1280, 720)


async def test_backspace_after_a_chip_removes_it_and_its_attachment(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png())
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type("@a.png ")
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        await repl.until(lambda: "[image 1:" in buffer.text, "the chip")
        repl.type(BACKSPACE + BACKSPACE)  # the space, then the whole chip
        await repl.until(lambda: buffer.text == "", "the chip removed")
        repl.type("no image" + ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the turn")
    (turn,) = repl.ops(ops.UserTurn)
    assert (turn.text, turn.attachments) == ("no image", ())


async def test_a_pasted_path_of_an_image_becomes_a_chip(tmp_path: Path) -> None:
    (tmp_path / "drag me.png").write_bytes(png(7, 3))
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type(f"see {PASTE_START}'{tmp_path}/drag me.png'{PASTE_END}")
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        await repl.until(lambda: "[image 1:" in buffer.text, "the chip")
        assert buffer.text == "see [image 1: drag me.png 7x3] "
        repl.type(ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the turn")
    assert [a.name for a in repl.ops(ops.UserTurn)[0].attachments] == ["drag me.png"]


async def test_an_image_that_is_not_what_its_name_says_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("text")
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type("see @fake.png and more" + ENTER)
        await repl.printed("nothing was sent")
        # Said once as it was typed (not at each key after it), once when it was sent.
        assert repl.text.count("fake.png is named like a PNG image but is not") == 2
        assert repl.ops(ops.UserTurn) == []


async def test_the_attachment_is_the_runtimes_check_of_it_fitted_or_refused(
    tmp_path: Path,
) -> None:
    """The same check as `read` and headless: a photo is fitted (and its chip says so), a
    JPEG cut after its header is refused."""
    (tmp_path / "big.jpg").write_bytes(photo(4000, 3000))
    (tmp_path / "cut.jpg").write_bytes(jpeg())
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type("see @cut.jpg ")
        await repl.printed("cut.jpg is a damaged JPEG")
        buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
        buffer.reset()
        repl.type("see @big.jpg ")
        await repl.until(lambda: "[image 1:" in buffer.text, "the chip")
        assert buffer.text == "see [image 1: big.jpg 2000x1500] "
        repl.type(ENTER)
        await repl.until(lambda: repl.ops(ops.UserTurn), "the turn")
    ((attachment),) = repl.ops(ops.UserTurn)[0].attachments
    assert (attachment.width, attachment.height) == (2000, 1500)


async def test_the_chat_shows_a_line_for_each_attachment(tmp_path: Path) -> None:
    run = Run()
    shot = Attachment(
        mime_type="image/png", data=base64.b64encode(png(64, 32)).decode(), name="shot.png"
    )
    started = ev.TurnStarted(**run._ids(), prompt="what is this?", attachments=(shot,))
    script = run.add(started).text("A chart.").finish("A chart.").events
    async with running_repl(_client(tmp_path, script)) as repl:
        await repl.prompt_ready()
        repl.type("what is this?" + ENTER)
        await repl.printed(f"[image 1: shot.png 64x32, {len(png(64, 32))} B]")


# ---- ctrl+v, with a real X server's clipboard ----------------------------------------------


async def test_ctrl_v_pastes_the_clipboards_image_as_a_chip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with x_clipboard(tmp_path) as env:
        monkeypatch.setenv("DISPLAY", env["DISPLAY"])
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        with on_clipboard(env, png(20, 10), "image/png"):
            async with running_repl(_client(tmp_path)) as repl:
                await repl.prompt_ready()
                repl.type("this: " + CTRL_V)
                buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
                await repl.until(lambda: "[image 1:" in buffer.text, "the chip")
                assert buffer.text == "this: [image 1: pasted.png 20x10] "
                repl.type(ENTER)
                await repl.until(lambda: repl.ops(ops.UserTurn), "the turn")
    ((attachment),) = repl.ops(ops.UserTurn)[0].attachments
    assert base64.b64decode(attachment.data) == png(20, 10)


async def test_ctrl_v_pastes_text_when_the_clipboard_holds_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with x_clipboard(tmp_path) as env:
        monkeypatch.setenv("DISPLAY", env["DISPLAY"])
        with on_clipboard(env, b"from the clipboard", "UTF8_STRING"):
            async with running_repl(_client(tmp_path)) as repl:
                await repl.prompt_ready()
                repl.type(CTRL_V)
                buffer = repl.repl._prompt.default_buffer  # type: ignore[union-attr]
                await repl.until(lambda: buffer.text == "from the clipboard", "the text")


async def test_ctrl_v_without_a_clipboard_tool_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", str(tmp_path))  # no xclip, no xsel
    async with running_repl(_client(tmp_path)) as repl:
        await repl.prompt_ready()
        repl.type(CTRL_V)
        await repl.printed("pasting an image needs xclip: install it")
    assert os.environ["DISPLAY"] == ":99"


async def test_with_thumbnails_on_a_kitty_terminal_gets_the_image_under_its_line(
    tmp_path: Path,
) -> None:
    from moot.settings import load_settings

    assert load_settings(tmp_path).ui.image_thumbnails is False  # off unless asked for
    (tmp_path / ".moot").mkdir()
    (tmp_path / ".moot" / "settings.json").write_text('{"ui": {"imageThumbnails": true}}')
    assert load_settings(tmp_path).ui.image_thumbnails is True
    run = Run()
    data = base64.b64encode(png(64, 32)).decode()
    shot = Attachment(mime_type="image/png", data=data, name="shot.png")
    started = ev.TurnStarted(**run._ids(), prompt="what is this?", attachments=(shot,))
    script = run.add(started).text("A chart.").finish("A chart.").events
    async with running_repl(_client(tmp_path, script)) as repl:
        repl.repl.transcript.thumbnails = "kitty"  # what `run_repl` sets from the setting
        await repl.prompt_ready()
        repl.type("what is this?" + ENTER)
        await repl.printed("A chart.")
    line = f"[image 1: shot.png 64x32, {len(png(64, 32))} B]"
    assert (
        f"{line}\n\x1b_Ga=T,f=100,c=24,r=6,q=2,m=0;{data}\x1b\\\n"
        in repl.out.getvalue().replace("\x1b[2m", "").replace("\x1b[0m", "")
    )


async def test_a_resumed_session_shows_a_line_for_each_attachment(tmp_path: Path) -> None:
    run = Run()
    spec = Attachment(mime_type="application/pdf", data=base64.b64encode(pdf(3)).decode())
    started = ev.TurnStarted(**run._ids(), prompt="summarise", attachments=(spec,))
    client = _client(tmp_path, run.add(started).text("Short.").finish("Short.").events)
    client.play()
    async with running_repl(client, show_history=True) as repl:
        await repl.printed("model turns")
        assert f"> summarise\n  [pdf 1: (no name) 3 pages, {human_size(len(pdf(3)))}]" in repl.text

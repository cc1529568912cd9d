"""Images and PDFs attached to a message (`moot.frontend.attach`: chips, pasted paths,
placeholders, with the runtime's one check, `moot.client.attachments`) and the clipboard's
image (`moot.frontend.clipboard`, against a real X server). What the check accepts and refuses
is tested with it (`tests/workspace/test_attachments.py`)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from images import jpeg, on_clipboard, png, x_clipboard
from moot.client.attachments import attach_file
from moot.frontend import attach, clipboard
from moot.frontend.attach import Chips
from pdf_files import pdf, photo


def test_a_chip_holds_what_the_runtimes_check_made_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "big.jpg").write_bytes(photo(4000, 3000))
    chips = Chips(attach_file)
    text = chips.mentions("see @big.jpg", tmp_path)
    assert text == "see [image 1: big.jpg 2000x1500]"  # fitted, as it is sent
    (held,) = chips.attachments(text)
    assert (held.width, held.height) == (2000, 1500)
    assert len(base64.b64decode(held.data)) <= 3_670_016


def test_a_file_the_check_refuses_is_not_read_again_while_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "cut.jpg"
    target.write_bytes(jpeg())  # a header, no picture
    asked: list[Path] = []

    def check(path: Path, name: str) -> attach.Attachment:
        asked.append(path)
        return attach_file(path, name)

    chips = Chips(check)
    for _ in range(3):
        with pytest.raises(ValueError, match="damaged JPEG"):
            chips.mentions("@cut.jpg ", tmp_path, finished_only=True)
    assert asked == [target]
    target.write_bytes(photo(8, 6))  # mended: asked again
    assert chips.mentions("@cut.jpg ", tmp_path, finished_only=True).startswith("[image 1:")
    assert asked == [target, target]


def test_at_mentions_of_images_become_chips_and_the_rest_stays_text(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png(4, 4))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.pdf").write_bytes(pdf(1))
    (tmp_path / "notes.md").write_text("text")
    chips = Chips(attach_file)
    text = chips.mentions("see @shot.png and @docs/spec.pdf, then @notes.md", tmp_path)
    assert text == "see [image 1: shot.png 4x4] and [pdf 2: docs/spec.pdf 1 page], then @notes.md"
    assert [a.mime_type for a in chips.attachments(text)] == ["image/png", "application/pdf"]
    # A chip deleted from the message leaves its attachment out.
    assert [a.name for a in chips.attachments(text.replace("[image 1: shot.png 4x4]", ""))] == [
        "docs/spec.pdf"
    ]
    # A word still being typed is left alone; one a space follows is taken.
    assert chips.mentions("look @shot.png", tmp_path, finished_only=True) == "look @shot.png"
    assert chips.mentions("@shot.png ", tmp_path, finished_only=True).startswith("[image 1:")


def test_a_mention_that_cannot_be_attached_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("not a png")
    chips = Chips(attach_file)
    with pytest.raises(ValueError, match=r"fake\.png is named like a PNG image but is not"):
        chips.mentions("see @fake.png", tmp_path)
    assert chips.held == {}


def test_what_is_sent_carries_its_chips_or_nothing_and_says_why(tmp_path: Path) -> None:
    """Both front ends send through `Chips.outgoing`: an `@path` still in the message becomes
    its chip; one that cannot be attached sends nothing and is said once, in the same words."""
    (tmp_path / "shot.png").write_bytes(png(4, 4))
    (tmp_path / "fake.png").write_text("not a png")
    said: list[str] = []
    chips = Chips(attach_file)
    sent = chips.outgoing("see @shot.png", tmp_path, said.append)
    assert sent is not None and sent[0] == "see [image 1: shot.png 4x4]"
    assert [a.name for a in sent[1]] == ["shot.png"]
    assert chips.outgoing("and @fake.png", tmp_path, said.append) is None
    assert len(said) == 1 and said[0].startswith("fake.png is named like a PNG image but is not")
    assert said[0].endswith("; nothing was sent")


@pytest.mark.parametrize(
    "pasted",
    [
        "{path}",
        "'{path}'",
        '"{path}"',
        "file://{path}",
        "{escaped}",
    ],
)
def test_a_pasted_path_of_an_image_is_found_however_the_terminal_quotes_it(
    tmp_path: Path, pasted: str
) -> None:
    folder = tmp_path / "my shots"
    folder.mkdir()
    (folder / "a b.png").write_bytes(png())
    path = folder / "a b.png"
    escaped = str(path).replace(" ", "\\ ")
    text = pasted.format(
        path=str(path).replace(" ", "%20") if "file" in pasted else path, escaped=escaped
    )
    assert attach.pasted_paths(text, tmp_path) == [path]


def test_a_pasted_text_that_is_not_only_image_paths_is_text(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png())
    (tmp_path / "a.py").write_text("x")
    assert attach.pasted_paths("a.py", tmp_path) is None
    assert attach.pasted_paths("look at a.png", tmp_path) is None
    assert attach.pasted_paths("gone.png", tmp_path) is None


def test_a_placeholder_reads_an_attachment_made_elsewhere() -> None:
    made = attach.Attachment(mime_type="image/png", data=base64.b64encode(png(8, 9)).decode())
    assert attach.placeholder(made, 2) == f"[image 2: (no name) 8x9, {len(png(8, 9))} B]"
    measured = attach.Attachment(mime_type="image/png", data=made.data, width=80, height=90)
    assert attach.placeholder(measured, 1).startswith("[image 1: (no name) 80x90,")
    garbled = attach.Attachment(mime_type="image/png", data="%%%", name="x.png")
    assert attach.placeholders([made, garbled])[1] == "[image 2: x.png 0 B]"


# ---- the clipboard, on a real X server -------------------------------------------------------


def test_the_clipboards_png_is_read_from_a_real_x_server(tmp_path: Path) -> None:
    with x_clipboard(tmp_path) as env, on_clipboard(env, png(20, 10), "image/png"):
        assert clipboard.read_image(env) == png(20, 10)


def test_a_clipboard_holding_text_gives_no_image_but_its_text(tmp_path: Path) -> None:
    with x_clipboard(tmp_path) as env, on_clipboard(env, b"hello", "UTF8_STRING"):
        assert clipboard.read_image(env) is None
        assert clipboard.read_text(env) == "hello"


async def test_ctrl_v_reads_the_image_else_the_text_else_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`clipboard.paste` is the key's reading in both front ends: an image's bytes, else the
    text with its line ends as `\\n`, else None and why."""
    said: list[str] = []
    with x_clipboard(tmp_path) as env:
        monkeypatch.setenv("DISPLAY", env["DISPLAY"])
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        for data, target, pasted in [
            (png(3, 2), "image/png", png(3, 2)),
            (b"one\r\ntwo", "UTF8_STRING", "one\ntwo"),
        ]:
            with on_clipboard(env, data, target):
                assert await clipboard.paste(said.append) == pasted
    monkeypatch.setenv("PATH", str(tmp_path))
    assert await clipboard.paste(said.append) is None
    assert len(said) == 1 and said[0].startswith("pasting an image needs xclip"), said


def test_no_clipboard_tool_names_what_to_install(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "DISPLAY": ":99"}
    with pytest.raises(clipboard.NoClipboardTool, match="needs xclip"):
        clipboard.read_image(env)
    env = {"PATH": str(tmp_path), "WAYLAND_DISPLAY": "wayland-0"}
    with pytest.raises(clipboard.NoClipboardTool, match=r"wl-clipboard \(wl-paste\)"):
        clipboard.read_image(env)


# ---- thumbnails ----------------------------------------------------------------------------


def test_the_graphics_protocol_is_read_from_the_terminals_variables() -> None:
    from moot.frontend.thumbnails import graphics_protocol

    assert graphics_protocol({"TERM": "xterm-kitty"}) == "kitty"
    assert graphics_protocol({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}) == "kitty"
    assert graphics_protocol({"TERM_PROGRAM": "iTerm.app"}) == "iterm2"
    assert graphics_protocol({"TERM_PROGRAM": "WezTerm"}) == "iterm2"
    assert graphics_protocol({"TERM": "foot"}) == "sixel"
    assert graphics_protocol({"TERM": "xterm-256color"}) is None


def test_a_thumbnail_is_the_protocols_escape_sized_from_the_header() -> None:
    from moot.frontend.thumbnails import COLUMNS, thumbnail

    data = base64.b64encode(png(200, 100)).decode()
    shot = attach.Attachment(mime_type="image/png", data=data)
    kitty = thumbnail(shot, "kitty")
    assert kitty == f"\x1b_Ga=T,f=100,c={COLUMNS},r=6,q=2,m=0;{data}\x1b\\\n"
    iterm = thumbnail(shot, "iterm2")
    assert iterm is not None and iterm.startswith("\x1b]1337;File=inline=1;") and data in iterm
    cut = attach.Attachment(mime_type="image/jpeg", data=base64.b64encode(jpeg()).decode())
    assert thumbnail(cut, "kitty") is None  # kitty takes PNG: a JPEG that cannot be decoded
    spec = attach.Attachment(mime_type="application/pdf", data=base64.b64encode(pdf(1)).decode())
    assert thumbnail(spec, "iterm2") is None
    large = base64.b64encode(png(300, 300)[:16] + png(300, 300)[16:] + b"\0" * 6000).decode()
    pieces = thumbnail(attach.Attachment(mime_type="image/png", data=large), "kitty")
    assert pieces is not None and pieces.count("\x1b_G") == 3  # 8 KB of base64: 3 pieces
    assert pieces.rstrip("\n").endswith("m=0;" + large[8192:] + "\x1b\\")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _pillow() -> None:
    try:
        import PIL  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("Pillow is not installed (sixel and kitty thumbnails of a JPEG need it)")
        pytest.skip("Pillow is not installed")


def test_sixel_and_a_jpeg_on_kitty_are_drawn_from_the_decoded_image() -> None:
    _pillow()
    import io

    from PIL import Image

    from moot.frontend.thumbnails import thumbnail

    picture = Image.new("RGB", (60, 12), (255, 0, 0))
    picture.paste((0, 0, 255), (30, 0, 60, 12))  # red, then blue
    out = io.BytesIO()
    picture.save(out, format="JPEG")
    photo = attach.Attachment(
        mime_type="image/jpeg", data=base64.b64encode(out.getvalue()).decode()
    )
    kitty = thumbnail(photo, "kitty")
    assert kitty is not None and kitty.startswith("\x1b_Ga=T,f=100,")
    payload = kitty.split(";", 1)[1].split("\x1b", 1)[0]
    assert base64.b64decode(payload).startswith(b"\x89PNG")  # sent as a PNG
    out = io.BytesIO()
    picture.save(out, format="PNG")
    sixel = thumbnail(attach.Attachment(mime_type="image/png", data=_b64(out.getvalue())), "sixel")
    assert sixel is not None and sixel.startswith('\x1bPq"1;1;60;12')
    assert sixel.endswith("\x1b\\\n")
    assert sixel.count("-") == 2  # 12 pixel rows: two bands of six
    assert "!30~" in sixel  # half the width in one colour, a run written once


@pytest.mark.parametrize("protocol", ["kitty", "iterm2"])
def test_a_thumbnail_carries_no_escape_an_attachments_data_holds(protocol: str) -> None:
    """An MCP resource's image data is any string: after a valid PNG header, a BEL and an
    escape sequence (here a clipboard write) would reach the terminal as its own."""
    from moot.frontend.thumbnails import thumbnail

    data = base64.b64encode(png(200, 100)).decode() + "\x07\x1b]52;c;aGk=\x07"
    drawn = thumbnail(attach.Attachment(mime_type="image/png", data=data), protocol)
    assert drawn is None or "\x1b]52" not in drawn

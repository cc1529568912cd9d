"""`moot -p` with images and PDFs: `-i/--image FILE` (repeatable) and `@path` in the task
attach them to the turn; what cannot be attached is one message, and no session is kept."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from images import jpeg, png
from moot.protocol import events as ev
from moot_cli import RunMoot
from pdf_files import pdf, photo
from test_cli import parse_stream, script


def test_images_and_pdfs_from_flags_and_mentions_go_with_the_turn(
    moot: RunMoot, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(png(1280, 720))
    (tmp_path / "spec.pdf").write_bytes(pdf(3))
    (tmp_path / "more.jpg").write_bytes(photo(4000, 3000))
    model = script(tmp_path, ["seen"])
    result = moot(
        "-p", "what is wrong in @shot.png?", "-i", "spec.pdf", "--image", "more.jpg",
        "--model", model, "--output-format", "events",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    started = parse_stream(result.stdout)[0]
    assert isinstance(started, ev.TurnStarted)
    assert started.prompt == "what is wrong in [image 1: shot.png 1280x720]?"
    assert [(a.mime_type, a.name) for a in started.attachments] == [
        ("image/png", "shot.png"),
        ("application/pdf", "spec.pdf"),
        ("image/jpeg", "more.jpg"),
    ]
    # The runtime's check, as every front end's: the photo fitted as it is sent.
    assert (started.attachments[2].width, started.attachments[2].height) == (2000, 1500)
    assert base64.b64decode(started.attachments[1].data) == pdf(3)
    assert not started.files  # the image is no text file the model is told it could not read


def test_an_image_that_is_not_what_its_name_says_is_refused_before_any_session(
    moot: RunMoot, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_text("this is text")
    (tmp_path / "cut.jpg").write_bytes(jpeg())
    model = script(tmp_path, ["never"])
    cases = {
        ("-p", "see @shot.png"): "shot.png is named like a PNG image but is not",
        ("-p", "see", "-i", "shot.png"): "shot.png is named like a PNG image but is not",
        ("-p", "see", "-i", "gone.png"): "gone.png: no such file",
        ("-p", "see", "-i", "cut.jpg"): "cut.jpg is a damaged JPEG",  # a header, no picture
    }
    for args, said in cases.items():
        result = moot(*args, "--model", model)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        assert result.stderr.splitlines() == [result.stderr.strip()]  # one line
        assert said in result.stderr
    assert "ses_" not in moot("sessions", "list").stdout


def test_an_image_flag_without_a_task_is_a_usage_error(moot: RunMoot, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png())
    for args in (["-i", "shot.png"], ["--resume", "ses_x", "-i", "shot.png"]):
        result = moot(*args)
        assert result.returncode == 2, result.stderr
        assert "-i/--image goes with a -p task" in result.stderr
        assert "paste an image (ctrl+v) or name it as @path" in result.stderr


def test_a_mention_of_a_repository_symlink_to_a_file_outside_attaches_nothing(
    moot: RunMoot, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("private") / "taxes.pdf"
    outside.write_bytes(pdf(1))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.pdf").symlink_to(outside)
    (tmp_path / "docs" / "own.pdf").write_bytes(pdf(2))
    model = script(tmp_path, ["seen"])
    result = moot(
        "-p", "compare @docs/spec.pdf and @docs/own.pdf", "--model", model,
        "--output-format", "events",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    started = parse_stream(result.stdout)[0]
    assert isinstance(started, ev.TurnStarted)
    assert [a.name for a in started.attachments] == ["docs/own.pdf"]
    assert "@docs/spec.pdf" in started.prompt  # left as the words typed: nothing of it read

"""Images in the app end to end, in a real terminal (tmux) with a real X clipboard (Xvfb,
xclip): `@shot.png` and ctrl+v become chips, and the turn the session records carries both
images. Every wait polls the screen or a file, bounded."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from images import on_clipboard, png, x_clipboard
from moot.frontend.attach import human_size
from test_tui_tmux import Terminal, _quit, terminal  # noqa: F401 (the fixture)

SCRIPT = """\
turns:
  - text: "Two screenshots seen."
"""


def test_an_at_path_image_and_a_pasted_one_go_with_the_message(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "shot.png").write_bytes(png(1280, 720))
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    exit_file = tmp_path / "exit-code"
    with x_clipboard(tmp_path) as x:
        terminal.env["DISPLAY"] = x["DISPLAY"]
        with on_clipboard(x, png(20, 10), "image/png"):
            command = f"{moot} --model scripted:{script}; echo $? > {exit_file}"
            terminal.tmux(
                "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40",
                "-c", str(repo), command,
            )  # fmt: skip
            terminal.wait_for(lambda s: "scripted:" in s, "the app")
            terminal.keys("-l", "what is wrong in @shot.png ")
            terminal.wait_for(lambda s: "[image 1: shot.png 1280x720]" in s, "the @path chip")
            terminal.keys("-l", "and ")
            terminal.keys("C-v")
            terminal.wait_for(lambda s: "[image 2: pasted.png 20x10]" in s, "the pasted chip")
            terminal.keys("Enter")
            terminal.wait_for(lambda s: "Two screenshots seen." in s, "the answer")
            screen = terminal.screen()
            assert f"[image 1: shot.png 1280x720, {human_size(len(png(1280, 720)))}]" in screen
            assert "[image 2: pasted.png 20x10, " in screen
            assert _quit(terminal, exit_file) == "0"
    env = terminal.env
    listed = subprocess.run(
        [str(moot), "sessions", "list"], capture_output=True, text=True, env=env, cwd=repo
    )
    session_id = next(word for word in listed.stdout.split() if word.startswith("ses_"))
    exported = subprocess.run(
        [str(moot), "sessions", "export", session_id, "--format", "json"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    events = json.loads(exported.stdout)["events"]
    (started,) = [e for e in events if e["kind"] == "turn_started"]
    assert [(a["name"], base64.b64decode(a["data"])) for a in started["attachments"]] == [
        ("shot.png", png(1280, 720)),
        ("pasted.png", png(20, 10)),
    ]


def test_with_the_thumbnails_setting_the_app_draws_the_image_under_its_line(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    """`ui.imageThumbnails` reaches the app from the settings: half cells under the line."""
    repo = tmp_path / "repo"
    (repo / ".moot").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".moot" / "settings.json").write_text('{"ui": {"imageThumbnails": true}}')
    (repo / "shot.png").write_bytes(png(96, 48))
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    exit_file = tmp_path / "exit-code"
    command = f"{moot} --model scripted:{script}; echo $? > {exit_file}"
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40",
        "-c", str(repo), command,
    )  # fmt: skip
    terminal.wait_for(lambda s: "scripted:" in s, "the app")
    terminal.keys("-l", "what is @shot.png ")
    terminal.wait_for(lambda s: "[image 1: shot.png 96x48]" in s, "the chip")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "Two screenshots seen." in s, "the answer")
    lines = terminal.screen().splitlines()
    at = next(n for n, line in enumerate(lines) if "[image 1: shot.png 96x48, " in line)
    assert all("▀" * 24 in line for line in lines[at + 1 : at + 7]), lines[at : at + 8]
    assert _quit(terminal, exit_file) == "0"

"""`moot sessions export --format md` writes the images a session holds as files beside where
it runs, in the folder the markdown links to (real `moot` processes, scripted model)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from moot_cli import moot_command, moot_env
from pdf_files import screenshot


def test_a_markdown_export_writes_the_images_it_links_to(tmp_path: Path) -> None:
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    (work / "shot.png").write_bytes(screenshot(64, 48))
    script = tmp_path / "script.json"
    read = {"tool_calls": [{"name": "read", "arguments": {"path": "shot.png"}}]}
    script.write_text(json.dumps([read, "a screenshot of code"]))
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"}

    def moot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            moot_command(*args), cwd=cwd, env=env, text=True, capture_output=True, timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    ran = moot("-p", "what is in shot.png?", "--model", f"scripted:{script}",
               "--output-format", "json", cwd=work)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    session = json.loads(ran.stdout)["session_id"]

    exported = moot("sessions", "export", session, "--format", "md", cwd=out)
    assert exported.returncode == 0, exported.stderr
    folder = out / f"{session}-attachments"
    assert exported.stderr == f"moot: wrote 1 attachments to {folder.name}/\n"
    assert (folder / "01-shot.png").read_bytes() == (work / "shot.png").read_bytes()
    links = re.findall(r"!\[([^\]]*)\]\(([^)]*)\)", exported.stdout)
    size = (work / "shot.png").stat().st_size
    assert size < 1024
    described = f"shot.png, image/png, 64x48, {size} bytes"
    assert links == [(described, f"{folder.name}/01-shot.png")]


def test_an_export_follows_no_link_out_of_its_attachments_folder(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "shot.png").write_bytes(screenshot(64, 48))
    script = tmp_path / "script.json"
    read = {"tool_calls": [{"name": "read", "arguments": {"path": "shot.png"}}]}
    script.write_text(json.dumps([read, "seen"]))
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"}

    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            moot_command(*args), cwd=work, env=env, text=True, capture_output=True, timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    ran = moot("-p", "look", "--model", f"scripted:{script}", "--output-format", "json")
    session = json.loads(ran.stdout)["session_id"]
    # Made in the workspace by a command meanwhile: the folder, then a file in a real folder.
    (work / f"{session}-attachments").symlink_to(elsewhere)
    exported = moot("sessions", "export", session, "--format", "md")
    assert "cannot write the attachments" in exported.stderr
    assert list(elsewhere.iterdir()) == []
    (work / f"{session}-attachments").unlink()
    (work / f"{session}-attachments").mkdir()
    (work / f"{session}-attachments" / "01-shot.png").symlink_to(elsewhere / "bashrc")
    exported = moot("sessions", "export", session, "--format", "md")
    assert "cannot write the attachments" in exported.stderr
    assert list(elsewhere.iterdir()) == []

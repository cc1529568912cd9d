"""The clipboard command fallback (`/copy` where OSC 52 may be ignored): real processes."""

from __future__ import annotations

import os
from pathlib import Path

from moot.commands.clipboard import clipboard_commands, copy_with_command


def fake_command(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_the_first_clipboard_command_that_works_gets_the_text(tmp_path: Path) -> None:
    bin_dir, got = tmp_path / "bin", tmp_path / "clipboard.txt"
    bin_dir.mkdir()
    fake_command(bin_dir, "wl-copy", "exit 1")  # there, but fails: the next is tried
    fake_command(bin_dir, "xclip", f'/bin/cat > "{got}"')  # PATH holds only bin_dir
    env = {"PATH": str(bin_dir), "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}

    assert [os.path.basename(argv[0]) for argv in clipboard_commands(env)] == ["wl-copy", "xclip"]
    assert copy_with_command("héllo\nworld", env) == "xclip"
    assert got.read_text() == "héllo\nworld"


def test_no_display_or_no_command_means_none(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_command(bin_dir, "xclip", "exit 0")
    assert copy_with_command("x", {"PATH": str(bin_dir)}) is None  # no DISPLAY: not tried
    assert copy_with_command("x", {"PATH": os.devnull, "DISPLAY": ":0"}) is None

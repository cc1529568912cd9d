"""ripgrep's hits are kept only when the file, opened without following any symlink, holds
them: a directory swapped for a symlink while ripgrep runs (by a background shell or a peer's
command) must not bring a host file's lines into the result."""

from __future__ import annotations

from pathlib import Path

from moot.workspace.search import Hit, confirmed


def test_hits_read_through_a_swapped_in_symlink_are_dropped(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "host"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (root / "src" / "a.py").write_text("token = 1\n")
    (outside / "key.txt").write_text("token = host-secret\n")
    (root / "swapped").symlink_to(outside)  # what ripgrep saw as a directory, now a link
    reported = [
        ("src/a.py", [Hit(1, "token = 1", True)]),
        ("swapped/key.txt", [Hit(1, "token = host-secret", True)]),
        ("src/a.py", [Hit(1, "token = changed meanwhile", True)]),
        ("src/gone.py", [Hit(1, "token", True)]),
    ]
    assert list(confirmed(root, reported)) == [reported[0]]

"""The read ledger: what a session last saw of each file, and refusing stale edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.workspace import NotReadError, ReadLedger, StaleFileError, Workspace


def seen(ledger: ReadLedger, path: Path) -> None:
    ledger.record(path, os.stat(path), path.read_bytes())


def test_an_unchanged_file_is_fresh(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    ledger = ReadLedger()
    seen(ledger, path)
    ledger.check_fresh(path)
    ledger.require_read(path, b"one\n")
    stamp = ledger.stamp(path)
    assert stamp is not None and stamp.size == 4 and stamp.sha256 is not None


def test_a_file_never_seen_passes_check_fresh_but_not_require_read(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    ledger = ReadLedger()
    ledger.check_fresh(path)
    with pytest.raises(NotReadError, match="read it first"):
        ledger.require_read(path)


def test_a_same_size_rewrite_with_the_same_mtime_is_still_caught(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    ledger = ReadLedger()
    seen(ledger, path)
    st = os.stat(path)
    path.write_text("two\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # a coarse clock: mtime unchanged
    with pytest.raises(StaleFileError, match="changed on disk"):
        ledger.check_fresh(path)
    with pytest.raises(StaleFileError):
        ledger.check_fresh(path, b"two\n")


def test_a_touch_without_a_change_is_fresh(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    ledger = ReadLedger()
    seen(ledger, path)
    os.utime(path, ns=(0, 0))
    ledger.check_fresh(path)


def test_an_unhashed_stamp_compares_mtime_and_size(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("x" * 10)
    ledger = ReadLedger()
    ledger.record(path, os.stat(path), None)
    ledger.check_fresh(path)
    path.write_text("y" * 11)
    with pytest.raises(StaleFileError):
        ledger.check_fresh(path)


def test_forget_and_one_ledger_per_workspace(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    first, second = Workspace(tmp_path), Workspace(tmp_path)
    seen(first.ledger, path)
    assert first.ledger is not second.ledger
    assert second.ledger.stamp(path) is None
    first.ledger.forget(path)
    assert first.ledger.stamp(path) is None

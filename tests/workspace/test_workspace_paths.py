"""The path policy (`moot.workspace.paths`): containment, symlinks, protection, atomic writes."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from moot.workspace.no_follow import AtomicWriter, PathRefused, atomic_write, open_read
from moot.workspace.paths import Workspace


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Workspace, Path]:
    """A workspace `ws/` beside a directory `outside/` holding a secret."""
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return Workspace(root), outside


def refused(rule: str) -> pytest.RaisesExc[PathRefused]:
    return pytest.raises(PathRefused, match=rf"\({rule}\)")


def beside(ws: Workspace) -> dict[str, bytes]:
    """Everything in the workspace's parent directory except the workspace itself."""
    view: dict[str, bytes] = {}
    for entry in ws.root.parent.iterdir():
        if entry != ws.root:
            view[entry.name] = entry.read_bytes() if entry.is_file() else b"<dir>"
            if entry.is_dir() and not entry.is_symlink():
                view.update({f"{entry.name}/{k}": v for k, v in snapshot(entry).items()})
    return view


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes() if path.is_file() else b"<dir>"
        for path in sorted(directory.rglob("*"))
    }


# Lexical checks ---------------------------------------------------------------------------------


def test_relative_and_absolute_paths_inside_resolve(tree: tuple[Workspace, Path]) -> None:
    ws, _ = tree
    assert ws.resolve_read("a.txt") == ws.root / "a.txt"
    assert ws.resolve_read(str(ws.root / "a.txt")) == ws.root / "a.txt"
    assert ws.resolve_read("sub/../a.txt") == ws.root / "a.txt"
    assert ws.resolve_write("sub/new/file.txt") == ws.root / "sub" / "new" / "file.txt"


@pytest.mark.parametrize(
    "path", ["../outside/secret.txt", "sub/../../outside", "/etc/passwd", ".."]
)
def test_paths_outside_the_workspace_are_refused(tree: tuple[Workspace, Path], path: str) -> None:
    ws, _ = tree
    with refused("outside-workspace"):
        ws.resolve_read(path)
    with refused("outside-workspace"):
        ws.resolve_write(path)


def test_an_absolute_path_to_a_sibling_with_the_same_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-other").mkdir()
    ws = Workspace(tmp_path / "ws")
    with refused("outside-workspace"):
        ws.resolve_read(str(tmp_path / "ws-other" / "x"))


def test_nul_bytes_and_empty_paths_are_refused(tree: tuple[Workspace, Path]) -> None:
    ws, _ = tree
    with refused("nul-byte") as info:
        ws.resolve_read("a.txt\x00.png")
    assert info.value.rule == "nul-byte"
    assert "'a.txt\\x00.png'" in str(info.value)  # names the path, the NUL made visible
    for empty in ("", "   "):
        with refused("empty"):
            ws.resolve_write(empty)


def test_containment_is_checked_before_the_file_system_is_touched(
    tree: tuple[Workspace, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, _ = tree
    touched: list[str] = []
    real_lstat = os.lstat

    def spy(path: str, *args: object, **kwargs: object) -> os.stat_result:
        touched.append(str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", spy)
    with refused("outside-workspace"):
        ws.resolve_read("../../../../etc/shadow")
    with refused("outside-workspace"):
        ws.resolve_write("../../../../etc/shadow")
    assert touched == []


def test_the_root_itself_cannot_be_written(tree: tuple[Workspace, Path]) -> None:
    ws, _ = tree
    with refused("workspace-root"):
        ws.resolve_write(".")


def test_protected_paths_need_an_explicit_allowance(tree: tuple[Workspace, Path]) -> None:
    ws, _ = tree
    for path in (".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".moot/settings.json"):
        with refused("protected"):
            ws.resolve_write(path)
    with refused("protected"):
        ws.resolve_write(".GIT/hooks/x")  # case-insensitive file systems
    assert ws.resolve_write(".git/config", allow_protected=True) == ws.root / ".git" / "config"
    assert ws.resolve_read(".git/config") == ws.root / ".git" / "config"  # reading is fine
    assert ws.resolve_write("sub/.moot/x") == ws.root / "sub" / ".moot" / "x"  # only at the top


def test_a_workspace_needs_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        Workspace(tmp_path / "missing")


def test_the_root_is_resolved_once_through_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    ws = Workspace(tmp_path / "alias")
    assert ws.root == tmp_path / "real"
    assert ws.resolve_read(str(tmp_path / "real" / "x")) == tmp_path / "real" / "x"


# Symlinks ----------------------------------------------------------------------------------------


def test_a_symlink_leaf_pointing_outside_is_refused(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    (ws.root / "leak.txt").symlink_to(outside / "secret.txt")
    with refused("outside-workspace"):
        ws.resolve_read("leak.txt")
    with refused("symlink"):
        ws.resolve_write("leak.txt")


def test_a_symlinked_ancestor_pointing_outside_is_refused(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    (ws.root / "sub" / "door").symlink_to(outside)
    with refused("outside-workspace"):
        ws.resolve_read("sub/door/secret.txt")
    with refused("symlink"):
        ws.resolve_write("sub/door/new.txt")
    with refused("outside-workspace"):
        ws.resolve_read("sub/door/../outside/secret.txt")  # `..` after a symlink is physical


def test_symlinks_inside_the_workspace_may_be_read_but_not_written(
    tree: tuple[Workspace, Path],
) -> None:
    ws, _ = tree
    (ws.root / "alias.txt").symlink_to(ws.root / "a.txt")
    (ws.root / "dir-alias").symlink_to(ws.root / "sub")
    assert ws.resolve_read("alias.txt") == ws.root / "a.txt"
    assert ws.resolve_read("dir-alias/x") == ws.root / "sub" / "x"
    with refused("symlink"):
        ws.resolve_write("alias.txt")
    with refused("symlink"):
        ws.resolve_write("dir-alias/x")


def test_a_symlink_loop_is_refused_for_writes_and_fails_for_reads(
    tree: tuple[Workspace, Path],
) -> None:
    ws, _ = tree
    (ws.root / "loop").symlink_to(ws.root / "loop")
    with refused("symlink"):
        ws.resolve_write("loop/x")
    try:
        target = ws.resolve_read("loop/x")
    except PathRefused:
        return
    with pytest.raises((OSError, PathRefused)):
        os.close(open_read(ws.root, target))


# Atomic writes -----------------------------------------------------------------------------------


def test_atomic_write_creates_parents_and_keeps_an_existing_mode(
    tree: tuple[Workspace, Path],
) -> None:
    ws, _ = tree
    writer = atomic_write(ws.root, ws.resolve_write("deep/er/new.txt"), b"hi\n")
    assert (ws.root / "deep" / "er" / "new.txt").read_bytes() == b"hi\n"
    assert writer.stat is not None and writer.stat.st_size == 3 and not writer.existed
    script = ws.root / "run.sh"
    script.write_text("old\n")
    script.chmod(0o751)
    assert atomic_write(ws.root, ws.resolve_write("run.sh"), b"new\n").existed
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_bytes() == b"new\n"
    assert sorted(p.name for p in ws.root.iterdir()) == ["a.txt", "deep", "run.sh", "sub"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tree: tuple[Workspace, Path]) -> None:
    ws, _ = tree

    def write_half_then_fail() -> None:
        with ws.open_for_write("a.txt") as file:
            file.write(b"half of the new cont")
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_half_then_fail()
    assert (ws.root / "a.txt").read_text() == "a\n"
    assert sorted(p.name for p in ws.root.iterdir()) == ["a.txt", "sub"]


def test_a_parent_swapped_for_a_symlink_after_resolve_is_refused(
    tree: tuple[Workspace, Path],
) -> None:
    """Step 1 checks the path; then `sub` becomes a symlink out; step 2 must not follow it."""
    ws, outside = tree
    target = ws.resolve_write("sub/file.txt")
    (ws.root / "sub").rmdir()
    (ws.root / "sub").symlink_to(outside)
    before = snapshot(outside)
    with refused("symlink"):
        atomic_write(ws.root, target, b"pwned\n")
    assert snapshot(outside) == before


def test_a_parent_moved_away_and_replaced_while_writing_is_refused(
    tree: tuple[Workspace, Path],
) -> None:
    """The directory is opened, then moved outside and replaced by a symlink before the rename."""
    ws, outside = tree
    target = ws.resolve_write("sub/file.txt")
    with refused("symlink"), AtomicWriter(ws.root, target) as file:
        file.write(b"pwned\n")
        (ws.root / "sub").rename(outside / "moved")
        (ws.root / "sub").symlink_to(outside / "moved")
    assert sorted(os.listdir(outside / "moved")) == []  # no file, no temporary left behind
    assert snapshot(outside) == {"moved": b"<dir>", "secret.txt": b"secret\n"}


def test_a_leaf_swapped_for_a_symlink_is_not_written_through(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    target = ws.resolve_write("a.txt")
    (ws.root / "a.txt").unlink()
    (ws.root / "a.txt").symlink_to(outside / "secret.txt")
    with refused("symlink"):
        atomic_write(ws.root, target, b"pwned\n")
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_open_read_does_not_follow_a_symlink_swapped_in(tree: tuple[Workspace, Path]) -> None:
    ws, outside = tree
    target = ws.resolve_read("a.txt")
    (ws.root / "a.txt").unlink()
    (ws.root / "a.txt").symlink_to(outside / "secret.txt")
    with refused("symlink"):
        open_read(ws.root, target)


# Property: nothing generated escapes -------------------------------------------------------------


@contextlib.contextmanager
def maze() -> Iterator[tuple[Workspace, Path]]:
    """A workspace full of symlinks that lead out, beside a directory that must stay untouched:
    a new one for each example, so no example sees what an earlier one wrote (Hypothesis replays
    a failure to shrink it, and a replay over another workspace passes: a FlakyFailure)."""
    with tempfile.TemporaryDirectory(prefix="moot-maze-") as scratch:
        base = Path(scratch).resolve()
        root, outside = base / "ws", base / "outside"
        (root / "sub" / "deep").mkdir(parents=True)
        outside.mkdir()
        (outside / "secret.txt").write_text("secret\n")
        (root / "a.txt").write_text("a\n")
        (root / "out").symlink_to(outside)
        (root / "out-file").symlink_to(outside / "secret.txt")
        (root / "sub" / "up").symlink_to("../..")
        (root / "sub" / "deep" / "rel-out").symlink_to("../../../outside")
        (root / "inside").symlink_to("sub")
        (root / "dangling").symlink_to(outside / "not-yet")
        yield Workspace(root), outside


SEGMENTS = st.one_of(
    st.sampled_from(
        [
            *(".", "..", "sub", "deep", "up", "out", "out-file", "inside", "dangling", "rel-out"),
            *("a.txt", "secret.txt", "outside", "ws", "new", "ü", "日本", ""),
        ]
    ),
    st.text(st.characters(blacklist_characters="/\x00", codec="utf-8"), min_size=1, max_size=6),
)


@st.composite
def paths(draw: st.DrawFn, root: str, base: str) -> str:
    body = "/".join(draw(st.lists(SEGMENTS, min_size=1, max_size=7)))
    prefix = draw(st.sampled_from(["", "/", root + "/", base + "/", "./", "//"]))
    return prefix + body


@settings(max_examples=400)
@given(data=st.data())
def test_no_generated_path_escapes_the_workspace(data: st.DataObject) -> None:
    with maze() as (ws, _):
        _check_no_escape(ws, data)


def _check_no_escape(ws: Workspace, data: st.DataObject) -> None:
    root = str(ws.root)
    path = data.draw(paths(root, str(ws.root.parent)))
    before = beside(ws)
    try:
        resolved = ws.resolve_read(path)
    except PathRefused as exc:
        event(f"read refused: {exc.rule}")
    else:
        event("read resolved")
        assert os.path.realpath(resolved) == str(resolved)
        assert ws.contains(resolved)
    try:
        target = ws.resolve_write(path)
    except PathRefused as exc:
        event(f"write refused: {exc.rule}")
        return
    assert ws.contains(os.path.realpath(target))
    try:
        atomic_write(ws.root, target, b"x")
    except (OSError, PathRefused):
        event("write failed")  # a file in the way of a directory, a name too long...
    else:
        event("written")
        assert os.path.realpath(target) == str(target)
    assert beside(ws) == before


def test_a_read_root_may_be_read_but_never_written(tmp_path: Path) -> None:
    root, outputs, secret = tmp_path / "ws", tmp_path / "outputs", tmp_path / "secret"
    for directory in (root, outputs, secret):
        directory.mkdir()
    (outputs / "cmd-0001.txt").write_text("saved\n")
    (secret / "key").write_text("no\n")
    os.symlink(secret / "key", outputs / "sneaky")
    ws = Workspace(root, read_roots=(outputs,))

    assert ws.resolve_read(str(outputs / "cmd-0001.txt")) == outputs / "cmd-0001.txt"
    assert ws.root_of(outputs / "cmd-0001.txt") == outputs
    with pytest.raises(PathRefused) as refused:
        ws.resolve_read(str(outputs / "sneaky"))  # a symlink out of the read root
    assert refused.value.rule == "outside-workspace"
    with pytest.raises(PathRefused):
        ws.resolve_read(str(secret / "key"))
    with pytest.raises(PathRefused):
        ws.resolve_read(str(outputs / ".." / "secret" / "key"))
    with pytest.raises(PathRefused):
        ws.resolve_write(str(outputs / "cmd-0002.txt"))

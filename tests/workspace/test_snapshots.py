"""File snapshots: the store's blobs and snapshot records, and restoring a run's files exactly."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.permissions.targets import command_writes
from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.host import HostSandbox
from moot.store import MemoryStore, SQLiteStore, Store, UnknownSessionError
from moot.store.sqlite_schema import _SCHEMA_1, SCHEMA_VERSION
from moot.tools.base import ToolContext
from moot.tools.bash import bash_tool
from moot.tools.edit import edit_tool
from moot.tools.multi_edit import multi_edit_tool
from moot.tools.read import read_tool
from moot.tools.write import write_tool
from moot.workspace import PathRefused, Workspace
from moot.workspace.snapshots import FileSnapshots, RestoreError

BINARY = bytes(range(256)) * 3 + b"\x00\r\n\xff"


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store = (
        SQLiteStore(tmp_path / "db" / "sessions.db") if request.param == "sqlite" else MemoryStore()
    )
    yield made
    made.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = tmp_path / "ws"
    made.mkdir()
    return made


def _workspace(store: Store, root: Path) -> tuple[Workspace, FileSnapshots, str]:
    sid = store.create_session(workspace=str(root)).id
    snapshots = FileSnapshots(store, sid, root)
    return Workspace(root, snapshots=snapshots), snapshots, sid


def _ctx(sid: str, run_id: str) -> ToolContext:
    return ToolContext(sid, run_id, "call_1", "main", "tc_1")


# ---- the store --------------------------------------------------------------------------------


def test_blobs_are_named_by_sha256_and_stored_once(store: Store) -> None:
    first = store.put_blob(BINARY)
    again = store.put_blob(bytearray(BINARY))

    assert first == again == hashlib.sha256(BINARY).hexdigest()
    assert store.get_blob(first) == BINARY
    assert store.get_blob(store.put_blob(b"")) == b""
    with pytest.raises(KeyError):
        store.get_blob("0" * 64)


def test_the_first_snapshot_of_a_path_in_a_run_wins(store: Store) -> None:
    sid = store.create_session().id
    old, new = store.put_blob(b"old"), store.put_blob(b"new")

    store.record_snapshot(sid, "run_1", "a.txt", old)
    store.record_snapshot(sid, "run_1", "a.txt", new)
    store.record_snapshot(sid, "run_1", "made.txt", None)
    store.record_snapshot(sid, "run_1", "made.txt", old)
    store.record_snapshot(sid, "run_2", "a.txt", new)

    assert store.snapshots(sid, "run_1") == {"a.txt": old, "made.txt": None}
    assert store.snapshots(sid, "run_2") == {"a.txt": new}
    assert store.snapshots(sid, "run_3") == {}


def test_a_snapshot_must_name_a_stored_blob_and_a_known_session(store: Store) -> None:
    sid = store.create_session().id
    with pytest.raises(KeyError):
        store.record_snapshot(sid, "run_1", "a.txt", "f" * 64)
    assert store.snapshots(sid, "run_1") == {}
    with pytest.raises(UnknownSessionError):
        store.record_snapshot("ses_missing", "run_1", "a.txt", None)
    with pytest.raises(UnknownSessionError):
        store.snapshots("ses_missing", "run_1")


def test_a_version_1_database_opens_and_gains_the_snapshot_tables(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    db = sqlite3.connect(path)
    for statement in _SCHEMA_1:
        db.execute(statement)
    db.execute(
        "INSERT INTO sessions (id, title, workspace, created_at, updated_at)"
        " VALUES ('ses_old', 'yesterday', '/w', '2025-01-01T00:00:00.000000+00:00',"
        " '2025-01-01T00:00:00.000000+00:00')"
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()

    with SQLiteStore(path) as store:
        info = store.session("ses_old")
        assert info is not None and info.title == "yesterday"
        store.record_snapshot("ses_old", "run_1", "a.txt", store.put_blob(b"a"))
        assert store.snapshots("ses_old", "run_1") == {"a.txt": hashlib.sha256(b"a").hexdigest()}
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    db.close()


def test_snapshots_survive_reopening_the_database(tmp_path: Path, root: Path) -> None:
    (root / "a.txt").write_bytes(b"before\r\n")
    with SQLiteStore(tmp_path / "sessions.db") as store:
        ws, _, sid = _workspace(store, root)
        ws.write_bytes(ws.resolve_write("a.txt"), b"after\n", run_id="run_1")
    with SQLiteStore(tmp_path / "sessions.db") as store:
        assert FileSnapshots(store, sid, root).restore("run_1") == [root / "a.txt"]
    assert (root / "a.txt").read_bytes() == b"before\r\n"


# ---- taking and restoring snapshots -----------------------------------------------------------


async def test_restore_puts_every_file_back_byte_exactly(store: Store, root: Path) -> None:
    ws, snapshots, sid = _workspace(store, root)
    (root / "blob.bin").write_bytes(BINARY)
    (root / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    (root / "keep.txt").write_bytes(b"untouched\n")
    ctx = _ctx(sid, "run_1")
    read_tool(ws)(path="win.txt")

    ws.write_bytes(ws.resolve_write("blob.bin"), b"text now\n", run_id="run_1")
    edited = await edit_tool(ws).invoke({"path": "win.txt", "old": "two", "new": "2"}, ctx)
    created = await write_tool(ws).invoke({"path": "new/made.py", "content": "x = 1\n"}, ctx)

    assert not edited.is_error and not created.is_error
    assert (root / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n"
    assert set(snapshots.changed("run_1")) == {"blob.bin", "win.txt", "new/made.py"}

    restored = snapshots.restore("run_1")

    assert restored == [root / "blob.bin", root / "new" / "made.py", root / "win.txt"]
    assert (root / "blob.bin").read_bytes() == BINARY
    assert (root / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\n"
    assert not (root / "new" / "made.py").exists()
    assert (root / "keep.txt").read_bytes() == b"untouched\n"


async def test_a_file_changed_twice_in_a_run_gets_its_first_content_back(
    store: Store, root: Path
) -> None:
    ws, snapshots, sid = _workspace(store, root)
    path = root / "m.py"
    path.write_bytes(b"a = 0\nb = 0\n")
    read_tool(ws)(path="m.py")
    ctx = _ctx(sid, "run_1")

    await edit_tool(ws).invoke({"path": "m.py", "old": "a = 0", "new": "a = 1"}, ctx)
    edits = [{"old": "b = 0", "new": "b = 1"}, {"old": "a = 1", "new": "a = 2"}]
    await multi_edit_tool(ws).invoke({"path": "m.py", "edits": edits}, ctx)
    await write_tool(ws).invoke({"path": "m.py", "content": "gone\n"}, ctx)
    assert path.read_bytes() == b"gone\n"

    snapshots.restore("run_1")

    assert path.read_bytes() == b"a = 0\nb = 0\n"


async def test_each_run_keeps_its_own_before_state(store: Store, root: Path) -> None:
    ws, snapshots, sid = _workspace(store, root)
    write = write_tool(ws)
    await write.invoke({"path": "a.txt", "content": "v1\n"}, _ctx(sid, "run_1"))
    await write.invoke({"path": "a.txt", "content": "v2\n"}, _ctx(sid, "run_2"))

    snapshots.restore("run_2")
    assert (root / "a.txt").read_bytes() == b"v1\n"
    snapshots.restore("run_1")
    assert not (root / "a.txt").exists()


def test_identical_contents_share_one_blob(tmp_path: Path, root: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_bytes(b"same\n")
    with SQLiteStore(tmp_path / "sessions.db") as store:
        ws, snapshots, _ = _workspace(store, root)
        for name in ("a.txt", "b.txt", "c.txt"):
            ws.write_bytes(ws.resolve_write(name), b"changed\n", run_id="run_1")
        assert len(set(snapshots.changed("run_1").values())) == 1
    db = sqlite3.connect(tmp_path / "sessions.db")
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
    db.close()


def test_writes_outside_a_run_and_without_a_sink_keep_nothing(store: Store, root: Path) -> None:
    ws, snapshots, _ = _workspace(store, root)
    ws.write_bytes(ws.resolve_write("a.txt"), b"x", run_id="")
    assert snapshots.changed("") == {}
    plain = Workspace(root)
    assert plain.write_bytes(plain.resolve_write("b.txt"), b"y", run_id="run_1").stat is not None


def test_a_refused_snapshot_stops_the_write(root: Path) -> None:
    class Broken:
        def before_change(self, run_id: str, path: Path) -> None:
            raise OSError("disk full")

    ws = Workspace(root, snapshots=Broken())
    with pytest.raises(OSError, match="disk full"):
        ws.write_bytes(ws.resolve_write("a.txt"), b"x", run_id="run_1")
    assert not (root / "a.txt").exists()


def test_restore_goes_on_past_a_file_it_cannot_put_back(store: Store, root: Path) -> None:
    ws, snapshots, _ = _workspace(store, root)
    (root / "a.txt").write_bytes(b"a\n")
    ws.write_bytes(ws.resolve_write("a.txt"), b"A\n", run_id="run_1")
    ws.write_bytes(ws.resolve_write("made.txt"), b"new\n", run_id="run_1")
    (root / "made.txt").unlink()
    (root / "made.txt").mkdir()  # a directory now stands where the run created a file

    with pytest.raises(RestoreError) as caught:
        snapshots.restore("run_1")

    assert caught.value.restored == [root / "a.txt"]
    assert [f.path for f in caught.value.failures] == ["made.txt"]
    assert (root / "a.txt").read_bytes() == b"a\n"
    assert (root / "made.txt").is_dir()


def test_restore_never_writes_through_a_symlink(store: Store, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws, snapshots, _ = _workspace(store, root)
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_bytes(b"old\n")
    ws.write_bytes(ws.resolve_write("d/f.txt"), b"new\n", run_id="run_1")
    (root / "d" / "f.txt").unlink()
    (root / "d").rmdir()
    (root / "d").symlink_to(outside)  # swapped in after the run

    with pytest.raises(RestoreError):
        snapshots.restore("run_1")

    assert list(outside.iterdir()) == []


def test_a_path_outside_the_root_is_refused(store: Store, root: Path, tmp_path: Path) -> None:
    _, snapshots, _ = _workspace(store, root)
    with pytest.raises(PathRefused):
        snapshots.before_change("run_1", tmp_path / "elsewhere.txt")


# ---- the size cap (issue 11: editing a 200 MB file stored a 191 MB snapshot) ----------------


async def test_a_file_over_the_cap_is_not_kept_and_the_result_says_so(
    store: Store, root: Path
) -> None:
    sid = store.create_session(workspace=str(root)).id
    snapshots = FileSnapshots(store, sid, root, max_bytes=1000)
    ws = Workspace(root, snapshots=snapshots)
    big = b"".join(b"line %05d\n" % i for i in range(200))  # 2,200 bytes
    (root / "big.txt").write_bytes(big)
    (root / "small.txt").write_bytes(b"small\n")
    read, edit, write = read_tool(ws), edit_tool(ws), write_tool(ws)
    ctx = _ctx(sid, "run_1")
    await read.invoke({"path": "big.txt"}, ctx)
    await read.invoke({"path": "small.txt"}, ctx)
    first = (await edit.invoke({"path": "big.txt", "old": "line 00007", "new": "x"}, ctx)).content
    shrunk = (await write.invoke({"path": "big.txt", "content": "tiny\n"}, ctx)).content
    small = (await edit.invoke({"path": "small.txt", "old": "small", "new": "S"}, ctx)).content

    assert "big.txt was not kept for a rewind (2,200 bytes, more than snapshotMaxBytes, 1,000)" in (
        first
    )
    assert "rewinding will not restore it" in first
    assert "not kept" in shrunk, "no later change in the run keeps a state from within it"
    assert "not kept" not in small
    assert snapshots.changed("run_1") == {"small.txt": hashlib.sha256(b"small\n").hexdigest()}
    assert snapshots.restore("run_1") == [root / "small.txt"]
    assert (root / "big.txt").read_bytes() == b"tiny\n", "left as it is, never deleted"
    assert (root / "small.txt").read_bytes() == b"small\n"


def test_the_note_holds_for_the_run_and_an_absent_file_is_still_kept_as_absent(
    store: Store, root: Path
) -> None:
    sid = store.create_session(workspace=str(root)).id
    snapshots = FileSnapshots(store, sid, root, max_bytes=10)
    (root / "f").write_bytes(b"x" * 11)
    note = snapshots.before_change("run_1", root / "f")
    assert "not kept" in note
    assert snapshots.before_change("run_1", root / "f") == note
    assert snapshots.before_change("run_2", root / "g") == ""  # absent: kept as absent
    assert snapshots.changed("run_2") == {"g": None}


def test_the_setting_sets_the_cap(tmp_path: Path) -> None:
    from moot.settings import SettingsError, approve_held, load_settings
    from moot.tools.builtin import session_workspace
    from moot.workspace.snapshots import DEFAULT_MAX_BYTES

    (tmp_path / ".moot").mkdir()
    (tmp_path / ".moot" / "settings.json").write_text('{"snapshotMaxBytes": 4096}')
    environ = {"MOOT_HOME": str(tmp_path / "home")}
    assert load_settings(tmp_path, environ=environ).snapshot_max_bytes is None  # held
    approve_held(tmp_path, environ)  # a repository's file: the person approved it
    settings = load_settings(tmp_path, environ=environ)
    assert settings.snapshot_max_bytes == 4096
    store = MemoryStore()
    sid = store.create_session(workspace=str(tmp_path)).id
    made = session_workspace(store, sid, tmp_path, snapshot_max_bytes=settings.snapshot_max_bytes)
    assert isinstance(made.snapshots, FileSnapshots) and made.snapshots.max_bytes == 4096
    default = session_workspace(store, sid, tmp_path)
    assert isinstance(default.snapshots, FileSnapshots)
    assert default.snapshots.max_bytes == DEFAULT_MAX_BYTES
    (tmp_path / ".moot" / "settings.json").write_text('{"snapshotMaxBytes": -1}')
    with pytest.raises(SettingsError, match="snapshotMaxBytes"):
        load_settings(tmp_path, environ={"MOOT_HOME": str(tmp_path / "home")})


def test_restore_removes_the_directories_made_for_a_file_only_when_empty(
    store: Store, root: Path
) -> None:
    """A directory that did not exist before the run goes again on restore if nothing else is
    in it; one that existed, or that holds a file the run did not make, stays."""
    from moot.workspace.snapshots import FileSnapshots

    session = store.create_session(workspace=str(root)).id
    (root / "kept").mkdir()
    snapshots = FileSnapshots(store, session, root)
    for rel in ("kept/a/b/new.txt", "made/x/new.txt", "shared/new.txt"):
        target = root / rel
        snapshots.before_change("r1", target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("new\n")
    (root / "shared" / "someone_elses.txt").write_text("theirs\n")

    snapshots.restore("r1")

    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "kept",
        "shared",
        "shared/someone_elses.txt",
    ]


async def test_a_command_lines_writes_are_kept_before_it_runs(
    store: Store, root: Path, tmp_path: Path
) -> None:
    """What `>`, `tee` and `rm` write is kept, as an edit's file is; a file over the cap is
    not, and the result says so; a directory written into keeps only its files."""
    sid = store.create_session(workspace=str(root)).id
    snapshots = FileSnapshots(store, sid, root, max_bytes=1000)
    ws = Workspace(root, snapshots=snapshots)
    (root / "small.txt").write_bytes(BINARY[:100])
    (root / "big.txt").write_bytes(b"x" * 2000)
    (root / "dir").mkdir()
    sandbox = HostSandbox(SandboxPolicy(root, output_dir=tmp_path / "out"), kill_grace=0.5)
    shells = BackgroundShells()
    bash = bash_tool(sandbox, ws, shells, writes=command_writes)
    command = "echo hi | tee small.txt > made.txt && rm big.txt && cp small.txt dir"
    result = await bash.invoke({"command": command}, _ctx(sid, "run_1"))
    await sandbox.close()

    assert "big.txt was not kept for a rewind" in result.content, result.content
    assert set(snapshots.changed("run_1")) == {"small.txt", "made.txt", "dir/small.txt"}
    snapshots.restore("run_1")
    assert (root / "small.txt").read_bytes() == BINARY[:100]
    assert not (root / "made.txt").exists() and not (root / "dir" / "small.txt").exists()
    assert (root / "dir").is_dir()

"""The Docker sandbox on an engine that does not share this machine's disk (`DOCKER_HOST`
over ssh or TCP with TLS): the workspace lives in a volume of the session's, synced.

When the session's first container is made, a volume is made on the engine and a helper
container (`sleep`, no network, no capability, the host user's ids) mounts it whole at
`/vol`; the workspace is copied into `/vol/ws` (`push`). The command containers bind the
volume's directories, as the engine reports them (`Mountpoint`), where a local engine would
bind this machine's: the workspace read-write, `.git`, `.moot` and `Edit(...)` masks
read-only, hidden files from `/vol/empty` (an empty file), hidden directories an empty tmpfs;
so what a command sees, and may write, is as with a local engine. (Volume subpaths, API 1.45,
would do without the mount point; moot's engines are older. An engine whose volumes are not
directories on its host, a remote Docker Desktop say, cannot serve this.)

Before each command, what changed on this machine since the last sync is copied in
(`push`): files whose size, time or mode changed, new directories, and deletions. After each
command (and as a background command ends) what changed in the volume is copied back
(`pull`): the helper lists the workspace with each path's status (`stat`: change time,
modification time, size, mode, type; the top-level protected directories left out, being
read-only in the container), and fetches as a tar only what changed since the last listing:
by change time, which no command can set back, and everything changed in the second that
listing was made (`stat` shows whole seconds). What differs from what the last sync left is
written here; what the listing no longer holds is deleted here. A name holding a newline
(the listing is by lines) makes that pull fetch the whole workspace; so does a listing
after a pull that could not copy everything. While the helper cannot read a file (a command
made it unreadable) nothing is deleted here: what its tar misses might still be there.

What never leaves this machine: a path a `Read(...)` deny rule hides, moot's own directories
in the workspace (`private`), and what lies below them. A hidden path that was copied before
it was hidden is deleted from the volume at the next push. What is never copied back: the
protected paths, `Edit(...)` masks, hidden paths (a command cannot change them anyway).

Conflicts: a path changed here while a command ran (the person's editor, a file tool) and
changed in the volume too keeps this machine's copy; the command's result says so
(`SyncReport.conflicts`), and the next push gives the volume this machine's copy.

Sizes: one sync moves at most `SYNC_MAX_BYTES` (the first push copies the whole workspace,
`.git` included, and the first pull fetches it back to compare; later ones only what
changed; a tar is kept in memory up to `SPOOL_BYTES`, then on disk). Past the bound the
command is refused, saying so. Each command costs a walk of the workspace here (`lstat`
of every path) and a listing there, a few round trips to the engine (some 250 ms over TLS
on loopback). Set-id bits are never copied, either way; files land with the user's ids.
The helper needs `sh`, `find`, `xargs`, `stat`, `tar`, `head` and `rm` (busybox will do).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import stat
import tarfile
import tempfile
import threading
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.sandbox import docker_image
from moot.sandbox.base import SandboxMasks
from moot.sandbox.docker_sync import (
    SPOOL_BYTES,
    SYNC_MAX_BYTES,
    Entry,
    Kind,
    RemoteSyncError,
    Skip,
    SyncTar,
    entry_of,
    kind_of,
    member_path,
    parents_are_dirs,
    walk,
    write_here,
)

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

LABEL_VOLUME = "moot.volume"
"""On the helper container: the volume it serves."""
LIST_SCRIPT = (
    'cd /vol/ws || exit 1; nl="$(printf \'\\nx\')"; nl="${{nl%x}}";'
    ' if [ -n "$(find . -name "*$nl*" | head -c 1)" ]; then echo FULL; exit 0; fi; date +%s;'
    ' find . -mindepth 1 {prune} -exec stat -c "%Z %Y %s %a %F|%n" {{}} +'
)
"""Lists the volume's workspace (but the top-level protected directories), a line a path:
ctime, mtime, size, mode, type, `./name`; first the helper's clock, or FULL when a name
holds a newline."""
_STAT_LINE = re.compile(r"(\d+) (\d+) (\d+) ([0-7]+) ([a-z ]+)\|\./(.+)")


class Listing(msgspec.Struct, frozen=True):
    """The volume's workspace as `LIST_SCRIPT` saw it."""

    time: int
    """The helper's clock then, in seconds."""
    stats: dict[str, tuple[str, ...]]
    """Each path's (ctime, mtime, size, mode, type)."""


class SyncReport(msgspec.Struct):
    """What a pull did: paths written and deleted here, and conflicts (this copy kept)."""

    written: list[str] = msgspec.field(default_factory=list)
    deleted: list[str] = msgspec.field(default_factory=list)
    conflicts: list[str] = msgspec.field(default_factory=list)

    def notes(self) -> list[str]:
        """One line per conflict, for the command's result."""
        return [
            f"moot: {rel} changed here while the command ran and in the sandbox too; this"
            " machine's copy was kept (the sandbox gets it before the next command)"
            for rel in self.conflicts
        ]


class RemoteWorkspace:
    """The session's volume on a remote engine and its sync (see the module docstring)."""

    def __init__(self, engine: DockerClient, workspace: Path, labels: dict[str, str]) -> None:
        self.engine = engine
        self.workspace = workspace
        self.labels = labels
        self.volume = f"moot-ws-{uuid.uuid4().hex[:16]}"
        self.mountpoint = ""
        self.helper: Container | None = None
        self.manifest: dict[str, Entry] = {}
        self._listed: Listing | None = None
        """The volume's workspace as the last pull listed it."""
        self._lock = threading.Lock()

    def open(self, image: str) -> None:
        """Make the volume and the helper, and the volume's `ws/` and `empty` (blocking)."""
        volume = self.engine.volumes.create(self.volume, labels=self.labels)
        self.mountpoint = str(volume.attrs["Mountpoint"]).rstrip("/")
        from docker.types import Mount

        ids = f"{os.getuid()}:{os.getgid()}"
        self.helper = self.engine.containers.create(
            image,
            ["sleep", "infinity"],
            name=f"{self.volume}-sync",
            labels={**self.labels, LABEL_VOLUME: self.volume},
            mounts=[Mount(target="/vol", source=self.volume, type="volume")],
            network_mode="none",
            read_only=True,
            user=ids,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=True,
        )
        self.helper.start()
        skeleton = SyncTar()
        skeleton.add_dir("ws", 0o755)
        skeleton.add_file("empty", b"", 0o644)
        self._put(skeleton)

    def source(self, path: Path) -> str:
        """Where a workspace path lies on the engine's disk."""
        rel = path.relative_to(self.workspace)
        return posixpath.normpath(f"{self.mountpoint}/ws/{rel}")

    @property
    def empty_file(self) -> Path:
        """The empty file of the volume, on the engine's disk."""
        return Path(f"{self.mountpoint}/empty")

    def push(self, skip: Skip) -> None:
        """Copy what changed here since the last sync into the volume (blocking).

        Raises:
            RemoteSyncError: More than `SYNC_MAX_BYTES` to copy, or the engine failed.
        """
        with self._lock:
            seen = dict(walk(self.workspace, skip))
            gone = [rel for rel in self.manifest if rel not in seen or skip(rel)]
            tar = SyncTar()
            changed: dict[str, Entry] = {}
            for rel, info in seen.items():
                old = self.manifest.get(rel)
                if old is not None and old.same_on_host(info):
                    continue
                if old is not None and old.kind != kind_of(info.st_mode):
                    gone.append(rel)  # a file become a directory: the old one goes first
                entry = tar.add_host(self.workspace, rel, info)
                if entry is not None:
                    changed[rel] = entry
            self._remove_in_volume(sorted(set(gone)))
            self._put(tar)
            self.manifest.update(changed)

    def pull(self, skip: Skip, top_skipped: tuple[str, ...]) -> SyncReport:
        """Copy what changed in the volume since the last sync here (blocking).

        Args:
            skip: What is never copied back.
            top_skipped: Top-level names the helper leaves out of its tar (`.git`, `.moot`).

        Raises:
            RemoteSyncError: The workspace in the volume is past `SYNC_MAX_BYTES`, or the
                engine failed.
        """
        errors: list[bytes] = []
        with self._lock:
            listing = self._listing(top_skipped, errors)
            last, self._listed = self._listed, None  # until this pull has copied it all
            report = SyncReport()
            seen = {r for r in (listing.stats if listing else ()) if not skip(r)}
            wanted = [r for r in _changed(last, listing) if not skip(r)] if listing else None
            if wanted is None or wanted:
                self._fetch(wanted, top_skipped, skip, report, errors, seen)
            # Only a listing whose every change was copied is the next pull's baseline; else
            # (a fetch that failed part-way, or raised) the next pull fetches everything.
            self._listed = None if errors else listing
            if errors:
                # The helper could not read everything (a file made unreadable): what is
                # missing from its tar may still be there, so nothing is deleted here.
                return report
            for rel in sorted(self.manifest, reverse=True):  # what lies below first
                top = rel.split("/", 1)[0]
                if rel not in seen and top not in top_skipped and not skip(rel):
                    self._pull_deletion(rel, report)
            return report

    def _fetch(
        self,
        wanted: list[str] | None,
        top_skipped: tuple[str, ...],
        skip: Skip,
        report: SyncReport,
        errors: list[bytes],
        seen: set[str],
    ) -> None:
        """Copy here the `wanted` paths of the volume, or (None) the whole workspace there
        but `top_skipped`; what the tar held joins `seen`."""
        if wanted is None:
            script = f"cd /vol/ws && find . -mindepth 1 -maxdepth 1 {_prune(top_skipped)} -print0"
            script += " | xargs -0 -r tar -cf -"
        else:
            self._put_list(wanted)
            script = "cd /vol/ws && xargs -0 -r tar -c --no-recursion -f - </vol/pull-list"
        with self._volume_tar(script, errors) as tar:
            for member in tar:
                rel = member_path(member.name)
                if rel is None or skip(rel):
                    continue
                seen.add(rel)
                self._pull_member(tar, member, rel, report)

    def _listing(self, top_skipped: tuple[str, ...], errors: list[bytes]) -> Listing | None:
        """Each path of the volume's workspace with its status (`stat` in the helper), and
        the helper's clock; None when a name holds a newline (the listing is by lines):
        the pull then reads the whole workspace."""
        assert self.helper is not None, "open() first"
        script = LIST_SCRIPT.format(prune=_prune(top_skipped))
        code, (out, err) = self.helper.exec_run(["sh", "-c", script], demux=True)
        if err:
            errors.append(err)
        lines = (out or b"").decode("utf-8", "surrogateescape").split("\n")
        if code != 0 or not lines[0].isdigit():
            return None  # "FULL", or the helper failed: read everything
        stats: dict[str, tuple[str, ...]] = {}
        for line in lines[1:]:
            match = _STAT_LINE.fullmatch(line)
            if match is None:
                if line:
                    return None
                continue
            *status, rel = match.groups()
            if rel in stats:
                return None
            stats[rel] = tuple(status)
        return Listing(int(lines[0]), stats)

    def _put_list(self, rels: list[str]) -> None:
        """The paths to fetch, NUL-separated, at `/vol/pull-list` (out of the commands' sight:
        they see only `/vol/ws` and `/vol/empty`)."""
        names = b"".join(f"./{rel}".encode("utf-8", "surrogateescape") + b"\0" for rel in rels)
        tar = SyncTar()
        tar.add_file("pull-list", names, 0o600)
        self._put(tar)

    def close(self) -> None:
        """Remove the helper and the volume (blocking); gone already is fine."""
        if self.helper is not None:
            docker_image.remove(self.helper)
            self.helper = None
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            self.engine.volumes.get(self.volume).remove(force=True)

    def _put(self, tar: SyncTar) -> None:
        if not tar.count:
            tar.finish().close()
            return
        assert self.helper is not None, "open() first"
        with tar.finish() as data:
            if not self.helper.put_archive("/vol", data):
                raise RemoteSyncError("the engine refused the workspace's files")

    def _remove_in_volume(self, rels: list[str]) -> None:
        if not rels:
            return
        assert self.helper is not None, "open() first"
        for start in range(0, len(rels), 500):
            paths = [f"/vol/ws/{rel}" for rel in rels[start : start + 500]]
            code, output = self.helper.exec_run(["rm", "-rf", "--", *paths])
            if code != 0:
                raise RemoteSyncError(f"could not delete in the volume: {output[:200]!r}")
        for rel in rels:
            for key in [k for k in self.manifest if k == rel or k.startswith(rel + "/")]:
                del self.manifest[key]

    @contextlib.contextmanager
    def _volume_tar(self, script: str, errors: list[bytes]) -> Iterator[tarfile.TarFile]:
        """The tar `script` writes in the helper, bounded by `SYNC_MAX_BYTES`."""
        assert self.helper is not None, "open() first"
        api = self.helper.client.api
        exec_id = api.exec_create(self.helper.id, ["sh", "-c", script], stdout=True, stderr=True)
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            size = 0
            for out, err in api.exec_start(exec_id["Id"], stream=True, demux=True):
                if err:
                    errors.append(err)
                if out:
                    size += len(out)
                    if size > SYNC_MAX_BYTES:
                        raise RemoteSyncError(
                            f"the workspace in the sandbox's volume holds more than"
                            f" {SYNC_MAX_BYTES >> 20} MiB outside .git and .moot: too much to"
                            " copy back after each command"
                        )
                    spool.write(out)
            if not size:  # nothing in the workspace but what the helper leaves out
                spool.write(b"\0" * 1024)  # an empty archive
            spool.seek(0)
            with tarfile.open(fileobj=spool, mode="r:", ignore_zeros=True) as tar:
                yield tar

    def _pull_member(
        self, tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, report: SyncReport
    ) -> None:
        kind: Kind | None = "d" if member.isdir() else "l" if member.issym() else None
        data = b""
        if member.isfile() or member.islnk():
            kind = "f"
            source = tar.extractfile(member)
            data = source.read() if source is not None else b""
        if kind is None:
            return  # a fifo or a device node: nothing to copy
        digest = member.linkname if kind == "l" else hashlib.sha256(data).hexdigest()
        digest = "" if kind == "d" else digest
        mode = member.mode & 0o777
        old = self.manifest.get(rel)
        same = old is not None and (old.kind, old.digest) == (kind, digest)
        if same and (kind != "f" or (old is not None and old.mode == mode)):
            return  # as the last sync left it
        path = self.workspace / rel
        try:
            here: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            here = None
        if here is not None and kind == "d" and stat.S_ISDIR(here.st_mode):
            self.manifest[rel] = entry_of(here, "")  # a directory on both sides
            return
        unchanged = here is None if old is None else here is not None and old.same_on_host(here)
        if not unchanged or (here is not None and stat.S_ISDIR(here.st_mode)):
            report.conflicts.append(rel)  # changed on both sides, or a directory here
            return
        written = write_here(self.workspace, rel, kind, data, member.linkname, mode)
        if written is None:
            report.conflicts.append(rel)
            return
        self.manifest[rel] = entry_of(written, digest)
        report.written.append(rel)

    def _pull_deletion(self, rel: str, report: SyncReport) -> None:
        old = self.manifest.pop(rel)
        path = self.workspace / rel
        try:
            here = os.lstat(path)
        except FileNotFoundError:
            return
        if not old.same_on_host(here):
            report.conflicts.append(rel)
            return
        if not parents_are_dirs(self.workspace, rel):
            return
        try:
            if old.kind == "d":
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError:
            report.conflicts.append(rel)  # a directory that still holds what was not synced
            return
        report.deleted.append(rel)


def _changed(last: Listing | None, listing: Listing) -> list[str]:
    """What changed in the volume since the `last` listing: its status differs, or it
    changed in the second that listing was made (`stat` shows whole seconds)."""
    return [
        rel
        for rel, status in listing.stats.items()
        if last is None or last.stats.get(rel) != status or int(status[0]) >= last.time
    ]


def _prune(top_skipped: tuple[str, ...]) -> str:
    """`find` arguments that leave out these top-level names and what lies below them."""
    if not top_skipped:
        return ""
    paths = " -o ".join(f"-path {_sh_quote('./' + name)}" for name in top_skipped)
    return f"\\( {paths} \\) -prune -o"


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


class VolumeSync:
    """The Docker sandbox's side of it: the session's volume, made at the first push, and
    the masks in force when it was last pushed (what the pull after leaves alone)."""

    def __init__(self, workspace: Path, protected: tuple[str, ...], image: str) -> None:
        self.workspace = workspace
        self.protected = protected
        self.image = image
        self.volume: RemoteWorkspace | None = None
        self._masks = SandboxMasks()

    def push(self, engine: DockerClient, masks: SandboxMasks, labels: dict[str, str]) -> None:
        """Copy what changed here into the volume, made first when there is none (blocking).

        Raises:
            RemoteSyncError: The volume could not be made, or the sync failed.
        """
        if self.volume is None:
            volume = RemoteWorkspace(engine, self.workspace, labels)
            try:
                volume.open(self.image)
            except Exception as error:
                volume.close()
                raise RemoteSyncError(
                    "could not make the session's volume on the remote engine:"
                    f" {docker_image.first_line(error)}"
                ) from error
            self.volume = volume
        self._masks = masks
        self.volume.push(skips(masks, self.protected)[0])

    def pull(self) -> list[str]:
        """Copy what changed in the volume here (blocking); conflict notes, one a line."""
        if self.volume is None:
            return []
        tops = tuple(p.strip("/") for p in self.protected if "/" not in p.strip("/"))
        return self.volume.pull(skips(self._masks, self.protected)[1], tops).notes()

    def close(self) -> None:
        """Remove the helper and the volume (blocking)."""
        volume, self.volume = self.volume, None
        if volume is not None:
            volume.close()


def skips(masks: SandboxMasks, protected: tuple[str, ...]) -> tuple[Skip, Skip]:
    """What a push leaves here (hidden paths: deny rules, moot's own directories) and what a
    pull leaves in the volume (those, protected paths and `Edit(...)` masks)."""
    hidden = [r for r in (*masks.hidden_files, *masks.hidden_dirs) if not r.startswith("/")]
    kept = [*hidden, *(r for r in masks.read_only if not r.startswith("/")), *protected]
    return _below_any(hidden), _below_any(kept)


def _below_any(roots: list[str]) -> Skip:
    # Compared case- and normalisation-blind: on a case-insensitive file system (macOS's,
    # Windows') a `.GIT/hooks/pre-commit` made in the volume would be written into `.git`.
    cleaned = tuple(_fold(r.strip("/")) for r in roots if r.strip("/"))
    return lambda rel: any((name := _fold(rel)) == r or name.startswith(r + "/") for r in cleaned)


def _fold(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()

"""The one path policy every file tool (and the sandbox) goes through.

A path from a model is checked twice: lexically, on the normalized path, before the file
system is touched, and then on what it really resolves to, so that a symlink in the leaf or in
any ancestor cannot lead out of the workspace. Writes go further: no symlink may stand at or
above the target, protected paths need an explicit allowance, and the bytes land through
directory file descriptors opened with `O_NOFOLLOW`, written to a temporary file and renamed
over the target, so a symlink swapped in after the check cannot redirect them and a failure
never leaves half a file (`moot.workspace.no_follow`).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from moot.paths import host_program
from moot.workspace.ignore import GitIgnore, Hidden, HiddenInodes
from moot.workspace.ledger import ReadLedger
from moot.workspace.no_follow import AtomicWriter, PathRefused, atomic_write
from moot.workspace.protected import is_protected

if TYPE_CHECKING:
    from moot.workspace.absent import AbsentPaths
    from moot.workspace.file_index import FileIndex
    from moot.workspace.file_listing import FileListing
    from moot.workspace.host_git import HostGit


class Closable(Protocol):
    """What a workspace keeps for upper layers and ends with itself (`Workspace.keep`)."""

    def close(self) -> None: ...


_Kept = TypeVar("_Kept", bound=Closable)


class SnapshotSink(Protocol):
    """Keeps a file's content before a run first changes it (`moot.workspace.snapshots`)."""

    def before_change(self, run_id: str, path: Path, *, held: bytes | None = None) -> str | None:
        """Called right before `path` (from `Workspace.resolve_write`) is replaced in a run;
        `held` is what it holds when the change goes to an editor's buffer, not the disk.

        Returns:
            A note for the tool's result when the file could not be kept (too large), else
            "" or None.
        """
        ...


class Workspace:
    """A directory the file tools are confined to, with this session's read ledger."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        snapshots: SnapshotSink | None = None,
        read_roots: Sequence[str | os.PathLike[str]] = (),
        added_roots: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        """Resolve `root` once; every later check compares against this real path.

        Args:
            root: The workspace directory.
            snapshots: Told before `write_bytes` replaces a file in a run, so a rewind can
                restore it; None keeps no snapshots.
            read_roots: Directories outside the workspace that may be read (never written),
                given as absolute paths: the session's saved command outputs, say.
            added_roots: More directories the file tools read and write as they do the
                workspace, each with the same containment (`--add-dir`): given as absolute
                paths, existing directories.

        Raises:
            NotADirectoryError: `root` is not an existing directory.
        """
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise NotADirectoryError(f"Workspace root is not a directory: {root}")
        self.root = Path(real)
        """The real (symlink-free) path of the workspace directory."""
        self.ledger = ReadLedger()
        """What this session has read or written, to refuse edits of files changed since."""
        self.snapshots = snapshots
        self.changed: set[Path] = set()
        """Files the session's tools have written (git_commit and auto-commit take these)."""
        """Where the content of a file about to change in a run is kept, if anywhere."""
        self._prefix = real if real.endswith(os.sep) else real + os.sep
        self.read_roots = tuple(Path(os.path.realpath(r)) for r in read_roots)
        self.added_roots = tuple(Path(os.path.realpath(r)) for r in added_roots)
        """Directories besides the root that the file tools may read and write (`--add-dir`),
        real paths; a path in one is checked against it as a workspace path is against the
        root (symlinks, protected paths), and may lead only into the root or another one."""
        self.hidden: Hidden | None = None
        """Paths no walk may show (set from `Read(...)` deny rules by the session)."""
        self.added_hidden: dict[Path, Hidden] = {}
        """As `hidden`, for each added root with paths relative to it (set with `hidden`)."""
        self.hidden_inodes: Callable[[], HiddenInodes] | None = None
        """Makes, for one call, the check of what those rules hide under another name (a
        hard link); set by the session. None: the rules hide no path."""
        self.had_git = os.path.lexists(os.path.join(real, ".git"))
        """The workspace had a `.git` of its own when the session began (see
        `moot.workspace.git.workspace_repo`)."""
        self.host_git: HostGit | None = None
        self.absent: AbsentPaths | None = None
        """Paths no command may make (`moot.workspace.absent`), shared with the sandbox: a
        write there (which only the person's approval lets through) releases its path."""
        self.editor_text: Callable[[str], str | None] | None = None
        """The editor's text of a file (its unsaved buffer) for `read`, when a front end in an
        editor lends it (`moot.protocol.editor.EditorBuffers`); None: read the disk."""
        self.editor_write: Callable[[str, str], None] | None = None
        """Writes a file's text into the editor's buffer, when the editor takes writes: the
        edit tools then change what the editor holds (`write_through_editor`); None: the disk."""
        """What moot's git may run on the host here, taken when the session began (set by the
        session, `moot.workspace.host_git.host_git_at_start`); None trusts nothing."""
        self._file_index: FileIndex | None = None
        self._kept: dict[str, Closable] = {}
        self._making = threading.RLock()  # what `keep` makes may ask for the file index

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether an absolute, normalized path is the root or below it (string test only)."""
        text = os.fspath(path)
        return text == str(self.root) or text.startswith(self._prefix)

    def relative(self, path: Path) -> str:
        """`path` as the model should see it: relative with `/` inside, absolute outside."""
        if not path.is_relative_to(self.root):
            return str(path)
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def refuse_hidden(self, target: Path, path: str) -> None:
        """Refuse a file a `Read(...)` deny rule covers, before anything opens it.

        `decide` refuses such calls first; this keeps a tool used without a policy (or with
        its input changed after the decision) from showing what the file holds, or, by
        failing differently, whether it exists.

        Args:
            target: A path from `resolve_read` or `resolve_write` (symlink-free).
            path: The path as the model gave it, for the message.

        Raises:
            PathRefused: Rule "read-denied".
        """
        root = self.root if self.contains(target) else self._added_root(str(target))
        hidden = self.hidden_in(root) if root is not None else None
        if hidden is None or root is None:
            return  # a read root (saved command output) is not the rules' to hide
        if hidden(target.relative_to(root).as_posix(), False):
            raise PathRefused("read-denied", path, "a Read deny rule covers it")

    def inode_check(self) -> HiddenInodes | None:
        """The check of hidden files' other names for one call (see `hidden_inodes`)."""
        return self.hidden_inodes() if self.hidden_inodes is not None else None

    def refuse_linked(
        self, info: os.stat_result, path: str, check: HiddenInodes | None = None
    ) -> None:
        """Refuse a file that is another name (a hard link) of one a `Read(...)` deny rule
        covers: the rule hides the content, whatever the name.

        Args:
            info: The file's status, from the descriptor about to be read (`fstat`).
            path: The path as the model gave it, for the message.
            check: The call's check, when it has one (`inode_check`); else one is made.

        Raises:
            PathRefused: Rule "read-denied".
        """
        check = check if check is not None else self.inode_check()
        if check is not None and check.covers(info):
            raise PathRefused(
                "read-denied", path, "it is another name (a hard link) of a file a Read deny"
                " rule covers"
            )  # fmt: skip

    def file_index(self) -> FileIndex:
        """The workspace's one file index, made at the first call (see
        `moot.workspace.file_index`): glob, `@path` completion and the repository map share it."""
        with self._making:
            if self._file_index is None:
                from moot.workspace.file_index import FileIndex  # at the first listing only

                rg = host_program("rg", (self.root, *self.added_roots))
                self._file_index = FileIndex(self.root, rg)
            return self._file_index

    def keep(self, name: str, make: Callable[[], _Kept]) -> _Kept:
        """What an upper layer derives from the workspace's files and keeps for the session
        (the repository map's parsed files), made by `make` at the first call; `close` ends
        it."""
        with self._making:
            if name not in self._kept:
                self._kept[name] = make()
            return self._kept[name]  # type: ignore[return-value]  # one name, one type

    def close(self) -> None:
        """End what `keep` holds (the session ends); the workspace can still be used."""
        with self._making:
            kept, self._kept = list(self._kept.values()), {}
        for thing in kept:
            thing.close()

    def file_listing(self) -> FileListing:
        """Every file no ignore rule and no `Read(...)` deny rule hides, fresh (see
        `file_index`)."""
        return self.file_index().listing(self.hidden)

    def ignore(self, root: Path | None = None) -> GitIgnore:
        """A fresh ignore set for one walk of the workspace, or of an added root: that root's
        `.gitignore` rules and the hidden paths."""
        root = self.root if root is None else root
        return GitIgnore(root, self.hidden_in(root))

    def hidden_in(self, root: Path) -> Hidden | None:
        """What `Read(...)` deny rules hide below the workspace root or an added root, as
        paths relative to that root."""
        return self.hidden if root == self.root else self.added_hidden.get(root)

    def root_of(self, path: Path) -> Path:
        """The workspace root, or the read root, that `path` (from `resolve_read`) lies in."""
        for root in (self.root, *self.added_roots, *self.read_roots):
            if path.is_relative_to(root):
                return root
        raise PathRefused("outside-workspace", str(path), "not inside the workspace")

    def resolve_read(self, path: str) -> Path:
        """Check a path for reading and return what it really names.

        Symlinks are followed as long as they end inside the workspace.

        Args:
            path: Relative to the root, or absolute inside it.

        Returns:
            The real path, free of symlinks, inside the workspace.

        Raises:
            PathRefused: NUL byte, empty, or outside the workspace lexically or once
                symlinks are resolved.
        """
        if self.read_roots and os.path.isabs(path) and not self.contains(path):
            extra = self._in_read_root(path)
            if extra is not None:
                return extra
        self._lexical(path)
        real = os.path.realpath(os.path.join(self.root, path))
        if not self.writable(real):
            raise PathRefused(
                "outside-workspace", path, f"a symlink leads outside the workspace, to {real}"
            )
        return Path(real)

    def resolve_search(self, path: str) -> tuple[Path, Path]:
        """`resolve_read` for the tools that walk a tree (`ls`, `glob`, `grep`): the root to
        walk from (the workspace root, or the added root the path lies in) and the real path.

        Raises:
            PathRefused: As `resolve_read`, or the path lies in a read-only root (saved
                command output, read by path).
        """
        real = self.resolve_read(path)
        if self.contains(real):
            return self.root, real
        added = self._added_root(str(real))
        if added is None:
            raise PathRefused(
                "outside-workspace",
                path,
                "ls, glob and grep search the workspace and the added directories; this is "
                "read-only saved output: read its files by path",
            )
        return added, real

    def shown(self, root: Path, rel: str) -> str:
        """A walk's path below `root` as the model sees it: workspace-relative in the
        workspace, absolute in an added root."""
        return rel if root == self.root else f"{root}/{rel}"

    def writable(self, real: str | os.PathLike[str]) -> bool:
        """Whether a real, absolute path lies in the root or an added root (string test)."""
        return self.contains(real) or self._added_root(os.fspath(real)) is not None

    def _added_root(self, normal: str) -> Path | None:
        """The added root a normalized absolute path is in (or is), else None."""
        for root in self.added_roots:
            text = str(root)
            if normal == text or normal.startswith(text.rstrip(os.sep) + os.sep):
                return root
        return None

    def _in_read_root(self, path: str) -> Path | None:
        """`path` when it lies inside a read root (after symlinks), else None."""
        if "\x00" in path:
            return None
        try:
            real = Path(os.path.realpath(path))
        except OSError:  # a link the kernel will not read (`/proc/1/cwd`): not in a read root
            return None
        return real if any(real.is_relative_to(root) for root in self.read_roots) else None

    def resolve_write(self, path: str, *, allow_protected: bool = False) -> Path:
        """Check a path for writing and return it; it need not exist yet.

        Args:
            path: Relative to the root, or absolute inside it.
            allow_protected: Allow `.git/` internals and `.moot/` (an explicit approval).

        Returns:
            The normalized absolute path inside the workspace.

        Raises:
            PathRefused: NUL byte, empty, outside the workspace, the root itself, a
                protected path, or a symlink at the target or any existing ancestor.
        """
        lexical = self._lexical(path)
        root = self.root if self.contains(lexical) else self._added_root(str(lexical))
        assert root is not None, "_lexical refuses what lies in no root"
        parts = lexical.relative_to(root).parts
        if not parts:
            raise PathRefused("workspace-root", path, "the workspace root is a directory")
        if not allow_protected and is_protected(parts):
            raise PathRefused("protected", path, "writing here needs explicit approval")
        current = root
        for index, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except (FileNotFoundError, NotADirectoryError):
                break  # the rest does not exist yet: nothing below can be a symlink
            if stat.S_ISLNK(mode):
                where = "/".join(parts[: index + 1])
                raise PathRefused("symlink", path, f"{where} is a symlink")
        if os.path.realpath(lexical) != str(lexical):  # belt and braces: a race or a loop
            raise PathRefused("symlink", path, "it resolves through a symlink")
        return lexical

    def write_bytes(self, target: Path, data: bytes, *, run_id: str = "") -> AtomicWriter:
        """Replace `target` with `data` atomically, first letting the snapshot sink keep it.

        Args:
            target: A path from `resolve_write`.
            data: The whole new content.
            run_id: The run making the change (`ToolContext.run_id`); "" outside a run, when
                there is no turn to rewind and no snapshot is kept.

        Returns:
            The committed writer (see `atomic_write`); its `snapshot_note` says when the
            file's previous content could not be kept (too large), for the tool's result.

        Raises:
            PathRefused, OSError: As `atomic_write`, or from the sink; nothing is written then.
        """
        note = ""
        if not self.contains(target):  # an added root: the snapshots keep the workspace's
            note = f"{target} is outside the workspace: a rewind will not restore it"
        elif self.snapshots is not None and run_id:
            note = self.snapshots.before_change(run_id, target) or ""
        if self.absent:
            self.absent.release(target)  # approved (a protected path): it may exist now
        writer = atomic_write(self.root_of(target), target, data)
        writer.snapshot_note = note
        self.changed.add(target)
        return writer

    def write_through_editor(
        self, target: Path, held: str | None, text: str, *, run_id: str = ""
    ) -> str:
        """Make `text` the editor's text of `target` (see `editor_write`), first letting the
        snapshot sink keep `held`, the text the editor had (None: a new file).

        Returns:
            A note for the tool's result when a rewind will not restore the file, else "".

        Raises:
            OSError: The editor did not take it (nothing changed then), or from the sink.
        """
        if self.editor_write is None:
            raise OSError(f"{target}: no editor takes writes here")
        note = ""
        if not self.contains(target):
            note = f"{target} is outside the workspace: a rewind will not restore it"
        elif self.snapshots is not None and run_id:
            kept = held.encode("utf-8", "surrogatepass") if held is not None else None
            note = self.snapshots.before_change(run_id, target, held=kept) or ""
        if self.absent:
            self.absent.release(target)
        self.editor_write(str(target), text)
        self.changed.add(target)
        return note

    def open_for_write(self, path: str, *, allow_protected: bool = False) -> AtomicWriter:
        """Check `path` for writing and open it for an atomic replace (see `AtomicWriter`)."""
        target = self.resolve_write(path, allow_protected=allow_protected)
        return AtomicWriter(self.root_of(target), target)

    def _lexical(self, path: str) -> Path:
        if not isinstance(path, str):
            raise PathRefused("empty", repr(path), "a path must be a string")
        if "\x00" in path:
            raise PathRefused("nul-byte", path, "paths cannot contain NUL bytes")
        if not path.strip():
            raise PathRefused("empty", path, "give a file or directory path")
        normal = os.path.normpath(os.path.join(self.root, path))
        if not self.contains(normal) and self._added_root(normal) is None:
            raise PathRefused("outside-workspace", path, f"the workspace is {self.root}")
        return Path(normal)

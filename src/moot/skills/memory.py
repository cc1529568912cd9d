"""Memory: what the project's `AGENTS.md` files (and the person's own) tell every session.

Read in this order, each file whole, then capped together at `MEMORY_CAP`:

1. The user's `AGENTS.md` in the config dir (`~/.config/moot/AGENTS.md`).
2. One file per directory from the repository's top down to the working directory:
   `AGENTS.md`, or `CLAUDE.md` where a directory has no `AGENTS.md`. The closest comes last,
   so it has the last word.

A file may import another with `@path` (relative to itself; `@docs/style.md`): the imported
file follows the one that imports it. Imports stay inside the file's own root (the repository,
or the config dir), go at most `MAX_DEPTH` deep, never load a file twice (so no cycles), and
are not looked for in code (fenced blocks or `inline code`). An import that is refused (it
leads outside, is too big, ...) is named in the notes `/memory` shows; one that names no file
is taken for prose (`@alice`) and skipped.

Past the cap the text is cut at a line end and ends with a note saying so; the model and
`/memory` both see it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec

from moot.skills.files import FileRefused, inside, read_text
from moot.skills.places import Places
from moot.skills.values import Source

MEMORY_CAP = 32 * 1024
"""Bytes of memory sent with every request, at most."""
MEMORY_FILES = ("AGENTS.md", "CLAUDE.md")
"""Looked for in each directory; the first one found is that directory's memory."""
MAX_DEPTH = 5
MAX_FILES = 40
_CODE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`", re.DOTALL)
_IMPORT = re.compile(r"(?<![\w@/`])@((?:~/|\.{0,2}/)?[\w.\-/]+)")


class MemoryFile(msgspec.Struct, frozen=True):
    """One file the memory holds."""

    path: str
    """Its real path."""
    shown: str
    """How the prompt names it: relative to the repository's top, or its path."""
    source: Source
    bytes: int
    imported_by: str = ""
    """The file whose `@path` brought it in, as shown (empty for a directory's own file)."""


class Memory(msgspec.Struct, frozen=True):
    """The session's memory: the text for the system prompt and what went into it."""

    text: str
    files: tuple[MemoryFile, ...] = ()
    notes: tuple[str, ...] = ()
    """What was cut or refused, for the person (`/memory`)."""
    cut: bool = False
    """The text reached `MEMORY_CAP` and was cut."""


def memory_locations(places: Places) -> list[tuple[Path, Path, Source]]:
    """Where memory files are looked for, in the order they are read: (directory, root,
    source)."""
    found: list[tuple[Path, Path, Source]] = []
    if places.user is not None:
        found.append((places.user, places.user, "user"))
    for directory in reversed(places.project_dirs()):
        found.append((directory, places.project, "project"))
    return found


def load_memory(places: Places, cap: int = MEMORY_CAP) -> Memory:
    """Read the memory of a session started at `places.cwd` (see the module docstring)."""
    reader = _Reader(places)
    for directory, root, source in memory_locations(places):
        for name in MEMORY_FILES:
            if reader.load(directory / name, root, source, depth=0, by=""):
                break
    return reader.finish(cap)


def memory_file_for(directory: Path) -> Path:
    """The file a note for `directory`'s memory goes to: its `AGENTS.md`, or its `CLAUDE.md`
    when only that exists."""
    agents, claude = directory / MEMORY_FILES[0], directory / MEMORY_FILES[1]
    if not os.path.lexists(agents) and os.path.lexists(claude):
        return claude
    return agents


class _Reader:
    def __init__(self, places: Places) -> None:
        self.places = places
        self.seen: set[Path] = set()
        self.sections: list[str] = []
        self.files: list[MemoryFile] = []
        self.notes: list[str] = []

    def shown(self, path: Path, source: Source) -> str:
        if source == "project" and path.is_relative_to(self.places.project):
            return path.relative_to(self.places.project).as_posix()
        return str(path)

    def load(self, path: Path, root: Path, source: Source, *, depth: int, by: str) -> bool:
        """Add `path` (and what it imports); whether a file was there to read."""
        try:
            real = inside(root, path)
        except FileRefused as exc:
            if os.path.lexists(path):
                self.notes.append(f"not read: {exc}")
            return os.path.lexists(path)
        if real in self.seen:
            return True
        if len(self.files) >= MAX_FILES:
            self.notes.append(f"not read: {path}: more than {MAX_FILES} memory files")
            return True
        try:
            text, cut, _ = read_text(
                root, real, cap=MEMORY_CAP, cut=True, denied=self.places.denied
            )
        except FileNotFoundError:
            return False
        except (FileRefused, OSError) as exc:
            self.notes.append(f"not read: {exc}")
            return True
        self.seen.add(real)
        shown = self.shown(real, source)
        if cut:
            self.notes.append(f"{shown}: only its first {MEMORY_CAP:,} bytes are read")
        heading = f"## {shown}" + (f" (imported by {by})" if by else "")
        self.sections.append(f"{heading}\n\n{text.strip()}")
        self.files.append(MemoryFile(str(real), shown, source, len(text.encode()), by))
        self._imports(text, real, root, source, depth, shown)
        return True

    def _imports(
        self, text: str, real: Path, root: Path, source: Source, depth: int, shown: str
    ) -> None:
        for target in imports_in(text):
            if depth + 1 > MAX_DEPTH:
                self.notes.append(f"{shown}: @{target} not read: imports go {MAX_DEPTH} deep")
                continue
            path = (
                Path(os.path.expanduser(target))
                if target.startswith("~/")
                else (real.parent / target)
            )
            if not os.path.isfile(path):
                continue  # prose (`@alice`), or a file that is not there
            self.load(path, root, source, depth=depth + 1, by=shown)

    def finish(self, cap: int) -> Memory:
        text = "\n\n".join(self.sections)
        encoded = text.encode()
        cut = len(encoded) > cap
        if cut:
            kept = encoded[:cap].decode("utf-8", errors="ignore")
            kept = kept[: kept.rfind("\n")] if "\n" in kept else kept
            left = len(encoded) - len(kept.encode())
            note = (
                f"[moot: memory cut at {cap // 1024} KiB; the last {left:,} bytes are left "
                "out. /memory shows every file.]"
            )
            self.notes.append(note)
            text = f"{kept.rstrip()}\n\n{note}"
        return Memory(text, tuple(self.files), tuple(self.notes), cut)


def imports_in(text: str) -> list[str]:
    """The `@path` imports of a memory file, in order, outside code."""
    prose = _CODE.sub(" ", text)
    found: list[str] = []
    for match in _IMPORT.finditer(prose):
        target = match.group(1).rstrip(".")
        if ("/" in target or "." in target) and target not in found:
            found.append(target)
    return found


MAX_NOTED_FILE = 1024 * 1024
"""A memory file larger than this gets no more notes (it is read only up to `MEMORY_CAP`)."""


class NoteRefused(Exception):
    """A note could not be added; the message says why."""


def add_note(root: Path, note: str) -> Path:
    """Add `note` as a line `- note` at the end of the memory file of `root` (the workspace).

    The file is `AGENTS.md` (created when missing), or `CLAUDE.md` when only that exists. It
    is written as the file tools write: no symlink at or above it, all at once.

    Returns:
        The file written.

    Raises:
        NoteRefused: The note is empty, or the file cannot be written; nothing changed then.
    """
    from moot.workspace.no_follow import PathRefused, atomic_write, read_file_bytes
    from moot.workspace.paths import Workspace

    line = " ".join(note.split())
    if not line:
        raise NoteRefused("the note is empty: write it after the #")
    try:
        workspace = Workspace(root)
        target = workspace.resolve_write(memory_file_for(workspace.root).name)
        try:
            old, _ = read_file_bytes(workspace.root, target)
        except FileNotFoundError:
            old = b""
        if len(old) > MAX_NOTED_FILE:
            raise NoteRefused(f"{target} is over {MAX_NOTED_FILE:,} bytes; edit it by hand")
        separator = b"\n" if old and not old.endswith(b"\n") else b""
        atomic_write(workspace.root, target, old + separator + f"- {line}\n".encode())
    except (PathRefused, OSError) as exc:
        raise NoteRefused(f"the note was not saved: {exc}") from None
    return target

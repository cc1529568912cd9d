"""Reading the files people teach moot with, on the host, from a repository that may be hostile.

Every read names a root (the repository, the user's config dir, moot's shipped folder) and
stays inside it: the path is resolved, checked against the root, then opened one directory at a
time with `O_NOFOLLOW` (`moot.workspace.no_follow.open_read`), so a symlink that leads out, or one
swapped in after the check, is refused rather than followed. Sizes are capped before anything
is read, and FIFOs or devices are refused without blocking.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from moot.skills.values import Problem
from moot.workspace.no_follow import PathRefused, open_read

Denied = Callable[[Path], bool]
"""Whether the person's `Read(...)` deny rules cover a real path: such a file is never read
into a session, whatever asks for it (a skill, a command's `@file`, a memory import)."""

MAX_ENTRIES = 500
"""Entries of one directory looked at (skills, commands, agents); the rest are reported."""


class FileRefused(Exception):
    """A file or directory that is not read; the message says why, for the person."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = str(path)
        self.why = why


def real_root(path: Path) -> Path:
    """A root as every later check compares against it: its real path."""
    return Path(os.path.realpath(path))


def inside(root: Path, path: Path | str) -> Path:
    """The real path of `path` when it lies inside `root` (itself real).

    Raises:
        FileRefused: It leads outside `root` (through `..` or a symlink), or names a NUL byte.
    """
    text = os.fspath(path)
    if "\x00" in text:
        raise FileRefused(repr(text), "a NUL byte in the path")
    real = Path(os.path.realpath(text))
    if real != root and not real.is_relative_to(root):
        why = f"leads outside {root}" + (f" (to {real})" if real != Path(text) else "")
        raise FileRefused(text, why)
    return real


def read_text(
    root: Path, path: Path | str, *, cap: int, cut: bool = False, denied: Denied | None = None
) -> tuple[str, bool, Path]:
    """A text file inside `root`, decoded as UTF-8 (bad bytes replaced).

    Args:
        root: The real path of the directory the file must lie in.
        path: The file.
        cap: The most bytes read.
        cut: Past `cap`, keep the first `cap` bytes instead of refusing the file.
        denied: The session's `Read(...)` deny rules (see `Denied`).

    Returns:
        The text, whether it was cut at `cap`, and the file's real path.

    Raises:
        FileRefused: Outside `root`, a symlink that leads out, denied, not a regular file,
            larger than `cap` (unless `cut`), or unreadable.
        FileNotFoundError: There is no such file.
    """
    fd, real = _open(root, path)
    with os.fdopen(fd, "rb") as file:
        if denied is not None and denied(real):
            raise FileRefused(path, "a Read deny rule in the settings covers it")
        st = os.fstat(file.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(path, "not a regular file")
        if st.st_size > cap and not cut:
            raise FileRefused(path, f"too big ({st.st_size:,} bytes; the limit is {cap:,})")
        data = file.read(cap + 1)
    was_cut = len(data) > cap
    if was_cut and not cut:  # it grew after the stat
        raise FileRefused(path, f"too big (over {cap:,} bytes)")
    return data[:cap].decode("utf-8", errors="replace"), was_cut, real


def _open(root: Path, path: Path | str) -> tuple[int, Path]:
    """An fd of `path` and its real path, refusing anything that leads out of `root`.

    Most files lie below `root` with no symlink on the way: they are opened as they are named,
    one `O_NOFOLLOW` component at a time, which proves it without resolving the path. Only when
    a symlink stands on the way is it resolved, checked against `root`, and opened again.
    """
    text = os.fspath(path)
    if "\x00" in text:
        raise FileRefused(repr(text), "a NUL byte in the path")
    lexical = Path(os.path.normpath(text))
    try:
        if lexical.is_relative_to(root):
            try:
                return open_read(root, lexical), lexical
            except PathRefused:
                pass  # a symlink on the way: see where it leads
        real = inside(root, lexical)
        return open_read(root, real), real
    except PathRefused as exc:
        raise FileRefused(path, str(exc)) from None
    except IsADirectoryError:
        raise FileRefused(path, "is a directory") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FileRefused(path, exc.strerror or str(exc)) from None


def entries(root: Path, directory: Path) -> tuple[list[Path], int]:
    """The entries of a directory inside `root`, sorted by name, at most `MAX_ENTRIES`.

    Returns:
        Their paths (as found, not resolved), and how many more were left out.

    Raises:
        FileRefused: The directory leads outside `root`.
        FileNotFoundError, NotADirectoryError: There is no such directory.
    """
    real = inside(root, directory)
    names = sorted(os.listdir(real))
    return [directory / name for name in names[:MAX_ENTRIES]], max(0, len(names) - MAX_ENTRIES)


def folder_entries(root: Path, folder: Path, problems: list[Problem]) -> list[Path]:
    """`entries` of a folder of skills, commands or agents (none when it is not there); a
    folder that cannot be read, and the entries past `MAX_ENTRIES`, are told in `problems`."""
    if not is_dir(folder):
        return []
    try:
        found, left_out = entries(root, folder)
    except (FileRefused, OSError) as exc:
        problems.append(Problem(str(folder), getattr(exc, "why", None) or str(exc)))
        return []
    if left_out:
        problems.append(Problem(str(folder), f"{left_out} more entries not looked at"))
    return found


def is_dir(path: Path) -> bool:
    """Whether `path` is a directory (through symlinks; where it leads is checked on reading)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False

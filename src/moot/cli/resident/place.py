"""Where a resident moot listens, and which one a `moot` may use.

The socket lives in a directory only the user can enter: `$XDG_RUNTIME_DIR/moot` when that
runtime directory is the user's alone (as the XDG spec wants it; `su` keeps the caller's, which
its owner could rename the `moot` directory in), else `/tmp/moot-<uid>` (sticky: nobody else
renames it), either made here with mode 0700 and used only when it is a real directory the user
owns that nobody else may enter (another user can make `/tmp/moot-<uid>` first: then there is
no resident process, never one of theirs). The sandboxes hide `/tmp` and `/run` from commands,
and `peer` refuses a confined caller besides. A sandbox that shows the directory all the same
(a workspace or an added directory that holds it) could plant files there: the files beside
the socket are read and written without following links or waiting on a FIFO, and `client`
checks who listens on the socket before it sends anything.

A resident process serves the `moot`s that would have imported the same modules the same way:
the same interpreter, import path, `PYTHON*` variables, locale and moot version. Its socket is
named by a checksum of those (`key`), and it checks the whole of them again on each request.

Imported by every `moot` that asks for a resident process, before anything else: standard
library modules that are already loaded or cost microseconds only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zlib

from moot._version import __version__

SOCKET_PATH_MAX = 107
"""A Unix socket's path is at most 108 bytes with its NUL (`sun_path`)."""
LOCALE_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE")
"""What decides the encodings of the standard streams and of file names at start-up."""


def identity() -> dict[str, object]:
    """What a resident process must share with this process for its modules to be the ones
    this process would import: compared whole by the resident process on each request."""
    # Without -P (`python -m moot.cli`), the first entry is the script's directory or the
    # working directory: the resident process, started with -P, has none.
    path = sys.path if sys.flags.safe_path else sys.path[1:]
    env = {
        name: value
        for name, value in os.environ.items()
        if name.startswith("PYTHON") or name in LOCALE_VARIABLES
    }
    return {
        "uid": os.getuid(),
        "executable": sys.executable,
        "path": path,
        "env": env,
        "version": __version__,
        "flags": [sys.flags.isolated, sys.flags.utf8_mode, sys.flags.optimize],
    }


def key(ident: dict[str, object]) -> str:
    """The socket's name for `ident`: a checksum, not a secret (the directory is the user's
    alone, and the process compares the whole identity again)."""
    return f"{zlib.crc32(repr(sorted(ident.items())).encode()):08x}"


def directory(environ: os._Environ[str] | dict[str, str] | None = None) -> str | None:
    """The user's directory for resident sockets, made when missing; None when there is no
    safe one (not a directory, not the user's, open to others)."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    base = (
        os.path.join(runtime, "moot")
        if runtime and os.path.isabs(runtime) and _private(runtime, 0o022)
        else f"/tmp/moot-{os.getuid()}"
    )
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return base if _private(base, 0o077) else None


def _private(path: str, others: int) -> bool:
    """`path` is a real directory (no link) the user owns, without the mode bits `others`."""
    from stat import S_ISDIR

    try:
        info = os.lstat(path)
    except OSError:
        return False
    return S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & others


def socket_path(ident: dict[str, object]) -> str | None:
    """The socket of the resident process for `ident` and for this process's values of the
    environment variables that process's imports read (`read_at_import`): Textual reads
    `TERM_PROGRAM` as it loads, so a terminal of another kind gets a resident process of its
    own. None without a safe directory, or when the path is too long for a Unix socket."""
    base = directory()
    if base is None:
        return None
    name = key(ident)
    values = [(variable, os.environ.get(variable)) for variable in read_at_import(base, name)]
    path = os.path.join(base, f"{name}-{zlib.crc32(repr(values).encode()):08x}.sock")
    return path if len(os.fsencode(path)) <= SOCKET_PATH_MAX else None


def read_at_import(base: str, name: str) -> list[str]:
    """The environment variables that the imports of the resident process named `name` read
    (written by it beside its sockets, one per line); none before one ever ran."""
    # A regular file only, never through a link and never waiting (a FIFO planted there would
    # hang every `moot`).
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(os.path.join(base, f"{name}.env"), flags)
    except OSError:
        return []
    try:
        from stat import S_ISREG

        if not S_ISREG(os.fstat(fd).st_mode):
            return []
        return os.read(fd, 1 << 16).decode("utf-8", "replace").split()
    except OSError:
        return []
    finally:
        os.close(fd)


def note_read_at_import(base: str, name: str, variables: list[str]) -> None:
    """Write `read_at_import`'s list (whole or not at all: under another name first)."""
    path = os.path.join(base, f"{name}.env")
    temporary = f"{path}.{os.getpid()}"
    # A new file of this process's, never one found there (a link planted under this name
    # would have this write to wherever it points).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with open(os.open(temporary, flags, 0o600), "w", encoding="utf-8") as file:
        file.write("\n".join(variables) + "\n")
    os.replace(temporary, path)


def limits() -> list[tuple[int, int, int]]:
    """This process's resource limits, as (which, soft, hard): a child takes its caller's, so
    that `ulimit` before `moot` holds as it would without a resident process."""
    import resource

    return [
        (which, *resource.getrlimit(which))
        for name in dir(resource)
        if name.startswith("RLIMIT_") and isinstance(which := getattr(resource, name), int)
    ]

"""Where a resident moot listens, and which one a `moot` may use.

The socket lives in a directory only the user can enter: `$XDG_RUNTIME_DIR/moot`, else
`/tmp/moot-<uid>`, either made here with mode 0700 and used only when it is a real directory
the user owns that nobody else may enter (another user can make `/tmp/moot-<uid>` first: then
there is no resident process, never one of theirs). The sandboxes hide `/tmp` and `/run` from
commands, and `peer` refuses a confined caller besides.

A resident process serves the `moot`s that would have imported the same modules the same way:
the same interpreter, import path, `PYTHON*` variables, locale and moot version. Its socket is
named by a checksum of those (`key`), and it checks the whole of them again on each request.

Imported by every `moot` that asks for a resident process, before anything else: standard
library modules that are already loaded or cost microseconds only.
"""

from __future__ import annotations

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
        if runtime and os.path.isabs(runtime)
        else f"/tmp/moot-{os.getuid()}"
    )
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(base)
    except OSError:
        return None
    from stat import S_ISDIR

    if not S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return base


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
    try:
        with open(os.path.join(base, f"{name}.env"), "rb") as file:
            return file.read(1 << 16).decode("utf-8", "replace").split()
    except OSError:
        return []


def note_read_at_import(base: str, name: str, variables: list[str]) -> None:
    """Write `read_at_import`'s list (whole or not at all: under another name first)."""
    path = os.path.join(base, f"{name}.env")
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write("\n".join(variables) + "\n")
    os.replace(temporary, path)

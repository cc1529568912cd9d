"""Reading and writing the small JSON files MCP configuration lives in.

A repository brings `.mcp.json` and `.moot/settings*.json`, so reading one must not hang or
blow up: only a regular file of at most `MAX_BYTES` of UTF-8 JSON holding an object is read (a
FIFO would block forever, a device or a huge file never end). Writes replace the file
atomically, through a temporary file opened without following links, keeping other keys.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from moot.paths import make_private_dir

MAX_BYTES = 1 << 20


class ConfigFileError(ValueError):
    """A configuration file that cannot be read or written; the message names it."""


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`; None when there is no such file.

    Raises:
        ConfigFileError: Not a regular file, too large, not UTF-8 JSON, or not an object.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigFileError(f"cannot read {path}: it is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise ConfigFileError(f"{path} is larger than {MAX_BYTES >> 20} MiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigFileError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} must hold a JSON object")
    return data


def write_object(path: Path, data: dict[str, Any], *, private: bool = False) -> None:
    """Replace `path` with `data` as indented JSON, atomically.

    Args:
        path: The file; its directory is made when missing.
        data: The whole object to write.
        private: Readable by its owner only (0600): approvals, tokens.

    Raises:
        ConfigFileError: The file cannot be written.
    """
    try:
        if private:
            make_private_dir(path.parent)  # approvals live in moot's data directory
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o600 if private else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(json.dumps(data, indent=2) + "\n")
        os.replace(temp, path)
    except OSError as exc:
        raise ConfigFileError(f"cannot write {path}: {exc.strerror}") from None

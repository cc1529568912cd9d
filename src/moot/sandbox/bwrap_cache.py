"""Bubblewrap probes that succeeded, remembered across starts (`bwrap-probe.json`).

Probing whether bubblewrap works takes two process spawns (a `true` with the mounts and
namespaces of a command, then `bwrap --version`), milliseconds of every `moot -p`. A probe that
succeeded is remembered in the user cache directory for `TTL` seconds, keyed by what could
change its answer: the `bwrap` program (path, inode, size, mtime), the kernel release, the user,
the user and mount namespaces moot runs in (a container has its own), and the settings that
allow unprivileged user namespaces. A failed probe is never remembered, so a fix takes effect
at the next start; an entry with another key, an older one, or an unreadable file is probed
afresh.

Should bubblewrap stop working while an entry is fresh, commands fail with bwrap's own message
(`bwrap: ...`, exit code 1) and the sandbox forgets the entry, so the next start probes again.
The cache is only ever a shortcut: any error reading or writing it means "probe".
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

TTL = 600.0
"""Seconds a successful probe is trusted."""
FILE_NAME = "bwrap-probe.json"
_SETTINGS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)
"""Kernel settings that decide whether an unprivileged user may make user namespaces."""
_NAMESPACES = ("/proc/self/ns/user", "/proc/self/ns/mnt")


def cache_file() -> Path:
    from moot.paths import cache_dir  # not at the top: moot.paths is only needed here

    return cache_dir() / FILE_NAME


def remembered(bwrap: str) -> str | None:
    """The `--version` answer of a fresh, matching successful probe of `bwrap`; None: probe."""
    entry = _entry(bwrap)
    return None if entry is None else entry[0]


def remembered_isolation(bwrap: str) -> tuple[str, ...] | None:
    """The isolation flags a fresh, matching successful probe of `bwrap` found to work
    (`bwrap_probe.ISOLATIONS`); None: probe."""
    entry = _entry(bwrap)
    return None if entry is None else entry[1]


def _entry(bwrap: str) -> tuple[str, tuple[str, ...]] | None:
    key = _key(bwrap)
    if key is None:
        return None
    entry = _entries().get(bwrap)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    checked, version = entry.get("checked"), entry.get("version")
    isolation = entry.get("isolation")
    if not isinstance(checked, int | float) or not isinstance(version, str):
        return None
    if not isinstance(isolation, list) or not all(isinstance(a, str) for a in isolation):
        return None  # an entry from before isolation was probed: probe again
    return (version, tuple(isolation)) if 0 <= time.time() - checked < TTL else None


def remember(bwrap: str, version: str, isolation: tuple[str, ...]) -> None:
    """Keep a successful probe of `bwrap` (its version and the isolation flags that worked)
    for `TTL` seconds."""
    key = _key(bwrap)
    if key is None:
        return
    entries = _entries()
    entry = {"key": key, "checked": time.time(), "version": version, "isolation": [*isolation]}
    entries[bwrap] = entry
    _write(entries)


def forget(bwrap: str) -> None:
    """Drop what was kept about `bwrap` (it failed at run time): the next start probes."""
    entries = _entries()
    if entries.pop(bwrap, None) is not None:
        _write(entries)


def _key(bwrap: str) -> dict[str, Any] | None:
    try:
        st = os.stat(bwrap)
    except OSError:
        return None
    return {
        "program": [st.st_ino, st.st_size, st.st_mtime_ns],
        "kernel": os.uname().release,
        "uid": os.geteuid(),
        "namespaces": [_readlink(path) for path in _NAMESPACES],
        "settings": [_read(path) for path in _SETTINGS],
    }


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as file:
            return file.read().strip()
    except (OSError, ValueError):
        return None


def _entries() -> dict[str, Any]:
    try:
        data = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(entries: dict[str, Any]) -> None:
    path = cache_file()
    temp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps(entries), encoding="utf-8")
        os.replace(temp, path)  # atomic: a concurrent start reads the old file or the new one
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)

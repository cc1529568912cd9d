"""The sandbox policy as Landlock grants and caps (`landlock_rules.plan` makes rules of them).

The same policy bubblewrap enforces with mounts (`bubblewrap`'s docstring), said as "these
paths get these rights, and these keep at most so much":

| what | bubblewrap | here |
| --- | --- | --- |
| the file system | `/` bound read-only | `/` granted read (execute, read, list) |
| the workspace, `--add-dir`s | bound writable | granted write (no device nodes, sockets) |
| `.git`, `.moot`, `Edit(...)` denials | bound read-only | capped to read |
| `Read(...)` denials in the workspace | an empty file or tmpfs | capped to listing: names show |
| moot's files, the homes, `/tmp`, `/run`, secrets | a tmpfs, `/dev/null` | capped to nothing |
| a home's toolchains (`home.PASSES`), the session's outputs | bound read-only | granted read |
| the sandbox's temporary files | a private directory at `/tmp` | a private `TMPDIR` |
| `/dev` | a minimal one | capped to nothing; `/dev/null` and its kind granted |
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from moot.sandbox import landlock_abi as ll
from moot.sandbox.base import SandboxMasks, protected_in
from moot.sandbox.home import HiddenHome

HIDDEN_ON_THE_HOST = ("/tmp", "/var/tmp/systemd-private", "/run", "/var/run", "/dev/shm")
"""What the host keeps there is other people's: sockets (the Docker socket is root on the
host), other users' files. Bubblewrap shows its own `/tmp`, `/run` and `/dev` instead."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
"""The devices a command may open (`/dev` itself shows nothing else)."""
RESOLVERS = ("/etc/resolv.conf", "/run/systemd/resolve", "/run/resolvconf")
"""Where name resolution reads its servers; readable when the network is allowed."""


def grants_and_caps(
    *,
    workspace: Path,
    protected: Sequence[str],
    masks: SandboxMasks | None,
    outside: Iterable[str],
    homes: Iterable[HiddenHome],
    reveal: str | None,
    tmp: Path,
    readable: Iterable[str] = (),
    added: Sequence[Path] = (),
    network: bool = False,
) -> tuple[dict[str, int], dict[str, int]]:
    """The grants and caps of one command (see the module docstring); absolute real paths.

    Args:
        workspace: Its real path.
        protected: Workspace-relative paths kept read-only (`.git`, `.moot`).
        masks: What deny rules and moot's own files in the workspace mask.
        outside: moot's directories and the host's secrets outside the workspace
            (`private.place(...).outside`): hidden, names and all.
        homes: The home directories hidden whole, with their passes (`home.hidden_homes`).
        reveal: The session's outputs directory, read-only.
        tmp: The sandbox's own temporary directory, writable.
        readable: More paths granted read (the commands' git config).
        added: More writable directories (`--add-dir`), real paths.
        network: Whether the resolver's files are readable.
    """
    grants: dict[str, int] = {"/": ll.READ}
    caps: dict[str, int] = {}

    def grant(path: str, rights: int) -> None:
        real = os.path.realpath(path)
        grants[real] = grants.get(real, 0) | rights

    def cap(path: str, rights: int) -> None:
        real = os.path.realpath(path)
        caps[real] = caps.get(real, rights) & rights

    for path in HIDDEN_ON_THE_HOST:
        cap(path, 0)
    cap("/dev", 0)
    for device in DEVICES:
        grant(device, ll.DEVICE)
    for path in outside:
        cap(path, 0)
    for home in homes:
        cap(home.path, 0)
        for source, _ in home.binds:
            grant(source, ll.READ)
    if network:
        for path in RESOLVERS:
            grant(path, ll.READ)
    for path in [*readable, *((reveal,) if reveal else ())]:
        grant(path, ll.READ)
    grant(str(tmp), ll.WRITE)
    for root in [*added, workspace]:
        grant(str(root), ll.WRITE)
        own = protected_in(protected, root) if root != workspace else tuple(protected)
        for rel in own:
            if os.path.lexists(root / rel) and not os.path.islink(root / rel):
                cap(str(root / rel), ll.READ)
    if masks:
        roots = [workspace, *added]
        for rel in masks.read_only:
            cap(str(workspace / rel), ll.READ)
        for rel in (*masks.hidden_files, *masks.hidden_dirs):
            hidden = workspace / rel  # an absolute path (outside) stays as it is
            inside = any(hidden.is_relative_to(root) for root in roots)
            cap(str(hidden), ll.READ_DIR if inside else 0)
    return grants, caps

"""Who is asking: a resident process runs `moot` for a caller only when the caller could have
run it itself, unconfined, on this host.

A child of the resident process is as free as the user is, so a sandboxed command that reached
the socket would have left its sandbox: the sandboxes hide `/tmp` and `/run` (bubblewrap,
Docker) or refuse Unix sockets (Landlock's filter), and this is the second wall. The caller must
be the same user (`SO_PEERCRED`), in the same namespaces as this process (bubblewrap and Docker
make their own), with the same `no_new_privs` and the same seccomp filters (every sandbox sets
the one, and Landlock's adds a filter). The caller is read from `/proc/<pid>` and held by a
pidfd (`SO_PEERPIDFD`, Linux 6.5) checked still alive after the read: a caller that exited
could otherwise leave its pid to another process, which would be read in its place.

The `moot` asking checks the resident process the same way before it hands anything over (its
terminal, its environment with whatever keys it holds): where the socket's directory lies in a
workspace (moot run in `/tmp`), a sandboxed command could listen there in its place.
"""

from __future__ import annotations

import _socket
import os
import signal
import sys
from typing import Protocol

SO_PEERPIDFD = 77
"""Not named by Python 3.11's `socket`."""
NAMESPACES = ("mnt", "user", "pid", "net", "ipc", "uts", "cgroup")
CONFINEMENT = ("NoNewPrivs", "Seccomp", "Seccomp_filters")
"""The lines of `/proc/<pid>/status` that a sandbox changes."""


class Refused(Exception):
    """The caller may not use this resident process; the message says why."""


class Connected(Protocol):
    """A connected Unix socket (`socket.socket` or `_socket.socket`: the client loads no more)."""

    def getsockopt(self, level: int, option: int, size: int, /) -> bytes: ...


def confinement(pid: int | str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """What of `pid` a sandbox would change: its confinement lines and namespaces."""
    with open(f"/proc/{pid}/status", "rb") as file:
        status = file.read().decode("utf-8", "replace")
    lines = dict(
        line.split(":", 1) for line in status.splitlines() if line.split(":", 1)[0] in CONFINEMENT
    )
    spaces = tuple(os.stat(f"/proc/{pid}/ns/{name}").st_ino for name in NAMESPACES)
    return tuple(lines.get(name, "").strip() for name in CONFINEMENT), spaces


def check(
    conn: Connected, own: tuple[tuple[str, ...], tuple[int, ...]], who: str = "the caller"
) -> None:
    """Raise `Refused` unless the process at the other end of `conn` (`who`, in the message)
    is this user, unconfined as `own` is."""
    cred = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    pid, uid = (int.from_bytes(cred[at : at + 4], sys.byteorder, signed=True) for at in (0, 4))
    if uid != os.getuid():
        raise Refused(f"another user (uid {uid})")
    try:
        raw = conn.getsockopt(_socket.SOL_SOCKET, SO_PEERPIDFD, 4)
        pidfd = int.from_bytes(raw, sys.byteorder, signed=True)
    except OSError:
        raise Refused("this kernel cannot name the caller (SO_PEERPIDFD, Linux 6.5)") from None
    try:
        try:
            theirs = confinement(pid)
        except OSError:
            raise Refused(f"{who} is gone") from None
        try:
            signal.pidfd_send_signal(pidfd, 0)  # still the caller: what was read was its own
        except OSError:
            raise Refused(f"{who} is gone") from None
    finally:
        os.close(pidfd)
    if theirs[1] != own[1]:
        raise Refused(f"{who} is in other namespaces (a sandbox or a container)")
    if theirs[0] != own[0]:
        raise Refused(f"{who} is confined (no_new_privs or a seccomp filter)")

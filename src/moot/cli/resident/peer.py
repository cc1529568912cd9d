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
"""

from __future__ import annotations

import os
import signal
import socket
import struct

SO_PEERPIDFD = 77
"""Not named by Python 3.11's `socket`."""
NAMESPACES = ("mnt", "user", "pid", "net", "ipc", "uts", "cgroup")
CONFINEMENT = ("NoNewPrivs", "Seccomp", "Seccomp_filters")
"""The lines of `/proc/<pid>/status` that a sandbox changes."""


class Refused(Exception):
    """The caller may not use this resident process; the message says why."""


def confinement(pid: int | str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """What of `pid` a sandbox would change: its confinement lines and namespaces."""
    with open(f"/proc/{pid}/status", "rb") as file:
        status = file.read().decode("utf-8", "replace")
    lines = dict(
        line.split(":", 1) for line in status.splitlines() if line.split(":", 1)[0] in CONFINEMENT
    )
    spaces = tuple(os.stat(f"/proc/{pid}/ns/{name}").st_ino for name in NAMESPACES)
    return tuple(lines.get(name, "").strip() for name in CONFINEMENT), spaces


def check(conn: socket.socket, own: tuple[tuple[str, ...], tuple[int, ...]]) -> None:
    """Raise `Refused` unless the caller on `conn` is this user, unconfined as `own` is."""
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    if uid != os.getuid():
        raise Refused(f"another user (uid {uid})")
    try:
        pidfd = struct.unpack("i", conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD, 4))[0]
    except OSError:
        raise Refused("this kernel cannot name the caller (SO_PEERPIDFD, Linux 6.5)") from None
    try:
        try:
            theirs = confinement(pid)
        except OSError:
            raise Refused("the caller is gone") from None
        try:
            signal.pidfd_send_signal(pidfd, 0)  # still the caller: what was read was its own
        except OSError:
            raise Refused("the caller is gone") from None
    finally:
        os.close(pidfd)
    if theirs[1] != own[1]:
        raise Refused("the caller is in other namespaces (a sandbox or a container)")
    if theirs[0] != own[0]:
        raise Refused("the caller is confined (no_new_privs or a seccomp filter)")

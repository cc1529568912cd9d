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

The same user is not enough: a child has the resident process's credentials, so a caller that
gave some up (capabilities, as a service's bounding set or `setpriv` drops them, a group, a
security label) must have none fewer, or it would get them back and run commands with them.
Only equal is simple to tell: a caller with other credentials is refused either way.

The check holds both ways: `client` asks it of whoever listens on the socket before it sends
its environment and terminal, since a sandboxed command that can write the socket's directory
(a workspace or an added directory that holds it) could listen under its name.

Imported by every `moot` that asks for a resident process: no `socket` (16 ms of imports).
"""

from __future__ import annotations

import _socket
import os
import signal
import sys

SO_PEERPIDFD = 77
"""Not named by Python 3.11's `socket`."""
NAMESPACES = ("mnt", "user", "pid", "net", "ipc", "uts", "cgroup")
CONFINEMENT = (
    "Uid", "Gid", "Groups",
    "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
    "NoNewPrivs", "Seccomp", "Seccomp_filters",
)  # fmt: skip
"""The lines of `/proc/<pid>/status` that a sandbox, or a process giving up privileges,
changes: the credentials, capabilities, `no_new_privs` and seccomp filters."""


class Refused(Exception):
    """The peer is not this user as unconfined as this process: a caller this resident process
    serves nothing, or a listener a `moot` sends nothing; the message says why."""


def confinement(pid: int | str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """What of `pid` a sandbox would change: its confinement lines and security label, and
    its namespaces."""
    with open(f"/proc/{pid}/status", "rb") as file:
        status = file.read().decode("utf-8", "replace")
    lines = dict(
        line.split(":", 1) for line in status.splitlines() if line.split(":", 1)[0] in CONFINEMENT
    )
    spaces = tuple(os.stat(f"/proc/{pid}/ns/{name}").st_ino for name in NAMESPACES)
    return (*(lines.get(name, "").strip() for name in CONFINEMENT), _label(pid)), spaces


def _label(pid: int | str) -> str:
    """The LSM's label (an AppArmor profile, an SELinux context), "" with no LSM."""
    try:
        with open(f"/proc/{pid}/attr/current", "rb") as file:
            return file.read().decode("utf-8", "replace").strip("\0\n")
    except OSError:  # EINVAL: no LSM that labels processes
        return ""


def check(
    conn: _socket.socket, own: tuple[tuple[str, ...], tuple[int, ...]], who: str = "the caller"
) -> None:
    """Raise `Refused` unless the peer on `conn` (`who`: the caller, or the process that
    listens) is this user, unconfined as `own` is."""
    cred = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    pid, uid = (int.from_bytes(cred[i : i + 4], sys.byteorder, signed=True) for i in (0, 4))
    if uid != os.getuid():
        raise Refused(f"another user (uid {uid})")
    try:
        raw = conn.getsockopt(_socket.SOL_SOCKET, SO_PEERPIDFD, 4)
    except OSError:
        raise Refused(f"this kernel cannot name {who} (SO_PEERPIDFD, Linux 6.5)") from None
    pidfd = int.from_bytes(raw, sys.byteorder, signed=True)
    try:
        try:
            theirs = confinement(pid)
        except OSError:
            raise Refused(f"{who} is gone") from None
        try:
            signal.pidfd_send_signal(pidfd, 0)  # still the peer: what was read was its own
        except OSError:
            raise Refused(f"{who} is gone") from None
    finally:
        os.close(pidfd)
    if theirs[1] != own[1]:
        raise Refused(f"{who} is in other namespaces (a sandbox or a container)")
    if theirs[0] != own[0]:
        raise Refused(
            f"{who} is confined (no_new_privs, a seccomp filter, a security label, or other"
            " capabilities or groups)"
        )

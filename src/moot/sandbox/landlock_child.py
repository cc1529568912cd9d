"""What a Landlock command's child does between `fork` and `exec`: give up privileges, then
enter the sandbox.

In that order: every capability dropped (a command moot runs as root would otherwise keep
them all: Landlock confines paths, not privileges), `no_new_privs` (no set-uid program gives
any back, and the kernel demands it for the next two), the Landlock ruleset the parent built,
and the seccomp filter (set-id bits and socket families, `seccomp`).

It runs in the Landlock zygote's child (`landlock_zygote`), a process of one thread, so
nothing here needs to beware of locks another thread held at the fork; everything that can be
made beforehand (the filter's buffer, the ctypes structures) is, once per zygote, so the child
only makes the system calls. The capabilities that only count at `exec` (the bounding set,
some forty calls for root, and the ambient set) the zygote gives up itself once
(`drop_exec_capabilities`): it execs nothing, and each child inherits their loss at the fork.
"""

from __future__ import annotations

import ctypes
import os

from moot.sandbox import landlock_abi

_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_capset = _libc.capset


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            return int(file.read())
    except (OSError, ValueError):
        return 63


def drop_exec_capabilities() -> None:
    """Give up the capabilities that only count at `exec`: the bounding set (what an `exec`
    may ever give back; root's alone may be dropped) and the ambient set. Called once, by the
    zygote, whose children inherit their loss; it keeps its own (a child may still need them
    to enter its directory: `Entry` drops them there)."""
    if os.geteuid() == 0:  # another user holds no capability (and may not drop bounding ones)
        for cap in range(_last_cap() + 1):
            _prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def become_subreaper() -> None:
    """Have what a child leaves behind (a double fork, `setsid`) become this process's child
    rather than init's, so it stays below this process (`sentinel.descendants`)."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


class Entry:
    """The entry into the sandbox, everything it needs made beforehand: one per seccomp
    filter, made once per zygote and called in each command's child after
    `drop_exec_capabilities` in the zygote."""

    def __init__(self, program: bytes | None) -> None:
        """Args:
        program: A seccomp filter (`struct sock_filter`s), or None.
        """
        self._program = ctypes.create_string_buffer(program or b"", len(program or b""))
        self._fprog = _SockFprog(len(program or b"") // 8, ctypes.addressof(self._program))
        self._has_filter = program is not None
        self._header = _CapHeader(_CAPABILITY_VERSION_3, 0)
        self._no_caps = (_CapData * 2)()

    def __call__(self, ruleset: int) -> None:
        """Run in the child (see the module docstring); raises OSError to stop the start.

        Args:
            ruleset: A Landlock ruleset's descriptor (close-on-exec: gone once the command
                runs).
        """
        if _capset(ctypes.byref(self._header), self._no_caps) != 0:
            _fail("capset")
        if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("no_new_privs")
        if landlock_abi._syscall(landlock_abi.RESTRICT_SELF, ruleset, 0) != 0:
            _fail("landlock_restrict_self")
        if self._has_filter:
            fprog = ctypes.byref(self._fprog)
            if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0) != 0:
                _fail("seccomp")


def _fail(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")

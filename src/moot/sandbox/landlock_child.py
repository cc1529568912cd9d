"""What a Landlock command's child does between `fork` and `exec`: give up privileges, then
enter the sandbox.

In that order: every capability dropped (a command moot runs as root would otherwise keep
them all: Landlock confines paths, not privileges), `no_new_privs` (no set-uid program gives
any back, and the kernel demands it for the next two), the Landlock ruleset the parent built,
and the seccomp filter (set-id bits and socket families, `seccomp`).

It runs in the Landlock zygote's child (`landlock_zygote`), a process of one thread, so
nothing here needs to beware of locks another thread held at the fork; everything that can be
made beforehand (the filter's buffer, the ctypes structures) is, so the child only makes the
system calls.
"""

from __future__ import annotations

import ctypes
import os

from moot.sandbox import landlock_abi

_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
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


class Entry:
    """The entry into the sandbox of one command: everything it needs made beforehand."""

    def __init__(self, ruleset: int, program: bytes | None) -> None:
        """Args:
        ruleset: A Landlock ruleset's descriptor (close-on-exec: gone once the command runs);
            the caller closes it after the start.
        program: A seccomp filter (`struct sock_filter`s), or None.
        """
        self.ruleset = ruleset
        self._program = ctypes.create_string_buffer(program or b"", len(program or b""))
        self._fprog = _SockFprog(len(program or b"") // 8, ctypes.addressof(self._program))
        self._has_filter = program is not None
        self._caps = range(_last_cap() + 1)
        self._header = _CapHeader(_CAPABILITY_VERSION_3, 0)
        self._no_caps = (_CapData * 2)()
        self._root = os.geteuid() == 0

    def __call__(self) -> None:
        """Run in the child (see the module docstring); raises OSError to stop the start."""
        if self._root:  # another user holds no capability (and may not drop bounding ones)
            for cap in self._caps:
                _prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        if _capset(ctypes.byref(self._header), self._no_caps) != 0:
            _fail("capset")
        if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("no_new_privs")
        if landlock_abi._syscall(landlock_abi.RESTRICT_SELF, self.ruleset, 0) != 0:
            _fail("landlock_restrict_self")
        if self._has_filter:
            fprog = ctypes.byref(self._fprog)
            if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0) != 0:
                _fail("seccomp")


def _fail(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")

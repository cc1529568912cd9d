"""The kernel's Landlock interface (`<linux/landlock.h>`), through ctypes.

Why ctypes and not a binding from PyPI: the three system calls and their two structs are all
moot needs, the bindings on PyPI are young, and none hands a ruleset made in one process to
another that enters it between `fork` and `exec` (`landlock_zygote`, `landlock_child`). moot
makes the ruleset and its rules; the zygote's child only turns it on.

The numbers are the generic ones (444-446 on every architecture Linux gives them). The ABI
version says what the kernel can restrict:

| ABI | adds |
| --- | --- |
| 1 | file system access (read, write, make, remove; renames across directories refused) |
| 2 | `REFER`: renames and links across directories, checked |
| 3 | `TRUNCATE` |
| 4 | TCP bind and connect, by port |
| 5 | `IOCTL_DEV` |
| 6 | scopes: abstract Unix sockets and signals stay inside the sandbox |
| 7 | audit logging of denials |
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct

CREATE_RULESET = 444
ADD_RULE = 445
RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15

NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
"""Every file system right each ABI knows (4 and 6 add none)."""

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights a rule on a file (not a directory) may hold; the kernel refuses others."""
READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (
    READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_FIFO | MAKE_SYM
    | REFER | TRUNCATE | IOCTL_DEV
)  # fmt: skip
"""No `MAKE_CHAR`, `MAKE_BLOCK` (device nodes) or `MAKE_SOCK` (Unix sockets) anywhere."""
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
"""`/dev/null` and its kind: `> /dev/null` opens with `O_TRUNC`."""

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def fs_rights(abi: int) -> int:
    """The file system rights a kernel of this ABI handles."""
    return FS_BY_ABI[max(level for level in FS_BY_ABI if level <= abi)]


@functools.cache
def abi_version() -> int:
    """The Landlock ABI this kernel offers; 0 when it offers none (not built in, not enabled
    at boot (`lsm=`), or the calls refused by a container's seccomp profile)."""
    version = _syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return int(version) if version > 0 else 0


def why_no_abi() -> str:
    """Why `abi_version` is 0, for people to read."""
    _syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return "the kernel has no Landlock (or a seccomp profile refuses its system calls)"
    if code == errno.EOPNOTSUPP:
        return "Landlock is built into the kernel but not enabled (boot with lsm=...,landlock)"
    return f"Landlock answers {os.strerror(code) if code else 'nothing'}"


def create_ruleset(abi: int, handled_fs: int, handled_net: int, scoped: int) -> int:
    """A new ruleset's descriptor (close-on-exec), handling these rights.

    Raises:
        OSError: The kernel refused it.
    """
    if abi >= 6:
        attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled_fs, handled_net)
    else:
        attr = struct.pack("=Q", handled_fs)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    fd = _syscall(CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        _raise("landlock_create_ruleset")
    return int(fd)


def add_path_rule(ruleset: int, fd: int, rights: int) -> None:
    """Allow `rights` beneath the file or directory open as `fd` (an `O_PATH` descriptor).

    Raises:
        OSError: The kernel refused it.
    """
    attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
    if _syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, attr, ctypes.c_uint32(0)) < 0:
        _raise("landlock_add_rule")


def add_port_rule(ruleset: int, port: int, rights: int) -> None:
    """Allow `rights` (`NET_CONNECT_TCP`, `NET_BIND_TCP`) for TCP port `port`.

    Raises:
        OSError: The kernel refused it.
    """
    attr = ctypes.create_string_buffer(struct.pack("=QQ", rights, port), 16)
    if _syscall(ADD_RULE, ruleset, RULE_NET_PORT, attr, ctypes.c_uint32(0)) < 0:
        _raise("landlock_add_rule")


def _raise(call: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{call}: {os.strerror(code)}")

"""A seccomp filter that refuses set-user-ID and set-group-ID bits, for bubblewrap's commands.

A command that runs as root writes root's files into the workspace, on the host's disk:
`cp /usr/bin/python3 x; chmod 4755 x` would leave a program that gives any local user
uid 0. The workspace is mounted `nosuid` inside the sandbox, which stops the bit there, not
on the host. So the kernel refuses the bits as they are asked for, as systemd's
`RestrictSUIDSGID=` does: `chmod`, `fchmod`, `fchmodat`, `fchmodat2` and `mknod(at)` with
`S_ISUID` or `S_ISGID` in the mode fail with EPERM, and so do `open(at)` and `creat` that
would create a file with them. `openat2` takes its mode in a struct a filter cannot read, and
`io_uring` opens files past seccomp altogether: both fail with ENOSYS, on which C libraries
and libuv fall back to the calls above. A 32-bit (or x32) program is filtered by its own
numbers; an architecture this module does not know gets no filter (`set_id_filter` returns
None) and the backend sweeps the bits off after each command instead (`set_id`).

`mkdir` needs no rule: the kernel ignores set-id bits in its mode (a directory inherits
set-group-ID from its parent, which is harmless: it gives no process any privilege).
`chmod g+s` on a directory is refused all the same, since a filter cannot tell a directory
from a file; so is a `chmod` that keeps a directory's set-group-ID bit, as coreutils does.

The program is classic BPF over `struct seccomp_data` (`<linux/seccomp.h>`): the number at
offset 0, the architecture at 4, argument `i` at `16 + 8 i` (its low half first on the
little-endian machines listed).
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from collections.abc import Iterable

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
SET_ID_BITS = 0o6000
"""S_ISUID | S_ISGID."""
_CREATES = 0o100 | 0o20000000
"""O_CREAT | __O_TMPFILE: the open flags with which the mode argument counts."""
_X32 = 0x40000000
"""`__X32_SYSCALL_BIT`: x32 programs run x86-64's calls with it set."""

# Which argument holds the mode: ("mode", i), or ("open", flags, mode), or "enosys".
_Rule = tuple[str, int] | tuple[str, int, int] | str
_X86_64: dict[int, _Rule] = {
    90: ("mode", 1), 91: ("mode", 1), 268: ("mode", 2), 452: ("mode", 2),  # chmod ... fchmodat2
    133: ("mode", 1), 259: ("mode", 2), 85: ("mode", 1),  # mknod, mknodat, creat
    2: ("open", 1, 2), 257: ("open", 2, 3),  # open, openat
    437: "enosys", 425: "enosys",  # openat2, io_uring_setup
}  # fmt: skip
_I386: dict[int, _Rule] = {
    15: ("mode", 1), 94: ("mode", 1), 306: ("mode", 2), 452: ("mode", 2),
    14: ("mode", 1), 297: ("mode", 2), 8: ("mode", 1),
    5: ("open", 1, 2), 295: ("open", 2, 3),
    437: "enosys", 425: "enosys",
}  # fmt: skip
_ARM: dict[int, _Rule] = {
    15: ("mode", 1), 94: ("mode", 1), 333: ("mode", 2), 452: ("mode", 2),
    14: ("mode", 1), 324: ("mode", 2), 8: ("mode", 1),
    5: ("open", 1, 2), 322: ("open", 2, 3),
    437: "enosys", 425: "enosys",
}  # fmt: skip
_GENERIC: dict[int, _Rule] = {  # asm-generic/unistd.h: no chmod, open, creat or mknod
    52: ("mode", 1), 53: ("mode", 2), 452: ("mode", 2), 33: ("mode", 2),
    56: ("open", 2, 3), 437: "enosys", 425: "enosys",
}  # fmt: skip

_AUDIT = {
    "x86_64": 0xC000003E,
    "i386": 0x40000003,
    "arm": 0x40000028,
    "aarch64": 0xC00000B7,
    "riscv64": 0xC00000F3,
    "loongarch64": 0xC0000102,
}
_TABLES = {"x86_64": _X86_64, "i386": _I386, "arm": _ARM}
_SOCKET = {"x86_64": 41, "i386": 359, "arm": 281}
"""`socket(2)` on each architecture (asm-generic's, 198, for the others)."""
_SOCKETCALL = {"i386": 102}
"""i386's multiplexed socket call, whose arguments a filter cannot read: ENOSYS (C libraries
call `socket` itself since Linux 4.3)."""
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_SOCK_STREAM, _IPPROTO_TCP = 1, 6
_MACHINES = {
    "x86_64": ("x86_64", "i386"),
    "amd64": ("x86_64", "i386"),
    "aarch64": ("aarch64", "arm"),
    "arm64": ("aarch64", "arm"),
    "riscv64": ("riscv64",),
    "loongarch64": ("loongarch64",),
}
"""The architectures a kernel on this machine may run programs of (its own, and the 32-bit
one it may run besides): the filter covers each."""


def set_id_filter(machine: str | None = None, sockets: str | None = None) -> bytes | None:
    """The filter program for this machine (`platform.machine()`), as `bwrap --seccomp`
    reads it; None where this module does not know the machine's system calls.

    `sockets` adds rules on `socket(2)` for a backend without a network namespace (Landlock):
    "tcp" (no network) refuses Unix sockets (the host's, by path: Landlock does not see
    `connect`), and every internet socket but TCP (which Landlock's rules then confine), and
    every other family but netlink (which reads the interfaces and changes nothing without a
    capability); "any" (network allowed) refuses only Unix sockets. A pair of connected Unix
    sockets (`socketpair`) is always allowed: it reaches nothing outside.
    """
    arches = _MACHINES.get((machine or platform.machine()).lower())
    return None if arches is None else _program(arches, sockets)


@functools.cache
def _program(arches: tuple[str, ...], sockets: str | None = None) -> bytes:
    code: list[tuple[int, int, int | str, int | str]] = []  # (op, k, jt, jf); labels as str
    code.append((_LD_ABS, 4, 0, 0))
    for arch in arches:
        code.append((_JEQ, _AUDIT[arch], f"arch:{arch}", 0))
    code.append((_RET, _ERRNO | errno.ENOSYS, 0, 0))  # an architecture not listed: nothing runs
    labels: dict[str, int] = {}
    for arch in arches:
        labels[f"arch:{arch}"] = len(code)
        code.append((_LD_ABS, 0, 0, 0))
        if arch == "x86_64":
            code.append((_JGE, _X32, "enosys", 0))
        for number, rule in _TABLES.get(arch, _GENERIC).items():
            code.append((_JEQ, number, _target(rule), 0))
        if sockets is not None:
            code.append((_JEQ, _SOCKET.get(arch, 198), "socket", 0))
            if arch in _SOCKETCALL:
                code.append((_JEQ, _SOCKETCALL[arch], "enosys", 0))
        code.append((_RET, _ALLOW, 0, 0))
    if sockets is not None:
        code += _socket_rules(sockets, labels, len(code))
    for flags, mode in ((1, 2), (2, 3)):  # before the mode checks: jumps go forward only
        labels[f"open:{flags}:{mode}"] = len(code)
        code.append((_LD_ABS, 16 + 8 * flags, 0, 0))
        code.append((_JSET, _CREATES, f"mode:{mode}", "allow"))
    for arg in range(1, 4):  # the mode is argument 1, 2 or 3
        labels[f"mode:{arg}"] = len(code)
        code.append((_LD_ABS, 16 + 8 * arg, 0, 0))
        code.append((_JSET, SET_ID_BITS, "eperm", "allow"))
    errors = [("eperm", errno.EPERM), ("enosys", errno.ENOSYS)]
    if sockets is not None:
        errors += [("eacces", errno.EACCES), ("eafnosupport", errno.EAFNOSUPPORT)]
    for name, number in errors:
        value = _ERRNO | number
        labels[name] = len(code)
        code.append((_RET, value, 0, 0))
    labels["allow"] = len(code)
    code.append((_RET, _ALLOW, 0, 0))
    return b"".join(_encode(code, labels))


def _socket_rules(
    sockets: str, labels: dict[str, int], base: int
) -> list[tuple[int, int, int | str, int | str]]:
    """The checks of `socket(domain, type, protocol)` (see `set_id_filter`), placed at
    `base`; their labels ("socket", "socket:tcp") go into `labels`."""
    labels["socket"] = base
    code: list[tuple[int, int, int | str, int | str]] = [
        (_LD_ABS, 16, 0, 0),
        (_JEQ, _AF_UNIX, "eacces", 0),
    ]
    if sockets == "any":
        code.append((_JEQ, 0, "allow", "allow"))
        return code
    code += [
        (_JEQ, _AF_NETLINK, "allow", 0),
        (_JEQ, _AF_INET, "socket:tcp", 0),
        (_JEQ, _AF_INET6, "socket:tcp", "eafnosupport"),
    ]
    labels["socket:tcp"] = base + len(code)
    code += [
        (_LD_ABS, 16 + 8, 0, 0),
        (_AND, 0xF, 0, 0),  # the type without SOCK_NONBLOCK and SOCK_CLOEXEC
        (_JEQ, _SOCK_STREAM, 0, "eacces"),
        (_LD_ABS, 16 + 16, 0, 0),
        (_JEQ, 0, "allow", 0),
        (_JEQ, _IPPROTO_TCP, "allow", "eacces"),
    ]
    return code


def _target(rule: _Rule) -> str:
    if isinstance(rule, str):
        return rule
    return ":".join(str(part) for part in rule)  # "mode:2", "open:2:3"


def _encode(
    code: list[tuple[int, int, int | str, int | str]], labels: dict[str, int]
) -> Iterable[bytes]:
    """Each instruction as a `struct sock_filter`, jumps made relative (forward only, at most
    255 instructions ahead, as classic BPF requires)."""
    for at, (op, k, jt, jf) in enumerate(code):
        offsets = []
        for jump in (jt, jf):
            offset = labels[jump] - at - 1 if isinstance(jump, str) else jump
            assert 0 <= offset <= 255, f"jump to {jump} out of reach"
            offsets.append(offset)
        yield struct.pack("=HBBI", op, offsets[0], offsets[1], k)

"""The set-id filter's program (`sandbox.seccomp`), run by a classic-BPF interpreter over each
architecture it covers: this machine runs only its own programs (the contract shows the filter
working for real in bubblewrap), but an arm64 kernel's 32-bit programs must be filtered too."""

from __future__ import annotations

import errno
import struct

import pytest

from moot.sandbox.seccomp import set_id_filter

ALLOW = "allow"
AUDIT = {"x86_64": 0xC000003E, "i386": 0x40000003, "arm": 0x40000028, "aarch64": 0xC00000B7}


def run_filter(program: bytes, arch: int, nr: int, *args: int) -> str | int:
    """What the filter answers: "allow", or the errno it returns."""
    words = [arg & 0xFFFF_FFFF_FFFF_FFFF for arg in args] + [0] * (6 - len(args))
    data = struct.pack("=iIQ6Q", nr, arch, 0, *words)
    code = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if hit else jf
        elif op == 0x06:  # ret k
            if k == 0x7FFF0000:
                return ALLOW
            assert k & 0xFFFF0000 == 0x00050000, hex(k)
            return k & 0xFFFF
        else:
            raise AssertionError(f"unexpected instruction {op:#x}")


O_CREAT, O_TMPFILE = 0o100, 0o20000000 | 0o200000
CASES = {
    # arch: (chmod, fchmodat, open, openat, openat2, an unrelated call)
    "x86_64": {"chmod": 90, "fchmodat": 268, "open": 2, "openat": 257, "other": 0},
    "i386": {"chmod": 15, "fchmodat": 306, "open": 5, "openat": 295, "other": 3},
    "arm": {"chmod": 15, "fchmodat": 333, "open": 5, "openat": 322, "other": 3},
    "aarch64": {"chmod": 52, "fchmodat": 53, "openat": 56, "other": 63},  # fchmod for chmod
}


ARCHES = [("x86_64", "x86_64"), ("x86_64", "i386"), ("aarch64", "aarch64"), ("aarch64", "arm")]
"""(machine, architecture of the program): each machine's own, and the 32-bit one it runs."""


@pytest.mark.parametrize(("machine", "arch"), ARCHES)
def test_set_id_bits_are_refused_and_nothing_else(machine: str, arch: str) -> None:
    program = set_id_filter(machine)
    assert program is not None
    calls = CASES[arch]

    def answer(name: str, *args: int) -> str | int:
        return run_filter(program, AUDIT[arch], calls[name], *args)

    assert answer("chmod", 3, 0o4755) == errno.EPERM
    assert answer("chmod", 3, 0o2755) == errno.EPERM
    assert answer("chmod", 3, 0o755) == ALLOW
    assert answer("chmod", 3, 0o1777) == ALLOW, "the sticky bit is fine"
    assert answer("fchmodat", -100, 0, 0o6755) == errno.EPERM
    assert answer("openat", -100, 0, O_CREAT | 1, 0o4755) == errno.EPERM
    assert answer("openat", -100, 0, O_TMPFILE | 2, 0o2755) == errno.EPERM
    assert answer("openat", -100, 0, 0, 0o4755) == ALLOW, "no file made: the mode is noise"
    assert answer("openat", -100, 0, O_CREAT, 0o644) == ALLOW
    if "open" in calls:
        assert answer("open", 0, O_CREAT, 0o4755) == errno.EPERM
    assert run_filter(program, AUDIT[arch], 437, -100, 0, 0, 24) == errno.ENOSYS  # openat2
    assert run_filter(program, AUDIT[arch], 425, 8, 0) == errno.ENOSYS  # io_uring_setup
    assert answer("other", 0, 0o4755) == ALLOW


def test_x32_calls_and_other_architectures_run_nothing() -> None:
    program = set_id_filter("x86_64")
    assert program is not None

    assert run_filter(program, AUDIT["x86_64"], 0x40000000 | 90, 0, 0o4755) == errno.ENOSYS
    assert run_filter(program, AUDIT["aarch64"], 52, 3, 0o755) == errno.ENOSYS


def test_a_machine_whose_calls_are_unknown_gets_no_filter() -> None:
    assert set_id_filter("ppc64le") is None
    assert set_id_filter("riscv64") is not None

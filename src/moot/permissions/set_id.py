"""Shell commands that ask for a set-user-ID or set-group-ID bit, refused before they run.

A set-id file in the workspace gives any user of the machine the rights of the user moot
runs as (root's, in a container or CI), since what a command writes lands on the host's
disk. The sandbox refuses the bits (`moot.sandbox.seccomp`) or clears them as the command
ends (`moot.sandbox.set_id`); this is the part the command line shows, refused in every mode
with a reason the model can read: `chmod` with a mode that sets `s` (`u+s`, `+s`, `g=rxs`,
`4755`, `02755`), and `install`, `mkdir`, `mknod` with such a `-m`/`--mode`. What a
program does by itself (`os.chmod`, `cp -p` of a set-id file, `tar -p`) no command line
shows; the sandbox stops that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

_CLAUSE = re.compile(r"[ugoa]*([-+=][rwxXstugo]*)+")
_ACTION = re.compile(r"([-+=])([rwxXstugo]*)")
_MODE_TAKERS = frozenset({"install", "mkdir", "mknod"})


def asks_for_set_id(words: Sequence[str]) -> str | None:
    """The mode by which this simple command (its words, name first) asks for a set-id bit,
    or None when its words ask for none."""
    if not words:
        return None
    name = os.path.basename(words[0])
    if name == "chmod":
        modes = _chmod_mode(words[1:])
    elif name in _MODE_TAKERS:
        modes = list(_mode_options(words[1:]))
    else:
        return None
    return next((mode for mode in modes if sets_id(mode)), None)


def sets_id(mode: str) -> bool:
    """Whether a `chmod`-style mode sets a set-id bit: an octal mode with 4000 or 2000 in
    it, or a symbolic one that adds or assigns `s`."""
    if re.fullmatch(r"[0-7]{1,5}", mode):
        return int(mode, 8) & 0o6000 != 0
    clauses = mode.split(",")
    if not all(_CLAUSE.fullmatch(clause) for clause in clauses):
        return False  # not a mode: a file name, or an option chmod takes
    return any(
        op in "+=" and "s" in perms for clause in clauses for op, perms in _ACTION.findall(clause)
    )


def _chmod_mode(args: Sequence[str]) -> list[str]:
    """chmod's mode: its first word that is no option (`-R`, `-v`; a mode may start with
    `-` too: `-x`); none with `--reference`."""
    for arg in args:
        if arg.startswith("--reference"):
            return []
        if arg.startswith("--") or re.fullmatch(r"-[RcfvhHLP]+", arg):
            continue
        return [arg]
    return []


_FLAGS = "bcCdDpsvZ"
"""Short options of `install`, `mkdir` and `mknod` that take no value, so that one may stand
before `m` in a cluster (`install -Dm4755`)."""


def _mode_options(args: Sequence[str]) -> list[str]:
    """The values of `-m MODE`, `-mMODE`, `-Dm MODE`, `--mode=MODE` and `--mode MODE`."""
    found: list[str] = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg == "--mode":
            found.append(following)
        elif arg.startswith("--mode="):
            found.append(arg.partition("=")[2])
        elif arg.startswith("-") and not arg.startswith("--"):
            flags, m, value = arg[1:].partition("m")
            if m and all(flag in _FLAGS for flag in flags):
                found.append(value or following)
    return found

"""Whether bubblewrap works here, and what this `bwrap` can do: each asked once per path (and
a probe that succeeded remembered across starts, `bwrap_cache`)."""

from __future__ import annotations

import functools
import os
import subprocess

from moot.paths import host_program
from moot.sandbox import bwrap_cache
from moot.sandbox.bwrap_argv import DROP_ALL, NAMESPACES

_PROBE_FLAGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *NAMESPACES)
ISOLATIONS = (
    ("--unshare-user", "--disable-userns", *DROP_ALL),
    ("--unshare-user", *DROP_ALL),
    DROP_ALL,
)
"""How a command is kept from privileges, strongest first; the probe takes the first that
works here. A user namespace of its own makes what capabilities the command could hold count
only there, and `--disable-userns` (bubblewrap 0.8) keeps it from making another; where the
kernel allows no user namespace (inside many containers), root is left with no capability."""


def find_bwrap() -> str | None:
    """The person's `bwrap`: never one a relative PATH entry or one inside the current directory
    (the workspace) names, which would run on the host with the repository's code."""
    return host_program("bwrap", (os.getcwd(),))


def bwrap_unavailable(bwrap: str | None = None) -> str | None:
    """Why bubblewrap cannot run commands here, or None when it can (probed once per path).

    The probe runs `true` with the mounts and namespaces a command gets, network unshared,
    with each of `ISOLATIONS` in turn until one works: `bwrap` may be installed where user
    namespaces are not allowed (some containers, some hardened kernels), and only trying
    tells. A probe that succeeded is remembered across starts for a few minutes
    (`moot.sandbox.bwrap_cache`), with the isolation that worked; a failed one is not.
    """
    path = bwrap or find_bwrap()
    if path is None:
        return "bubblewrap is not installed (no `bwrap` on PATH)"
    return _probe(path)[0]


def isolation_args(bwrap: str) -> tuple[str, ...]:
    """The strongest of `ISOLATIONS` that works with this `bwrap` (probed once per path);
    the weakest when none does (the command then fails with bwrap's own words)."""
    return _probe(bwrap)[1]


@functools.cache
def _probe(path: str) -> tuple[str | None, tuple[str, ...]]:
    remembered = bwrap_cache.remembered_isolation(path)
    if remembered is not None:
        return None, remembered
    why_not = ""
    for isolation in ISOLATIONS:
        argv = [path, *_PROBE_FLAGS, *isolation, "--unshare-net", "--die-with-parent", "true"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`{path}` could not be run: {exc}", ISOLATIONS[-1]
        if done.returncode == 0:
            bwrap_cache.remember(path, _version(path), isolation)
            return None, isolation
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        why_not = f"`{path}` does not work here: {detail[0]}"
    return why_not, ISOLATIONS[-1]


def bwrap_version(bwrap: str | None = None) -> str:
    """`bwrap --version`'s answer, e.g. "bubblewrap 0.8.0"; "" when it has none (asked once
    per path, or remembered with a successful probe)."""
    path = bwrap or find_bwrap()
    if path is None:
        return ""
    return _version(path)


@functools.cache
def _version(path: str) -> str:
    remembered = bwrap_cache.remembered(path)
    if remembered is not None:
        return remembered
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


def bind_fd_supported(bwrap: str) -> bool:
    """Whether this `bwrap` has `--bind-fd` (releases since Flatpak's CVE-2024-42472 fix, and
    distributions' backports of it); asked once per path."""
    return _has_bind_fd(bwrap)


def tmpfs_size_supported(bwrap: str) -> bool:
    """Whether this `bwrap` has `--size` for a tmpfs (0.5 and later); asked once per path."""
    return "--size" in _help(bwrap)


def file_perms_supported(bwrap: str) -> bool:
    """Whether this `bwrap` has `--perms` for a `--file` (0.5 and later); asked once per
    path."""
    return "--perms" in _help(bwrap)


def _has_bind_fd(path: str) -> bool:
    return "--bind-fd" in _help(path)


@functools.cache
def _help(path: str) -> str:
    """`bwrap --help`'s text (what options it has), "" when it cannot be run."""
    try:
        done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr

"""The facts of a session's environment, for its system prompt (`prompts/environment.md`).

Gathered as the session opens, cheaply: the platform from `os.uname`, the branch from
`.git/HEAD`. The short git status is the one thing that needs a process: `GitProbe` starts it
in a thread as soon as the session begins opening, so it overlaps with the rest of the set-up,
and runs git as moot's own git always runs on the host (`moot.workspace.host_git`: no hooks, no
fsmonitor, no filters, no transport, no optional locks).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path

import msgspec

GIT_TIMEOUT = 1.5
"""Seconds the status may take (a huge repository); past it the prompt says it is unknown."""


class SessionFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the environment section says; each field is one placeholder of it."""

    cwd: str
    platform: str
    shell: str
    date: str
    git: str
    sandbox: str
    mode: str


def platform_name() -> str:
    """`Linux 6.8.0` or `Darwin 23.4.0`: the kernel is what commands meet."""
    try:
        uname = os.uname()
    except AttributeError:  # pragma: no cover - not a POSIX system
        return sys.platform
    return f"{uname.sysname} {uname.release}"


def shell_name(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The shell `bash` commands run in, and the person's own when it is another."""
    env = os.environ if environ is None else environ
    own = os.path.basename(env.get("SHELL", "")) or ""
    return "bash" if own in ("", "bash") else f"bash (the person's own shell is {own})"


def sandbox_words(backend: str, network: bool) -> str:
    """Where shell commands run, in the words of the environment section."""
    if backend == "none":
        return "nowhere: no sandbox works here, so `bash` refuses commands"
    if backend == "host":
        return "on the host, with no sandbox: they can change anything the person can"
    net = (
        "the network is reachable"
        if network
        else "there is no network (`web_fetch` reaches public pages)"
    )
    return (
        f"in a {backend} sandbox: the workspace and a temporary directory are writable, the "
        f"rest is read-only, and {net}"
    )


def today() -> str:
    return date.today().isoformat()


class GitProbe:
    """A short `git status` of the workspace's repository, run in a background thread.

    Args:
        root: The workspace root.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._summary = "unknown (git did not answer in time)"
        self._thread = threading.Thread(target=self._run, name="moot-git-probe", daemon=True)
        self._thread.start()

    def summary(self) -> str:
        """`branch main; 2 modified, 1 untracked`, `not a repository`, or why it is unknown."""
        self._thread.join(GIT_TIMEOUT)
        return self._summary

    def _run(self) -> None:
        try:
            self._summary = git_summary(self.root)
        except Exception as exc:  # a probe must never break a session; the prompt says why
            self._summary = f"unknown ({type(exc).__name__})"


def git_summary(root: Path) -> str:
    """What `GitProbe` finds (see there); blocking."""
    from moot.workspace.git_config import GitRefused, find_repository
    from moot.workspace.host_git import HOST_ENV, NO_HOOKS, HostGit

    repo = find_repository(str(root))
    if repo is None:
        return "not a git repository"
    where = "" if repo.top == str(root) else f" (its top is {repo.top})"
    branch = _branch(Path(repo.git_dir))
    try:
        options = HostGit(root).call(repo).options
    except GitRefused as exc:
        return f"{branch}{where}; status unknown: {exc}"
    argv = [
        "git", "-c", "core.quotepath=off", *options, "-c", f"core.hooksPath={NO_HOOKS}",
        "status", "--porcelain=v1", "-z", "--ignore-submodules=all", "--untracked-files=normal",
    ]  # fmt: skip
    env = {**os.environ, **HOST_ENV, "GIT_OPTIONAL_LOCKS": "0"}
    done = subprocess.run(
        argv, cwd=repo.top, env=env, capture_output=True, timeout=GIT_TIMEOUT, check=False
    )
    if done.returncode != 0:
        return f"{branch}{where}; status unknown (git exited with {done.returncode})"
    return f"{branch}{where}; {_counts(done.stdout)}"


def _branch(git_dir: Path) -> str:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "branch unknown"
    if head.startswith("ref: refs/heads/"):
        return f"on branch {head.removeprefix('ref: refs/heads/')}"
    return f"detached at {head[:10]}"


def _counts(porcelain: bytes) -> str:
    staged = modified = untracked = 0
    entries = porcelain.split(b"\0")
    skip = False
    for entry in entries:
        if skip or len(entry) < 3:
            skip = False
            continue
        x, y = chr(entry[0]), chr(entry[1])
        if x == "?":
            untracked += 1
            continue
        staged += x not in " !"
        modified += y not in " !"
        skip = x in "RC"  # a rename's or copy's source path follows as its own entry
    parts = [
        f"{n} {what}"
        for n, what in ((staged, "staged"), (modified, "modified"), (untracked, "untracked"))
        if n
    ]
    if not parts:
        return "the work tree is clean"
    return ", ".join(parts) + " (`git_status` lists them)"


def session_facts(
    root: Path, mode: str | None, backend: str, network: bool, git: GitProbe | None
) -> SessionFacts:
    """The environment the session's prompt describes: the workspace, the platform and shell,
    today, the git status (`git`, started as the session began opening, or run now), the
    sandbox and the permission mode (None: the session has none)."""
    return SessionFacts(
        cwd=str(root),
        platform=platform_name(),
        shell=shell_name(),
        date=today(),
        git=git.summary() if git is not None else git_summary(root),
        sandbox=sandbox_words(backend, network),
        mode=mode if mode is not None else "none (no permission rules)",
    )

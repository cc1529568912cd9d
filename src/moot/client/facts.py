"""The facts of a session's environment, for its system prompt (`prompts/environment.md`).

Gathered as the session opens, cheaply: the platform from `os.uname`, the branch from
`.git/HEAD`. The short git status is the one thing that needs a process: `GitProbe` runs it
in a thread as the session begins opening in a small repository (it answers in milliseconds),
else once the session is assembled (in a 100,000-file repository git's work slowed the set-up
it overlapped by 15-20% on a busy machine), and nothing waits for it there. The prompt
takes what it has found when the session's first op arrives (`client/late_facts.py`, waiting
`FIRST_OP_WAIT_S` at most); until then it says the status is not read yet. The status counts
tracked files only (`-uno`: listing untracked files walks the whole tree, 250 ms in a
100,000-file repository), in one thread at the lowest priority, so that in a big repository it
takes no CPU the session's own start needs; git runs as moot's own git always runs on the host
(`moot.workspace.host_git`: no hooks, no fsmonitor, no filters, no transport, no optional
locks).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path

import msgspec

from moot.paths import host_search_path

GIT_TIMEOUT = 30.0
"""Seconds the status may take before git is stopped (nothing waits for it meanwhile)."""
FIRST_OP_WAIT_S = 0.01
"""Seconds the session's first op waits for a status still being read: in a repository where
it takes longer, the model's own `git_status` call costs less than every start waiting."""
NOT_READ = "status not read yet (`git_status` reads it)"
EARLY_INDEX_BYTES = 1 << 20
"""A repository whose index is smaller (about 10,000 files) has its status read as the session
begins opening: git answers within milliseconds, overlapping the set-up at no cost to it."""


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
    # Seatbelt shows the host's own /tmp, read-only: temporary files go to $TMPDIR.
    tmp = "$TMPDIR (not /tmp)" if backend == "seatbelt" else "a temporary directory"
    return (
        f"in a {backend} sandbox: the workspace and {tmp} are writable, the "
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
        self._summary: str | None = None
        self._thread = threading.Thread(target=self._run, name="moot-git-probe", daemon=True)

    def start(self) -> None:
        """Run git now, in the background.

        Raises:
            RuntimeError: No thread could be started.
        """
        self._thread.start()

    def small(self) -> bool:
        """The repository's index is under `EARLY_INDEX_BYTES` (or there is none to read)."""
        from moot.workspace.git_config import find_repository

        repo = find_repository(str(self.root))
        try:
            return repo is None or os.stat(Path(repo.git_dir) / "index").st_size < EARLY_INDEX_BYTES
        except OSError:
            return True

    def summary(self, wait: float = 0.0) -> str | None:
        """`on branch main; 2 modified ...`, `not a git repository`, or why it is unknown; None
        while git has not answered within `wait` seconds (or was not started)."""
        if wait > 0 and self._thread.ident is not None:
            self._thread.join(wait)
        return self._summary

    def heading(self) -> str:
        """What the prompt says before the status is read: the branch, from `.git/HEAD`."""
        from moot.workspace.git_config import find_repository

        repo = find_repository(str(self.root))
        if repo is None:
            return "not a git repository"
        return f"{_branch(Path(repo.git_dir))}; {NOT_READ}"

    def _run(self) -> None:
        try:
            summary = git_summary(self.root)
        except Exception as exc:  # a probe must never break a session; the prompt says why
            summary = f"unknown ({type(exc).__name__})"
        self._summary = summary


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
    # Tracked files only, on one thread, at the lowest priority (see the module docstring).
    search = host_search_path((root, repo.top))
    nice = shutil.which("nice", path=search)
    argv = [
        *((nice, "-n", "19") if nice else ()),
        "git", "-c", "core.quotepath=off", *options, "-c", f"core.hooksPath={NO_HOOKS}",
        "-c", "core.preloadIndex=false",
        "status", "--porcelain=v1", "-z", "--ignore-submodules=all", "--untracked-files=no",
    ]  # fmt: skip
    env = {**os.environ, **HOST_ENV, "GIT_OPTIONAL_LOCKS": "0", "PATH": search}
    done = subprocess.run(
        argv, cwd=repo.top, env=env, capture_output=True, timeout=GIT_TIMEOUT, check=False
    )
    if done.returncode != 0:
        return f"{branch}{where}; status unknown (git exited with {done.returncode})"
    return f"{branch}{where}; {_counts(done.stdout)}"


def _branch(git_dir: Path) -> str:
    from moot.workspace.git_config import read_head

    head = read_head(str(git_dir))
    if head is None:
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
        return "no tracked file changed (`git_status` lists any untracked files)"
    return ", ".join(parts) + " (`git_status` lists them and any untracked files)"


def session_facts(
    root: Path, mode: str | None, backend: str, network: bool, git: GitProbe | None
) -> SessionFacts:
    """The environment the session's prompt describes: the workspace, the platform and shell,
    today, the git status (`git`, started as the session began opening: what it has found, else
    the branch; None: run now), the sandbox and the permission mode (None: the session has
    none)."""
    return SessionFacts(
        cwd=str(root),
        platform=platform_name(),
        shell=shell_name(),
        date=today(),
        git=(git.summary() or git.heading()) if git is not None else git_summary(root),
        sandbox=sandbox_words(backend, network),
        mode=mode if mode is not None else "none (no permission rules)",
    )

"""Git for the agent: a repository opened for one call, seen from the workspace.

Every operation opens the repository, runs git through gitpython and closes it again (see
`open_repo`). Text the model chose (paths, revisions, branch names) never reaches git's
command line where it could be read as an option: paths go after `--` as literal pathspecs,
revisions and branch names are checked first. Commits of the agent's own files, and their
undo, are `moot.workspace.agent_commits`.

All of it runs git on the host, in a work tree the session writes: each call runs git with
what `moot.workspace.host_git` allows (no hooks unless allowed, no filters, no fsmonitor, no
transports, no config file a command could have written), and asks for every diff with
`NO_DRIVERS`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from moot.paths import host_program, host_search_path
from moot.workspace.git_config import GitRefused, Repository, find_repository
from moot.workspace.host_git import (
    HOST_ENV,
    NO_HOOKS,
    HostCall,
    HostGit,
)
from moot.workspace.no_follow import PathRefused
from moot.workspace.paths import Workspace

if TYPE_CHECKING:
    import git

    from moot.workspace.ignore import HiddenInodes

MAX_OUTPUT_BYTES = 40_000
"""Diffs and commits shown to the model are cut here (at a line end), with a note."""
_SCAN_LIMIT = 16 * 1024 * 1024
"""Past the cap, output is only counted, and only this far; then git is stopped."""
_MAX_ERROR_CHARS = 1500
_GLOBAL_OPTIONS = (
    *("-c", "core.quotepath=off"),
    *("-c", "color.ui=false"),
)
"""Options for the output moot parses; what keeps git from running anything is the call's
`HostCall.options` (`moot.workspace.host_git`)."""
IGNORE_SUBMODULES = "--ignore-submodules=all"
"""For status and diff: git looks inside a submodule's work tree by running git there, with that
repository's config (clean filters, hooks); a submodule that was not checked out can be made a
repository by a sandboxed command, and moot's git runs on the host. So submodules are left out."""
NO_DRIVERS = ("--no-ext-diff", "--no-textconv")
"""For every command that diffs: the diff programs `diff.external` and the `diff`/`textconv`
commands of a driver `.gitattributes` picks never run (an empty override is an error to git,
so these flags are the switch)."""
_CHECK_ATTR_BATCH = 500
# Read-only calls must not take index.lock to refresh stat data: the person's own git (or an
# editor) may be running at the same time, and a read must never make their command fail.
_READ_ENV = {"GIT_OPTIONAL_LOCKS": "0"}


class GitError(Exception):
    """A git operation failed; the message is written for the model or the person to act on."""


GIT_ERRORS: tuple[type[Exception], ...] = (GitError, PathRefused)
"""What the git tools answer with an error result rather than letting escape."""


class Capped(msgspec.Struct, frozen=True):
    """Output cut to `MAX_OUTPUT_BYTES`."""

    text: str
    more_lines: int
    """Lines left out; 0 when the whole output is in `text`."""
    counted_all: bool = True
    """False when git was stopped before the end, so `more_lines` is a lower bound."""

    def note(self, hint: str) -> str:
        """`text`, with a line saying what was left out (and `hint`) when something was."""
        if not self.more_lines:
            return self.text
        more = f"{self.more_lines:,}{'' if self.counted_all else '+'}"
        cap = f"{MAX_OUTPUT_BYTES // 1000} KB"
        return f"{self.text}\n[output capped at {cap}: {more} more lines not shown; {hint}]"


class StatusEntry(msgspec.Struct, frozen=True):
    """One line of `git status --porcelain=v2`."""

    kind: str
    """`changed`, `renamed` (or copied), `conflict` or `untracked`."""
    xy: str
    """Index and work-tree status letters, `.` for unchanged (`??` when untracked)."""
    path: str
    """From the top of the work tree."""
    orig: str | None = None
    """The path before a rename or copy."""


class GitRepo:
    """A repository opened for one call, seen from a directory inside its work tree."""

    def __init__(self, repo: git.Repo, root: Path, host: HostGit, call: HostCall) -> None:
        self.repo = repo
        """The gitpython repository; closed when `open_repo` exits."""
        self.top = Path(os.path.realpath(repo.working_tree_dir or root))
        """The top of the work tree."""
        prefix = os.path.relpath(root, self.top)
        self.prefix = "" if prefix == "." else Path(prefix).as_posix()
        """`root` relative to `top` ("" when it is the top): git's paths start there."""
        self.host = host
        self.call = call
        """How git runs on the host in this call: what is turned off, from which config."""
        self._hooks: tuple[str, str | None] | None = None

    def write_hooks(self) -> tuple[str, str | None]:
        """`core.hooksPath` for git runs that change the repository, and why the repository's
        hooks do not run (None when they do); worked out at the first such run."""
        if self._hooks is None:
            self._hooks = self.host.hooks(self.call.view)
        return self._hooks

    def skipped_hooks(self, names: tuple[str, ...]) -> str:
        """A note naming the hooks of `names` that the repository has and that did not run;
        "" when none was left out."""
        _, why = self.write_hooks()
        hooks_dir = self.call.view.hooks_dir
        present = [n for n in names if os.access(os.path.join(hooks_dir, n), os.X_OK)]
        if why is None or not present:
            return ""
        return f"the repository's git hooks ({', '.join(present)}) did not run: {why}"

    def _argv(self, args: tuple[str, ...], read_only: bool) -> list[str]:
        hooks = NO_HOOKS if read_only else self.write_hooks()[0]
        options = (*_GLOBAL_OPTIONS, *self.call.options, "-c", f"core.hooksPath={hooks}")
        return ["git", *options, *args]

    def git(self, *args: str, read_only: bool = True) -> str:
        """Run `git <args>` at the top of the work tree and return its output.

        Raises:
            GitError: git exited with an error; the message is git's own.
        """
        status, out, err = self.repo.git.execute(
            self._argv(args, read_only),
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
            env=_READ_ENV if read_only else None,
        )
        if status != 0:
            raise GitError(_git_message(err, args[0], status))
        assert isinstance(out, bytes)
        return out.decode("utf-8", "replace")

    def git_capped(self, *args: str) -> Capped:
        """Run a read-only `git <args>` whose output may be huge; keep its first part.

        Raises:
            GitError: git exited with an error.
        """
        proc = self.repo.git.execute(self._argv(args, True), as_process=True, env=_READ_ENV)
        popen = proc.proc
        assert popen is not None and popen.stdout is not None and popen.stderr is not None
        stdout, stderr = popen.stdout, popen.stderr
        errors = bytearray()
        # stderr is drained alongside: warnings (one per file) can fill its pipe while we read
        # stdout, and git would block on it forever.
        drain = threading.Thread(target=lambda: errors.extend(stderr.read()), daemon=True)
        drain.start()
        stopped = False
        try:
            head = stdout.read(MAX_OUTPUT_BYTES)
            rest_lines = rest_bytes = 0
            while chunk := stdout.read(64 * 1024):
                rest_lines += chunk.count(b"\n")
                rest_bytes += len(chunk)
                if rest_bytes > _SCAN_LIMIT:
                    stopped = True
                    popen.kill()
                    break
            status = popen.wait()
        finally:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
            stdout.close()
            drain.join()
            stderr.close()
        if status != 0 and not stopped:
            raise GitError(_git_message(bytes(errors), args[0], status))
        text = head.decode("utf-8", "replace")
        if rest_bytes:  # end at the last whole line; the cut line's newline is in the rest
            text = text.rpartition("\n")[0]
            rest_lines = max(rest_lines, 1)
        return Capped(text.rstrip("\n"), rest_lines, counted_all=not stopped)

    def spec(self, target: Path) -> str:
        """A literal pathspec for `target`, a path inside the work tree (`.` for the top)."""
        rel = os.path.relpath(target, self.top)
        if rel == ".." or rel.startswith(".." + os.sep):
            raise PathRefused("outside-repository", str(target), f"the work tree is {self.top}")
        # literal: a file named `*.py` or `:x` means that file, never a pattern or magic.
        return ":(literal)" + Path(rel).as_posix()

    def hidden_excludes(
        self, workspace: Workspace, listing: Iterable[str], specs: Iterable[str] = ()
    ) -> list[str]:
        """Pathspecs that leave out what `Read(...)` deny rules hide, for a diff-like command.

        `listing` is the command that prints a patch (`diff --cached`, `show <sha>`), `specs`
        its pathspecs; it runs once with `--name-only` to learn the paths, and each hidden one
        (the file, or a directory above it) becomes an exclude. Empty when nothing is hidden:
        no extra git run.

        Raises:
            GitError: git exited with an error.
        """
        if workspace.hidden is None:
            return []
        relative = [f"--relative={self.prefix}"] if self.prefix else []
        options = ["--name-only", "--no-renames", "--format=", "-z", *NO_DRIVERS, *relative]
        out = self.git(*listing, *options, "--", *specs)
        top = f"{self.prefix}/" if self.prefix else ""
        excludes: list[str] = []
        check = workspace.inode_check()
        for name in filter(None, out.split("\0")):
            # A name may hold newlines itself, and some versions of `show` print an empty
            # header line before the first: exclude both readings (a spare exclude is harmless).
            forms = {name, name.removeprefix("\n")}
            if any(hides(workspace, form) or _linked(workspace, form, check) for form in forms):
                excludes += [f":(top,literal,exclude){top}{form}" for form in sorted(forms)]
        return excludes

    def workspace_spec(self) -> str:
        """The pathspec of everything the workspace holds."""
        return self.spec(self.top / self.prefix)

    def model_spec(self, workspace: Workspace, path: str) -> str:
        """The pathspec for a path the model gave, after the workspace's path policy.

        Raises:
            PathRefused: The policy refuses the path.
        """
        workspace.resolve_read(path)  # NUL bytes, empty, outside (also through a symlink)
        # The lexical path, not the resolved one: git tracks a symlink as the link itself.
        return self.spec(Path(os.path.normpath(os.path.join(workspace.root, path))))

    def shown(self, repo_path: str) -> str:
        """A path from the top of the work tree as the model sees paths (from `root`)."""
        if self.prefix and repo_path.startswith(self.prefix + "/"):
            return repo_path[len(self.prefix) + 1 :]
        return repo_path

    def branch(self) -> str | None:
        """The current branch (even one with no commits yet); None on a detached HEAD."""
        head = self.repo.head
        return None if head.is_detached else head.reference.name

    def status(self, specs: list[str], *, all_untracked: bool = False) -> list[StatusEntry]:
        """Changed, conflicted and untracked paths under `specs` (the workspace when empty)."""
        args = ["status", "--porcelain=v2", "-z", IGNORE_SUBMODULES]
        args.append("--untracked-files=all" if all_untracked else "--untracked-files=normal")
        return parse_status(self.git(*args, "--", *(specs or [self.workspace_spec()])))[1]

    def refuse_filtered(self, paths: list[str], doing: str) -> None:
        """Refuse when a file of `paths` (from the top) goes through a filter driver the config
        defines: moot's git runs no filter, and committing or checking out such a file without
        its filter (git-lfs, say) would store or write the wrong bytes.

        Raises:
            GitError: Such a file is among `paths`.
        """
        filters = set(self.call.view.filters)
        for start in range(0, len(paths) if filters else 0, _CHECK_ATTR_BATCH):
            batch = paths[start : start + _CHECK_ATTR_BATCH]
            fields = self.git("check-attr", "-z", "filter", "--", *batch).split("\0")
            for path, _, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
                if value in filters:
                    raise GitError(
                        f"{self.shown(path)} goes through the git filter {value!r}, which moot's "
                        f"git does not run (it runs on the host); {doing} with git yourself"
                    )

    def commit_sha(self, rev: str) -> str:
        """The full hash of the commit `rev` names.

        Raises:
            GitError: `rev` names no commit (or looks like an option).
        """
        if not rev.strip() or rev.startswith("-") or "\x00" in rev:
            raise GitError(f"not a revision: {rev!r}")
        try:
            sha = self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        except GitError:
            sha = ""
        if not sha.strip():
            raise GitError(f"unknown revision {rev!r}: no commit by that name")
        return sha.strip()


def parse_status(output: str) -> tuple[dict[str, str], list[StatusEntry]]:
    """`git status --porcelain=v2 -z [--branch]` as its headers and its entries."""
    headers: dict[str, str] = {}
    entries: list[StatusEntry] = []
    records = iter(output.split("\0"))
    for record in records:
        if record.startswith("# "):
            key, _, value = record[2:].partition(" ")
            headers[key] = value
        elif record.startswith("1 "):
            fields = record.split(" ", 8)
            entries.append(StatusEntry("changed", fields[1], fields[8]))
        elif record.startswith("2 "):
            fields = record.split(" ", 9)
            entries.append(StatusEntry("renamed", fields[1], fields[9], next(records, "")))
        elif record.startswith("u "):
            fields = record.split(" ", 10)
            entries.append(StatusEntry("conflict", fields[1], fields[10]))
        elif record.startswith("? "):
            entries.append(StatusEntry("untracked", "??", record[2:]))
    return headers, entries


@contextlib.contextmanager
def open_repo(root: str | os.PathLike[str], host: HostGit | None = None) -> Iterator[GitRepo]:
    """Open the repository whose work tree holds `root`, for one call, and close it after.

    gitpython keeps helper processes (`git cat-file --batch`) and memory maps alive for as long
    as a `Repo` lives, and leaks them in a long-lived program such as moot unless the `Repo` is
    closed; so no `Repo` outlives the call that opened it.

    Args:
        root: A directory inside the work tree (the workspace root).
        host: What git may run on the host (`moot.workspace.host_git`); None trusts nothing
            of the work tree.

    Yields:
        The opened repository; gitpython's own errors raised inside become `GitError`.

    Raises:
        GitError: Not inside a repository, a bare repository, git missing, git failed, or
            the repository's config is not one moot's git runs with (`GitRefused`).
    """
    real = Path(os.path.realpath(root))
    gitpython = _gitpython(real)
    host = HostGit(real) if host is None else host
    if (found := find_repository(str(real))) is not None:
        # git reads the config first, bounded: gitpython's own reader follows an include of
        # `/dev/zero` to the end of memory (24 GB in a minute, then the OOM killer).
        try:
            host.call(found)
        except GitRefused as exc:
            raise GitError(str(exc)) from None
    try:
        repo = gitpython.Repo(root, search_parent_directories=True)
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        raise GitError(f"not a git repository: {root} (nor any parent directory)") from None
    try:
        if repo.bare or repo.working_tree_dir is None:
            raise GitError(f"{repo.git_dir} is a bare repository; it has no work tree")
        top = os.path.realpath(repo.working_tree_dir)
        if os.path.relpath(real, top).split(os.sep)[0] == "..":  # core.worktree elsewhere
            raise GitError(f"the work tree of {repo.git_dir} is {top}, which does not hold {real}")
        where = Repository(top, os.path.realpath(repo.git_dir), os.path.realpath(repo.common_dir))
        try:
            call = host.call(where)
        except GitRefused as exc:
            raise GitError(str(exc)) from None
        # gitpython's own runs (`cat-file --batch` for commit objects) get the same settings.
        repo.git.update_environment(**HOST_ENV, PATH=host_search_path((real, top)))
        repo.git.set_persistent_git_options(c=[*call.options[1::2], f"core.hooksPath={NO_HOOKS}"])
        yield GitRepo(repo, real, host, call)
    except gitpython.GitCommandError as exc:
        command = " ".join(str(part) for part in exc.command[1:2])
        raise GitError(_git_message(exc.stderr, command, exc.status)) from exc
    except (gitpython.BadName, gitpython.BadObject) as exc:
        raise GitError(f"unknown object: {exc}") from exc
    finally:
        repo.close()


def _gitpython(root: Path) -> Any:
    # Imported on first use: gitpython takes ~80 ms to import and runs `git version` as it does,
    # with the program its variable names: the person's git, found on a PATH without the
    # workspace's entries (`moot.paths.host_search_path`), never a `git` the repository ships.
    variable = "GIT_PYTHON_GIT_EXECUTABLE"
    given = os.environ.get(variable)
    if "git" not in sys.modules and given is None:
        found = host_program("git", (root,))
        if found is None:
            raise GitError("git is not available: no git on PATH outside the workspace")
        os.environ[variable] = found
    try:
        import git
    except ImportError as exc:  # also raised when the git program is missing
        raise GitError(f"git is not available: {exc}".splitlines()[0]) from exc
    finally:
        if given is None:
            os.environ.pop(variable, None)
    return git


def _git_message(stderr: bytes | str | None, command: str, status: object) -> str:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr or ""
    text = text.strip()
    if text.startswith("stderr: '"):  # gitpython's GitCommandError formats stderr this way
        text = text[len("stderr: '") :].removesuffix("'")
    if not text:
        return f"git {command} failed (exit status {status})"
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + "…"


@contextlib.contextmanager
def workspace_repo(workspace: Workspace) -> Iterator[GitRepo]:
    """`open_repo` for a session's tools, which run git on the host.

    A `.git` that appeared in the workspace during the session was made by the session itself:
    a sandboxed command may have written it, with hooks or a `core.fsmonitor` that git would
    run here, outside the sandbox. Such a repository is refused (git in the shell still works).
    An existing `.git` is read-only inside the sandbox, so it is safe to use.

    What else git may run, and which config files in the workspace it may read, is the
    session's `workspace.host_git` (taken when it began); a workspace without one trusts
    nothing of itself (`moot.workspace.host_git.HostGit`).

    Raises:
        GitError: As `open_repo`, or the repository was made during the session.
    """
    if not workspace.had_git and os.path.lexists(workspace.root / ".git"):
        raise GitError(
            f"{workspace.root / '.git'} was created during this session; moot's git tools "
            "run outside the sandbox and do not use a repository a command could have "
            "written (its hooks would run here). Use git in the shell, or start a new session."
        )
    if workspace.host_git is None:  # kept, so the config read is kept between calls
        workspace.host_git = HostGit(workspace.root)
    with open_repo(workspace.root, workspace.host_git) as repo:
        yield repo


def _linked(workspace: Workspace, rel: str, check: HiddenInodes | None) -> bool:
    """Whether the work tree's file at `rel` is another name of a hidden file (a hard link:
    its diff would show the hidden file's lines)."""
    if check is None:
        return False
    try:
        return check.covers(os.lstat(workspace.root / rel))
    except (OSError, ValueError):
        return False


def hides(workspace: Workspace, rel: str) -> bool:
    """Whether the workspace hides `rel` (`/`-joined, a directory when it ends with `/`),
    itself or through a directory above it."""
    hidden = workspace.hidden
    if hidden is None:
        return False
    is_dir, rel = rel.endswith("/"), rel.rstrip("/")
    parts = rel.split("/")
    above = ("/".join(parts[:i]) for i in range(1, len(parts)))
    return hidden(rel, is_dir) or any(hidden(directory, True) for directory in above)

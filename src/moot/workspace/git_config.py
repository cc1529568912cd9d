"""A repository's git config as it matters on the host, read without gitpython.

`find_repository` finds a work tree's repository as git does (without running git);
`read_config` runs `git config --list --show-origin` once and keeps what can make git run
something or read a file: the filter drivers, the includes (whether their condition holds or
not), the hooks directory, `core.worktree`, and the files it all came from, whose `stamp`
says when to read it again. `moot.workspace.host_git` decides what to do with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterable

import msgspec

from moot.paths import host_search_path, read_regular

_CONFIG_TIMEOUT = 30.0
Stamp = tuple[tuple[str, tuple[int, ...] | None], ...]
"""Per file: its stat identity, or None when missing."""


class GitRefused(Exception):
    """moot's git will not run in this repository now; the message says why and what to do."""


class Repository(msgspec.Struct, frozen=True):
    """Where a repository is, all real paths."""

    top: str
    """The top of the work tree (relative `core.hooksPath` and includes start here)."""
    git_dir: str
    common_dir: str
    """Where the config, hooks and refs of a linked worktree live (`git_dir` otherwise)."""


class Include(msgspec.Struct, frozen=True):
    """An `include.path` or `includeIf.<condition>.path` of some config file."""

    origin: str
    """The config file that names it."""
    target: str
    """The file it names, absolute as git opens it (not normalized: `..` follows links)."""


class ConfigView(msgspec.Struct, frozen=True):
    """What a repository's config says that matters on the host (`read_config`)."""

    repo: Repository
    """The repository it was read in."""
    filters: tuple[str, ...]
    """Every filter driver named in the config: their commands are emptied in each call."""
    files: tuple[str, ...]
    """The config files git read."""
    includes: tuple[Include, ...]
    hooks_dir: str
    """Where git looks for hooks: `core.hooksPath`, else the hooks directory of the repository."""
    worktree: str | None
    """`core.worktree`, resolved; None when unset."""
    stamp: Stamp
    """The files this came from, or could come from, as they were; any change means re-read."""


def find_repository(root: str) -> Repository | None:
    """The repository whose work tree holds `root`, found as git finds it (a `.git` directory,
    or a `gitdir:` file, in `root` or above it), without running git; None when there is none."""
    directory = os.path.realpath(root)
    while True:
        dotgit = os.path.join(directory, ".git")
        git_dir: str | None = None
        if os.path.isdir(dotgit):
            git_dir = dotgit
        elif os.path.isfile(dotgit):
            git_dir = _gitfile_target(dotgit)
        if git_dir is not None:
            return Repository(directory, os.path.realpath(git_dir), _common_dir(git_dir))
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def foreign_git_dir(repo: Repository) -> str | None:
    """Why moot's git must not run in `repo`, or None when it may.

    A repository's files can name another repository as their git directory: a `.git` file
    (`gitdir: ../private/.git`), a `.git` symlink, or a `commondir` file in a `.git` it ships.
    moot's git runs on the host, so `git_log` and `git_show` would read that repository, and
    `git_commit` write to it: some private one beside the workspace. A git directory outside
    the work tree is taken only when it names this work tree back, as git's own arrangements
    do: a linked worktree's `gitdir` file, a submodule's (or a separate git directory's)
    `core.worktree`; the repository elsewhere is not the one that can write that.
    """
    top = repo.top
    if not _within(repo.git_dir, top):
        if _names_back(repo.git_dir, top):
            return None
        return (
            f"the git directory of {top} is {repo.git_dir}, outside it, and that git directory "
            "does not name it back (as a worktree's `gitdir` file or `core.worktree` would); "
            "moot's git tools do not run here"
        )
    if not _within(repo.common_dir, top):
        return (
            f"{repo.git_dir} names {repo.common_dir}, outside the work tree, as its common "
            "directory (a `commondir` file); moot's git tools do not run here"
        )
    return None


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _names_back(git_dir: str, top: str) -> bool:
    """Whether `git_dir` (outside `top`) names the work tree `top` as its own."""
    back = (small_file(os.path.join(git_dir, "gitdir")) or "").strip()
    if back and os.path.realpath(os.path.join(git_dir, back)) == os.path.join(top, ".git"):
        return True  # a linked worktree (`git worktree add`)
    text = small_file(os.path.join(git_dir, "config"))
    if text is None:
        return False
    for found in re.finditer(r"^\s*worktree\s*=\s*(.*?)\s*$", text, re.MULTILINE | re.IGNORECASE):
        if os.path.realpath(os.path.join(git_dir, found[1].strip('"'))) == top:
            return True  # a submodule, or `core.worktree` set by hand
    return False


SMALL_FILE_BYTES = 65536
"""More than a `HEAD`, a `.git` file, a `commondir` or a `gitdir` file ever holds; what is past
it is not read."""


def small_file(path: str, limit: int = SMALL_FILE_BYTES) -> str | None:
    """The first `limit` bytes of `path` as text; None when it is not a plain file or cannot
    be read.

    A repository's own files under `.git` (`HEAD`, `commondir`, a `.git` file) may be links to
    `/dev/zero` (read whole, one took every byte of memory the machine had) or FIFOs (opened
    plainly, they wait for a writer for good): they are read as plain files only, and bounded.
    """
    try:
        return read_regular(path, limit).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return None


def read_head(git_dir: str) -> str | None:
    """`<git_dir>/HEAD`, stripped (see `small_file`); None when it cannot be read."""
    head = small_file(os.path.join(git_dir, "HEAD"))
    return None if head is None else head.strip()


def _gitfile_target(path: str) -> str | None:
    text = small_file(path)
    if text is None:
        return None
    line = text.split("\n", 1)[0].strip()
    if not line.startswith("gitdir:"):
        return None
    return os.path.join(os.path.dirname(path), line[len("gitdir:") :].strip())


def _common_dir(git_dir: str) -> str:
    common = small_file(os.path.join(git_dir, "commondir"))
    if common is None:
        return os.path.realpath(git_dir)
    common = common.strip()
    return os.path.realpath(os.path.join(git_dir, common))


def read_config(repo: Repository) -> ConfigView:
    """Ask git for the repository's whole config (includes followed) and keep what matters.

    Raises:
        GitRefused: git is missing, or cannot read the config (it says why).
    """
    stdout, stderr, code = _git_config_list(repo)
    if code != 0:
        said = stderr.decode("utf-8", "replace").strip() or f"exit status {code}"
        raise GitRefused(f"cannot read the git config: {said}")
    filters: dict[str, None] = {}
    includes: list[Include] = []
    origins: dict[str, None] = {}
    hooks_path: str | None = None
    worktree: str | None = None
    fields = stdout.decode("utf-8", "surrogateescape").split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        where = os.path.join(repo.top, origin[5:]) if origin.startswith("file:") else None
        if where is not None:
            origins[where] = None
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        if section == "filter" and name:
            filters[name] = None
        elif where is not None and _is_include(key, section, name, variable):
            includes.append(Include(where, _include_target(value, where)))
        elif key == "core.hookspath":
            hooks_path = value
        elif key == "core.worktree":  # relative to the git directory
            worktree = os.path.realpath(os.path.join(repo.git_dir, os.path.expanduser(value)))
    hooks_dir = os.path.join(repo.common_dir, "hooks")
    if hooks_path:  # relative to where hooks run: the top of the work tree
        hooks_dir = os.path.join(repo.top, os.path.expanduser(hooks_path))
    watched = [*origins, *(include.target for include in includes), *config_files(repo)]
    hooks_dir = os.path.normpath(hooks_dir)
    return ConfigView(
        repo, tuple(filters), tuple(origins), tuple(includes), hooks_dir, worktree, stamp(watched)
    )


def _git_config_list(repo: Repository) -> tuple[bytes, bytes, int]:
    """`git config --list`'s output, errors and status, ended at `_CONFIG_TIMEOUT` or as it
    waits to open a FIFO an include names (`special_files.SpecialFileWatch`).

    Raises:
        GitRefused: git could not run, or was ended so.
    """
    from moot.workspace.special_files import SpecialFileWatch

    argv = ["git", "config", "--list", "--show-origin", "-z"]
    env = {**os.environ, "PATH": host_search_path((repo.top,))}
    try:
        process = subprocess.Popen(
            argv, cwd=repo.top, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
    except OSError as exc:
        raise GitRefused(f"cannot read the git config: {exc}") from None
    deadline = time.monotonic() + _CONFIG_TIMEOUT
    watch = SpecialFileWatch(process, deadline)
    try:
        stdout, stderr = process.communicate()
    finally:
        watch.stop()
    if watch.special:
        raise GitRefused(
            "cannot read the git config: a file it includes is a FIFO (git would wait on it "
            "for good); see `git config --list --show-origin`"
        )
    if process.returncode < 0 and time.monotonic() >= deadline:
        raise GitRefused(f"cannot read the git config: no answer within {_CONFIG_TIMEOUT:g} s")
    return stdout, stderr, process.returncode


def _is_include(key: str, section: str, name: str, variable: str) -> bool:
    return key == "include.path" or (section == "includeif" and bool(name) and variable == "path")


def _include_target(value: str, origin: str) -> str:
    # As git's handle_path_include: `~` expanded, a relative path from the including file's
    # directory. (`%(prefix)/` names git's install; it stays outside any workspace.)
    return os.path.join(os.path.dirname(origin), os.path.expanduser(value))


def config_files(repo: Repository) -> list[str]:
    """Files git reads config from even when they do not exist yet, and HEAD (`onbranch:`)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [
        os.path.join(repo.common_dir, "config"),
        os.path.join(repo.git_dir, "config.worktree"),
        os.path.join(repo.git_dir, "HEAD"),
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
    ]
    return files


def stamp(paths: Iterable[str]) -> Stamp:
    """The stat identity of each path (None when missing): a change to any shows in it."""
    marks: list[tuple[str, tuple[int, ...] | None]] = []
    for path in dict.fromkeys(paths):
        try:
            info = os.stat(path)
        except OSError:
            marks.append((path, None))
            continue
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        marks.append((path, identity))
    return tuple(marks)


def names_other_files(repo: Repository) -> bool:
    """Whether the config could set `core.hooksPath` or include a file: a look at the text of
    the files git reads it from, so that most sessions start without running git (`moot -p`
    waits for this). A file not looked at (a system config in another place) fails closed:
    an include that the first git call finds in the workspace was not pinned, so moot's git
    stops, and hooks do not run anyway."""
    if os.environ.get("GIT_CONFIG_PARAMETERS") or os.environ.get("GIT_CONFIG_COUNT"):
        return True
    for path in config_files(repo):
        if os.path.basename(path) == "HEAD":
            continue
        try:
            with open(path, "rb") as file:
                text = file.read().lower()
        except OSError:
            continue
        if b"include" in text or b"hookspath" in text:
            return True
    return False

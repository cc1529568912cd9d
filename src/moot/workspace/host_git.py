"""What moot's own git may run on the host: nothing the session could have written.

The git tools, auto-commit and `moot undo` run git on the host, outside the sandbox, in a work
tree the session writes. Git runs programs its config names (hooks, an fsmonitor, the filters
and diff drivers `.gitattributes` picks, signing programs, transports), and its config may
include files that lie in that work tree. So every git moot runs on the host gets:

- `-c` overrides (`HostCall.options`) that leave nothing to run: hooks off (`core.hooksPath`
  at `/dev/null`), no fsmonitor, the commands of every filter driver the config defines emptied
  (a name `.gitattributes` gives that no config defines runs nothing), no signing or signature
  checks, no look inside submodules, no gc or maintenance left running; and an environment
  (`HOST_ENV`) that allows no transport (a blobless clone's lazy fetch would run
  `core.sshCommand` or a remote's `uploadpack`), no editor and no prompt. Diffs are asked with
  `--no-ext-diff --no-textconv` (`moot.workspace.git.NO_DRIVERS`): an empty `textconv` or diff
  `command` override is an error to git, not an off switch.
- Config files in the workspace (an `include.path` or `includeIf.*.path` that resolves there,
  whether its condition holds or not) are pinned when the session begins: read-only in the
  sandbox, a firm ask for file tools, and compared before every call. One that changed, or that
  was not a plain file at the start (a command could write it between the check and git's
  read), stops moot's git with a message. What a pinned file sets is read, but nothing in it can
  run: the overrides above win over every file, and `-c` cannot be included away.
- The repository's hooks run only when the settings allow it (`allowGitHooks`), only in calls
  that change the repository, and only while the hooks directory (and, for husky 9's `.husky/_`,
  the `.husky` above it, whose scripts those hooks run) is byte-identical to when the session
  began. A hooks directory in the workspace is protected like `.git/hooks` either way, since the
  person's own git runs what is in it. `moot undo` runs no hooks.

Reading the config costs one `git config` run (about 2 ms). `HostGit` keeps what it read and
reads again only when a file it came from, or could come from, changes (a few `stat` calls).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable, Iterator

import msgspec

from moot.sandbox.base import DEFAULT_PROTECTED

NO_HOOKS = "/dev/null"
"""`core.hooksPath` when no hook may run: git looks for `/dev/null/<hook>`, which cannot exist."""

HOOK_NAMES = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change",
)  # fmt: skip
"""The hooks git knows (githooks(5)): a write of one in a workspace hooks directory asks."""

COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
"""The hooks a commit runs, named when moot's commit left them out."""

OVERRIDES = (
    "core.fsmonitor=false",  # a monitor is a command (or a daemon) git starts
    "commit.gpgSign=false",  # the signature would vouch for what the agent wrote; gpg may prompt
    "log.showSignature=false",  # checking one runs gpg.program
    "submodule.recurse=false",  # a submodule's config is its own (and may be a command's)
    "diff.ignoreSubmodules=all",
    "diff.submodule=short",  # `log` or `diff` here would run git inside the submodule
    "gc.auto=0",  # a commit would leave a gc (or maintenance) running after the call
    "maintenance.auto=false",
)
"""`-c` settings on every git moot runs on the host, besides each filter driver's."""

HOST_ENV = {
    "GIT_ALLOW_PROTOCOL": "",  # set and empty: no transport at all, whatever the config allows
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": ":",  # git takes ":" as "no editor"
    "GIT_SEQUENCE_EDITOR": ":",
}
"""The environment of every git moot runs on the host, over moot's own."""

_CONFIG_TIMEOUT = 30.0
_MAX_TREE = 500
"""Entries of a hooks directory looked at; past this its hooks never run (too big to check)."""
_FILTER_COMMANDS = ("clean", "smudge", "process")

State = tuple[str, str]
"""What a path is: ("file", sha256), ("link", "target -> state"), ("missing", ""), ..."""
Tree = tuple[tuple[str, str, str], ...]
"""Per path in a directory (itself included): (absolute path, kind, link target or digest)."""
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


class HostCall(msgspec.Struct, frozen=True):
    """How one call runs git on the host (`HostGit.call`)."""

    options: tuple[str, ...]
    """`-c`, `key=value` pairs for every git run of the call."""
    view: ConfigView
    """The config the options were made from."""


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


def _gitfile_target(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            line = file.readline().strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.join(os.path.dirname(path), line[len("gitdir:") :].strip())


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as file:
            common = file.read().strip()
    except OSError:
        return os.path.realpath(git_dir)
    return os.path.realpath(os.path.join(git_dir, common))


def read_config(repo: Repository) -> ConfigView:
    """Ask git for the repository's whole config (includes followed) and keep what matters.

    Raises:
        GitRefused: git is missing, or cannot read the config (it says why).
    """
    argv = ["git", "config", "--list", "--show-origin", "-z"]
    try:
        done = subprocess.run(
            argv, cwd=repo.top, capture_output=True, stdin=subprocess.DEVNULL,
            timeout=_CONFIG_TIMEOUT,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitRefused(f"cannot read the git config: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        raise GitRefused(f"cannot read the git config: {said}")
    filters: dict[str, None] = {}
    includes: list[Include] = []
    origins: dict[str, None] = {}
    hooks_path: str | None = None
    worktree: str | None = None
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
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
    watched = [*origins, *(include.target for include in includes), *_config_files(repo)]
    hooks_dir = os.path.normpath(hooks_dir)
    return ConfigView(
        repo, tuple(filters), tuple(origins), tuple(includes), hooks_dir, worktree, stamp(watched)
    )


def _is_include(key: str, section: str, name: str, variable: str) -> bool:
    return key == "include.path" or (section == "includeif" and bool(name) and variable == "path")


def _include_target(value: str, origin: str) -> str:
    # As git's handle_path_include: `~` expanded, a relative path from the including file's
    # directory. (`%(prefix)/` names git's install; it stays outside any workspace.)
    return os.path.join(os.path.dirname(origin), os.path.expanduser(value))


def _config_files(repo: Repository) -> list[str]:
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


class HostGit:
    """What moot's git may trust in one workspace's repository, taken when the session began,
    and the repository's config as last read (see the module docstring).

    A `HostGit` made without `host_git_at_start` trusts nothing of the workspace: no config
    file in it is pinned (an include that resolves there stops moot's git), no hook runs.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        allow_hooks: bool = False,
        pins: dict[str, State] | None = None,
        hooks_dir: str | None = None,
        hooks_tree: Tree | None = None,
        git_dirs: tuple[str, ...] = (),
        view: ConfigView | None = None,
    ) -> None:
        """Args:
        root: The workspace root: files under it are the session's to write.
        allow_hooks: The settings allow the repository's hooks (`allowGitHooks`).
        pins: Config files in the workspace and what each was when the session began.
        hooks_dir: Where git looked for hooks when the session began.
        hooks_tree: What the hooks directory held then (None: hooks never run).
        git_dirs: The repository's git directories (its own and the common one).
        view: The config as read when the session began.
        """
        self.root = os.path.realpath(root)
        self.allow_hooks = allow_hooks
        self.pins = dict(pins or {})
        self.hooks_dir = hooks_dir
        self.hooks_tree = hooks_tree
        self.git_dirs = git_dirs
        self._view = view

    def in_workspace(self, path: str) -> list[str]:
        """`path` as a file the session could write: its normalized and its real form, each
        when it lies in the workspace outside what the sandbox keeps read-only (`.git`,
        `.moot`); empty when neither does."""
        found: list[str] = []
        for form in (os.path.normpath(path), os.path.realpath(path)):
            rel = os.path.relpath(form, self.root)
            if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
                continue
            if rel.split(os.sep)[0] in DEFAULT_PROTECTED or form in found:
                continue
            found.append(form)
        return found

    def relative(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def view(self, repo: Repository) -> ConfigView:
        """The repository's config, read again only when a file it came from changed.

        Raises:
            GitRefused: git cannot read the config.
        """
        cached = self._view
        if (
            cached is None
            or cached.repo != repo
            or stamp(path for path, _ in cached.stamp) != cached.stamp
        ):
            cached = self._view = read_config(repo)
        return cached

    def call(self, repo: Repository) -> HostCall:
        """How to run git for one call in `repo` (see `HostCall`).

        Raises:
            GitRefused: A config file in the workspace was not pinned, or changed since the
                session began; or a filter driver's name cannot be turned off with `-c`.
        """
        view = self.view(repo)
        if view.worktree is not None and view.worktree != repo.top:
            raise GitRefused(
                f"git config sets core.worktree to {view.worktree}, not {repo.top}, which holds "
                "the workspace; moot's git tools do not run here"
            )
        for path, named_by in _config_paths(view):
            for form in self.in_workspace(path):
                self._check_pinned(form, named_by)
        options: list[str] = list(OVERRIDES)
        for name in view.filters:
            if "=" in name:  # `-c` splits at the first `=`: such a driver cannot be turned off
                raise GitRefused(
                    f"the git config defines a filter driver named {name!r}, which moot cannot "
                    "turn off (it has a `=` in its name); moot's git tools do not run here"
                )
            options += [f"filter.{name}.{command}=" for command in _FILTER_COMMANDS]
            options.append(f"filter.{name}.required=false")
        pairs = tuple(part for option in options for part in ("-c", option))
        return HostCall(pairs, view)

    def _check_pinned(self, path: str, named_by: str) -> None:
        named = f"{self.relative(path)}, a git config file in the workspace ({named_by}),"
        fix = (
            "moot's git runs on the host and does not read a file a command could have "
            "written. Use git in the shell, or start a new session"
        )
        pinned = self.pins.get(path)
        if pinned is None:
            raise GitRefused(
                f"{named} was not a plain file when the session began: {fix} (with the file "
                "in place, or without the include)."
            )
        if path_state(path) != pinned:
            raise GitRefused(f"{named} changed during this session: {fix}.")

    def hooks(self, view: ConfigView) -> tuple[str, str | None]:
        """`core.hooksPath` for a git run that changes the repository, and why the repository's
        hooks do not run (None when they do): `NO_HOOKS` unless the settings allow hooks and
        their directory is as it was when the session began. (A read never runs hooks.)"""
        if not self.allow_hooks:
            return NO_HOOKS, "moot runs them only when the settings say `allowGitHooks: true`"
        if self.hooks_tree is None or self.hooks_dir is None:
            return NO_HOOKS, "their directory was too big to check when the session began"
        now = tree_state(hook_trees(view.hooks_dir, self.root))
        if view.hooks_dir != self.hooks_dir or now != self.hooks_tree:
            return NO_HOOKS, "they changed since the session began"
        return view.hooks_dir, None

    def protected_dirs(self) -> tuple[str, ...]:
        """Workspace-relative directories to keep read-only in the sandbox: the hooks
        directory, and a git directory kept in the workspace under another name than `.git`."""
        trees = hook_trees(self.hooks_dir, self.root) if self.hooks_dir else []
        found = dict.fromkeys(
            self.relative(tree)
            for tree in [*self.git_dirs, *trees]
            if self.in_workspace(tree) and os.path.isdir(tree)
        )
        return tuple(found)

    def protected_files(self) -> tuple[str, ...]:
        """Workspace-relative files whose writes by a file tool always ask: the pinned config
        files, and in a hooks directory in the workspace, what it holds and every hook name."""
        found = dict.fromkeys(self.relative(path) for path in self.pins)
        if self.hooks_dir is None:
            return tuple(found)
        for tree in hook_trees(self.hooks_dir, self.root):
            if not self.in_workspace(tree):
                continue
            for path, _kind, _what in tree_state([tree]) or ():
                if path != tree:
                    found[self.relative(path)] = None
            for name in HOOK_NAMES:
                found[self.relative(os.path.join(tree, name))] = None
                found[self.relative(os.path.join(self.hooks_dir, name))] = None
        return tuple(found)

    def protected(self) -> tuple[str, ...]:
        """Workspace-relative paths to keep read-only in the sandbox: the hooks directory and
        the pinned config files."""
        paths = [*self.protected_dirs(), *(self.relative(path) for path in self.pins)]
        # A path below another is read-only already (and each bind costs the sandbox).
        return tuple(
            path
            for index, path in enumerate(paths)
            if path not in paths[:index]
            and not any(path.startswith(other + os.sep) for other in paths if other != path)
        )


def host_git_at_start(root: str | os.PathLike[str], *, allow_hooks: bool = False) -> HostGit:
    """What moot's git may trust in the repository `root` is in, as the session begins: the
    config files in the workspace (pinned), and the hooks directory as it is.

    Costs one `git config` run when the config could name a file in the workspace (see
    `_names_other_files`) or hooks are allowed, a few file reads otherwise. When git cannot read
    the config, nothing is pinned and every later call says why it cannot run.
    """
    host = HostGit(root, allow_hooks=allow_hooks)
    repo = find_repository(host.root)
    if repo is None:
        return host
    git_dirs = tuple(dict.fromkeys((repo.git_dir, repo.common_dir)))
    hooks_dir = os.path.join(repo.common_dir, "hooks")
    nearby = [*git_dirs, *_config_files(repo)]  # in the workspace: HOME, or --separate-git-dir
    quick = not allow_hooks and not any(host.in_workspace(path) for path in nearby)
    if quick and not _names_other_files(repo):
        return HostGit(host.root, hooks_dir=hooks_dir, git_dirs=git_dirs)
    try:
        view = read_config(repo)
    except GitRefused:
        return HostGit(host.root, hooks_dir=hooks_dir, git_dirs=git_dirs)
    pins: dict[str, State] = {}
    for path, _ in _config_paths(view):
        for form in host.in_workspace(path):
            state = path_state(form)
            if state[0] == "file":
                pins[form] = state
    trees = hook_trees(view.hooks_dir, host.root)
    hooks_tree = tree_state(trees) if allow_hooks else ()
    return HostGit(
        host.root,
        allow_hooks=allow_hooks,
        pins=pins,
        hooks_dir=view.hooks_dir,
        hooks_tree=hooks_tree,
        git_dirs=git_dirs,
        view=view,
    )


def _config_paths(view: ConfigView) -> list[tuple[str, str]]:
    """Every file git read config from, or would for an include whose condition holds, and
    what names it."""
    included = [(i.target, f"git config includes it, in {i.origin}") for i in view.includes]
    read = [(path, "git reads its config there") for path in view.files]
    return [*included, *read]


def _names_other_files(repo: Repository) -> bool:
    """Whether the config could set `core.hooksPath` or include a file: a look at the text of
    the files git reads it from, so that most sessions start without running git (`moot -p`
    waits for this). A file not looked at (a system config in another place) fails closed:
    an include that the first git call finds in the workspace was not pinned, so moot's git
    stops, and hooks do not run anyway."""
    if os.environ.get("GIT_CONFIG_PARAMETERS") or os.environ.get("GIT_CONFIG_COUNT"):
        return True
    for path in _config_files(repo):
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


def hook_trees(hooks_dir: str, root: str) -> list[str]:
    """The directories whose content decides what a hook runs: the hooks directory, or for
    husky 9 (`core.hooksPath = .husky/_`, whose hooks run `.husky/<hook>`) the one above it."""
    parent = os.path.dirname(hooks_dir)
    if os.path.basename(hooks_dir) == "_" and parent != root and os.path.isdir(parent):
        return [parent]
    return [hooks_dir]


def tree_state(directories: Iterable[str]) -> Tree | None:
    """What the directories hold (files by digest, links by target), in a stable order; None
    when there are more than `_MAX_TREE` entries."""
    entries: list[tuple[str, str, str]] = []
    for directory in directories:
        for path in _walk(directory):
            if len(entries) >= _MAX_TREE:
                return None
            entries.append((path, *path_state(path)))
    return tuple(entries)


def _walk(directory: str) -> Iterator[str]:
    """Every path under `directory` (itself first), sorted, never through a symlink."""
    yield directory
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            yield from _walk(path)
        else:
            yield path


def path_state(path: str) -> State:
    """What `path` is now: missing, a link and where it leads, a file and its content's
    sha256, a directory, or unreadable (an error while looking is recorded, not raised)."""
    try:
        return _state(path)
    except OSError as exc:
        return "unreadable", type(exc).__name__


def _state(path: str) -> State:
    if os.path.islink(path):
        try:
            target = os.path.realpath(path, strict=True)
        except (OSError, RuntimeError):  # dangling, or a loop
            return "link", f"{os.readlink(path)} -> nothing"
        return "link", f"{os.readlink(path)} -> {target}: {'/'.join(_state(target))}"
    if os.path.isfile(path):
        try:
            with open(path, "rb") as file:
                return "file", hashlib.sha256(file.read()).hexdigest()
        except OSError as exc:
            return "unreadable", type(exc).__name__
    if os.path.isdir(path):
        return "directory", ""
    return ("missing", "") if not os.path.lexists(path) else ("other", "")

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
- Config files in the workspace (`~/.gitconfig` when the workspace is the home directory, a
  git directory kept there under another name than `.git`, and every `include.path` or
  `includeIf.*.path` that resolves there, whether its condition holds or not) are pinned when
  the session begins: read-only in the sandbox, a firm ask for file tools, and compared before
  every call. One that changed, or that was not a plain file at the start (a command could
  write it between the check and git's read), stops moot's git with a message. What a pinned
  file sets is read, but nothing in it can run: the overrides above win over every file.
- The repository's hooks run only when the settings allow it (`allowGitHooks`), only in calls
  that change the repository, and only while the hooks directory (and, for husky 9's `.husky/_`,
  the `.husky` above it, whose scripts those hooks run) is byte-identical to when the session
  began. A hooks directory in the workspace is protected like `.git/hooks` either way, since the
  person's own git runs what is in it, whether or not it exists yet: what the config names
  that does not exist when the session begins (the hooks directory, an include, a config
  file) is kept from coming into being (`absent_paths`, `moot.workspace.absent`). `moot undo`
  runs no hooks.

Most sessions start without running git: only when a config file mentions an include or
`core.hooksPath`, lies in the workspace, or hooks are allowed does `host_git_at_start` read the
config (one `git config` run, `moot.workspace.git_config`). `HostGit` keeps what it read and
reads again only when a file it came from, or could come from, changes (a few `stat` calls).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator

import msgspec

from moot.workspace.git_config import (
    ConfigView,
    GitRefused,
    Repository,
    config_files,
    find_repository,
    foreign_git_dir,
    names_other_files,
    read_config,
    stamp,
)
from moot.workspace.protected import DEFAULT_PROTECTED

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

_MAX_TREE = 500
"""Entries of a hooks directory looked at; past this its hooks never run (too big to check)."""
_FILTER_COMMANDS = ("clean", "smudge", "process")

State = tuple[str, str]
"""What a path is: ("file", sha256), ("link", "target -> state"), ("missing", ""), ..."""
Tree = tuple[tuple[str, str, str], ...]
"""Per path in a directory (itself included): (absolute path, kind, link target or digest)."""


class HostCall(msgspec.Struct, frozen=True):
    """How one call runs git on the host (`HostGit.call`)."""

    options: tuple[str, ...]
    """`-c`, `key=value` pairs for every git run of the call."""
    view: ConfigView
    """The config the options were made from."""


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
        also_protected: tuple[str, ...] = (),
        view: ConfigView | None = None,
        absent: tuple[str, ...] = (),
    ) -> None:
        """Args:
        root: The workspace root: files under it are the session's to write.
        allow_hooks: The settings allow the repository's hooks (`allowGitHooks`).
        pins: Config files in the workspace and what each was when the session began.
        hooks_dir: Where git looked for hooks when the session began.
        hooks_tree: What the hooks directory held then (None: hooks never run).
        git_dirs: The repository's git directories (its own and the common one).
        also_protected: Other workspace-relative files no checkout may write (the scripts
            settings hooks run).
        view: The config as read when the session began.
        absent: Workspace-relative paths that did not exist when the session began and must
            not come into being from the sandbox (`absent_paths`).
        """
        self.root = os.path.realpath(root)
        self.allow_hooks = allow_hooks
        self.pins = dict(pins or {})
        self.hooks_dir = hooks_dir
        self.hooks_tree = hooks_tree
        self.git_dirs = git_dirs
        self.also_protected = also_protected
        self.absent = absent
        """What the config names that did not exist when the session began: the first
        missing part of each path (the hooks directory, an include, a config file)."""
        self._view = view
        self._last: tuple[ConfigView, list[tuple[str, str]], tuple[str, ...]] | None = None

    def in_workspace(self, path: str) -> list[str]:
        """`path` as a file the session could write: its normalized and its real form, each
        when it lies in the workspace outside what the sandbox keeps read-only (`.git`,
        `.moot`); empty when neither does."""
        found: list[str] = []
        prefix = self.root.rstrip(os.sep) + os.sep
        for form in (os.path.normpath(path), os.path.realpath(path)):
            if not form.startswith(prefix) or form in found:
                continue
            if form[len(prefix) :].split(os.sep)[0] not in DEFAULT_PROTECTED:
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
        if foreign := foreign_git_dir(repo):
            raise GitRefused(foreign)
        view = self.view(repo)
        last = self._last
        if last is None or last[0] is not view:  # once per config read, not per call
            last = self._last = (view, *self._for_view(view))
        _, workspace_files, options = last
        for path, named_by in workspace_files:
            self._check_pinned(path, named_by)
        return HostCall(options, view)

    def _for_view(self, view: ConfigView) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
        """The config files in the workspace (and what names each), and the `-c` options."""
        if view.worktree is not None and view.worktree != view.repo.top:
            raise GitRefused(
                f"git config sets core.worktree to {view.worktree}, not {view.repo.top}, which "
                "holds the workspace; moot's git tools do not run here"
            )
        workspace_files = [
            (form, named_by)
            for path, named_by in _config_paths(view)
            for form in self.in_workspace(path)
        ]
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
        return workspace_files, pairs

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
        directory (and husky 9's `.husky`), whether or not it exists yet (a backend binds
        what exists, and `absent` keeps the rest from coming into being), and a git directory
        kept in the workspace under another name than `.git`."""
        roots = hook_roots(self.hooks_dir, self.root) if self.hooks_dir else []
        dirs = [tree for tree in self.git_dirs if os.path.isdir(tree)]
        found = dict.fromkeys(
            self.relative(tree) for tree in [*dirs, *roots] if self.in_workspace(tree)
        )
        return tuple(found)

    def protected_files(self) -> tuple[str, ...]:
        """Workspace-relative paths whose writes by a file tool always ask (a directory's
        with everything below it): the pinned config files, the paths of `absent`, the hooks
        directory (and husky 9's `.husky`) whether or not it exists, and in it what it holds
        and every hook name."""
        found = dict.fromkeys(self.relative(path) for path in self.pins)
        found.update(dict.fromkeys(self.absent))
        if self.hooks_dir is None:
            return tuple(found)
        for tree in hook_roots(self.hooks_dir, self.root):
            if self.in_workspace(tree) and self.relative(tree) != ".":
                found[self.relative(tree)] = None
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

    def guarded(self, view: ConfigView, paths: Iterable[str]) -> list[str]:
        """Those of `paths` (absolute) that a checkout by moot's git must not write: what
        decides what runs on the host, in the workspace or anywhere in the work tree (`.moot/`,
        the scripts settings hooks run, the hooks directory, git config files)."""
        files = {os.path.normpath(path) for path, _ in _config_paths(view)}
        files.update(self.pins, (os.path.join(self.root, rel) for rel in self.also_protected))
        trees = [os.path.join(self.root, ".moot"), *hook_trees(view.hooks_dir, self.root)]
        prefixes = tuple(tree.rstrip(os.sep) + os.sep for tree in trees)
        return [path for path in paths if path in files or path.startswith(prefixes)]

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


def host_git_at_start(
    root: str | os.PathLike[str],
    *,
    allow_hooks: bool = False,
    also_protected: tuple[str, ...] = (),
) -> HostGit:
    """What moot's git may trust in the repository `root` is in, as the session begins: the
    config files in the workspace (pinned), and the hooks directory as it is.

    Costs one `git config` run when the config could name a file in the workspace (see
    `_names_other_files`) or hooks are allowed, a few file reads otherwise. When git cannot read
    the config, nothing is pinned and every later call says why it cannot run.
    """
    host = HostGit(root, allow_hooks=allow_hooks, also_protected=also_protected)
    repo = find_repository(host.root)
    if repo is None:
        return host
    git_dirs = tuple(dict.fromkeys((repo.git_dir, repo.common_dir)))
    hooks_dir = os.path.join(repo.common_dir, "hooks")
    nearby = [*git_dirs, *config_files(repo)]  # in the workspace: HOME, or --separate-git-dir
    quick = not allow_hooks and not any(host.in_workspace(path) for path in nearby)
    if quick and not names_other_files(repo):
        return HostGit(
            host.root, hooks_dir=hooks_dir, git_dirs=git_dirs, also_protected=also_protected
        )
    try:
        view = read_config(repo)
    except GitRefused:
        return HostGit(
            host.root, hooks_dir=hooks_dir, git_dirs=git_dirs, also_protected=also_protected
        )
    pins: dict[str, State] = {}
    for path, _ in _config_paths(view):
        for form in host.in_workspace(path):
            state = path_state(form)
            if state[0] == "file":
                pins[form] = state
    trees = hook_trees(view.hooks_dir, host.root)
    hooks_tree = tree_state(trees) if allow_hooks else ()
    named = [*hook_roots(view.hooks_dir, host.root), *(p for p, _ in _config_paths(view))]
    named += [path for path in config_files(repo) if os.path.basename(path) != "HEAD"]
    return HostGit(
        host.root,
        allow_hooks=allow_hooks,
        pins=pins,
        hooks_dir=view.hooks_dir,
        hooks_tree=hooks_tree,
        git_dirs=git_dirs,
        also_protected=also_protected,
        view=view,
        absent=absent_paths(host, named),
    )


def absent_paths(host: HostGit, paths: Iterable[str]) -> tuple[str, ...]:
    """Of `paths` (absolute), those in the workspace that do not exist, each as its first
    missing part (`tools/hooks` of `tools/hooks/x` when `tools/hooks` is missing), relative.

    A command must not make one: the person's own git would run what it put there (a hook,
    a config file naming one). Only the sandbox's own masks could keep a missing path from
    being made, and a mount needs something to mount on, which moot will not make in the
    project; so the sandbox moves away what appears (`moot.workspace.absent`)."""
    found: dict[str, None] = {}
    for path in paths:
        forms = host.in_workspace(os.path.normpath(path))
        if not forms:
            continue
        parts = host.relative(forms[0]).split(os.sep)
        for depth in range(1, len(parts) + 1):
            rel = os.sep.join(parts[:depth])
            if not os.path.lexists(os.path.join(host.root, rel)):
                found[rel] = None
                break
    return tuple(found)


def _config_paths(view: ConfigView) -> list[tuple[str, str]]:
    """Every file git read config from, or would for an include whose condition holds, and
    what names it."""
    included = [(i.target, f"git config includes it, in {i.origin}") for i in view.includes]
    read = [(path, "git reads its config there") for path in view.files]
    return [*included, *read]


def hook_roots(hooks_dir: str, root: str) -> list[str]:
    """What to protect of a hooks directory, whether or not it exists: the directory, and for
    husky 9's layout (`.husky/_`) the one above it too, whose scripts its hooks run."""
    parent = os.path.dirname(hooks_dir)
    if os.path.basename(hooks_dir) == "_" and parent != root:
        return [hooks_dir, parent]
    return [hooks_dir]


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

"""Commands in a bubblewrap sandbox: a read-only view of this machine with the workspace writable.

Each command runs as `bwrap <mounts> <namespaces> -- bash -c <command>`:

- The root file system is bound read-only (`--ro-bind / /`); the workspace is bound writable
  at its own path, and `policy.protected` paths in it (`.git`, `.moot`) read-only again when
  they exist. A private directory of this sandbox (one per session, removed at `close`) is
  `/tmp`, so temporary files last across the session's commands but no longer, and the host's
  `/tmp` stays out of sight.
- `/run` is an empty tmpfs: the host's Unix sockets live there (the Docker socket is root on the
  host; D-Bus can ask systemd to run anything; the ssh agent signs as the user). A read-only
  bind does not stop `connect()` on a socket, so hiding them is the only defence.
- The home directory (`$HOME`, and the account's own) is an empty tmpfs, writable and new
  for every command, with the toolchains `home.PASSES` names bound into it read-only and a
  git config of the commands' own (`home`); a workspace inside it is bound on top. moot's own
  directories (the session store with every transcript, settings, saved keys, caches) and
  `MOOT_HOME` are hidden too, where they really lie, but for the session's own outputs
  directory, read-only (`private`); so are the credential files of `private.HIDDEN_IN_HOME`
  where the home cannot be hidden whole (it is the workspace, or inside it), and the host's
  own secrets that root owns (`private.SYSTEM_SECRETS`: `/etc/shadow`, ssh host keys, ...).
- A minimal `/dev`, a fresh `/proc` with the kernel's settings in it read-only
  (`PROC_READ_ONLY`); new PID, IPC, UTS (and cgroup) namespaces, so a command
  sees only its own processes; `--die-with-parent` and the PID namespace make killing `bwrap`
  kill everything in it. `--new-session` keeps a command from pushing keys into the terminal.
- What the permission deny rules cover (`policy.masks`, asked for before each command, so a
  file that appeared since is covered too): a hidden file is an empty read-only file (bound
  from a private directory of this sandbox), a hidden directory an empty read-only tmpfs, and
  a path rules keep from edits is bound read-only onto itself. These come after the
  workspace and its protected paths, parents before what lies below them.
- Every directory between the workspace root and a masked or protected path is bound onto
  itself, writable, right after the workspace (`base.rename_guards`): a mount point cannot be
  renamed, so `mv conf conf.old && mkdir conf` cannot leave a mask behind. Each is bound from
  a file descriptor opened without following links (`--bind-fd`; bwrap then checks that what
  it mounted is what the descriptor holds), so a background command that swaps one for a
  symlink as the sandbox starts makes that command fail rather than bind the link's target
  writable. A bwrap without `--bind-fd` (older than the releases fixing Flatpak's
  CVE-2024-42472) binds them by path, after a check that each is a directory: that swap
  could then still win the race.
- `policy.made_when_missing` (`.moot`) is made on the host when missing, before it is bound
  read-only: a command cannot create it and write settings (hooks) into it.
- What the git config names that did not exist when the session began (`policy.absent`: a
  hooks directory, say) has nothing to mount on, and moot makes nothing else in the project:
  what a command makes there is moved out of the workspace before and after each command and
  as the sandbox closes, and the command's result says so (`moot.workspace.absent`).
- No privileges: every capability is dropped (`--cap-drop ALL`: bubblewrap keeps them all
  for root, who could then unmount the masks, remount `/` writable, unmount `/run` to reach
  the host's sockets, or open a masked file by handle), in a user namespace of its own that
  cannot make another where the kernel allows it (`ISOLATIONS`, probed once), and bubblewrap
  sets no-new-privileges, so no set-uid program gives any back (and the workspace is bound
  `nosuid`, as every bind bubblewrap makes). Root inside is then no stronger than another
  user: it reads and writes what uid 0 owns where the mounts let it (and so cannot write a
  workspace file another user owns, nor `chown`: `tar` as root needs `--no-same-owner`).
- No set-id file: what a command writes lands on the host's disk as its user's, and a
  root-owned `chmod 4755` copy of a shell would give any local user uid 0 there, where
  `nosuid` inside the sandbox does not reach. So a seccomp filter refuses set-user-ID and
  set-group-ID bits as a command asks for them (`seccomp`, passed with `--seccomp`); where
  it has no filter for the machine, the bits are cleared after each command (`set_id`).
- No network (`--unshare-net`: only a loopback of its own) unless `policy.network`.
- The environment holds only the variables `env.scrub_env` passes (named ones, none that
  looks secret); `TMPDIR=/tmp`.

What it does not contain: anything readable on the host outside the home directory stays
readable (except what is hidden above): other users' homes as their modes allow, and
credentials kept outside a home (`/etc`, a project's own `.env` beside the workspace); a
missing `.git` can be created, hooks and all; a file deny rules cover can be created, and
the command that made it (and a background command already running) may read it: it is
masked from the next command on, and a background command already running may still rename
the directories above it; a denied file in the history of a repository
whose `.git` lies above the workspace, or of a nested one or a submodule, is readable through
git (`moot.permissions.tracked` says what hides `.git`); Unix sockets outside `/run` and
`/tmp` stay reachable, and with the network allowed so do the host's abstract sockets
(D-Bus, X11); what uid 0 owns stays readable to a command moot runs as root.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from moot.sandbox import bwrap_cache
from moot.sandbox.base import (
    BackgroundProcess,
    CommandResult,
    OutputCallback,
    SandboxMasks,
    SandboxPolicy,
    make_empty_file,
    make_missing_dirs,
    rename_guards,
    sweep_absent,
)
from moot.sandbox.env import scrub_env
from moot.sandbox.home import (
    HOME_TMPFS_SIZE,
    HiddenHome,
    covered,
    git_config,
    hidden_homes,
    home_dirs,
)
from moot.sandbox.host import Launch, ProcessSandbox
from moot.sandbox.output import MAX_OUTPUT_CHARS
from moot.sandbox.private import (
    moot_dirs,
    place,
    private_paths,
    system_secrets,
    with_private,
)
from moot.sandbox.process import KILL_GRACE
from moot.sandbox.seccomp import set_id_filter
from moot.sandbox.set_id import SetIdSweep

_NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
_PROBE_FLAGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_NAMESPACES)
DROP_ALL = ("--cap-drop", "ALL")
"""No capability at all for the command, whoever runs moot (bwrap keeps every one for root)."""
ISOLATIONS = (
    ("--unshare-user", "--disable-userns", *DROP_ALL),
    ("--unshare-user", *DROP_ALL),
    DROP_ALL,
)
"""How a command is kept from privileges, strongest first; the probe takes the first that
works here. A user namespace of its own makes what capabilities the command could hold count
only there, and `--disable-userns` (bubblewrap 0.8) keeps it from making another; where the
kernel allows no user namespace (inside many containers), root is left with no capability."""


PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""Bound read-only over the sandbox's own `/proc` (Docker's list): the kernel lets uid 0 write
sysctls such as `kernel.core_pattern` (a program it runs as root on the host) with no
capability at all, and bubblewrap leaves `/proc/sys` writable, its directory not being so."""


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


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


def bwrap_args(
    bwrap: str,
    *,
    workspace: Path,
    protected: tuple[str, ...],
    network: bool,
    tmp: Path,
    cwd: Path,
    hidden: list[Path],
    masks: SandboxMasks | None = None,
    empty_file: Path | None = None,
    guard_fds: Mapping[str, int] | None = None,
    isolation: Sequence[str] = DROP_ALL,
    reveal: Path | None = None,
    homes: Sequence[HiddenHome] = (),
    gitconfig: tuple[str, str] | None = None,
    home_size: int | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The `bwrap` arguments before `--` for one command (see the module docstring).

    `homes` are the home directories to show as empty tmpfs with their passes bound in
    (`home.hidden_homes`), each `home_size` bytes at most (None: no `--size`, an older
    bwrap); `gitconfig` is a (host file, path in the sandbox) pair bound read-only after them.
    `hidden` are real paths outside the workspace to hide (`private.place`), those the homes
    cover skipped; `reveal` (the session's outputs directory, a real path) is bound read-only
    inside the one that holds it.
    `masks` needs `empty_file`: an empty read-only file on the host, bound over hidden files.
    `guard_fds` holds a descriptor of each directory of `rename_guards` that `open_guards`
    could open; None binds them by path instead (a bwrap without `--bind-fd`).
    `isolation` is one of `ISOLATIONS` (`isolation_args` says which works here).
    `seccomp_fd` is a descriptor bwrap reads the set-id filter from (`seccomp`), if any.
    """
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for proc_path in PROC_READ_ONLY:
        args += ["--ro-bind-try", proc_path, proc_path]
    args += ["--tmpfs", "/run"]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        args += ["--tmpfs", "/var/run"]
    if network:  # name resolution may go through systemd-resolved's stub, under /run
        for resolver in ("/run/systemd/resolve", "/run/resolvconf"):
            args += ["--ro-bind-try", resolver, resolver]
    args += home_args(homes, gitconfig, home_size)
    if reveal is not None and covered(str(reveal), homes):
        args += ["--ro-bind-try", str(reveal), str(reveal)]
    for path in hidden:
        if any(path.is_relative_to(place) for place in _NOT_THE_HOSTS):
            continue  # not the host's there: nothing to hide (and no mount point to make)
        if covered(str(path), homes):
            continue  # out of sight with the home that holds it
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--tmpfs", str(path)]
            if reveal is not None and reveal.is_relative_to(path) and reveal != path:
                args += ["--ro-bind-try", str(reveal), str(reveal)]
            args += ["--remount-ro", str(path)]
        elif os.path.isfile(path) and not os.path.islink(path):
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--bind", str(tmp), "/tmp", "--bind", str(workspace), str(workspace)]
    args += guard_args(workspace, rename_guards(masks, protected), guard_fds)
    for rel in protected:
        path = workspace / rel
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue  # missing: nothing to protect (see the module docstring)
        # A symlink is left alone: binding would follow it, perhaps over the workspace itself.
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            args += ["--ro-bind", str(path), str(path)]
    if masks:
        assert empty_file is not None, "hidden files are bound from an empty file"
        args += mask_args(workspace, masks, empty_file, hidden)
    args += [*_NAMESPACES, *(() if network else ("--unshare-net",)), *isolation]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--die-with-parent", "--new-session", "--chdir", str(cwd)]
    return args


def home_args(
    homes: Sequence[HiddenHome], gitconfig: tuple[str, str] | None, size: int | None
) -> list[str]:
    """Each home directory as an empty tmpfs (writable, new for each command, `size` bytes at
    most), with its passes bound in read-only (`-try`: one may go before bwrap runs), then
    the commands' own git config."""
    args: list[str] = []
    for home in homes:
        args += [*(("--size", str(size)) if size else ()), "--tmpfs", home.path]
        for source, dest in home.binds:
            args += ["--ro-bind-try", source, dest]
    if gitconfig is not None:
        args += ["--ro-bind-try", *gitconfig]
    return args


def guard_args(workspace: Path, guards: list[str], fds: Mapping[str, int] | None) -> list[str]:
    """The writable binds of each guarded directory onto itself, parents first: from its
    descriptor in `fds`, or when `fds` is None by path if it is a directory, not a link."""
    args: list[str] = []
    for rel in guards:
        path = str(workspace / rel)
        if fds is not None:
            if rel in fds:
                args += ["--bind-fd", str(fds[rel]), path]
        elif stat.S_ISDIR(_lstat_mode(path)):
            args += ["--bind", path, path]
    return args


def open_guards(workspace: Path, guards: list[str]) -> dict[str, int]:
    """An `O_PATH` descriptor of each directory in `guards` (parents first), each opened from
    its parent's without following a link; one that is gone, or a link now, is left out,
    with what lies below it. The caller closes them."""
    fds: dict[str, int] = {}
    root = os.open(workspace, os.O_PATH | os.O_DIRECTORY)
    try:
        for rel in guards:
            parent, _, name = rel.rpartition("/")
            at = fds.get(parent) if parent else root
            if at is None:
                continue  # its parent could not be opened
            try:
                fds[rel] = os.open(
                    name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at
                )
            except OSError:
                continue
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    finally:
        os.close(root)
    return fds


def bind_fd_supported(bwrap: str) -> bool:
    """Whether this `bwrap` has `--bind-fd` (releases since Flatpak's CVE-2024-42472 fix, and
    distributions' backports of it); asked once per path."""
    return _has_bind_fd(bwrap)


def tmpfs_size_supported(bwrap: str) -> bool:
    """Whether this `bwrap` has `--size` for a tmpfs (0.5 and later); asked once per path."""
    return "--size" in _help(bwrap)


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


def _lstat_mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


class _Prepared(msgspec.Struct, frozen=True):
    """What a launch works out off the event loop."""

    masks: SandboxMasks | None
    guard_fds: dict[str, int] | None
    """None: bind the guards by path (a bwrap without `--bind-fd`)."""
    isolation: tuple[str, ...]
    hidden: tuple[str, ...]
    """Private paths outside the workspace (`private.Placed.outside`)."""
    reveal: str
    """The session's outputs directory, a real path."""
    homes: tuple[HiddenHome, ...] = ()
    """The home directories shown empty but for their passes."""
    gitconfig: tuple[str, str] | None = None
    """The commands' own git config: (host file, `~/.gitconfig` in the sandbox)."""


_NOT_THE_HOSTS = ("/tmp", "/run", "/var/run", "/dev", "/proc")
"""Where the sandbox shows something else than the host: a denied symlink's target there
needs no mask (and bwrap would create one, in the private `/tmp` say)."""


def mask_args(
    workspace: Path, masks: SandboxMasks, empty_file: Path, hidden: list[Path]
) -> list[str]:
    """The mounts that mask what deny rules cover; parents before what lies below them."""
    kinds = [(rel, "read_only") for rel in masks.read_only]
    kinds += [(rel, "file") for rel in masks.hidden_files]
    kinds += [(rel, "dir") for rel in masks.hidden_dirs]
    args: list[str] = []
    for rel, kind in sorted(kinds):
        path = workspace / rel  # an absolute path (a link's target outside) stays as it is
        if not path.is_relative_to(workspace):
            elsewhere = [Path(p) for p in _NOT_THE_HOSTS] + hidden
            if any(path.is_relative_to(place) for place in elsewhere):
                continue
        if kind == "read_only":  # -try: it may have gone since the masks were worked out
            args += ["--ro-bind-try", str(path), str(path)]
        elif kind == "file":
            args += ["--ro-bind", str(empty_file), str(path)]
        else:
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
    return args


class BubblewrapSandbox(ProcessSandbox):
    """Commands in bubblewrap: read-only root, writable workspace and `/tmp`, no network."""

    name = "bubblewrap"
    wrapper = True

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        bwrap: str | None = None,
        kill_grace: float = KILL_GRACE,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        keys_file: Path | None = None,
        private: Sequence[Path] | None = None,
        seccomp: bool = True,
    ) -> None:
        """Args:
        policy: The workspace, its protected paths, and whether the network is allowed.
        bwrap: The `bwrap` program; found on PATH when None.
        kill_grace: Seconds between SIGTERM and SIGKILL when a command is killed.
        max_output_chars: What a result shows of a command's output at most.
        keys_file: moot's saved API keys, hidden from commands; the default key file when
            None.
        private: moot's directories, hidden from commands (`private.moot_dirs` when None);
            the credential files in the home directory are hidden besides.
        seccomp: Refuse set-id bits in the kernel (`seccomp`), where this machine's system
            calls are known; False, or where they are not, they are cleared after each
            command instead (`set_id`).

        Raises:
            FileNotFoundError: There is no `bwrap`.
        """
        super().__init__(policy, kill_grace=kill_grace, max_output_chars=max_output_chars)
        found = bwrap or find_bwrap()
        if found is None:
            raise FileNotFoundError("bubblewrap is not installed (no `bwrap` on PATH)")
        self.bwrap = found
        self.keys_file = keys_file if keys_file is not None else _default_keys_file()
        self.private = [*(moot_dirs() if private is None else private), self.keys_file]
        self._tmp: Path | None = None
        self._empty: Path | None = None
        self.set_id_filter = set_id_filter() if seccomp else None
        """The seccomp program bwrap loads for every command; None: sweep instead."""
        if self.set_id_filter is None:
            self.set_id_sweep = SetIdSweep(self.workspace)
        self._git_file: str | None = None
        """The commands' git config on the host; "" when there is none; None: not made yet."""
        self._home_lock = threading.Lock()

    @property
    def tmp(self) -> Path:
        """This sandbox's private `/tmp`, on the host; made on first use."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="moot-sandbox-tmp-"))
        return self._tmp

    @property
    def empty_file(self) -> Path:
        """An empty read-only file on the host, out of the sandbox's sight (the host's `/tmp`
        is not the sandbox's), bound over hidden files; made on first use."""
        if self._empty is None:
            self._empty = make_empty_file()
        return self._empty

    async def launch(self, command: str, cwd: Path) -> Launch:
        # The masks walk the workspace (milliseconds, more in a big tree): off the event loop.
        preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare))
        try:
            ready = await asyncio.shield(preparing)
        except asyncio.CancelledError:
            # The thread runs on regardless: close the descriptors it opens once it is done.
            preparing.add_done_callback(_close_prepared)
            raise
        fds = tuple((ready.guard_fds or {}).values())
        seccomp_fd = None
        try:
            if self.set_id_filter is not None:
                seccomp_fd = _readable(self.set_id_filter)
                fds += (seccomp_fd,)
            args = bwrap_args(
                self.bwrap,
                workspace=self.workspace,
                protected=self.policy.protected,
                network=self.policy.network,
                tmp=self.tmp,
                cwd=cwd,
                hidden=[Path(path) for path in ready.hidden],
                masks=ready.masks,
                empty_file=self.empty_file if ready.masks else None,
                guard_fds=ready.guard_fds,
                isolation=ready.isolation,
                reveal=Path(ready.reveal),
                homes=ready.homes,
                gitconfig=ready.gitconfig,
                home_size=HOME_TMPFS_SIZE if tmpfs_size_supported(self.bwrap) else None,
                seccomp_fd=seccomp_fd,
            )
        except BaseException:
            Launch([], fds).close()
            raise
        return Launch([*args, "--", "bash", "-c", command], fds)

    def _prepare(self) -> _Prepared:
        """Make the missing protected directories, then work out the masks in force (moot's
        own files in the workspace among them), a descriptor of each directory to guard, the
        isolation that works here (probed once) and what to hide outside. A blocking call."""
        isolation = isolation_args(self.bwrap)
        make_missing_dirs(self.policy, self.workspace)
        more = [*self.private, *system_secrets()]
        placed = place(private_paths(Path.home(), more), self.workspace)
        masks = with_private(self.policy.masks() if self.policy.masks else None, placed)
        guards = rename_guards(masks, self.policy.protected)
        fds = None
        if guards and bind_fd_supported(self.bwrap):
            fds = open_guards(self.workspace, guards)
        reveal = os.path.realpath(self.outputs.directory)
        homes = tuple(hidden_homes(home_dirs(), self.workspace))
        gitconfig = None
        own_home = os.path.realpath(Path.home())
        if any(home.path == own_home for home in homes) and (made := self._gitconfig()):
            gitconfig = (str(made), os.path.join(own_home, ".gitconfig"))
        return _Prepared(masks, fds, isolation, placed.outside, reveal, homes, gitconfig)

    def _gitconfig(self) -> Path | None:
        """The commands' global git config (`home.git_config`), written once to a private
        file of this sandbox; None when it would be empty. A blocking call."""
        with self._home_lock:
            if self._git_file is None:
                content = git_config()
                self._git_file = ""
                if content:
                    directory = Path(tempfile.mkdtemp(prefix="moot-sandbox-home-"))
                    (directory / "gitconfig").write_text(content)
                    self._git_file = str(directory / "gitconfig")
            return Path(self._git_file) if self._git_file else None

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        return scrub_env(env, named=self.policy.env_names, extra={"TMPDIR": "/tmp"})

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` (see `ProcessSandbox.run`); when bwrap itself failed to set the sandbox
        up (its `bwrap: ...` message on stderr, exit code 1, which the result shows as it is),
        forget the remembered probe, so the next start probes again. What no command may make
        (`SandboxPolicy.absent`) is swept away before and after it."""
        before = await sweep_absent(self.policy)
        try:
            result = await super().run(
                command, cwd=cwd, env=env, timeout=timeout, on_output=on_output
            )
        finally:
            after = await asyncio.shield(sweep_absent(self.policy))
        if result.exit_code == 1 and result.stderr.startswith("bwrap: "):
            await asyncio.to_thread(bwrap_cache.forget, self.bwrap)
        swept = (*before, *after)
        return msgspec.structs.replace(result, swept=swept) if swept else result

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        """Start `command` in the background (see `ProcessSandbox.start`), once what no
        command may make is swept away."""
        await sweep_absent(self.policy)
        return await super().start(command, cwd=cwd, env=env)

    async def close(self) -> None:
        """Kill background commands, sweep away what they made that no command may make, and
        remove the private `/tmp` and the empty file."""
        await super().close()
        await sweep_absent(self.policy)
        if self._tmp is not None:
            await asyncio.to_thread(shutil.rmtree, self._tmp, ignore_errors=True)
            self._tmp = None
        if self._empty is not None:
            await asyncio.to_thread(shutil.rmtree, self._empty.parent, ignore_errors=True)
            self._empty = None
        if self._git_file:
            await asyncio.to_thread(shutil.rmtree, Path(self._git_file).parent, True)
        self._git_file = None


def _readable(data: bytes) -> int:
    """The read end of a pipe holding `data` (small: it fits the pipe's buffer)."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


def _default_keys_file() -> Path:
    from moot.paths import key_file

    return key_file()


def _close_prepared(done: asyncio.Future[_Prepared]) -> None:
    """Close the guard descriptors of a launch that was cancelled while it prepared."""
    if done.cancelled() or done.exception() is not None:
        return
    Launch([], tuple((done.result().guard_fds or {}).values())).close()

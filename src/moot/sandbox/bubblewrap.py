"""Commands in a bubblewrap sandbox: a read-only view of this machine with the workspace writable.

Each command runs as `bwrap <mounts> <namespaces> -- bash -c <command>` (the command line is
`bwrap_argv`'s; whether bubblewrap works here, and what this `bwrap` can do, `bwrap_probe`'s):

- The root file system is bound read-only (`--ro-bind / /`); the workspace is bound writable
  at its own path, and `policy.protected` paths in it (`.git`, `.moot`) read-only again when
  they exist. A private directory of this sandbox (one per session, removed at `close`) is
  `/tmp`, so temporary files last across the session's commands but no longer, and the host's
  `/tmp` stays out of sight.
- `/run` is an empty tmpfs: the host's Unix sockets live there (the Docker socket is root on the
  host; D-Bus can ask systemd to run anything; the ssh agent signs as the user). A read-only
  bind does not stop `connect()` on a socket, so hiding them is the only defence.
- The home directory (`$HOME`, and the account's own) is an empty tmpfs, writable and new for every
  command, with the toolchains `home.PASSES` names bound into it read-only and a copy of a git
  config of the commands' own (`home`); a workspace inside it is bound on top. moot's own
  directories (the session store with every transcript, settings, saved keys, caches) and
  `MOOT_HOME` are hidden too, where they really lie, but for the session's own outputs directory,
  read-only (`private`); so are the credential files of `private.HIDDEN_IN_HOME` where the home
  cannot be hidden whole (it is the workspace, or inside it), and the host's own secrets that root
  owns (`private.SYSTEM_SECRETS`: `/etc/shadow`, ssh host keys, ...).
- A minimal `/dev`, a fresh `/proc` with the kernel's settings in it read-only (`PROC_READ_ONLY`,
  and what bwrap covers itself); new PID, IPC, UTS (and cgroup) namespaces, so a command sees only
  its own processes; `--die-with-parent` and the PID namespace make killing `bwrap` kill everything
  in it. `--new-session` keeps a command from pushing keys into the terminal. bwrap arms
  `--die-with-parent` late: moot killed in a command's first milliseconds would leave the namespace
  running; each `bwrap` command line carries the mark of moot's sentinel (`sentinel`), which kills
  it once moot is gone, and removes this sandbox's directories.
- What the permission deny rules cover (`policy.masks`, asked for before each command, so a
  file that appeared since is covered too): a hidden file is an empty read-only file (bound
  from a private directory of this sandbox), a hidden directory an empty read-only tmpfs, and
  a path rules keep from edits is bound read-only onto itself. These come after the
  workspace and its protected paths, parents before what lies below them. In a directory
  added beside the workspace (`--add-dir`, `policy.added`) they are absolute paths
  (`moot.permissions.added_masks`), masked where they lie, `/tmp` included, with that
  directory's own rename guards (below) bound right after it.
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
- No network (`--unshare-net`: only a loopback of its own) unless `policy.network`. With a
  proxy (`policy.proxy`, the `sandbox.network` allowlist) the network stays unshared: its
  Unix socket is bound in and the command runs behind a relay on the sandbox's own loopback
  (`net_relay`), which the proxy variables name, so the proxy is the only way out.
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
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from moot.sandbox import bwrap_cache
from moot.sandbox.base import (
    CommandResult,
    OutputCallback,
    SandboxMasks,
    SandboxPolicy,
    make_empty_file,
    make_missing_dirs,
    masks_below,
    protected_in,
    rename_guards,
)
from moot.sandbox.bwrap_argv import bwrap_args, open_guards
from moot.sandbox.bwrap_probe import (
    bind_fd_supported,
    file_perms_supported,
    find_bwrap,
    isolation_args,
    tmpfs_size_supported,
)
from moot.sandbox.confined import ConfinedSandbox
from moot.sandbox.env import scrub_env
from moot.sandbox.home import (
    HOME_TMPFS_SIZE,
    HiddenHome,
    git_config,
    hidden_homes,
    home_dirs,
)
from moot.sandbox.host import Launch, marked_start
from moot.sandbox.net_relay import proxy_env, relay_argv, relay_python
from moot.sandbox.output import MAX_OUTPUT_CHARS
from moot.sandbox.private import (
    moot_dirs,
    place,
    private_paths,
    system_secrets,
    with_added,
    with_private,
)
from moot.sandbox.process import KILL_GRACE
from moot.sandbox.seccomp import set_id_filter
from moot.sandbox.sentinel import private_dir, remove_dir, sentinel
from moot.sandbox.set_id import SetIdSweep


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


class BubblewrapSandbox(ConfinedSandbox):
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
        self.private = [
            *(
                moot_dirs(workspace=policy.workspace, added=policy.added)
                if private is None
                else private
            ),
            self.keys_file,
        ]
        self._tmp: Path | None = None
        self._empty: Path | None = None
        self.set_id_filter = set_id_filter() if seccomp else None
        """The seccomp program bwrap loads for every command; None: sweep instead."""
        if self.set_id_filter is None:
            self.set_id_sweep = SetIdSweep(self.workspace)
        self._git_file: str | None = None
        """The commands' git config on the host; "" when there is none; None: not made yet."""
        self._home_lock = threading.Lock()
        self.sentinel = sentinel()
        """Ends what bubblewrap runs, and removes these directories, should moot die first."""
        self.relay_python = relay_python()
        """The Python the network relay runs with (`net_relay`), when there is a proxy."""

    @property
    def tmp(self) -> Path:
        """This sandbox's private `/tmp`, on the host; made on first use."""
        if self._tmp is None:
            self._tmp = private_dir("moot-sandbox-tmp-")
        return self._tmp

    @property
    def empty_file(self) -> Path:
        """An empty read-only file on the host, out of the sandbox's sight (the host's `/tmp`
        is not the sandbox's), bound over hidden files; made on first use."""
        if self._empty is None:
            self._empty = make_empty_file()
        return self._empty

    async def launch(self, command: str, cwd: Path, *, marked: bool = False) -> Launch:
        # The masks walk the workspace (milliseconds, more in a big tree): off the event loop.
        preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare))
        try:
            ready = await asyncio.shield(preparing)
        except asyncio.CancelledError:
            # The thread runs on regardless: close the descriptors it opens once it is done.
            preparing.add_done_callback(_close_prepared)
            raise
        proxy = await self.policy.proxy.start() if self.policy.proxy is not None else None
        fds = tuple((ready.guard_fds or {}).values())
        seccomp_fd = None
        gitconfig = None
        try:
            if self.set_id_filter is not None:
                seccomp_fd = _readable(self.set_id_filter)
                fds += (seccomp_fd,)
            if ready.gitconfig is not None:
                gitconfig = _opened(*ready.gitconfig)
                fds += (gitconfig[0],) if gitconfig is not None else ()
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
                gitconfig=gitconfig,
                home_size=HOME_TMPFS_SIZE if tmpfs_size_supported(self.bwrap) else None,
                file_perms=file_perms_supported(self.bwrap),
                seccomp_fd=seccomp_fd,
                added=self.policy.added,
                proxy_socket=proxy.socket if proxy is not None else None,
            )
        except BaseException:
            Launch([], fds).close()
            raise
        argv, started = ["bash", "-c", command], None
        if marked:
            argv, started, mark = marked_start(command)
            fds += (mark,)
        if proxy is not None:
            argv = relay_argv(self.relay_python, argv)
        # The sentinel's mark (`sentinel`): what it kills should moot die before bwrap does.
        return Launch(
            [*args, "--unsetenv", self.sentinel.started(), "--", *argv], fds, started=started
        )

    def _prepare(self) -> _Prepared:
        """Make the missing protected directories, then work out the masks in force (moot's
        own files in the workspace among them), a descriptor of each directory to guard, the
        isolation that works here (probed once) and what to hide outside. A blocking call."""
        isolation = isolation_args(self.bwrap)
        make_missing_dirs(self.policy, self.workspace)
        more = [*self.private, *system_secrets()]
        placed = place(private_paths(Path.home(), more), self.workspace)
        masks = with_private(self.policy.masks() if self.policy.masks else None, placed)
        masks = with_added(masks, placed.outside, self.policy.added)
        guards = rename_guards(masks, self.policy.protected)
        fds = None
        if bind_fd_supported(self.bwrap):
            fds = open_guards(self.workspace, guards) if guards else {}
            try:
                for root in self.policy.added:  # keyed by absolute path (`bwrap_args`)
                    own = protected_in(self.policy.protected, root)
                    if below := rename_guards(masks_below(masks, root), own):
                        opened = open_guards(root, below)
                        fds.update({f"{root}/{rel}": fd for rel, fd in opened.items()})
            except BaseException:
                Launch([], tuple(fds.values())).close()
                raise
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
                    directory = private_dir("moot-sandbox-home-")
                    (directory / "gitconfig").write_text(content)
                    self._git_file = str(directory / "gitconfig")
            return Path(self._git_file) if self._git_file else None

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        extra = {"TMPDIR": "/tmp", **(proxy_env() if self.policy.proxy is not None else {})}
        return scrub_env(env, named=self.policy.env_names, extra=extra)

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` (see `ConfinedSandbox.run`, which starts it again should bwrap fail
        to set the sandbox up before it ran: `setup_failed`); when bwrap failed so at every
        try (the result shows its `bwrap: ...` message as it is), forget the remembered
        probe, so the next start probes again."""
        result = await super().run(command, cwd=cwd, env=env, timeout=timeout, on_output=on_output)
        if self.setup_failed(result):
            await asyncio.to_thread(bwrap_cache.forget, self.bwrap)
        return result

    def setup_failed(self, result: CommandResult) -> bool:
        """bwrap's own failure: its `bwrap: ...` message on stderr, exit code 1."""
        return result.exit_code == 1 and result.stderr.startswith("bwrap: ")

    async def close(self) -> None:
        """Close as `ConfinedSandbox.close`, then remove the private `/tmp`, the empty file and
        the commands' git config."""
        await super().close()
        if self._tmp is not None:
            await asyncio.to_thread(remove_dir, self._tmp)
            self._tmp = None
        if self._empty is not None:
            await asyncio.to_thread(remove_dir, self._empty.parent)
            self._empty = None
        if self._git_file:
            await asyncio.to_thread(remove_dir, Path(self._git_file).parent)
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


def _opened(source: str, dest: str) -> tuple[int, str] | None:
    """A descriptor reading the host file `source`, and `dest`; None when it is gone (a
    cleaner of `/tmp`): the command then has no git config of its own."""
    try:
        return os.open(source, os.O_RDONLY | os.O_CLOEXEC), dest
    except OSError:
        return None


def _default_keys_file() -> Path:
    from moot.paths import key_file

    return key_file()


def _close_prepared(done: asyncio.Future[_Prepared]) -> None:
    """Close the guard descriptors of a launch that was cancelled while it prepared."""
    if done.cancelled() or done.exception() is not None:
        return
    Launch([], tuple((done.result().guard_fds or {}).values())).close()

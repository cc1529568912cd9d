"""Commands confined by Landlock: for Linux where bubblewrap cannot make namespaces.

Containers and CI runners (devcontainers, Codespaces, Kubernetes pods, GitHub Actions'
container jobs) refuse user namespaces under their default seccomp profile, so bubblewrap
fails there. Landlock needs none: an unprivileged process restricts itself, and its children,
to what a ruleset allows. Each command runs as `bash -c <command>`, forked by a small helper
process of this sandbox's (`landlock_zygote`: forking moot itself would be slow and unsafe with
its threads); the child, before `exec`, drops every capability, sets `no_new_privs`, enters a
Landlock ruleset moot worked out for this command and loads a seccomp filter
(`landlock_child`).

What it enforces (the same policy as bubblewrap's, `landlock_policy` maps one to the other):
read the file system but moot's own directories, the home directories (their toolchains
excepted), the host's `/tmp` and `/run` and its secrets, and what `Read(...)` rules deny;
write the workspace, the `--add-dir`s and a private temporary directory (`TMPDIR`) and
nothing else; `.git`, `.moot` and what `Edit(...)` rules deny read-only; no TCP unless
`policy.network` (Landlock's network rules; `policy.connect_ports` opens chosen ports, on
any address, for the network proxy), no UDP, raw or Unix sockets (seccomp: Landlock does not
see `connect` on a Unix socket, and the Docker socket is root on the host); no signal to and
no trace of a process outside the sandbox (Landlock's scopes); no set-id bits (the seccomp
filter `bubblewrap` loads too); no capability, even for root.

Where it differs from bubblewrap (the kernel offers no more; `README` says so too):

- A refused write says "Permission denied", not "Read-only file system"; a denied file
  cannot be read (EACCES) rather than reading as empty, and the names in a denied directory
  can be listed (not the content).
- A directory that holds a protected or masked path (the workspace root always: `.git`,
  `.moot`) takes no new entries and loses none: files in it are written in place, all below
  its other directories is writable (`landlock_rules`). `ls /`, `ls /tmp` and the like are
  refused: they hold hidden paths whose names are hidden too.
- No namespaces: a command sees the host's processes (`ps`; not their environment or files,
  nor can it signal or trace them), the host's network interfaces, and `/dev/shm` not at
  all. The home directory is hidden but not writable (bubblewrap gives a fresh one).

Refused below ABI `REQUIRED_ABI`: the signal scope (6) keeps a command from killing moot and
the person's other processes; truncation (3) and checked renames (2) keep read-only files
so.
"""

from __future__ import annotations

import asyncio
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from moot.sandbox import landlock_abi as ll
from moot.sandbox.base import (
    SandboxPolicy,
    make_missing_dirs,
)
from moot.sandbox.confined import ConfinedSandbox
from moot.sandbox.env import scrub_env
from moot.sandbox.home import HiddenHome, git_config, hidden_homes, home_dirs
from moot.sandbox.host import Launch
from moot.sandbox.landlock_policy import grants_and_caps
from moot.sandbox.landlock_rules import Planner, Rule
from moot.sandbox.landlock_spawn import Zygote, ZygoteCommand
from moot.sandbox.net_relay import proxy_env
from moot.sandbox.output import MAX_OUTPUT_CHARS
from moot.sandbox.private import moot_dirs, place, private_paths, system_secrets, with_private
from moot.sandbox.process import KILL_GRACE
from moot.sandbox.seccomp import set_id_filter
from moot.sandbox.sentinel import private_dir, remove_dir

REQUIRED_ABI = 6
"""The oldest Landlock ABI moot runs commands under (Linux 6.12): see the module docstring."""


def landlock_unavailable(required: int = REQUIRED_ABI) -> str | None:
    """Why Landlock cannot run commands here, naming it; None when it can."""
    if platform.system() != "Linux":
        return "landlock: Landlock is Linux's"
    abi = ll.abi_version()
    if abi == 0:
        return f"landlock: {ll.why_no_abi()}"
    if abi < required:
        return (
            f"landlock: the kernel offers Landlock ABI {abi}; moot needs ABI {required}"
            " (Linux 6.12 or later), whose signal scope keeps commands from killing processes"
            " outside the sandbox"
        )
    if set_id_filter(sockets="tcp") is None:
        return f"landlock: moot has no seccomp filter for {platform.machine()}"
    return None


def landlock_works() -> str:
    """What `moot sandbox status` says when Landlock is chosen."""
    return f"Landlock ABI {ll.abi_version()} works here"


class LandlockSandbox(ConfinedSandbox):
    """Commands under Landlock and seccomp (see the module docstring)."""

    name = "landlock"

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        kill_grace: float = KILL_GRACE,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        keys_file: Path | None = None,
        private: Sequence[Path] | None = None,
        required_abi: int = REQUIRED_ABI,
    ) -> None:
        """Args:
        policy: The workspace, its protected paths, and whether the network is allowed.
        kill_grace: Seconds between SIGTERM and SIGKILL when a command is killed.
        max_output_chars: What a result shows of a command's output at most.
        keys_file: moot's saved API keys, hidden from commands; the default key file when
            None.
        private: moot's directories, hidden from commands (`private.moot_dirs` when None).
        required_abi: The oldest ABI accepted (`REQUIRED_ABI`; tests ask for more).

        Raises:
            RuntimeError: Landlock cannot run here (`landlock_unavailable` says why).
        """
        why_not = landlock_unavailable(required_abi)
        if why_not is not None:
            raise RuntimeError(why_not)
        super().__init__(policy, kill_grace=kill_grace, max_output_chars=max_output_chars)
        self.abi = ll.abi_version()
        from moot.paths import key_file

        self.keys_file = keys_file if keys_file is not None else key_file()
        self.private = [
            *(
                moot_dirs(workspace=policy.workspace, added=policy.added)
                if private is None
                else private
            ),
            self.keys_file,
        ]
        self.program = set_id_filter(sockets="any" if policy.network else "tcp")
        self._tmp: Path | None = None
        self._ruleset: tuple[tuple[Rule, ...], int] | None = None
        """The last ruleset made and its rules: the next command whose rules are the same
        enters it too (adding 200 rules costs more than all the rest of a start)."""
        self._planner = Planner()
        self._zygote = Zygote()
        """Starts the commands (`landlock_zygote` says why not moot itself)."""
        self._own: Path | None = None
        """A private directory holding the commands' git config; made on first use."""
        self._proxy_port: int | None = None
        """The session's proxy's loopback port (`policy.proxy`), once it listens: the one
        port commands may connect to besides `policy.connect_ports`."""

    @property
    def tmp(self) -> Path:
        """This sandbox's temporary directory (`TMPDIR`); made on first use."""
        if self._tmp is None:
            self._tmp = private_dir("moot-sandbox-tmp-")
        return self._tmp

    async def launch(self, command: str, cwd: Path, *, marked: bool = False) -> Launch:
        if self.policy.proxy is not None and self._proxy_port is None:
            # Landlock shares the host's network: the proxy listens on a loopback port too,
            # the only one its rules open (`net_proxy.NetworkProxy.start`).
            self._proxy_port = (await self.policy.proxy.start(tcp=True)).port
        if self.policy.masks is None:
            # No deny rule to walk the workspace for: the rules are a few dozen look-ups
            # (~1.7 ms), made here; handing them to a thread and back cost ~0.5 ms a command.
            rules, made = self._prepare()
        else:
            # The masks walk the workspace (10 ms for 2,000 files): off the event loop.
            preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare))
            try:
                rules, made = await asyncio.shield(preparing)
            except asyncio.CancelledError:
                preparing.add_done_callback(_close_ruleset)
                raise
        # On the event loop's thread, where the command then starts at once: the ruleset
        # replaced here is in no other command's start.
        if made is not None:
            if self._ruleset is not None:
                os.close(self._ruleset[1])
            self._ruleset = (rules, made)
        assert self._ruleset is not None
        ruleset = self._ruleset[1]
        zygote, program = self._zygote, self.program or b""

        def spawn(
            argv: list[str], cwd: Path, env: dict[str, str], stdin: int | None = None
        ) -> ZygoteCommand:
            return zygote.spawn(argv, cwd, env, ruleset, program, stdin)

        return Launch(["bash", "-c", command], spawn=spawn)

    def rules(self) -> list[Rule]:
        """The Landlock rules of a command starting now (a blocking call)."""
        make_missing_dirs(self.policy, self.workspace)
        homes = hidden_homes(home_dirs(), self.workspace)
        more = [*self.private, *system_secrets()]
        # The credential files in the home need looking for only where it is not hidden whole.
        if _covered(os.path.realpath(Path.home()), homes):
            found = [os.path.realpath(p) for p in more if os.path.exists(p)]
        else:
            found = private_paths(Path.home(), more)
        placed = place([p for p in found if p != "/"], self.workspace)
        masks = with_private(self.policy.masks() if self.policy.masks else None, placed)
        grants, caps = grants_and_caps(
            workspace=self.workspace,
            protected=self.policy.protected,
            masks=masks,
            outside=placed.outside,
            homes=homes,
            reveal=os.path.realpath(self.outputs.directory),
            tmp=self.tmp,
            readable=[str(self._own_dir())],
            added=self.policy.added,
            network=self.policy.network,
        )
        return self._planner.plan(grants, caps)

    def _prepare(self) -> tuple[tuple[Rule, ...], int | None]:
        """The rules of a command starting now, and a ruleset made of them: None when the last
        one made holds the same rules (a blocking call)."""
        rules = tuple(self.rules())
        last = self._ruleset
        if last is not None and last[0] == rules:
            return rules, None
        return rules, self.make_ruleset(rules)

    def make_ruleset(self, rules: Sequence[Rule]) -> int:
        """A Landlock ruleset holding `rules` and the network's, as a descriptor."""
        net = 0 if self.policy.network else ll.NET_BIND_TCP | ll.NET_CONNECT_TCP
        scoped = ll.SCOPE_ABSTRACT_UNIX_SOCKET | ll.SCOPE_SIGNAL if self.abi >= 6 else 0
        handled = ll.fs_rights(self.abi)
        ruleset = ll.create_ruleset(self.abi, handled, net, scoped)
        try:
            for rule in rules:
                try:
                    fd = os.open(rule.path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
                except OSError:
                    continue  # gone since: nothing to allow there
                try:
                    ll.add_path_rule(ruleset, fd, rule.rights & handled)
                except OSError:
                    pass  # a directory swapped for a file: it gets less, never more
                finally:
                    os.close(fd)
            if net:
                for port in self._open_ports():
                    ll.add_port_rule(ruleset, port, ll.NET_CONNECT_TCP)
        except BaseException:
            os.close(ruleset)
            raise
        return ruleset

    def _open_ports(self) -> tuple[int, ...]:
        """The TCP ports commands may connect to with the network off."""
        proxy = (self._proxy_port,) if self._proxy_port else ()
        return (*self.policy.connect_ports, *proxy)

    def _own_dir(self) -> Path:
        """A private directory of this sandbox, read-only to commands, holding their global
        git config (`home.git_config`: the real one lies in the hidden home, and git stops
        at a config file it may not read). A blocking call."""
        if self._own is None:
            own = private_dir("moot-sandbox-home-")
            (own / "gitconfig").write_text(git_config())
            self._own = own
        return self._own

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        extra = {"TMPDIR": str(self.tmp), "GIT_CONFIG_GLOBAL": str(self._own_dir() / "gitconfig")}
        if self._proxy_port:
            extra |= proxy_env(port=self._proxy_port)
        return scrub_env(env, named=self.policy.env_names, extra=extra)

    async def close(self) -> None:
        """Close as `ConfinedSandbox.close`, then stop the zygote and remove the private
        directories."""
        await super().close()
        self._zygote.stop()
        for directory in (self._tmp, self._own):
            if directory is not None:
                await asyncio.to_thread(remove_dir, directory)
        self._tmp = self._own = None
        if self._ruleset is not None:
            os.close(self._ruleset[1])
            self._ruleset = None


def _covered(path: str, homes: Sequence[HiddenHome]) -> bool:
    return any(path == home.path or path.startswith(home.path + "/") for home in homes)


def _close_ruleset(done: asyncio.Future[tuple[tuple[Rule, ...], int | None]]) -> None:
    """Close the ruleset of a launch that was cancelled while it was made."""
    if not done.cancelled() and done.exception() is None and done.result()[1] is not None:
        os.close(done.result()[1])  # type: ignore[arg-type]

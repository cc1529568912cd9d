"""SeatbeltSandbox: shell commands under macOS's `sandbox-exec` with a profile made per command.

NOT RUN ON macOS BY MOOT'S TESTS: moot's test machines are Linux. The profile is written
against the documented SBPL language and the profiles open-source agents publish, and
`tests/sandbox/test_sandbox_seatbelt.py` checks the profile's text against the policy rule
by rule; nothing has checked that Seatbelt enforces it as read.

Each command gets a profile worked out from the policy as it stands then (`rules_for`: the
masks change during a session), rendered by `seatbelt_profile`: read everything but the home
directories (their toolchains excepted), moot's own directories, credentials and what
`Read(...)` rules mask; write the workspace, each `--add-dir` and the session's temporary
directory (`TMPDIR`) but `.git`, `.moot`, what `Edit(...)` rules keep and the paths no command
may make; the network off, or only the session's proxy on localhost, or all of it.

Where it differs from bubblewrap and Docker, which show a different file system:

- a hidden file or directory cannot be read at all (`Operation not permitted`), rather than
  reading as empty; nor can the home directory be listed;
- `/tmp` is the host's, readable, not writable: commands write temporary files in `TMPDIR`,
  a private directory of the session, removed as the sandbox closes;
- processes of the host are not hidden (no PID namespace): `ps` lists them, and signals reach
  only the sandbox's own (`(target same-sandbox)`);
- a path no command may make (`policy.absent`) cannot be made at all, and is swept as well;
- set-id bits: Seatbelt has no filter for them, so they are cleared as each command ends
  (`set_id.SetIdSweep`), as with Docker.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from moot.sandbox import seatbelt_profile
from moot.sandbox.base import (
    SandboxMasks,
    SandboxPolicy,
    make_missing_dirs,
)
from moot.sandbox.confined import ConfinedSandbox
from moot.sandbox.env import scrub_env
from moot.sandbox.home import PASSES, git_config, home_dirs
from moot.sandbox.host import Launch
from moot.sandbox.output import MAX_OUTPUT_CHARS
from moot.sandbox.private import moot_dirs, place, private_paths
from moot.sandbox.process import KILL_GRACE
from moot.sandbox.seatbelt_profile import SANDBOX_EXEC, NetworkMode, SeatbeltRules
from moot.sandbox.sentinel import private_dir, remove_dir
from moot.sandbox.set_id import SetIdSweep


def seatbelt_unavailable(platform: str = sys.platform) -> str | None:
    """Why Seatbelt cannot run here (naming it), or None when it can."""
    if platform != "darwin":
        return "seatbelt: only on macOS"
    if not os.access(SANDBOX_EXEC, os.X_OK):
        return f"seatbelt: {SANDBOX_EXEC} is missing"
    return None


def rules_for(
    policy: SandboxPolicy,
    *,
    workspace: Path,
    tmp: Path,
    masks: SandboxMasks,
    homes: list[str],
    private: list[str],
    outputs: Path | None,
    proxy_port: int | None = None,
) -> SeatbeltRules:
    """What the profile allows for `policy` now (reading only which protected paths exist).

    Args:
        policy: The session's policy (workspace, protected paths, added directories,
            paths no command may make, network).
        workspace: The workspace's real path.
        tmp: The session's temporary directory (real path).
        masks: What deny rules mask now, relative to the workspace (or absolute outside it).
        homes: The home directories' real paths (`home.home_dirs`).
        private: moot's directories and the credential files (`private.private_paths`).
        outputs: The session's outputs directory, readable again inside moot's directories.
        proxy_port: The session's proxy on localhost: the only way out when the policy
            allows no network.
    """
    root = str(workspace)

    def absolute(rel: str) -> str:
        return rel if rel.startswith("/") else os.path.join(root, rel)

    added = [str(path) for path in policy.added]
    # Protected paths that exist, as the other backends mount them: a missing `.git` may be
    # made (`git init`); a missing `.moot` was made before (`policy.made_when_missing`).
    protected = [os.path.join(r, rel) for r in (root, *added) for rel in policy.protected]
    read_only = [path for path in protected if os.path.lexists(path)]
    read_only += [absolute(rel) for rel in masks.read_only]
    if policy.absent:
        read_only += [os.path.join(root, rel) for rel in policy.absent.paths]
    placed = place(private, workspace)
    hidden = [absolute(rel) for rel in (*masks.hidden_files, *masks.hidden_dirs)]
    hidden += [*placed.outside, *(os.path.join(root, rel) for rel in (*placed.files, *placed.dirs))]
    writable_roots = [root, *added]
    # A home that is the workspace or lies inside it stays whole (`private` covers it).
    hidden_homes = [h for h in homes if h != root and not _below(h, root)]
    passes = [os.path.join(home, rel) for home in hidden_homes for rel in PASSES]
    network: NetworkMode = "all" if policy.network else ("proxy" if proxy_port else "off")
    return SeatbeltRules(
        writable=(*writable_roots, str(tmp)),
        read_only=tuple(dict.fromkeys(read_only)),
        hidden=tuple(dict.fromkeys(hidden)),
        hidden_homes=tuple(hidden_homes),
        passes=tuple(p for p in passes if os.path.lexists(p)),
        revealed=(str(outputs),) if outputs is not None else (),
        network=network,
        proxy_port=proxy_port if network == "proxy" else None,
    )


def command_env(
    env: Mapping[str, str], named: tuple[str, ...], tmp: Path, proxy_port: int | None
) -> dict[str, str]:
    """What a command gets: `scrub_env`'s variables, `TMPDIR` the session's temporary
    directory and, with a proxy, the proxy variables naming it (most tools honour them)."""
    extra = {"TMPDIR": str(tmp)}
    if proxy_port:
        url = f"http://127.0.0.1:{proxy_port}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            extra[name] = url
        extra["ALL_PROXY"] = extra["all_proxy"] = f"socks5h://127.0.0.1:{proxy_port}"
    return scrub_env(env, named=named, extra=extra)


class SeatbeltSandbox(ConfinedSandbox):
    """Commands under `sandbox-exec` (macOS); see the module docstring."""

    name = "seatbelt"

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        proxy_port: int | None = None,
        kill_grace: float = KILL_GRACE,
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> None:
        """Args:
        policy: What commands may touch.
        proxy_port: The session's network proxy on localhost; None: no network unless the
            policy allows all of it.
        kill_grace: Seconds between SIGTERM and SIGKILL when a command is killed.
        max_output_chars: What a result shows of a command's output at most.
        """
        super().__init__(policy, kill_grace=kill_grace, max_output_chars=max_output_chars)
        self.proxy_port = proxy_port
        self.set_id_sweep = SetIdSweep(self.workspace)
        self._tmp: Path | None = None
        self._git: Path | None = None
        self._git_lock = threading.Lock()
        self._made: list[Path] = []
        """The directories made (`private_dir`'s names, which the sentinel knows: `/var` is a
        link on macOS, so the real paths the profile names differ)."""

    def _private_dir(self, prefix: str) -> Path:
        made = private_dir(prefix)  # the sentinel removes it should moot be killed
        self._made.append(made)
        return Path(os.path.realpath(made))

    @property
    def tmp(self) -> Path:
        """The session's temporary directory (real path: `/var/folders` is `/private/var`)."""
        if self._tmp is None:
            self._tmp = self._private_dir("moot-seatbelt-tmp-")
        return self._tmp

    def git_config(self) -> Path | None:
        """The commands' global git config (`home.git_config`: the person's identity and
        safe directories, no token), written once, readable and not writable by commands;
        None when it would be empty. A blocking call."""
        with self._git_lock:
            if self._git is None:
                directory = self._private_dir("moot-seatbelt-git-")
                (directory / "gitconfig").write_text(git_config())
                self._git = directory / "gitconfig"
            return self._git if self._git.stat().st_size else None

    def rules(self) -> SeatbeltRules:
        """The rules for the next command (a blocking call: it reads the disk)."""
        self.git_config()
        make_missing_dirs(self.policy, self.workspace)
        masks = self.policy.masks() if self.policy.masks is not None else SandboxMasks()
        private = private_paths(Path.home(), moot_dirs())
        return rules_for(
            self.policy,
            workspace=self.workspace,
            tmp=self.tmp,
            masks=masks,
            homes=home_dirs(),
            private=private,
            outputs=Path(os.path.realpath(self.outputs.directory)),
            proxy_port=self.proxy_port,
        )

    async def launch(self, command: str, cwd: Path, *, marked: bool = False) -> Launch:
        if self.policy.proxy is not None and self.proxy_port is None:
            # Seatbelt shares the host's network: the session's proxy (`policy.proxy`) listens
            # on a loopback port too, the only place the profile lets commands connect to.
            self.proxy_port = (await self.policy.proxy.start(tcp=True)).port
        rules = await asyncio.to_thread(self.rules)
        profile = seatbelt_profile.render(rules)
        return Launch(seatbelt_profile.argv(profile, ["/bin/bash", "-c", command]))

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """`command_env`'s, and git's global config the commands' own (the person's is
        hidden with the home directory)."""
        clean = command_env(env, self.policy.env_names, self.tmp, self.proxy_port)
        if self._git is not None and self._git.stat().st_size:
            clean["GIT_CONFIG_GLOBAL"] = str(self._git)
        return clean

    async def close(self) -> None:
        """Close as `ConfinedSandbox.close`, then remove the temporary directory."""
        await super().close()
        made, self._made = self._made, []
        for directory in made:
            await asyncio.to_thread(remove_dir, directory)
        self._tmp = self._git = None


def _below(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")

"""DockerSandbox: shell commands in one container per session, one `docker exec` per command.

The container starts on first use from a local image (`scripts/sandbox-image` builds the default
one): root file system read-only, a tmpfs `/tmp`, the workspace bind-mounted read-write at the
same path with its protected paths (`.git`, `.moot`) mounted read-only on top (`.moot` is made
on the host first when it is missing: `policy.made_when_missing`), the session's own outputs
directory read-only (nothing else of moot's: where its directories lie inside the workspace
they are hidden, `private`), no network unless the policy allows it (with a proxy, the
`sandbox.network` allowlist, still none: a relay container in its network namespace is the
way to the proxy, `net_docker`), memory, CPU and PID
limits, every capability dropped, no new privileges, and an init as PID 1 so orphans are
reaped. A new container per command would cost about a second; an exec costs tens of
milliseconds.

What the permission deny rules cover (`policy.masks`) is masked with mounts made when the
container is created: an empty read-only file over a hidden file, an empty read-only tmpfs
over a hidden directory, a read-only bind over a path kept from edits; and every directory
between the workspace and a masked or protected path is bound onto itself, read-write, so that
a command cannot rename it and leave a mask behind (`base.rename_guards`). Before each command
the masks are worked out again, with each path's identity (device, inode, ctime): a covered
path that appeared, or one changed or replaced on the host (a rename or unlink there undoes the
mount over it in the container, which would then show the new file; an inode number may be
reused, the ctime tells), needs a new container; so does a guarded or protected directory that
appeared or was replaced (device and inode only: see `mask_ids`). It is made at once when
nothing runs in the old one (its `/tmp` is lost; a path no longer covered needs none). While
a background shell (or another command) runs there, the command is refused instead
(`MasksOutdated`, saying what runs): the container cannot be replaced under it, and running
with stale masks would show what the rules deny.

What the git config names that did not exist when the session began (`policy.absent`: a hooks
directory, say) cannot be mounted on; what a command makes there is moved out of the workspace
before and after each command and as the sandbox closes (`moot.workspace.absent`).

What a command writes lands on the host's disk as the user moot runs as, root included, so
a set-id file there would give any local user that user's rights: the engine cannot mount a
bind `nosuid` (nor would that reach the host), and a seccomp filter of moot's would replace
Docker's own. So the set-id bits a command leaves are cleared as it ends, a background
command's as it ends too (`set_id.SetIdSweep`); while it runs they are on the disk.

What it does not contain: a missing `.git` can be created, hooks and all; a file deny rules
cover can be created, and read by the command that made it (it is masked from the next command
on, in a new container); a denied file in the history of a nested repository or a submodule
is readable through git with an image that has git (`moot.permissions.tracked` says what
hides `.git`). Only the workspace and the session's outputs directory are mounted, so nothing
else of the host is there to read.

Kill semantics match the local backends (`process.py`): on timeout, cancellation or `kill()`
the command's whole tree gets SIGTERM, then SIGKILL after a grace period; and whatever a command
leaves running in its session when it ends is killed too. `docker_image` says how the tree is
found inside the container.

On an engine that may not share this machine's disk (a `DOCKER_HOST` other than a Unix
socket: ssh, or TCP with TLS), the workspace lives in a volume of the session's, copied in
before each command and back after it, and the mounts above are made from it: commands see
what they would locally (`docker_remote`), but for the session's saved outputs.

Containers carry labels naming the session and the host process that owns them; `close()`
removes the container. Should moot die first (`kill -9` included), its sentinel removes them,
relays and a remote engine's volume included, once it is gone: it is told of the engine and
of those labels before the first container is made (`docker_sentinel`). What outlives both
(the sentinel killed too, an engine that did not answer it) `cleanup_orphans()` removes, run
before each new container starts: containers whose owning process is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
import uuid
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from moot.paths import make_private_dir
from moot.sandbox import docker_container, docker_image, docker_sentinel
from moot.sandbox.base import (
    CommandResult,
    OutputCallback,
    SandboxMasks,
    make_empty_file,
    make_missing_dirs,
    sweep_absent,
)
from moot.sandbox.docker_container import DockerSandboxError
from moot.sandbox.docker_exec import (
    ContainerExec,
    DockerBackground,
    Feed,
    container_env,
    container_gone,
    exec_and_wait,
)
from moot.sandbox.docker_image import DockerSettings
from moot.sandbox.docker_masks import ContainerMasks, MaskId, mask_ids
from moot.sandbox.docker_remote import RemoteSyncError, VolumeSync
from moot.sandbox.net_relay import proxy_env
from moot.sandbox.output import MAX_OUTPUT_CHARS, OutputCapture, OutputDir
from moot.sandbox.private import moot_dirs, place, private_paths, with_private
from moot.sandbox.process import KILL_GRACE
from moot.sandbox.sentinel import remove_dir, sentinel
from moot.sandbox.set_id import SetIdSweep, with_cleared

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from moot.sandbox.base import SandboxPolicy

_KILL_WAIT = 5.0
"""Seconds to wait for a SIGKILLed command's exec to end before we stop reading its output."""


def docker_unavailable(image: str = docker_image.DEFAULT_IMAGE) -> str | None:
    """Why the Docker sandbox cannot run here (naming Docker), or None when it can."""
    reason = docker_image.unavailable_reason(image)
    return None if reason is None else f"docker: {reason}"


class MasksOutdated(DockerSandboxError):
    """Deny rules cover paths the container does not mask yet, and it cannot be replaced now."""


class Availability(msgspec.Struct, frozen=True):
    """Whether the Docker sandbox can run here; false in a boolean context when it cannot."""

    ok: bool
    reason: str
    """Why not or, when it can, what it will use."""

    def __bool__(self) -> bool:
        return self.ok


class DockerSandbox:
    """Runs commands in the session's container; see the module docstring."""

    name = "docker"

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        session_id: str | None = None,
        settings: DockerSettings | None = None,
        kill_grace: float = KILL_GRACE,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        outputs: OutputDir | None = None,
        engine_env: Mapping[str, str] | None = None,
    ) -> None:
        """Nothing starts here: the container starts with the first command.

        Args:
            policy: What commands may touch; the workspace is mounted at the same path.
            session_id: Labels the container (`moot.session`) and names it; by default a
                fresh id.
            settings: Image and limits.
            kill_grace: Seconds between SIGTERM and SIGKILL when a command is killed.
            max_output_chars: What a result shows of a command's output at most.
            outputs: Where full outputs of long commands are saved; by default
                `policy.output_dir`, else under the user data dir's `outputs/`.
            engine_env: The variables naming the engine (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`,
                `DOCKER_CERT_PATH`); by default the process's.
        """
        self.policy = policy
        self.session_id = session_id or f"pid{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.settings = settings or DockerSettings()
        self.kill_grace = kill_grace
        self.max_output_chars = max_output_chars
        self.workspace = policy.workspace.resolve()
        self.outputs = outputs or OutputDir(self.workspace, policy.output_dir)
        self.private = moot_dirs(workspace=self.workspace)
        """moot's own directories: hidden where they lie inside the workspace (`private`)."""
        self._sweep = SetIdSweep(self.workspace)
        """Clears the set-id bits commands leave (no seccomp filter of ours here: `set_id`)."""
        self._engine: DockerClient | None = None
        self._container: Container | None = None
        self._shell = "/bin/sh"
        self._starting = asyncio.Lock()
        self._background: list[DockerBackground] = []
        self._live: set[ContainerExec] = set()
        """Commands running in the container, background ones included."""
        self._masked: frozenset[MaskId] = frozenset()
        """What the container's mounts mask (see the module docstring)."""
        self._empty: Path | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._proxy_socket: Path | None = None
        """The session's network proxy (`policy.proxy`), once started: a relay container
        joins each sandbox container to it (`net_docker`)."""
        self._relays: dict[str, Container] = {}
        """Each sandbox container's relay, by the sandbox container's id."""
        self.engine_env = engine_env
        self.remote = docker_image.engine_is_remote(engine_env)
        """The engine may not share this disk: the workspace is synced (`docker_remote`)."""
        self._sync = VolumeSync(self.workspace, policy.protected, self.settings.image)

    @staticmethod
    def available(image: str = docker_image.DEFAULT_IMAGE) -> Availability:
        """Whether an engine answers and has `image`; if not, a reason a person can act on."""
        reason = docker_unavailable(image)
        if reason is not None:
            return Availability(False, reason)
        return Availability(True, f"a Docker engine answers and has the image {image}")

    @staticmethod
    def cleanup_orphans(engine: DockerClient | None = None) -> list[str]:
        """Remove moot containers whose owning process (on this host) no longer exists.

        Args:
            engine: The client to use; by default one for the engine the environment names.

        Returns:
            The names of the containers removed.
        """
        if engine is not None:
            return docker_image.remove_orphans(engine)
        engine = docker_image.client()
        try:
            return docker_image.remove_orphans(engine)
        finally:
            engine.close()

    @property
    def container(self) -> Container | None:
        """The session's container; None before the first command and after `close()`."""
        return self._container

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` to its end or its timeout (see `Sandbox.run`).

        Raises:
            DockerSandboxError: The engine or the image is missing, or the engine went away.
            ValueError: `cwd` is outside the workspace.
            asyncio.CancelledError: After the command's whole tree was killed.
        """
        capture = OutputCapture(
            self.outputs, limit=self.max_output_chars, on_output=on_output, name="cmd"
        )
        started = time.perf_counter()
        before = await sweep_absent(self.policy)
        token = self._sweep.begin()
        try:
            running = await self._exec(command, cwd=cwd, env=env, feed=capture.feed)
            try:
                code = await asyncio.wait_for(asyncio.shield(running.done), timeout)
            except TimeoutError:
                await self._kill(running)
                code = None
            except asyncio.CancelledError:
                await asyncio.shield(self._kill(running))
                raise
        except BaseException:
            capture.close()
            await asyncio.shield(self._sweep.end(token))  # a killed command may have set bits
            raise
        finally:
            notes = await asyncio.shield(self._pull())
            after = await asyncio.shield(sweep_absent(self.policy))
        for note in notes:
            capture.feed("stderr", f"{note}\n".encode())
        cleared = await self._sweep.end(token)
        if running.lost is not None:
            capture.close()
            raise DockerSandboxError(f"lost the container while the command ran: {running.lost}")
        result = with_cleared(capture.finish().result(code, started, self.name), cleared)
        swept = (*before, *after)
        return msgspec.structs.replace(result, swept=swept) if swept else result

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> DockerBackground:
        """Start `command` in the background; its id is `shell_<n>`, unique in this sandbox.

        Raises:
            DockerSandboxError: The engine or the image is missing.
            ValueError: `cwd` is outside the workspace.
        """
        await sweep_absent(self.policy)
        token = self._sweep.begin()
        process = DockerBackground(
            f"shell_{len(self._background) + 1}",
            kill=self._kill,
            files=self.outputs,
            limit=self.max_output_chars,
            on_end=functools.partial(self._ended, token),
        )
        try:
            running = await self._exec(command, cwd=cwd, env=env, feed=process.feed)
        except BaseException:
            await asyncio.shield(self._sweep.end(token))
            raise
        process.attach(running)
        self._background.append(process)
        return process

    async def close(self) -> None:
        """Kill background commands, sweep away what they made that no command may make,
        remove the container and let go of the engine."""
        await asyncio.gather(*(process.kill() for process in self._background))
        await sweep_absent(self.policy)
        container, engine = self._container, self._engine
        self._forget_container()
        self._engine = None
        if container is not None:
            await asyncio.to_thread(self._remove, container)
        await asyncio.to_thread(self._sync.close)
        if engine is not None:
            engine.close()
        if self.policy.proxy is not None:
            await self.policy.proxy.close()
        if self._empty is not None:
            await asyncio.to_thread(remove_dir, self._empty.parent)
            self._empty = None

    async def _exec(
        self, command: str, *, cwd: Path, env: Mapping[str, str], feed: Feed
    ) -> ContainerExec:
        workdir = str(self._inside(cwd))
        tag = uuid.uuid4().hex[:16]
        environment = container_env(env, tag, self.policy.env_names)
        if self.policy.proxy is not None:
            self._proxy_socket = (await self.policy.proxy.start()).socket
            environment.update(proxy_env())
        running = ContainerExec(tag, asyncio.get_running_loop(), feed)
        masks = await asyncio.to_thread(self._masks_now)
        if self.remote:
            labels = docker_image.labels(self.session_id)
            engine = await asyncio.to_thread(self._engine_now)
            try:
                await asyncio.to_thread(self._sync.push, engine, masks.masks, labels)
            except RemoteSyncError as error:
                raise DockerSandboxError(str(error)) from error
        for attempt in (1, 2):
            container = await self._ensure_container(masks)
            argv = docker_image.wrap(tag, self._shell, command)
            try:
                await asyncio.to_thread(running.begin, container, argv, environment, workdir)
                self._live.add(running)
                running.done.add_done_callback(lambda _: self._live.discard(running))
                return running
            except Exception as error:
                if attempt == 2 or not container_gone(error):
                    raise
                # The container was removed or stopped under us: start a new one, once.
                self._forget_container()
                await asyncio.to_thread(self._remove, container)
        raise AssertionError("unreachable")

    async def _kill(self, running: ContainerExec) -> None:
        """SIGTERM the command's tree, SIGKILL after the grace period; return once it ended."""
        if not running.done.done():
            running.killed = True
            await self._signal(running, "TERM")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(running.done), self.kill_grace)
        # Always: a process that ignored SIGTERM may outlive the shell that started it.
        await self._signal(running, "KILL")
        try:
            await asyncio.wait_for(asyncio.shield(running.done), _KILL_WAIT)
        except TimeoutError:
            running.abandon()  # something escaped and holds the output open: stop reading
            await asyncio.shield(running.done)

    async def _signal(self, running: ContainerExec, signal: Literal["TERM", "KILL"]) -> None:
        container = self._container
        if container is not None:
            argv = docker_image.kill_argv(running.tag, signal)
            await asyncio.to_thread(exec_and_wait, container, argv)

    async def _ensure_container(self, masks: ContainerMasks) -> Container:
        async with self._starting:
            if self._container is not None and not masks.ids <= self._masked:
                self._refuse_while_busy(masks)
                old = self._container
                self._forget_container()
                await asyncio.to_thread(self._remove, old)
            if self._container is None:
                self._container = await asyncio.to_thread(self._start_container, masks.masks)
                self._masked = masks.ids
            return self._container

    def _masks_now(self) -> ContainerMasks:
        """What deny rules cover now, with the identity of each path the container mounts
        (a blocking call); missing protected directories are made first."""
        make_missing_dirs(self.policy, self.workspace)
        masks = self.policy.masks() if self.policy.masks is not None else SandboxMasks()
        placed = place(private_paths(Path.home(), self.private), self.workspace)
        masks = with_private(masks, placed) or masks
        ids = mask_ids(self.workspace, masks, self.policy.protected, steady=placed.dirs)
        return ContainerMasks(masks, ids)

    def _refuse_while_busy(self, masks: ContainerMasks) -> None:
        """Raise `MasksOutdated` when something runs in the container (it cannot go now)."""
        if not self._live:
            return
        shells = [p.id for p in self._background if p.exit_code is None]
        what = f"background shell {', '.join(shells)}" if shells else "another command"
        news = sorted({rel for _, rel, *_ in masks.ids - self._masked})
        raise MasksOutdated(
            f"refused: {', '.join(news[:5])}{' ...' if len(news) > 5 else ''} (masked by deny"
            " rules, or protected) appeared or changed after this session's container started;"
            f" it must be made again to cover them, but {what} still runs in it. Stop it"
            " (kill_shell) or let it end, then run the command again."
        )

    @property
    def empty_file(self) -> Path:
        """An empty read-only file on the host, bound over hidden files; made on first use."""
        if self._empty is None:
            self._empty = make_empty_file()
        return self._empty

    def _forget_container(self) -> None:
        self._container = None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def _inside(self, cwd: Path) -> Path:
        resolved = cwd.resolve()
        if not resolved.is_relative_to(self.workspace):
            raise ValueError(f"cwd {cwd} is outside the workspace {self.workspace}")
        return resolved

    def _start_container(self, masks: SandboxMasks) -> Container:
        engine = self._engine_now()
        empty = self.empty_file if masks else None
        spec = docker_image.container_spec(
            self.policy, self.session_id, self.settings, masks, empty, self._outputs_to_show()
        )
        if (volume := self._sync.volume) is not None:  # binds from the volume, on its disk
            spec = docker_image.container_spec(
                self.policy, self.session_id, self.settings, masks, volume.empty_file, None,
                volume.source,
            )  # fmt: skip
        container, self._shell = docker_container.started(engine, spec, self.settings.image)
        if self._proxy_socket is not None:
            relay = docker_container.relayed(engine, container, self._proxy_socket)
            self._relays[container.id] = relay
        # Should the session end without close() (the interpreter exits, say), the container
        # goes with it; a crash leaves it to the sentinel (`docker_sentinel`).
        both = [self._relays.get(container.id), container]
        self._finalizer = weakref.finalize(self, docker_container.remove_all, both)
        return container

    def _remove(self, container: Container) -> None:
        """Remove a sandbox container and its relay, if it has one (a blocking call)."""
        docker_container.remove_all([self._relays.pop(container.id, None), container])

    def _engine_now(self) -> DockerClient:
        """The engine's client, made on first use (orphans of crashed sessions removed); the
        sentinel is told of it first, before any container or volume is made there."""
        if self._engine is None:
            sentinel().watch_docker(docker_sentinel.engine_record(self.engine_env))
            self._engine = docker_container.engine(self.engine_env)
        return self._engine

    async def _pull(self) -> list[str]:
        """Copy back what the command changed in the session's volume (remote engines)."""
        return await asyncio.to_thread(self._sync.pull) if self.remote else []

    async def _ended(self, token: int) -> None:
        """A background command ended: copy back what it changed (then sweep what it made
        where no command may make anything: it has just landed here), clear set-id bits."""
        if self.remote:
            await self._pull()
            await sweep_absent(self.policy)
        await self._sweep.end(token)

    def _outputs_to_show(self) -> Path | None:
        """The session's outputs directory, made now, to mount read-only: a command may `grep`
        the full output a result names. None when it lies in the workspace (mounted already)
        or cannot be made."""
        directory = Path(os.path.realpath(self.outputs.directory))
        if directory.is_relative_to(self.workspace):
            return None
        try:
            make_private_dir(directory)  # under moot's data directory: this user's only
        except OSError:
            return None
        return directory

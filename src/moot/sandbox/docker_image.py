"""The Docker sandbox's image and the container made from it: engine, spec, labels, orphans.

The image (`scripts/sandbox-image` builds `moot-sandbox:latest`) needs a POSIX `sh`, `kill`,
`tr`, `grep`, `sleep` and a `/proc` (busybox is enough); commands run with bash when the image
has it. Each command runs as `sh -c WRAP_SCRIPT <tag> <shell> -c <command>`: `docker exec`
starts every process as the leader of a new session, so the wrapper's pid is the session id
that everything the command forks inherits, and the marker variable `MOOT_EXEC=<tag>` in its
environment follows the command into any session it makes with `setsid`.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from moot.sandbox.base import SandboxMasks, SandboxPolicy, rename_guards

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

DEFAULT_IMAGE = "moot-sandbox:latest"
REMOTE_VARIABLE = "MOOT_DOCKER_REMOTE"
"""Says whether the engine shares this machine's disk, when DOCKER_HOST cannot tell."""
MINIMUM_API = "1.24"
"""The oldest Docker API docker-py speaks: only to ask the engine which one it speaks."""
BUILD_HINT = "build it with scripts/sandbox-image"
MARKER = "MOOT_EXEC"
"""Environment variable naming the command a process belongs to (`MOOT_EXEC=<tag>`)."""
SHELL_LABEL = "moot.shell"
"""Image label naming the shell to run commands with; without it the image is probed once."""
LABEL_SESSION = "moot.session"
LABEL_PID = "moot.pid"
LABEL_PID_START = "moot.pid_start"
"""The owner's start time (clock ticks since boot), so a reused pid is not taken for it."""
LABEL_HOST = "moot.host"


class DockerSettings(msgspec.Struct, frozen=True):
    """How the session's container is made."""

    image: str = DEFAULT_IMAGE
    """Local image to run; it needs `sh`, `kill`, `tr`, `grep` and `sleep` (busybox will do)."""
    memory: str = "2g"
    """Memory limit (Docker syntax: "512m", "2g"); no swap on top."""
    cpus: float = 2.0
    """CPU limit in CPUs; capped at the host's count, which the engine requires."""
    pids: int = 512
    """Most processes the container may hold at once (a fork bomb stops here)."""
    tmp_size: str = "512m"
    """Size of the tmpfs mounted at `/tmp`."""


# The scripts are dense because `ps` in the container shows them. They find processes in /proc,
# parsing a stat line after its last ") " (a command name may hold spaces), where the fourth
# field is the session id; and kill in rounds until nothing is left, because a process may fork
# while a round runs. The wrapper runs after every command, so it uses shell builtins only.

WRAP_SCRIPT = (
    'trap : TERM;"$@"</dev/null;r=$?;i=0;while [ $i -lt 20 ];do i=$((i+1));v=;'
    "for d in /proc/[0-9]*;do p=${d#/proc/};[ $p = $$ ]&&continue;"
    'read -r s 2>/dev/null <$d/stat||continue;s=${s##*) };set -- $s;[ "$4" = $$ ]&&v="$v $p";'
    'done;[ -z "$v" ]&&break;kill -9 $v 2>/dev/null;done;exit $r'
)
"""`sh -c WRAP_SCRIPT <name> <shell> -c <command>`: run the command with stdin closed, then
kill whatever it left running in its session (as bubblewrap's PID namespace does when a
command ends) and exit with the command's status. The wrapper traps SIGTERM (a trap, unlike
an ignored signal, is not inherited across exec), so a kill's SIGTERM ends the command while
the wrapper lives on to reap the rest of the session."""

KILL_SCRIPT = (
    'm="MOOT_EXEC=$1";x=$2;n=20;[ $x = TERM ]&&n=1;i=0;while [ $i -lt $n ];do i=$((i+1));k=;g=" ";'
    "for d in /proc/[0-9]*;do p=${d#/proc/};[ $p = $$ ]&&continue;"
    "tr '\\0' '\\n' <$d/environ 2>/dev/null|grep -qxF \"$m\"||continue;"
    'read -r s 2>/dev/null <$d/stat||continue;s=${s##*) };set -- $s;k="$k $p";g="$g$4 ";done;'
    '[ -z "$k" ]&&exit 0;'
    "for d in /proc/[0-9]*;do read -r s 2>/dev/null <$d/stat||continue;s=${s##*) };set -- $s;"
    'case "$g" in *" $4 "*)k="$k ${d#/proc/}";;esac;done;kill -$x $k 2>/dev/null;done'
)
"""`sh -c KILL_SCRIPT <name> <tag> <TERM|KILL>`: send the signal to every process whose
environment carries the command's marker and to every process in a session one of them
belongs to; with KILL, in rounds until none is left."""


def wrap(tag: str, shell: str, command: str) -> list[str]:
    """The argv that runs `command` under the wrapper, for the exec marked `tag`."""
    return ["/bin/sh", "-c", WRAP_SCRIPT, f"moot-{tag}", shell, "-c", command]


def kill_argv(tag: str, signal: Literal["TERM", "KILL"]) -> list[str]:
    """The argv that signals the command marked `tag` and everything it started."""
    return ["/bin/sh", "-c", KILL_SCRIPT, "moot-kill", tag, signal]


def client(environ: Mapping[str, str] | None = None, timeout: float | None = None) -> DockerClient:
    """A client for the engine the environment names (DOCKER_HOST, else the local socket;
    DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), `environ` or the process's; each request waits
    `timeout` seconds at most (by default docker-py's minute).

    Raises:
        ImportError: The docker package is not installed.
        docker.errors.DockerException: No engine answers.
    """
    # docker-py (with requests) takes ~100 ms to import; only Docker sessions pay for it.
    import docker

    options: dict[str, Any] = docker.utils.kwargs_from_env(environment=environ)
    if timeout is not None:
        options["timeout"] = timeout
    # Through ssh://, the ssh program (`ssh USER@HOST docker system dial-stdio`), not
    # paramiko's own client: the person's ~/.ssh/config, keys, agent, known hosts, jump hosts
    # and ControlMaster apply as for any ssh, which paramiko reads only in part. docker-py
    # imports paramiko all the same (hence `docker[ssh]`), but never connects with it.
    ssh = str(options.get("base_url") or "").startswith("ssh://")
    if ssh:
        _close_tolerates_an_ended_ssh()
    # Each background command holds one connection for as long as it runs. The API version
    # is asked for by a first client of the oldest version, which sends nothing as it is made:
    # requests would otherwise verify the engine's certificate against REQUESTS_CA_BUNDLE or
    # CURL_CA_BUNDLE when either is set, not against DOCKER_CERT_PATH's CA (`trust_env`).
    engine = docker.DockerClient(version=MINIMUM_API, use_ssh_client=ssh, **options)
    try:
        engine.api.trust_env = False
        version = str(engine.version(api_version=False)["ApiVersion"])
    finally:
        engine.close()
    engine = docker.DockerClient(version=version, use_ssh_client=ssh, max_pool_size=32, **options)
    engine.api.trust_env = False
    try:
        engine.ping()
    except Exception:
        engine.close()
        raise
    return engine


def _close_tolerates_an_ended_ssh() -> None:
    """docker-py closes a connection through `ssh` by writing to its stdin first, which
    raises BrokenPipeError when ssh already ended, as it does once an exec's stream ends and
    the engine side hangs up: the exec's answer, already read, was lost with it. Closing such
    a connection is done, not an error; the ssh process is still ended (`terminate`)."""
    from docker.transport import sshconn

    close = sshconn.SSHSocket.close
    if getattr(close, "moot_tolerant", False):
        return

    def tolerant(self: Any) -> None:
        try:
            close(self)
        except (BrokenPipeError, ValueError):
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()  # flushing fails again, but the pipe is closed
            self.proc.terminate()

    tolerant.moot_tolerant = True  # type: ignore[attr-defined]
    sshconn.SSHSocket.close = tolerant


def engine_is_remote(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the engine the environment names may not share this machine's disk: any
    `DOCKER_HOST` but a Unix socket (`unix://`, or none: the local socket) or a Windows
    named pipe. An engine reached over TCP on this very machine counts as remote: moot
    cannot tell that its disk is this one, and syncing is correct either way. A remote
    engine's socket forwarded here (`ssh -L /tmp/d.sock:/var/run/docker.sock host`) looks
    local: `MOOT_DOCKER_REMOTE=1` says it is not (and `=0` that a TCP engine shares this
    disk)."""
    env = os.environ if environ is None else environ
    said = env.get(REMOTE_VARIABLE, "").strip().lower()
    if said in ("1", "true", "yes", "0", "false", "no"):
        return said in ("1", "true", "yes")
    host = env.get("DOCKER_HOST", "").strip()
    return bool(host) and not host.startswith(("unix://", "npipe://"))


def unavailable_reason(
    image: str = DEFAULT_IMAGE, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why the Docker sandbox cannot run here, or None when an engine answers and has `image`."""
    try:
        engine = client(environ)
    except ImportError:
        return "the docker Python package is not installed (pip install docker)"
    except Exception as error:
        if "paramiko" in str(error):
            return (
                "an engine over ssh:// needs paramiko (pip install 'docker[ssh]'); or forward"
                " its socket (ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST) and set"
                " DOCKER_HOST=unix:///tmp/docker.sock with MOOT_DOCKER_REMOTE=1"
            )
        return f"no Docker engine answers ({first_line(error)}); is dockerd running?"
    import docker.errors  # loaded by client()

    try:
        engine.images.get(image)
    except docker.errors.ImageNotFound:
        return f"the Docker image {image} is missing; {BUILD_HINT}"
    except Exception as error:
        return f"the Docker image {image} cannot be inspected ({first_line(error)})"
    finally:
        engine.close()
    return None


def container_spec(
    policy: SandboxPolicy,
    session_id: str,
    settings: DockerSettings,
    masks: SandboxMasks | None = None,
    empty_file: Path | None = None,
    outputs: Path | None = None,
    source: Callable[[Path], str] = str,
) -> dict[str, Any]:
    """Keyword arguments for `containers.create`: limits, mounts, labels; see DockerSandbox.

    `source` says where a workspace path lies on the engine's disk: the same path for a
    local engine; in the session's volume for a remote one (`docker_remote`), where
    `empty_file` is the engine's path too.

    `outputs`, a directory outside the workspace, is mounted read-only at its own path.
    `masks` (what deny rules cover now) needs `empty_file`, an empty read-only file on the
    host to bind over hidden files. Every directory between the workspace and a masked or
    protected path is bound onto itself, read-write, so that no command can rename it
    (`base.rename_guards`).
    """
    from docker.types import Mount  # docker-py is loaded by now (client() came first)

    ws = policy.workspace.resolve()
    masks = masks or SandboxMasks()
    mounts = [Mount(target=str(ws), source=source(ws), type="bind", read_only=False)]
    protected = protected_paths(ws, policy.protected)
    # Made while no command runs in the session's container: none can swap these for links.
    for path in guard_paths(ws, masks, protected):
        mounts.append(Mount(target=str(path), source=source(path), type="bind", read_only=False))
    masked = {str(ws / rel) for rel in (masks.hidden_files + masks.hidden_dirs + masks.read_only)}
    for path in protected:
        if str(path) not in masked:  # a mask of its own covers it (two mounts there: an error)
            mounts.append(Mount(target=str(path), source=source(path), type="bind", read_only=True))
    if masks:
        assert empty_file is not None, "hidden files are bound from an empty file"
        mounts += mask_mounts(ws, masks, empty_file, source)
    if outputs is not None:
        mounts.append(Mount(target=str(outputs), source=str(outputs), type="bind", read_only=True))
    cpus = min(settings.cpus, float(os.cpu_count() or 1))
    return {
        "image": settings.image,
        "command": ["sleep", "infinity"],
        "name": f"moot-{_slug(session_id)}-{uuid.uuid4().hex[:8]}",
        "labels": labels(session_id),
        "init": True,
        "network_mode": "bridge" if policy.network else "none",
        "mem_limit": settings.memory,
        "memswap_limit": settings.memory,
        "nano_cpus": int(cpus * 1e9),
        "pids_limit": settings.pids,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,exec,nosuid,nodev,size={settings.tmp_size},mode=1777"},
        "mounts": mounts,
        "working_dir": str(ws),
        # The host user's ids, so what a command writes in the workspace stays the user's.
        "user": f"{os.getuid()}:{os.getgid()}",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "hostname": "moot-sandbox",
    }


def labels(session_id: str) -> dict[str, str]:
    """What marks a session's container (and volume) as this process's on this host."""
    return {LABEL_SESSION: session_id, **owner_labels()}


def owner_labels() -> dict[str, str]:
    """The labels naming this process on this host (its pid, its start time, the host)."""
    pid = os.getpid()
    return {
        LABEL_PID: str(pid),
        LABEL_PID_START: _start_time(pid),
        LABEL_HOST: socket.gethostname(),
    }


def mask_mounts(
    workspace: Path, masks: SandboxMasks, empty_file: Path, source: Callable[[Path], str] = str
) -> list[Any]:
    """Mounts over what deny rules cover: an empty read-only file over a hidden file, an empty
    read-only tmpfs over a hidden directory, a read-only bind of a read-only path onto itself.
    The engine mounts parents first. Absolute paths (a denied link's target outside the
    workspace) need nothing: only the workspace is mounted, so the link leads nowhere."""
    from docker.types import Mount  # docker-py is loaded by now (client() came first)

    def inside(paths: tuple[str, ...]) -> list[str]:
        return [str(workspace / rel) for rel in paths if not rel.startswith("/")]

    empty = str(empty_file)
    return [
        *(
            Mount(target=p, source=source(Path(p)), type="bind", read_only=True)
            for p in inside(masks.read_only)
        ),
        *(
            Mount(target=p, source=empty, type="bind", read_only=True)
            for p in inside(masks.hidden_files)
        ),
        # Writable by all but mounted read-only: writes fail with "Read-only file system",
        # not "Permission denied" (the container's user is not root's).
        *(
            Mount(target=p, source=None, type="tmpfs", read_only=True, tmpfs_mode=0o777)
            for p in inside(masks.hidden_dirs)
        ),
    ]


def guard_paths(workspace: Path, masks: SandboxMasks | None, protected: list[Path]) -> list[Path]:
    """The directories of `base.rename_guards` that are directories now (not links), for
    read-write binds onto themselves; `protected` as `protected_paths` gives them."""
    names = [str(path.relative_to(workspace)) for path in protected]
    guards = [workspace / rel for rel in rename_guards(masks, names)]
    return [path for path in guards if path.is_dir() and not path.is_symlink()]


def protected_paths(workspace: Path, protected: tuple[str, ...]) -> list[Path]:
    """Protected paths that exist, as real paths inside the workspace (a symlink's target)."""
    paths: list[Path] = []
    for name in protected:
        path = workspace / name
        if not (path.exists() or path.is_symlink()):
            continue
        target = path.resolve()
        # A symlink out of the workspace needs nothing: outside is not mounted at all.
        inside = target.is_relative_to(workspace) and target != workspace
        if inside and target.exists() and target not in paths:
            paths.append(target)
    return paths


def shell_of(container: Container, image: str) -> str:
    """The shell to run commands with: the image's label, else bash if it has one, else sh."""
    shell = (container.client.images.get(image).labels or {}).get(SHELL_LABEL)
    if shell:
        return str(shell)
    code, _ = container.exec_run(["/bin/sh", "-c", "command -v bash >/dev/null"])
    return "/bin/bash" if code == 0 else "/bin/sh"


def remove_orphans(engine: DockerClient) -> list[str]:
    """Remove moot containers (and volumes) whose owning process on this host is gone; return
    their names."""
    import docker.errors  # loaded: an engine answered

    removed = []
    host = socket.gethostname()
    # Listing inspects each container: one that another session removes meanwhile is skipped.
    listed = engine.containers.list(all=True, filters={"label": LABEL_SESSION}, ignore_removed=True)
    for container in listed:
        labels = container.labels or {}
        if labels.get(LABEL_HOST, host) != host:
            continue  # another machine's, sharing this engine: its pids mean nothing here
        if owner_alive(labels.get(LABEL_PID, ""), labels.get(LABEL_PID_START, "")):
            continue
        remove(container)
        removed.append(container.name)
    # A remote engine's session keeps its workspace in a volume (`docker_remote`).
    for volume in engine.volumes.list(filters={"label": LABEL_SESSION}):
        labels = volume.attrs.get("Labels") or {}
        if labels.get(LABEL_HOST, host) != host:
            continue
        if owner_alive(labels.get(LABEL_PID, ""), labels.get(LABEL_PID_START, "")):
            continue
        with contextlib.suppress(docker.errors.APIError):  # in use, or gone meanwhile
            volume.remove(force=True)
            removed.append(volume.name)
    return removed


def owner_alive(pid_label: str, start_label: str) -> bool:
    """Whether the process a container's labels name still runs, and is the same process."""
    try:
        pid = int(pid_label)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user
    # The pid may have been reused since: the start time tells the two apart.
    return not start_label or _start_time(pid) in ("", start_label)


def remove(container: Container) -> None:
    """Remove the container, running or not; gone already is fine."""
    import docker.errors  # loaded: a container exists

    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as error:
        if "already in progress" not in str(error):
            raise


def first_line(error: BaseException) -> str:
    """An error's first line, short enough for a status message."""
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:200]


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]", "-", text)[:40] or "session"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or "" where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]

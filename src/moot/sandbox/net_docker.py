"""The network relay of a Docker sandbox: a second container in the sandbox container's
network namespace.

The sandbox container has no network (`none`): only a loopback of its own. The relay
(`net_relay.RELAY`) must listen there, but the sandbox image has no Python (a static busybox
and bash), and the sandbox container must not be shown anything more. So the relay runs in a
container of its own that joins the sandbox's network namespace (`container:<id>`) and
nothing else of it (not its file system, not its processes): the same image, with the
engine host's `/usr` (and `/lib`, `/lib64`) mounted read-only for a Python, the proxy's Unix
socket bound at `net_relay.SOCKET_INSIDE`, no capability, no new privileges, the host user's
ids. It carries the sandbox container's labels, so an orphan is removed with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.sandbox.net_relay import PORT_INSIDE, SOCKET_INSIDE, relay_argv

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

_SYSTEM = ("/usr", "/lib", "/lib64")
"""Where a system's Python and the libraries it loads lie (links followed: `/lib` is often
`/usr/lib`)."""


class RelayError(RuntimeError):
    """The relay did not start; the message says why."""


def relay_spec(sandbox: Container, socket: Path, python: str) -> dict[str, Any]:
    """Keyword arguments for `containers.create` of the relay of `sandbox`."""
    from docker.types import Mount  # loaded: a sandbox container exists

    mounts = [Mount(target=SOCKET_INSIDE, source=str(socket), type="bind", read_only=True)]
    for place in _SYSTEM:
        real = os.path.realpath(place)
        if os.path.isdir(real):
            mounts.append(Mount(target=place, source=real, type="bind", read_only=True))
    return {
        "image": sandbox.attrs["Config"]["Image"],
        "command": relay_argv(python, []),
        "name": f"{sandbox.name}-net",
        "labels": dict(sandbox.labels or {}),
        "network_mode": f"container:{sandbox.id}",
        "mounts": mounts,
        "read_only": True,
        "user": f"{os.getuid()}:{os.getgid()}",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mem_limit": "64m",
        "pids_limit": 64,
    }


def start_relay(engine: DockerClient, sandbox: Container, socket: Path, python: str) -> Container:
    """Create and start the relay of `sandbox`, and wait until it listens on
    `net_relay.PORT_INSIDE` (a blocking call: it says so, or ends, within a Python's start).

    Raises:
        RelayError: It could not start, or ended before it listened.
    """
    import docker.errors

    from moot.sandbox import docker_image

    try:
        relay = engine.containers.create(**relay_spec(sandbox, socket, python))
    except docker.errors.APIError as error:
        reason = docker_image.first_line(error)
        raise RelayError(f"could not create the network relay: {reason}") from error
    try:
        relay.start()
        said = b""
        for chunk in relay.logs(stream=True, follow=True):
            said += chunk
            if b"ready" in said:
                return relay
        raise RelayError(
            f"the network relay ended before listening on port {PORT_INSIDE}: "
            f"{said.decode(errors='replace').strip()[-300:]}"
        )
    except BaseException:
        docker_image.remove(relay)
        raise

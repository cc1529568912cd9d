"""The Docker sandbox's engine and containers, one blocking call each: the engine's client, a
sandbox container created and started from its spec, the network relay joined to it, and
removal. `docker.DockerSandbox` calls them from threads; every failure it can explain becomes
a `DockerSandboxError` naming what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.sandbox import docker_image
from moot.sandbox.net_docker import RelayError, start_relay
from moot.sandbox.net_relay import relay_python

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container


class DockerSandboxError(RuntimeError):
    """The engine, the image or the container is missing; the message says what to do."""


def engine(env: Mapping[str, str] | None) -> DockerClient:
    """The engine's client, with the orphans of crashed sessions removed.

    Raises:
        DockerSandboxError: docker-py is not installed, or no engine answers.
    """
    try:
        client = docker_image.client(env)
    except ImportError as error:
        raise DockerSandboxError(
            "the docker Python package is not installed (pip install docker)"
        ) from error
    except Exception as error:
        reason = docker_image.first_line(error)
        raise DockerSandboxError(f"no Docker engine answers ({reason})") from error
    docker_image.remove_orphans(client)
    return client


def started(client: DockerClient, spec: dict[str, Any], image: str) -> tuple[Container, str]:
    """A container created and started from `spec`, and the shell it runs commands with.

    Raises:
        DockerSandboxError: the image is missing, or the engine refused the container.
    """
    import docker.errors  # loaded by docker_image.client()

    try:
        # create + start, not containers.run: run would try to pull a missing image.
        container = client.containers.create(**spec)
    except docker.errors.ImageNotFound as error:
        raise DockerSandboxError(
            f"the Docker image {image} is missing; {docker_image.BUILD_HINT}"
        ) from error
    except docker.errors.APIError as error:
        reason = docker_image.first_line(error)
        raise DockerSandboxError(f"could not create the container: {reason}") from error
    try:
        container.start()
        return container, docker_image.shell_of(container, image)
    except BaseException as error:
        docker_image.remove(container)
        if isinstance(error, docker.errors.APIError):
            reason = docker_image.first_line(error)
            raise DockerSandboxError(f"could not start the container: {reason}") from error
        raise


def relayed(client: DockerClient, container: Container, proxy_socket: Path) -> Container:
    """The relay container joining `container`'s network to the session's proxy (`net_docker`);
    `container` is removed when the relay cannot start.

    Raises:
        DockerSandboxError: the relay could not start (the message says why).
    """
    try:
        return start_relay(client, container, proxy_socket, relay_python())
    except BaseException as error:
        docker_image.remove(container)
        if isinstance(error, RelayError):
            raise DockerSandboxError(str(error)) from error
        raise


def remove_all(containers: list[Container | None]) -> None:
    """Remove each container (a relay before the sandbox container whose network it joins)."""
    for container in containers:
        if container is not None:
            docker_image.remove(container)

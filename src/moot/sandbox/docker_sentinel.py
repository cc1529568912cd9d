"""What moot's sentinel (`sentinel`) removes from a Docker engine once moot is gone.

Before it makes its first container or volume, a Docker sandbox tells the sentinel which
engine it uses and whose its containers are (`engine_record`: the variables naming the engine,
the labels naming this process: pid, start time, host). When moot's pipe ends (`kill -9`
included) the sentinel execs this module (`main`), which connects to each engine it was told
of and removes what those labels mark (`clean`): the sandbox containers, their network
relays, a remote engine's workspace volume and its helper. The owner is not guessed (the
sentinel's parent): the record names it, as the containers' labels do. Each request waits
`REQUEST_TIMEOUT` seconds at most and the whole cleanup `WITHIN` seconds: an engine that does
not answer costs the sentinel that long, then it exits (the next session's
`docker_image.remove_orphans` is still there). Only a sentinel told of an engine runs this
module: docker-py is heavy.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from moot.sandbox import docker_image
from moot.sandbox.sentinel import DOCKER_RECORDS

if TYPE_CHECKING:
    from docker import DockerClient

ENGINE_VARIABLES = ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH")
"""What `docker_image.client` reads of an environment."""
WITHIN = 60.0
"""Seconds the cleanup takes at most, every engine at once."""
REQUEST_TIMEOUT = 10.0
"""Seconds the sentinel waits for one answer of the engine."""
SETTLE = 1.0
"""Seconds between the pass that found nothing and the pass that confirms it: a container
the engine was making as moot died appears a moment later."""


def engine_record(environ: Mapping[str, str] | None) -> dict[str, Any]:
    """What the sentinel needs to remove this process's containers from the engine `environ`
    (or the process's environment) names: the engine's variables and the owner's labels."""
    env = os.environ if environ is None else environ
    # Each variable named, empty when unset (the same to docker-py): given none at all,
    # docker-py would read the sentinel's own environment instead.
    chosen = {name: env.get(name, "") for name in ENGINE_VARIABLES}
    return {"env": chosen, "owner": docker_image.owner_labels()}


def clean(records: Iterable[str], within: float) -> None:
    """Remove what each record (`engine_record`, as JSON) names, every engine at once; return
    after `within` seconds at most, whatever the engines do."""
    deadline = time.monotonic() + within
    threads = [
        threading.Thread(target=_clean_one, args=(record, deadline), daemon=True)
        for record in records
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _clean_one(record: str, deadline: float) -> None:
    with contextlib.suppress(Exception):  # nothing to report to: moot is gone
        told = json.loads(record)
        engine = docker_image.client(told["env"], timeout=REQUEST_TIMEOUT)
        try:
            remove_left(engine, told["owner"], deadline)
        finally:
            engine.close()


def remove_left(engine: DockerClient, owner: Mapping[str, str], deadline: float) -> list[str]:
    """Remove what `owner`'s labels mark, in passes until one finds nothing and another,
    `SETTLE` seconds later, confirms it, or until `deadline` (`time.monotonic`); the names of
    what the passes found."""
    seen: list[str] = []
    settled = False
    while time.monotonic() < deadline:
        found = remove_owned(engine, owner)
        seen += found
        if found:
            settled = False
        elif settled:
            break
        else:
            settled = True
            time.sleep(SETTLE)
    return seen


def remove_owned(engine: DockerClient, owner: Mapping[str, str]) -> list[str]:
    """Remove the containers, then the volumes, labelled with each of `owner`'s labels; the
    names of those found (a volume still in use is found, and left to the next pass)."""
    import docker.errors  # loaded: an engine answered

    filters = {"label": [f"{name}={value}" for name, value in owner.items() if value]}
    containers = engine.containers.list(all=True, filters=filters, ignore_removed=True)
    # A relay first: it lives in its sandbox container's network namespace.
    containers.sort(key=lambda container: not _joins_another(container))
    for container in containers:
        with contextlib.suppress(docker.errors.APIError):
            docker_image.remove(container)
    volumes = engine.volumes.list(filters=filters)
    for volume in volumes:
        with contextlib.suppress(docker.errors.APIError):  # in use, or gone meanwhile
            volume.remove(force=True)
    return [str(item.name) for item in (*containers, *volumes)]


def _joins_another(container: Any) -> bool:
    mode = (container.attrs.get("HostConfig") or {}).get("NetworkMode") or ""
    return str(mode).startswith("container:")


def main() -> None:
    """The sentinel, once moot is gone, exec'd with the records it was told
    (`sentinel.DOCKER_RECORDS`)."""
    records = json.loads(os.environ.pop(DOCKER_RECORDS, "[]"))
    clean(records, within=WITHIN)


if __name__ == "__main__":
    main()

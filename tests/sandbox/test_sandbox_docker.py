"""The Docker backend: the whole sandbox contract, then what only a container has.

The contract's tests (`test_sandbox_contract.py`) run here once more with the contract's own
`harness` fixture, parametrised with the Docker backend registered below; the other backends
keep running in that module. Then: one container per session, reused and removed at close,
its limits and labels, orphans of a crashed session, and what happens when the engine, the
image or the container is missing.

Without a Docker engine (and the image `scripts/sandbox-image` builds) these tests skip with a
reason naming Docker; with `CI=true` they fail instead (`sandbox_contract.require`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import sandbox_contract
import test_sandbox_contract as contract
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.docker import (
    DockerSandbox,
    DockerSandboxError,
    DockerSettings,
    MasksOutdated,
    docker_unavailable,
)
from moot.sandbox.docker_image import BUILD_HINT, protected_paths
from sandbox_contract import DOCKER, Harness, gone, marker, register, require

register(DOCKER)

on_docker = pytest.mark.parametrize("harness", ["docker"], indirect=True)
"""Runs a test with the contract's `harness` fixture holding a `DockerSandbox`."""

# The fixtures the contract's tests use, found by pytest in this module's namespace.
harness = sandbox_contract.harness
tcp_server = contract.tcp_server
var_tmp_target = contract.var_tmp_target
host_sleeper = contract.host_sleeper
moot_home = sandbox_contract.moot_home
user_home = contract.user_home


def _on_docker(test: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a contract test that runs on Docker; the original is left as it was."""
    if not inspect.iscoroutinefunction(test):
        return on_docker(functools.wraps(test)(lambda *args, **kwargs: test(*args, **kwargs)))

    @functools.wraps(test)
    async def on_docker_only(*args: Any, **kwargs: Any) -> Any:
        return await test(*args, **kwargs)

    return on_docker(on_docker_only)


for _name in dir(contract):
    if _name.startswith("test_"):
        globals()[_name] = _on_docker(getattr(contract, _name))


@pytest.fixture
def engine() -> Iterator[Any]:
    """A docker-py client (skips, or fails in CI, without an engine)."""
    require(DOCKER)
    import docker

    client = docker.from_env()
    yield client
    client.close()


def _docker_of(harness: Harness) -> DockerSandbox:
    assert isinstance(harness.sandbox, DockerSandbox)
    return harness.sandbox


def _session_containers(engine: Any, session_id: str) -> list[Any]:
    label = f"moot.session={session_id}"
    return engine.containers.list(all=True, filters={"label": label}, ignore_removed=True)


# ---- one container per session ----------------------------------------------------------


@on_docker
async def test_one_container_per_session_is_reused_and_removed_at_close(
    harness: Harness, engine: Any
) -> None:
    sandbox = _docker_of(harness)
    assert sandbox.container is None, "the container starts with the first command"

    first = await harness.run("echo kept > /tmp/state")
    container_id = sandbox.container.id if sandbox.container else None
    second = await harness.run("cat /tmp/state")
    await harness.run("true")

    assert (first.exit_code, second.stdout) == (0, "kept\n")
    assert sandbox.container is not None and sandbox.container.id == container_id
    assert [c.id for c in _session_containers(engine, sandbox.session_id)] == [container_id]

    await sandbox.close()

    assert sandbox.container is None
    assert _session_containers(engine, sandbox.session_id) == []


@on_docker
async def test_the_container_is_confined_limited_and_labelled(
    harness: Harness, engine: Any
) -> None:
    sandbox = _docker_of(harness)
    await harness.run("true")
    assert sandbox.container is not None

    attrs = engine.containers.get(sandbox.container.id).attrs
    host = attrs["HostConfig"]
    mounts = {m["Destination"]: m["RW"] for m in attrs["Mounts"]}

    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True and "/tmp" in host["Tmpfs"]
    assert host["Init"] is True
    assert host["Memory"] == 2 * 1024**3 and host["PidsLimit"] == 512
    assert host["NanoCpus"] == int(min(2, os.cpu_count() or 1) * 1e9)
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    ws = harness.workspace
    outputs = str(sandbox.outputs.directory)  # the session's own, read-only; nothing else
    assert mounts == {
        str(ws): True,
        str(ws / ".git"): False,
        str(ws / ".moot"): False,
        outputs: False,
    }
    labels = attrs["Config"]["Labels"]
    assert labels["moot.session"] == sandbox.session_id
    assert labels["moot.pid"] == str(os.getpid())
    assert labels["moot.host"] == socket.gethostname()


async def test_a_session_that_allows_network_gets_a_bridge(engine: Any, tmp_path: Path) -> None:
    sandbox = DockerSandbox(SandboxPolicy(tmp_path, network=True), session_id="test-network")
    try:
        await sandbox.run("true", cwd=tmp_path, env={}, timeout=30)
        assert sandbox.container is not None
        network = engine.containers.get(sandbox.container.id).attrs["HostConfig"]["NetworkMode"]
    finally:
        await sandbox.close()

    assert network in ("bridge", "default")


@on_docker
async def test_files_a_command_writes_belong_to_the_user(harness: Harness) -> None:
    await harness.run("echo x > mine.txt")

    stat = (harness.workspace / "mine.txt").stat()
    assert (stat.st_uid, stat.st_gid) == (os.getuid(), os.getgid())


@on_docker
async def test_a_container_removed_under_the_session_is_replaced(
    harness: Harness, engine: Any
) -> None:
    sandbox = _docker_of(harness)
    await harness.run("true")
    assert sandbox.container is not None
    old = sandbox.container.id
    engine.containers.get(old).remove(force=True)

    result = await harness.run("echo again")

    assert (result.exit_code, result.stdout) == (0, "again\n")
    assert sandbox.container is not None and sandbox.container.id != old


# ---- masks: mounts made with the container -----------------------------------------------


@on_docker
async def test_masks_are_mounts_of_the_container(harness: Harness, engine: Any) -> None:
    ws = harness.workspace
    (ws / ".env").write_text("TOKEN=x\n")
    (ws / "secrets").mkdir()
    (ws / "locked").mkdir()
    (ws / "locked" / "a.txt").write_text("a\n")
    harness.deny("Read(.env)", "Read(secrets/)", "Edit(locked/**)")

    await harness.run("true")

    container = _docker_of(harness).container
    assert container is not None
    mounts = engine.containers.get(container.id).attrs["HostConfig"]["Mounts"]
    made = {m["Target"]: (m["Type"], m.get("ReadOnly", False)) for m in mounts}
    assert made[str(ws / ".env")] == ("bind", True)
    assert made[str(ws / "secrets")] == ("tmpfs", True)
    assert made[str(ws / "locked")] == ("bind", True)


@on_docker
async def test_the_container_is_made_again_only_when_the_masks_change(harness: Harness) -> None:
    sandbox = _docker_of(harness)
    harness.deny("Read(.env)")
    await harness.run("echo kept > /tmp/state")
    first = sandbox.container.id if sandbox.container else None
    same = await harness.run("cat /tmp/state")
    (harness.workspace / ".env").write_text("TOKEN=x\n")

    after = await harness.run("cat /tmp/state .env")

    assert same.stdout == "kept\n"
    assert sandbox.container is not None and sandbox.container.id != first
    assert after.exit_code != 0 and after.stdout == "", "a new container: /tmp starts empty"


@on_docker
async def test_a_masked_file_replaced_on_the_host_is_masked_again(harness: Harness) -> None:
    """A rename over a mounted-on file on the host undoes the mount in the container; the
    new file must not show through."""
    ws = harness.workspace
    (ws / ".env").write_text("TOKEN=old\n")
    harness.deny("Read(.env)")
    assert (await harness.run("cat .env")).stdout == ""
    (ws / "new").write_text("TOKEN=replaced\n")
    os.replace(ws / "new", ws / ".env")

    result = await harness.run("cat .env")

    assert "replaced" not in result.stdout and result.stdout == ""


@on_docker
async def test_directories_above_a_mask_are_writable_mounts_made_again_when_replaced(
    harness: Harness, engine: Any
) -> None:
    """Bound onto themselves so that no command renames them; one replaced on the host (with
    the masked file moved into the new one) needs a new container, one merely written in not."""
    ws, sandbox = harness.workspace, _docker_of(harness)
    (ws / "sec" / "b").mkdir(parents=True)
    (ws / "sec" / "b" / "key").write_text("TOKEN=x\n")
    harness.deny("Read(./sec/b/key)")
    await harness.run("true")
    first = sandbox.container.id if sandbox.container else None
    mounts = engine.containers.get(first).attrs["HostConfig"]["Mounts"]
    made = {m["Target"]: (m["Type"], m.get("ReadOnly", False)) for m in mounts}
    (ws / "sec" / "notes.txt").write_text("a new file: the directory's ctime changes\n")
    kept = await harness.run("true")
    kept_id = sandbox.container.id if sandbox.container else None
    os.rename(ws / "sec", ws / "sec.old")
    (ws / "sec").mkdir()
    os.rename(ws / "sec.old" / "b", ws / "sec" / "b")

    result = await harness.run("mv sec s3; cat sec/b/key")

    assert made[str(ws / "sec")] == made[str(ws / "sec" / "b")] == ("bind", False)
    assert kept.exit_code == 0 and kept_id == first
    assert sandbox.container is not None and sandbox.container.id != first
    assert result.stdout == "" and not (ws / "s3").exists()


@on_docker
async def test_a_git_dir_made_on_the_host_later_is_read_only_from_the_next_command(
    harness: Harness,
) -> None:
    shutil.rmtree(harness.workspace / ".git")
    await harness.run("true")
    (harness.workspace / ".git").mkdir()

    result = await harness.run("touch .git/config")

    assert result.exit_code != 0 and "Read-only file system" in result.stderr
    assert not (harness.workspace / ".git" / "config").exists()


@on_docker
async def test_a_stale_mask_refuses_commands_while_a_background_shell_runs(
    harness: Harness,
) -> None:
    sandbox = _docker_of(harness)
    harness.deny("Read(.env)")
    shell = await sandbox.start("sleep 60", cwd=harness.workspace, env=os.environ)
    (harness.workspace / ".env").write_text("TOKEN=secret-value\n")

    with pytest.raises(MasksOutdated, match=r"\.env.*shell_1.*kill_shell"):
        await harness.run("cat .env")
    await shell.kill()
    result = await harness.run("cat .env; echo done")

    assert result.stdout == "done\n"


# ---- killing, seen from inside the container ----------------------------------------------


@on_docker
async def test_a_timeout_leaves_no_process_in_the_container_even_one_in_its_own_session(
    harness: Harness,
) -> None:
    sandbox = _docker_of(harness)
    escaped, child, main = marker(), marker(), marker()

    result = await harness.run(
        f"setsid sleep {escaped} & sleep {child} & sleep {main}", timeout=0.5
    )

    assert result.timed_out and result.exit_code is None
    for text in (escaped, child, main):
        assert await gone(text) == []
    assert sandbox.container is not None
    listing = sandbox.container.exec_run(["ps", "-o", "pid,args"]).output.decode()
    assert not any(text in listing for text in (escaped, child, main)), listing


# ---- orphans ------------------------------------------------------------------------------

_CRASHING_SESSION = """
import asyncio, os, signal, sys
from pathlib import Path
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.docker import DockerSandbox
from moot.sandbox.sentinel import marked, sentinel

async def main():
    workspace = Path(sys.argv[1])
    sandbox = DockerSandbox(SandboxPolicy(workspace), session_id=sys.argv[2])
    await sandbox.run("true", cwd=workspace, env={}, timeout=60)
    print(sandbox.container.name, flush=True)
    for pid in marked(sentinel().mark):  # its sentinel killed first: it would clean up
        os.kill(pid, signal.SIGKILL)
    os._exit(3)  # a crash: close() never runs

asyncio.run(main())
"""


async def test_the_container_of_a_crashed_session_is_removed_at_the_next_start(
    engine: Any, tmp_path: Path
) -> None:
    session_id = f"test-crash-{uuid.uuid4().hex[:8]}"
    crashed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", _CRASHING_SESSION, str(tmp_path), session_id],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert crashed.returncode == 3, crashed.stderr
    name = crashed.stdout.strip()
    assert [c.name for c in _session_containers(engine, session_id)] == [name]

    # The next session's first command cleans up before it starts its own container.
    sandbox = DockerSandbox(SandboxPolicy(tmp_path), session_id=f"{session_id}-next")
    try:
        await sandbox.run("true", cwd=tmp_path, env={}, timeout=30)
        assert _session_containers(engine, session_id) == []
        assert len(_session_containers(engine, sandbox.session_id)) == 1
    finally:
        await sandbox.close()


@on_docker
async def test_cleanup_spares_live_owners_and_other_hosts(harness: Harness, engine: Any) -> None:
    sandbox = _docker_of(harness)
    await harness.run("true")
    assert sandbox.container is not None
    labels = engine.containers.get(sandbox.container.id).labels
    session_id = f"test-orphans-{uuid.uuid4().hex[:8]}"

    def labelled(**changes: str) -> Any:
        return engine.containers.create(
            "moot-sandbox:latest",
            ["sleep", "infinity"],
            labels={**labels, "moot.session": session_id, **changes},
        )

    reused_pid = labelled(**{"moot.pid_start": "1"})  # our pid, but another process's start
    elsewhere = labelled(**{"moot.host": "another-machine", "moot.pid": "999999999"})
    try:
        removed = DockerSandbox.cleanup_orphans()

        # Another session starting meanwhile (on this engine) may be the one that removes it.
        left = {c.id for c in _session_containers(engine, session_id)}
        assert reused_pid.id not in left
        assert elsewhere.id in left, "another machine's pids mean nothing here"
        assert sandbox.container.name not in removed, "this live session keeps its container"
        assert (await harness.run("echo alive")).stdout == "alive\n"
    finally:
        for container in _session_containers(engine, session_id):
            container.remove(force=True)


# ---- when Docker is missing ---------------------------------------------------------------


def test_without_an_engine_the_reason_names_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/moot-test-docker.sock")

    reason = docker_unavailable()
    available = DockerSandbox.available()

    assert reason is not None and reason.startswith("docker: ")
    assert not available and available.reason == reason


async def test_a_missing_image_is_named_with_how_to_build_it(engine: Any, tmp_path: Path) -> None:
    image = "moot-sandbox:no-such-tag"
    sandbox = DockerSandbox(
        SandboxPolicy(tmp_path), session_id="test-no-image", settings=DockerSettings(image=image)
    )

    availability = DockerSandbox.available(image)
    with pytest.raises(DockerSandboxError, match=image) as raised:
        await sandbox.run("true", cwd=tmp_path, env={}, timeout=30)
    await sandbox.close()

    assert not availability and BUILD_HINT in availability.reason
    assert BUILD_HINT in str(raised.value)
    assert _session_containers(engine, "test-no-image") == []


def test_protected_symlinks_are_followed_inside_the_workspace_only(tmp_path: Path) -> None:
    (tmp_path / "real-git").mkdir()
    (tmp_path / ".git").symlink_to("real-git")
    (tmp_path / ".moot").symlink_to("missing")  # dangling: nothing to mount
    (tmp_path / ".hooks").symlink_to("/etc")  # outside: not mounted at all, nothing to protect

    paths = protected_paths(tmp_path, (".git", ".moot", ".hooks", ".absent"))

    assert paths == [tmp_path / "real-git"]

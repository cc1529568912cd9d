"""The Docker backend on a remote engine: the whole sandbox contract over TCP with TLS, then
what syncing the workspace through a volume adds; both again, a representative part of the
contract and every sync test, on the main engine reached over ssh (`ssh_engine`: a real sshd
on a loopback port, `DOCKER_HOST=ssh://USER@127.0.0.1:PORT`).

The engine is a second `dockerd` on a loopback port with certificates made for the test
session (`tls_engine`), started once for this module's tests. It needs root, dockerd, the
docker CLI, openssl and the sandbox image on the main engine; without them these tests skip
with a reason naming Docker over TLS, and with `CI=true` they fail. The ssh tests need sshd,
ssh and ssh-keygen (openssh-server, openssh-client) the same way.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import sandbox_contract
import ssh_engine
import test_sandbox_contract as contract
import tls_engine
from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.docker import DockerSandbox
from moot.sandbox.docker_image import DEFAULT_IMAGE, client, engine_is_remote, unavailable_reason
from moot.sandbox.docker_image import labels as labels_of
from moot.sandbox.select import choose_sandbox
from moot.workspace.absent import AbsentPaths
from sandbox_contract import KILL_GRACE, Backend, Harness, on_host, register, require, until

_ENGINE: dict[str, tls_engine.TlsEngine | str] = {}
"""The running engine ("engine"), or why it could not start ("error")."""


def _engine() -> tls_engine.TlsEngine:
    engine = _ENGINE["engine"]
    assert isinstance(engine, tls_engine.TlsEngine)
    return engine


def _unavailable() -> str | None:
    if "error" in _ENGINE:
        return str(_ENGINE["error"])
    if "engine" not in _ENGINE:
        return "docker over TLS: the engine was not started"
    return unavailable_reason(DEFAULT_IMAGE, _engine().env)


def _make(policy: SandboxPolicy) -> Sandbox:
    session = f"test-{uuid.uuid4().hex[:12]}"
    env = _engine().env
    return DockerSandbox(policy, session_id=session, kill_grace=KILL_GRACE, engine_env=env)


REMOTE = Backend(
    "docker-tls",
    make=_make,
    unavailable=_unavailable,
    install="run as root with dockerd, the docker CLI and openssl; scripts/sandbox-image",
    reports="docker",
)
register(REMOTE)


def _synced_unavailable() -> str | None:
    reason = unavailable_reason(DEFAULT_IMAGE)
    return None if reason is None else f"docker: {reason}"


def _make_synced(policy: SandboxPolicy) -> Sandbox:
    session = f"test-{uuid.uuid4().hex[:12]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
    env["MOOT_DOCKER_REMOTE"] = "1"
    return DockerSandbox(policy, session_id=session, kill_grace=KILL_GRACE, engine_env=env)


register(
    Backend(
        "docker-synced",
        make=_make_synced,
        unavailable=_synced_unavailable,
        install="apt-get install docker.io, start dockerd, then scripts/sandbox-image",
        reports="docker",
    )
)


_SSH: dict[str, ssh_engine.SshEngine | str] = {}
"""The running sshd ("engine"), or why it could not start ("error")."""


def _ssh_engine() -> ssh_engine.SshEngine:
    engine = _SSH["engine"]
    assert isinstance(engine, ssh_engine.SshEngine)
    return engine


def _ssh_unavailable() -> str | None:
    if "error" in _SSH:
        return str(_SSH["error"])
    if "engine" not in _SSH:
        return "docker over ssh: sshd was not started"
    return unavailable_reason(DEFAULT_IMAGE, _ssh_engine().env)


def _make_ssh(policy: SandboxPolicy) -> Sandbox:
    session = f"test-{uuid.uuid4().hex[:12]}"
    env = _ssh_engine().env
    return DockerSandbox(policy, session_id=session, kill_grace=KILL_GRACE, engine_env=env)


SSH = Backend(
    "docker-ssh",
    make=_make_ssh,
    unavailable=_ssh_unavailable,
    install="apt-get install openssh-server openssh-client docker.io; scripts/sandbox-image",
    reports="docker",
)
register(SSH)


@pytest.fixture(scope="module", autouse=True)
def running_sshd() -> Iterator[None]:
    """sshd in front of the main engine, for every test here; stopped after the last. The
    `ssh` that uses its config comes first on PATH meanwhile (docker-py runs `ssh`)."""
    reason = ssh_engine.unavailable() or unavailable_reason(DEFAULT_IMAGE)
    if reason is not None:
        _SSH["error"] = reason if reason.startswith("docker") else f"docker: {reason}"
        yield
        return
    try:
        _SSH["engine"] = ssh_engine.start()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        _SSH["error"] = f"docker over ssh: {error}"
    path = os.environ.get("PATH")
    if "engine" in _SSH:
        os.environ["PATH"] = _ssh_engine().path
    try:
        yield
    finally:
        if path is not None:
            os.environ["PATH"] = path
        engine = _SSH.pop("engine", None)
        _SSH.pop("error", None)
        if isinstance(engine, ssh_engine.SshEngine):
            engine.stop()


@pytest.fixture(scope="module", autouse=True)
def running_engine() -> Iterator[None]:
    """The second engine, for every test here; stopped after the last."""
    reason = tls_engine.unavailable() or unavailable_reason(DEFAULT_IMAGE)
    if reason is not None:
        _ENGINE["error"] = reason if reason.startswith("docker") else f"docker: {reason}"
        yield
        return
    _BRIDGES.append(_bridges())
    try:
        _ENGINE["engine"] = tls_engine.start(DEFAULT_IMAGE)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        _ENGINE["error"] = f"docker over TLS: {error}"
    _BRIDGES.append(_bridges())
    try:
        yield
    finally:
        engine = _ENGINE.pop("engine", None)
        _ENGINE.pop("error", None)
        if isinstance(engine, tls_engine.TlsEngine):
            engine.stop()


_BRIDGES: list[set[str]] = []
"""The machine's bridge interfaces before the second engine started, and after."""


def _bridges() -> set[str]:
    return {p.name for p in Path("/sys/class/net").iterdir() if (p / "bridge").is_dir()}


def test_the_second_engine_leaves_the_main_engines_bridge_alone() -> None:
    """A dockerd started with `--bridge=none` deleted `docker0` as it started: the main
    engine's containers with a network could not start until it was restarted."""
    require(REMOTE)
    before, after = _BRIDGES
    assert before <= after
    assert len(after - before) == 1 and next(iter(after - before)).startswith("moottls")


on_remote = pytest.mark.parametrize("harness", ["docker-tls"], indirect=True)
"""The contract's tests: on the engine over TLS."""
synced = pytest.mark.parametrize("harness", ["docker-tls", "docker-synced"], indirect=True)
"""The sync's own tests: over TLS, and through the main engine's socket told that it is remote
(`MOOT_DOCKER_REMOTE=1`, as for a socket forwarded over ssh): docker-py's own stream reading,
not `TlsFrames`."""
synced_over_ssh = pytest.mark.parametrize(
    "harness", ["docker-tls", "docker-ssh", "docker-synced"], indirect=True
)
"""The same, and over ssh: the sync's core (what never leaves, both ways, conflicts); ssh is
one more transport under docker-py, and every request over it is slower (CI's time)."""

harness = sandbox_contract.harness
tcp_server = contract.tcp_server
var_tmp_target = contract.var_tmp_target
host_sleeper = contract.host_sleeper
moot_home = sandbox_contract.moot_home
user_home = contract.user_home

NOT_REMOTE = {
    "test_output_streams_while_the_command_runs": (
        "the command waits for a file the host makes while it runs: a remote engine's volume"
        " gets what the host changed before the next command, not during one"
    ),
    "test_a_command_reads_its_own_sessions_saved_output": (
        "the session's saved outputs are on this machine; a remote engine has no copy"
    ),
    "test_a_path_no_command_may_make_is_swept_before_and_after_each_command_and_at_close": (
        "it waits for what a background command makes while it runs: from a remote engine"
        " that comes back when the command ends (`test_what_a_background_command_made_*`)"
    ),
}
"""Contract tests that assume the engine shares this machine's disk, and why."""

OVER_SSH = {
    "test_exit_code_stdout_and_stderr_come_back_apart",
    "test_writes_inside_the_workspace_reach_the_host",
    "test_a_read_denied_file_reads_as_empty",
    "test_a_file_that_appears_later_is_masked_from_the_next_command",
    "test_moots_own_files_are_out_of_sight",
    "test_a_background_command_streams_output_and_ends_with_its_code",
}
"""The contract tests that also run over ssh: output, the workspace both ways, masks (late ones
too), moot's files and a background command (the whole contract runs over TLS; ssh is one
more transport under docker-py)."""


def _on_remote(test: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a contract test that runs on the engine over TLS."""
    why = NOT_REMOTE.get(test.__name__)
    if not inspect.iscoroutinefunction(test):
        copy = functools.wraps(test)(lambda *args, **kwargs: test(*args, **kwargs))
    else:

        @functools.wraps(test)
        async def copy(*args: Any, **kwargs: Any) -> Any:
            return await test(*args, **kwargs)

    if why is not None:
        copy = pytest.mark.skip(reason=f"remote engine: {why}")(copy)
    if test.__name__ in OVER_SSH:
        return pytest.mark.parametrize("harness", ["docker-tls", "docker-ssh"], indirect=True)(copy)
    return on_remote(copy)


for _name in dir(contract):
    if _name.startswith("test_"):
        globals()[_name] = _on_remote(getattr(contract, _name))


# ---- what only a remote engine has ------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "remote"),
    [
        (None, False),
        ("", False),
        ("unix:///var/run/docker.sock", False),
        ("npipe:////./pipe/docker_engine", False),
        ("tcp://127.0.0.1:2376", True),
        ("tcp://build.example:2376", True),
        ("ssh://me@build.example", True),
    ],
)
def test_an_engine_is_remote_unless_it_is_a_local_socket(host: str | None, remote: bool) -> None:
    env = {} if host is None else {"DOCKER_HOST": host}

    assert engine_is_remote(env) is remote
    assert engine_is_remote({**env, "MOOT_DOCKER_REMOTE": "1"}), "a forwarded socket"
    assert not engine_is_remote({**env, "MOOT_DOCKER_REMOTE": "0"}), "TCP on this machine"
    assert engine_is_remote({**env, "MOOT_DOCKER_REMOTE": "maybe"}) is remote


def test_an_ssh_engine_is_reached_with_the_ssh_program() -> None:
    """The person's ssh config, keys and agent apply (`use_ssh_client`): docker-py runs
    `ssh USER@HOST docker system dial-stdio`, here the test's `ssh` first on PATH."""
    require(SSH)
    calls = _ssh_engine().root / "ssh-calls"
    calls.unlink(missing_ok=True)

    engine = client(_ssh_engine().env)
    try:
        assert engine.ping()
    finally:
        engine.close()

    assert "docker system dial-stdio" in calls.read_text()


async def test_the_status_names_the_engine_over_ssh(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require(SSH)
    monkeypatch.setenv("DOCKER_HOST", _ssh_engine().env["DOCKER_HOST"])

    choice = choose_sandbox("docker", SandboxPolicy(workspace=tmp_path))

    assert isinstance(choice.sandbox, DockerSandbox) and choice.sandbox.remote
    assert "a remote Docker engine answers (DOCKER_HOST=ssh://" in choice.describe()
    result = await choice.sandbox.run("echo over ssh", cwd=tmp_path, env={}, timeout=60)
    assert result.stdout == "over ssh\n", result.stderr
    await choice.sandbox.close()


def test_the_engines_ca_is_trusted_whatever_requests_is_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """REQUESTS_CA_BUNDLE (set on many machines, this one included) replaced the CA of
    DOCKER_CERT_PATH: no engine over TLS answered."""
    require(REMOTE)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    monkeypatch.setenv("CURL_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")

    engine = client(_engine().env)
    try:
        assert engine.ping()
    finally:
        engine.close()


def _volume_files(harness: Harness) -> dict[str, bytes]:
    """What the session's volume holds, read through the engine (a container of its own)."""
    import docker

    sandbox = harness.sandbox
    assert isinstance(sandbox, DockerSandbox)
    engine = client(sandbox.engine_env)
    try:
        volumes = engine.volumes.list(filters={"label": "moot.session"})
        ours = [v for v in volumes if v.attrs["Labels"]["moot.session"] == sandbox.session_id]
        assert len(ours) == 1, "one volume per session"
        script = 'cd /v/ws && find . -type f | while read -r f; do echo "== $f"; cat "$f"; done'
        out = engine.containers.run(
            DEFAULT_IMAGE,
            ["sh", "-c", script],
            mounts=[docker.types.Mount("/v", ours[0].name, type="volume")],
            network_mode="none",
            remove=True,
        )
    finally:
        engine.close()
    files: dict[str, bytes] = {}
    for chunk in out.split(b"== ./")[1:]:
        name, _, body = chunk.partition(b"\n")
        files[name.decode()] = body
    return files


@synced_over_ssh
async def test_a_denied_file_never_reaches_the_engine(harness: Harness) -> None:
    (harness.workspace / ".env").write_text("SECRET=remote-leak-1\n")
    (harness.workspace / "keys").mkdir()
    (harness.workspace / "keys" / "id").write_text("remote-leak-2\n")
    (harness.workspace / "ok.txt").write_text("fine\n")
    harness.deny("Read(./.env)", "Read(./keys/**)")

    result = await harness.run("cat ok.txt; cat .env; ls keys")

    assert result.stdout == "fine\n", result.stderr
    files = _volume_files(harness)
    assert files["ok.txt"] == b"fine\n"
    assert not any(b"remote-leak" in body for body in files.values())
    assert files.get(".env", b"") == b"", "at most the empty mount point the engine makes"
    assert not any(name.startswith("keys/") for name in files)


@synced
async def test_a_file_denied_after_it_was_copied_is_deleted_from_the_volume(
    harness: Harness,
) -> None:
    (harness.workspace / "later.txt").write_text("remote-leak-3\n")
    assert (await harness.run("cat later.txt")).stdout == "remote-leak-3\n"

    harness.deny("Read(./later.txt)")
    result = await harness.run("cat later.txt")

    assert "remote-leak-3" not in result.stdout
    assert _volume_files(harness).get("later.txt", b"") == b"", "at most the mount point"


@synced_over_ssh
async def test_changes_go_both_ways_between_commands(harness: Harness) -> None:
    ws = harness.workspace
    (ws / "a.txt").write_text("one\n")
    (ws / "gone.txt").write_text("x\n")
    assert (await harness.run("cat a.txt")).stdout == "one\n"

    (ws / "a.txt").write_text("two\n")  # as a file tool would, between commands
    result = await harness.run(
        "cat a.txt; echo made > new.txt; mkdir -p d/e && echo deep > d/e/f; rm gone.txt;"
        " ln -s a.txt link; chmod 4755 new.txt"
    )

    assert result.stdout == "two\n", result.stderr
    assert (ws / "new.txt").read_text() == "made\n"
    assert (ws / "d" / "e" / "f").read_text() == "deep\n"
    assert not (ws / "gone.txt").exists()
    assert os.readlink(ws / "link") == "a.txt"
    assert (ws / "new.txt").stat().st_mode & 0o7000 == 0, "no set-id bit comes back"


@synced_over_ssh
async def test_a_file_changed_here_while_a_command_ran_keeps_this_copy(harness: Harness) -> None:
    ws = harness.workspace
    (ws / "shared.txt").write_text("start\n")
    assert (await harness.run("cat shared.txt")).exit_code == 0

    def edit_on_the_host(text: str) -> None:
        if "written" in text:  # the command wrote its copy and goes on for a while
            (ws / "shared.txt").write_text("host\n")

    result = await harness.run(
        "echo sandbox > shared.txt; echo written; sleep 2; cat shared.txt",
        timeout=30,
        on_output=edit_on_the_host,
    )

    assert result.stdout == "written\nsandbox\n"
    assert (ws / "shared.txt").read_text() == "host\n"
    assert "shared.txt changed here while the command ran" in result.stderr
    after = await harness.run("cat shared.txt")
    assert after.stdout == "host\n", "the sandbox gets this machine's copy next"


@synced
async def test_closing_removes_the_volume_and_its_helper(harness: Harness) -> None:
    sandbox = harness.sandbox
    assert isinstance(sandbox, DockerSandbox)
    await harness.run("true")
    engine = client(sandbox.engine_env)
    try:
        label = {"label": f"moot.session={sandbox.session_id}"}
        assert engine.volumes.list(filters=label)
        assert len(engine.containers.list(filters=label)) == 2, "the container and the helper"

        await sandbox.close()

        assert engine.volumes.list(filters=label) == []
        assert engine.containers.list(all=True, filters=label) == []
    finally:
        engine.close()


@synced
async def test_what_a_background_command_made_where_no_command_may_make_is_swept_as_it_ends(
    harness: Harness, tmp_path: Path
) -> None:
    quarantine = tmp_path / "quarantine"
    absent = AbsentPaths(harness.workspace, [".husky"], quarantine)
    sandbox = harness.backend.make(SandboxPolicy(workspace=harness.workspace, absent=absent))
    husky = harness.workspace / ".husky"
    try:
        process = await sandbox.start(
            "mkdir .husky && echo 'touch /tmp/x' > .husky/pre-commit",
            cwd=harness.workspace,
            env=os.environ,
        )
        await until(lambda: process.exit_code is not None)
        assert not on_host(husky), "swept as it came back"
        result = await sandbox.run(
            "test -e .husky && echo there || echo gone",
            cwd=harness.workspace,
            env=os.environ,
            timeout=30,
        )
    finally:
        await sandbox.close()

    assert process.exit_code == 0
    assert result.stdout == "gone\n", "nor left in the volume"
    assert [p.read_text() for p in quarantine.rglob("pre-commit")] == ["touch /tmp/x\n"]


@synced
async def test_a_file_rewritten_with_its_size_and_an_old_time_still_comes_back(
    harness: Harness,
) -> None:
    """The pull fetches what the volume's listing shows changed: by the status change time,
    which no command can set back (`touch -d` sets the modification time only)."""
    ws = harness.workspace
    (ws / "same.txt").write_text("abc\n")
    assert (await harness.run("cat same.txt")).stdout == "abc\n"
    old = (ws / "same.txt").stat().st_mtime_ns

    result = await harness.run("printf 'xyz\\n' > same.txt && touch -d '2001-01-01' same.txt")

    assert result.exit_code == 0, result.stderr
    assert (ws / "same.txt").read_text() == "xyz\n"
    assert (ws / "same.txt").stat().st_mtime_ns != old


@synced
async def test_a_name_holding_a_newline_comes_back(harness: Harness) -> None:
    """The listing is by lines: such a name makes the pull read the whole workspace."""
    result = await harness.run("printf 'x\\n' > \"$(printf 'a\\nb')\"")

    assert result.exit_code == 0, result.stderr
    assert (harness.workspace / "a\nb").read_text() == "x\n"


@synced
async def test_what_the_helper_cannot_read_is_kept_here(harness: Harness) -> None:
    """A file a command made unreadable cannot be copied back; nothing is deleted here while
    the volume cannot be read whole (what is missing might be there)."""
    ws = harness.workspace
    (ws / "locked.txt").write_text("kept\n")
    (ws / "other.txt").write_text("other\n")
    assert (await harness.run("true")).exit_code == 0

    result = await harness.run("chmod 000 locked.txt && rm other.txt")

    assert result.exit_code == 0, result.stderr
    assert (ws / "locked.txt").read_text() == "kept\n"
    assert (ws / "other.txt").exists(), "deletions wait until the volume reads whole"


async def test_the_status_says_the_engine_is_remote_and_the_workspace_synced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require(REMOTE)
    for name, value in _engine().env.items():
        monkeypatch.setenv(name, value)

    choice = choose_sandbox("docker", SandboxPolicy(workspace=tmp_path))

    assert isinstance(choice.sandbox, DockerSandbox) and choice.sandbox.remote
    assert "a remote Docker engine answers (DOCKER_HOST=tcp://127.0.0.1:" in choice.describe()
    assert "copied into a volume there, and back after each command" in choice.describe()
    await choice.sandbox.close()


def test_a_crashed_sessions_volume_is_removed_with_its_containers() -> None:
    require(REMOTE)
    from moot.sandbox.docker_image import remove_orphans

    engine = client(_engine().env)
    try:
        labels = labels_of(f"test-{uuid.uuid4().hex[:8]}")
        labels["moot.pid"] = "999999999"  # no such process
        volume = engine.volumes.create(f"moot-ws-orphan-{uuid.uuid4().hex[:8]}", labels=labels)
        alive = engine.volumes.create(
            f"moot-ws-alive-{uuid.uuid4().hex[:8]}", labels=labels_of("test-alive")
        )
        try:
            removed = remove_orphans(engine)

            assert volume.name in removed
            names = [v.name for v in engine.volumes.list(filters={"label": "moot.session"})]
            assert volume.name not in names and alive.name in names
        finally:
            alive.remove(force=True)
    finally:
        engine.close()


_KILLED_SESSION = """
import asyncio, json, os, sys
from pathlib import Path
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.docker import DockerSandbox

async def main():
    workspace = Path(sys.argv[1])
    sandbox = DockerSandbox(SandboxPolicy(workspace), engine_env=json.loads(sys.argv[2]))
    await sandbox.run("true", cwd=workspace, env={}, timeout=60)
    print(sandbox.container.name, flush=True)
    os._exit(3)  # as a kill -9 would: close() never runs; its sentinel lives on

asyncio.run(main())
"""


def test_what_a_killed_session_left_on_the_engine_its_sentinel_removes(tmp_path: Path) -> None:
    """The container, its helper and the workspace's volume on an engine over TLS go once
    moot is gone (`docker_sentinel`: the sentinel reaches the engine moot was told of), not
    at the next session's start."""
    require(REMOTE)
    env = _engine().env
    killed = subprocess.Popen(
        [sys.executable, "-c", _KILLED_SESSION, str(tmp_path), json.dumps(env)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = killed.communicate(timeout=90)
    assert killed.returncode == 3 and out.strip(), err
    engine = client(env)
    owner = {"label": f"moot.pid={killed.pid}"}

    def left() -> list[str]:
        containers = engine.containers.list(all=True, filters=owner, ignore_removed=True)
        return [c.name for c in (*containers, *engine.volumes.list(filters=owner))]

    try:
        deadline = time.monotonic() + 30.0
        while (there := left()) and time.monotonic() < deadline:
            os.sched_yield()
        assert not there, f"left on the engine after moot's end: {there}"
    finally:
        for container in engine.containers.list(all=True, filters=owner, ignore_removed=True):
            container.remove(force=True)
        for volume in engine.volumes.list(filters=owner):
            volume.remove(force=True)
        engine.close()

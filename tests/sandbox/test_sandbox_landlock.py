"""The Landlock backend's own parts: the kernel's ABI, the rules from grants and caps, the
network's interface for a local proxy, and the socket filter. The sandbox contract
(`test_sandbox_contract.py`) holds the backend to the policy as a whole."""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.permissions.masks import mask_source
from moot.permissions.rules import RuleSet
from moot.sandbox import landlock_abi as ll
from moot.sandbox.base import CommandResult, SandboxPolicy
from moot.sandbox.landlock import REQUIRED_ABI, LandlockSandbox, landlock_unavailable
from moot.sandbox.landlock_rules import Rule, plan
from sandbox_contract import BACKENDS, require


def test_the_abi_is_what_the_kernel_answers() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    answer = libc.syscall(ll.CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))

    assert ll.abi_version() == max(answer, 0)
    if os.environ.get("CI"):
        assert ll.abi_version() >= REQUIRED_ABI, "CI runs on a kernel with Landlock ABI 6+"


@pytest.mark.parametrize(
    ("abi", "highest"),
    [(1, ll.MAKE_SYM), (2, ll.REFER), (3, ll.TRUNCATE), (4, ll.TRUNCATE), (5, ll.IOCTL_DEV),
     (7, ll.IOCTL_DEV)],
)  # fmt: skip
def test_each_abi_handles_the_file_rights_it_knows(abi: int, highest: int) -> None:
    assert ll.fs_rights(abi) == highest * 2 - 1


def test_below_the_abi_the_policy_needs_landlock_is_refused() -> None:
    abi = ll.abi_version()
    if abi == 0:
        pytest.skip("no Landlock here")

    assert landlock_unavailable(required=abi) is None
    assert f"offers Landlock ABI {abi}; moot needs ABI {abi + 1}" in str(
        landlock_unavailable(required=abi + 1)
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """`ws/` with `.git/hooks`, `src/app.py`, `top.txt`, `.env`, `secrets/key`."""
    ws = tmp_path / "ws"
    for rel in (".git/hooks/x", "src/app.py", "top.txt", ".env", "secrets/key"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    return ws


def _rights(rules: list[Rule]) -> dict[str, int]:
    return {rule.path: rule.rights for rule in rules}


def test_a_capped_path_splits_the_directories_above_it(tree: Path) -> None:
    """`.git` read-only and `.env` hidden in a writable workspace: the workspace keeps only
    what holds everywhere beneath it (listing), its other entries get the rest each."""
    ws = str(tree)
    grants = {ws: ll.WRITE}
    caps = {f"{ws}/.git": ll.READ, f"{ws}/.env": ll.READ_DIR, f"{ws}/secrets": ll.READ_DIR}

    rules = _rights(plan(grants, caps))

    assert rules[ws] == ll.READ_DIR
    assert rules[f"{ws}/.git"] == ll.READ & ~ll.READ_DIR
    assert rules[f"{ws}/src"] == ll.WRITE & ~ll.READ_DIR
    assert rules[f"{ws}/top.txt"] == ll.WRITE & ll.FILE_RIGHTS
    assert f"{ws}/.env" not in rules and f"{ws}/secrets" not in rules


def test_a_hard_link_gets_no_more_than_the_capped_file_it_is(tree: Path) -> None:
    ws = str(tree)
    os.link(tree / ".env", tree / "src" / "copy")
    os.link(tree / ".env", tree / "link")

    rules = _rights(plan({ws: ll.WRITE}, {f"{ws}/.env": ll.READ_DIR}))

    assert f"{ws}/link" not in rules, "the same inode as the hidden .env"


def test_a_grant_below_a_hidden_path_gives_back_only_itself(tmp_path: Path) -> None:
    """moot's data directory is hidden, names and all; the session's outputs in it are read."""
    data = tmp_path / "data"
    (data / "outputs" / "mine").mkdir(parents=True)
    (data / "sessions.db").write_text("x")
    grants = {str(tmp_path): ll.READ, str(data / "outputs" / "mine"): ll.READ}

    rules = _rights(plan(grants, {str(data): 0}))

    assert rules[str(data / "outputs" / "mine")] == ll.READ
    assert str(data) not in rules and str(data / "sessions.db") not in rules
    assert str(tmp_path) not in rules, "listing it would list what is hidden"


def test_symbolic_links_get_no_rule(tree: Path) -> None:
    os.symlink("/etc", tree / "etc-link")

    rules = _rights(plan({str(tree): ll.WRITE}, {f"{tree}/.git": ll.READ}))

    assert f"{tree}/etc-link" not in rules


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    yield server
    server.close()


async def test_connect_ports_let_commands_reach_only_those_ports(
    tmp_path: Path, listener: socket.socket
) -> None:
    """The network proxy's interface: the network off, one TCP port open to connect to. On
    every address: Landlock's rules name no address (127.0.0.2, where nothing listens,
    refuses the connection itself: Landlock let it through)."""
    require(BACKENDS["landlock"])
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(1)
    port, closed = listener.getsockname()[1], other.getsockname()[1]
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path, connect_ports=(port,)))
    try:
        result = await sandbox.run(
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo open; exec 4<>/dev/tcp/127.0.0.1/{closed}"
            " && echo other; getent hosts example.com || echo unresolved;"
            f" exec 5<>/dev/tcp/127.0.0.2/{port}",
            cwd=tmp_path,
            env=os.environ,
            timeout=20,
        )
    finally:
        await sandbox.close()
        other.close()

    assert result.stdout == "open\nunresolved\n", result
    assert "Permission denied" in result.stderr
    assert "Connection refused" in result.stderr, "the port is open on every address"


async def test_with_the_network_allowed_tcp_connects_but_unix_sockets_stay_refused(
    tmp_path: Path, listener: socket.socket
) -> None:
    require(BACKENDS["landlock"])
    port = listener.getsockname()[1]
    python = sys.executable
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path, network=True))
    try:
        result = await sandbox.run(
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo open;"
            f" {python} -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1;"
            f" {python} -c 'import socket; a, b = socket.socketpair(); print(\"pair\")'",
            cwd=tmp_path,
            env=os.environ,
            timeout=20,
        )
    finally:
        await sandbox.close()

    assert result.stdout == "open\nPermissionError: [Errno 13] Permission denied\npair\n", result


async def test_an_unchanged_command_reuses_the_ruleset_and_a_replaced_file_makes_a_new_one(
    tmp_path: Path,
) -> None:
    """A file an editor saves by renaming a new one over it is another inode: the ruleset
    made for the old one would refuse to write it."""
    require(BACKENDS["landlock"])
    (tmp_path / ".git").mkdir()
    (tmp_path / "top.txt").write_text("a\n")
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path))
    run = lambda: sandbox.run(  # noqa: E731
        "echo b >> top.txt", cwd=tmp_path, env=os.environ, timeout=20
    )
    try:
        await run()
        first = sandbox._ruleset
        await run()
        same = sandbox._ruleset
        (tmp_path / "new.txt").write_text("a\nb\n")
        os.replace(tmp_path / "new.txt", tmp_path / "top.txt")
        after = await run()
    finally:
        await sandbox.close()

    assert first is same
    assert after.exit_code == 0, after.stderr
    assert (tmp_path / "top.txt").read_text() == "a\nb\nb\n"


def test_the_ruleset_is_closed_when_a_launch_is_cancelled(tmp_path: Path) -> None:
    """With deny rules the rules are worked out in a thread (the masks walk the workspace),
    which a cancel leaves running: the ruleset it makes is closed once it is done."""
    require(BACKENDS["landlock"])
    masks = mask_source(RuleSet(deny=["Read(.env)"]), tmp_path)
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path, masks=masks))

    async def cancelled() -> None:
        task = asyncio.ensure_future(sandbox.launch("true", tmp_path))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The thread runs on; once done, its callback closes the ruleset it made.
        await asyncio.get_running_loop().shutdown_default_executor()
        for _ in range(3):  # the thread's result, then the callbacks on it
            await asyncio.sleep(0)

    assert not _rulesets()
    asyncio.run(cancelled())
    left = _rulesets()
    asyncio.run(sandbox.close())

    assert not left


def test_without_deny_rules_a_launch_keeps_one_ruleset_and_close_closes_it(
    tmp_path: Path,
) -> None:
    """No deny rules: the rules are made at once, on the event loop (handing a few dozen
    look-ups to a thread cost ~0.5 ms a command); the same rules reuse one ruleset."""
    require(BACKENDS["landlock"])
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path))

    async def launched_twice() -> list[str]:
        await sandbox.launch("true", tmp_path)
        await sandbox.launch("true", tmp_path)
        return _rulesets()

    held = asyncio.run(launched_twice())
    asyncio.run(sandbox.close())

    assert len(held) == 1 and not _rulesets()


async def _first_and_second(workspace: Path, command: str) -> list[CommandResult]:
    """`command` run twice in one Landlock sandbox: what the zygote does once shows in both."""
    require(BACKENDS["landlock"])
    sandbox = LandlockSandbox(SandboxPolicy(workspace=workspace))
    try:
        return [
            await sandbox.run(command, cwd=workspace, env=os.environ, timeout=20) for _ in range(2)
        ]
    finally:
        await sandbox.close()


def _rulesets() -> list[str]:
    return [fd for fd in os.listdir("/proc/self/fd") if "landlock" in _target(fd)]


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


async def test_a_command_that_cannot_start_says_so_and_ends_with_127(tmp_path: Path) -> None:
    require(BACKENDS["landlock"])
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path))
    try:
        result = await sandbox.run("true", cwd=tmp_path / "gone", env=os.environ, timeout=20)
    finally:
        await sandbox.close()

    assert result.exit_code == 127
    assert "moot: the command could not start" in result.stderr, result


async def test_every_command_starts_with_no_capability_to_gain_at_exec(tmp_path: Path) -> None:
    """The zygote gives up the bounding and ambient sets once, for all its children: each
    command, the first and those after, has neither (root's bounding set is empty; another
    user's cannot be dropped, and holds nothing to gain with `no_new_privs`)."""
    results = await _first_and_second(
        tmp_path, "grep -E '^(CapBnd|CapAmb|CapEff|NoNewPrivs):' /proc/self/status"
    )

    for result in results:
        fields = dict(line.split(":\t", 1) for line in result.stdout.splitlines())
        assert fields["CapAmb"] == fields["CapEff"] == "0000000000000000", result
        assert fields["NoNewPrivs"] == "1", result
        if os.geteuid() == 0:
            assert fields["CapBnd"] == "0000000000000000", result


async def test_a_command_dies_of_sigpipe_as_on_the_host(tmp_path: Path) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across `exec`:
    the zygote's children set them back, so `yes | head` ends `yes` as a shell expects
    (141), with no "Broken pipe" complaint."""
    script = "yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}; grep SigIgn /proc/self/status"
    results = await _first_and_second(tmp_path, script)

    # What the host's bash ignores, started by this process as subprocess starts it (SIGPIPE and
    # SIGXFSZ back to default; what this process inherited ignored, e.g. under `nohup` or as a
    # shell's background job, stays ignored, there as in the sandbox).
    host = await asyncio.to_thread(
        subprocess.run, ["bash", "-c", script], capture_output=True, text=True, check=True
    )
    assert host.stdout.startswith("141\n"), host
    for result in results:
        assert result.stdout == host.stdout, result
        assert result.stderr == "", result


async def test_a_program_the_sandbox_may_not_run_is_passed_over_for_the_next_on_the_path(
    tmp_path: Path,
) -> None:
    """The zygote looks `bash` up on the command's PATH itself, as it sees the disk, and the
    child tries that first: where the sandbox refuses it, the child's own search goes on to
    the next one, as without the lookup; a program made or removed since is looked up anew."""
    require(BACKENDS["landlock"])
    hidden, ws = tmp_path / "hidden", tmp_path / "ws"
    hidden.mkdir()
    ws.mkdir()
    (hidden / "bash").write_text("#!/bin/sh\necho not this one\n")
    (hidden / "bash").chmod(0o755)
    env = {**os.environ, "PATH": f"{hidden}:/usr/bin:/bin"}
    sandbox = LandlockSandbox(SandboxPolicy(workspace=ws), private=[hidden])
    try:
        first = await sandbox.run("echo the real bash", cwd=ws, env=env, timeout=20)
        (hidden / "bash").unlink()
        second = await sandbox.run("echo again", cwd=ws, env=env, timeout=20)
    finally:
        await sandbox.close()

    assert (first.exit_code, first.stdout) == (0, "the real bash\n"), first
    assert (second.exit_code, second.stdout) == (0, "again\n"), second


async def test_when_the_zygote_dies_its_commands_end_and_the_next_one_gets_another(
    tmp_path: Path,
) -> None:
    """The zygote reaps the commands: gone, it can say no more of them, so moot kills them
    and ends them as killed; the next command starts a new zygote."""
    require(BACKENDS["landlock"])
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path))
    try:
        first = await sandbox.run("true", cwd=tmp_path, env=os.environ, timeout=20)
        zygote = sandbox._zygote._process
        assert zygote is not None
        running = asyncio.ensure_future(
            sandbox.run("sleep 30", cwd=tmp_path, env=os.environ, timeout=60)
        )
        while not sandbox._zygote._running:  # noqa: ASYNC110 (another process's progress)
            await asyncio.sleep(0.01)
        zygote.kill()
        ended = await asyncio.wait_for(running, 20)
        after = await sandbox.run("echo again", cwd=tmp_path, env=os.environ, timeout=20)
    finally:
        await sandbox.close()

    assert first.exit_code == 0
    assert ended.exit_code == -9 and not ended.timed_out
    assert after.stdout == "again\n" and sandbox._zygote._process is None


def test_the_planner_keeps_its_rules_until_something_it_looked_at_changes(tree: Path) -> None:
    """Kept while the grants, the caps and every path looked at are as they were; a file
    made in a split directory (the workspace root) is seen once its listing may be trusted."""
    from moot.sandbox.landlock_rules import RACY_NS, Planner

    ws = str(tree)
    grants, caps = {ws: ll.WRITE}, {f"{ws}/.git": ll.READ}
    old = time.time_ns() - 2 * RACY_NS
    os.utime(tree, ns=(old, old))  # still for long enough: its listing is kept
    planner = Planner()

    first = planner.plan(grants, caps)
    again = planner.plan(grants, caps)
    (tree / "new.txt").write_text("x\n")
    after_a_change = planner.plan(grants, caps)
    other_caps = planner.plan(grants, {**caps, f"{ws}/top.txt": ll.READ})

    assert again is first
    assert f"{ws}/new.txt" in _rights(after_a_change) and f"{ws}/new.txt" not in _rights(first)
    assert f"{ws}/top.txt" in _rights(first), "written in place"
    assert f"{ws}/top.txt" not in _rights(other_caps), "read-only now: as its directory"

"""The resident moot (`moot.cli.resident`): a run through it is the run moot would have made in
its own process, and it serves nobody it should not."""

from __future__ import annotations

import ctypes
import json
import marshal
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from moot.cli.resident import child, place, switch
from resident_harness import START_TIMEOUT_S, Resident, ended, until

PR_SET_NO_NEW_PRIVS = 38


def test_a_run_through_the_resident_moot_is_the_run_moot_makes_itself(resident: Resident) -> None:
    resident.start()
    served = resident.served()

    answered = resident.ask("hi")
    piped = resident.ask(input="a task on stdin")
    refused = resident.moot("-p", "hi", "--model", "nosuch")
    alone = resident.ask("hi", own=True)

    assert resident.served() == served + 3  # the last one ran in its own process
    assert (answered.returncode, answered.stdout) == (0, "hello from the script\n")
    assert (piped.returncode, piped.stdout) == (0, "hello from the script\n")
    assert (alone.returncode, alone.stdout, alone.stderr) == (0, answered.stdout, answered.stderr)
    assert refused.returncode == 2
    assert "should look like provider/model" in refused.stderr


def test_the_child_works_in_the_callers_directory_environment_and_umask(
    resident: Resident,
) -> None:
    resident.start()
    served = resident.served()
    sub = resident.repo.parent / "another"  # a workspace of its own
    sub.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=sub, check=True)
    script = sub / "write.json"
    write = {"name": "write", "arguments": {"path": "made.txt", "content": "x\n"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"text": "written"}]}))
    # The model comes from the caller's environment, the file lands in its directory with its
    # umask; the resident process was started from the workspace with umask 022.
    result = resident.moot(
        "-p", "go", "--permission-mode", "acceptEdits",
        env={"MOOT_MODEL": f"scripted:{script}"},
        cwd=sub,
        preexec_fn=lambda: os.umask(0o077),
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stdout == "written\n"
    assert resident.served() == served + 1
    assert stat.S_IMODE((sub / "made.txt").stat().st_mode) == 0o600


def test_a_changed_module_retires_the_resident_moot_and_the_run_goes_on_without_it(
    resident: Resident, tmp_path: Path
) -> None:
    # A module of the test's own (site imports `sitecustomize` at every start), so that no
    # other test's resident process sees a change: each watches every module it loaded.
    own = tmp_path / "site"
    own.mkdir()
    module = own / "sitecustomize.py"
    module.write_text("")
    resident.env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(own), resident.env.get("PYTHONPATH")])
    )
    first = resident.start()
    before = module.stat()
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))

    result = resident.ask("hi")  # refused as stale: run here, and a new one started

    assert (result.returncode, result.stdout) == (0, "hello from the script\n")

    def another() -> dict[str, str] | None:
        status = resident.status()
        return status if status is not None and status["pid"] != first["pid"] else None

    status = until(another, resident.log, START_TIMEOUT_S)
    assert status["served"] == "0"
    assert ended(int(first["pid"]))


def test_a_caller_whose_imports_would_read_another_environment_gets_another_resident_moot(
    resident: Resident,
) -> None:
    """Textual reads `TERM_PROGRAM` as it loads: another terminal's `moot` is not served by
    modules loaded with this one's."""
    resident.start(env={"TERM_PROGRAM": "one"})
    served = resident.served(env={"TERM_PROGRAM": "one"})

    result = resident.ask("hi", env={"TERM_PROGRAM": "other"})

    assert result.returncode == 0
    assert resident.served(env={"TERM_PROGRAM": "one"}) == served


def test_a_confined_caller_is_refused(resident: Resident) -> None:
    """A caller with `no_new_privs` (every sandbox sets it) is refused before its request is
    read, and a `moot` so confined runs in its own process."""
    resident.start()
    served = resident.served()

    def confined() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0

    result = resident.ask("hi", preexec_fn=confined)
    answer = _raw_request(resident, preexec_fn=confined)

    assert (result.returncode, result.stdout) == (0, "hello from the script\n")
    assert resident.served() == served
    assert answer.startswith("refused the caller is confined (no_new_privs, a seccomp filter")


@pytest.mark.skipif(not os.path.exists("/usr/bin/unshare"), reason="needs unshare (util-linux)")
def test_a_caller_in_other_namespaces_is_refused(resident: Resident) -> None:
    resident.start()
    served = resident.served()

    answer = _raw_request(resident, prefix=["unshare", "--user", "--map-root-user", "--mount"])

    assert answer == "refused the caller is in other namespaces (a sandbox or a container)\n"
    assert resident.served() == served


def _raw_request(resident: Resident, *, prefix: list[str] | None = None, **kwargs: object) -> str:
    """What the resident process answers a request sent from another process (made as
    `prefix` and `kwargs` say)."""
    program = (
        "import sys\n"
        "from moot.cli.resident import client, place\n"
        "import _socket\n"
        "s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)\n"
        "s.connect(place.socket_path(place.identity()))\n"
        "try:\n"
        "    s.sendall(b'\\0' * 8)\n"
        "except OSError:\n"
        "    pass  # refused before the request was read\n"
        "print(s.recv(4096).decode(), end='')\n"
    )
    result = subprocess.run(
        [*(prefix or []), sys.executable, "-c", program],
        env=resident.env,
        cwd=resident.repo,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,  # type: ignore[arg-type]
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_request_that_is_not_one_is_refused_and_the_resident_moot_serves_on(
    resident: Resident,
) -> None:
    resident.start()
    served = resident.served()
    path = resident.socket
    answers = []
    for payload in (b"", b"\xff" * 64, marshal.dumps([1, 2]), marshal.dumps({"argv": 3})):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            sock.sendall(len(payload).to_bytes(8, "big") + payload)
            sock.settimeout(30)
            answers.append(sock.recv(4096).decode())
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall((1 << 40).to_bytes(8, "big"))  # too large a request
        sock.settimeout(30)
        answers.append(sock.recv(4096).decode())

    assert all(answer.startswith("refused ") for answer in answers), answers
    result = resident.ask("hi")
    assert (result.returncode, result.stdout) == (0, "hello from the script\n")
    assert resident.served() == served + 1


def test_the_socket_directory_must_be_the_users_alone(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    env = {"XDG_RUNTIME_DIR": str(runtime)}

    assert place.directory(env) == str(runtime / "moot")
    assert stat.S_IMODE((runtime / "moot").stat().st_mode) == 0o700
    (runtime / "moot").chmod(0o755)
    assert place.directory(env) is None
    (runtime / "moot").rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (runtime / "moot").symlink_to(tmp_path / "elsewhere")
    assert place.directory(env) is None


def test_a_request_parses_only_as_one() -> None:
    good = {
        "argv": ["moot"], "environ": {"A": "b"}, "umask": 0o22, "path0": None,
        "limits": [(7, 1024, 4096)], "nice": 0,
    }  # fmt: skip
    assert child.Request.parse(good, [5, 6, 7, 8]).fds == (5, 6, 7)
    for bad in (
        {**good, "argv": []},
        {**good, "argv": ["moot", 3]},
        {**good, "environ": {"A": 1}},
        {**good, "umask": 0o7777},
        {**good, "argv": "moot"},
        {**good, "limits": [(7, 1024)]},
        {**good, "nice": "0"},
        [good],
    ):
        with pytest.raises(ValueError, match="not a request"):
            child.Request.parse(bad, [5, 6, 7, 8])
    with pytest.raises(ValueError, match="not a request"):
        child.Request.parse(good, [5, 6, 7])


def test_only_the_variable_or_the_users_own_settings_turn_it_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    workspace = tmp_path / "ws"
    (workspace / ".moot").mkdir(parents=True)
    (workspace / ".moot" / "settings.json").write_text('{"resident": true}')
    env = {"MOOT_HOME": str(home)}
    settings = home / "config" / "settings.json"

    assert not switch.wanted(env)  # a repository's settings are not read
    settings.write_text('{"model": "x", "resident": true}')
    assert switch.wanted(env)
    assert not switch.wanted({**env, "MOOT_RESIDENT": "0"})
    settings.write_text('{"resident": false}')
    assert not switch.wanted(env)
    assert switch.wanted({**env, "MOOT_RESIDENT": "1"})
    settings.unlink()
    os.mkfifo(settings)  # never waited on
    assert not switch.wanted(env)


def test_a_confined_listener_in_the_resident_moots_place_is_handed_nothing(
    resident: Resident, tmp_path: Path
) -> None:
    """Where the socket's directory lies in a workspace (moot run in `/tmp`), a sandboxed
    command could listen in the resident process's place: the `moot` asking checks its
    listener as the listener checks callers, before it hands over its terminal and its
    environment (and the keys in it)."""
    heard = tmp_path / "heard"
    listener = (
        "import ctypes, socket, sys\n"
        f"assert ctypes.CDLL(None).prctl({PR_SET_NO_NEW_PRIVS}, 1, 0, 0, 0) == 0\n"
        "from moot.cli.resident import place\n"
        "sock = socket.socket(socket.AF_UNIX)\n"
        "sock.bind(place.socket_path(place.identity()))\n"
        "sock.listen()\n"
        "print('listening', flush=True)\n"
        "conn, _ = sock.accept()\n"
        "data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)\n"
        f"open({str(heard)!r}, 'wb').write(data + bytes(len(fds)))\n"
    )
    fake = subprocess.Popen(
        [sys.executable, "-c", listener],
        cwd=resident.repo, env=resident.env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert fake.stdout is not None and fake.stdout.readline() == "listening\n"
        result = resident.ask("hi", env={"ANTHROPIC_API_KEY": "sk-ant-not-for-a-sandbox"})
        fake.wait(timeout=30)
    finally:
        fake.kill()
    assert (result.returncode, result.stdout) == (0, "hello from the script\n")
    assert heard.read_bytes() == b""


def test_the_child_takes_the_callers_limits_and_niceness(resident: Resident) -> None:
    """`ulimit -n 256; nice moot`: the child the resident process forks runs under the
    caller's limits and priority, as moot in its own process would."""
    import resource

    resident.start()
    served = resident.served()
    slow = resident.repo.parent / "slow.json"
    slow.write_text(json.dumps({"turns": [{"text": "word " * 400, "rate": 100}]}))

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 512))
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 5)

    caller = resident.popen(
        "-p", "go", "--model", f"scripted:{slow}", stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limited,
    )  # fmt: skip

    def running_child() -> dict[str, str] | None:
        assert caller.poll() is None, resident.log()
        status = resident.status()
        return status if status is not None and status["children"] != "-" else None

    try:
        status = until(running_child, resident.log, 60)
        child = int(status["children"].split()[0])
        limits = Path(f"/proc/{child}/limits").read_text()
        priority = os.getpriority(os.PRIO_PROCESS, child)
        names = [Path(f"/proc/{pid}/comm").read_text() for pid in (child, int(status["pid"]))]
    finally:
        _, err = caller.communicate(timeout=60)
    assert caller.returncode == 0, err
    assert any(line.split()[3:5] == ["256", "512"] for line in limits.splitlines()
               if line.startswith("Max open files")), limits  # fmt: skip
    assert priority == os.getpriority(os.PRIO_PROCESS, 0) + 5
    assert names == ["moot\n", "moot-resident\n"]  # what `ps` and `pkill moot` go by
    assert resident.served() == served + 1


def test_a_caller_with_more_room_than_the_resident_process_runs_in_its_own(
    resident: Resident,
) -> None:
    """A resident process started under a lower hard limit cannot give a child more: the
    caller is refused and runs in its own process, with all it has."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lower = min(hard, 1024) // 2

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, lower), lower))

    resident.start(preexec_fn=limited)
    served = resident.served()

    result = resident.ask("hi")

    assert (result.returncode, result.stdout) == (0, "hello from the script\n")
    assert resident.served() == served

"""The resident moot (`moot.cli.resident`) against those who would misuse it: a malformed or
hostile client on its socket, a caller confined in ways a fresh `moot` would stay confined
(fewer capabilities, another group), a process that takes the socket's name to be handed the
next `moot`'s terminal and environment, another user's runtime directory, and files planted
beside the socket. Each runs a real resident process (`moot -p` starts it, `moot resident
status` finds it) in a short runtime directory of the test's own."""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import marshal
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from moot.cli.resident import place
from moot.cli.resident.zygote import REQUEST_TIMEOUT_S
from moot_cli import TIMEOUT, moot_env
from resident_harness import Resident, ended, resident_in, until

CALLER = """
import array, sys, _socket
from moot.cli.resident import client, place
sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
sock.connect(sys.argv[1])
payload = client.request(["-p", "hi", "--model", sys.argv[2]], place.identity())
import os
here = os.open(".", os.O_PATH | os.O_DIRECTORY)
rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [0, 1, 2, here]).tobytes())]
try:
    sock.sendmsg([len(payload).to_bytes(8, "big")], rights)
    sock.sendall(payload)
except OSError:
    pass  # refused before the request was read: the answer says why
lines = client._Lines(sock)
while (line := lines.next()) is not None:
    print("answer:", line, flush=True)
"""
"""A caller as `client.attach` is one, on the socket named in argv (so that a wrapper such as
`setpriv` can run it), printing each line the resident process answers."""

FAKE = """
import socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(4)
server.settimeout(30)
conn, _ = server.accept()
conn.settimeout(5)
got = b""
try:
    while chunk := socket.recv_fds(conn, 1 << 16, 3)[0]:
        got += chunk
except OSError:
    pass
open(sys.argv[2], "wb").write(got)
"""
"""A process that listens where a resident process would, and writes down what it was sent."""


def answer_to(resident: Resident, *wrapper: str) -> str:
    """What the resident process answers a caller (`CALLER`) run under `wrapper`."""
    done = subprocess.run(
        [*wrapper, sys.executable, "-c", CALLER, resident.socket, resident.model],
        env=resident.env,
        cwd=resident.repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return done.stdout + done.stderr


def send(path: str, header: bytes, payload: bytes, fds: list[int] | None = None) -> bytes:
    """Send a raw request; what comes back before the resident process hangs up."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(path)
        rights = array.array("i", fds or []).tobytes()
        with contextlib.suppress(BrokenPipeError):  # answered before all was sent
            sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)] if fds else [])
            sock.sendall(payload)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        return answer


# ---- a malformed or hostile client ------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"",  # marshal: EOFError
        b"{" + marshal.dumps([1]) + marshal.dumps(1) + b"0",  # a list as a key: TypeError
        b"\xff garbage",  # ValueError
    ],
    ids=["empty", "unhashable-key", "garbage"],
)
def test_a_malformed_request_is_refused_and_the_resident_process_goes_on(
    resident: Resident, payload: bytes
) -> None:
    """A request marshal cannot read is refused like any other, not an exception that ends
    the resident process (and, as every waiting `moot` then hangs up its child, every run it
    serves)."""
    resident.start()
    answer = send(resident.socket, len(payload).to_bytes(8, "big"), payload)

    assert answer.startswith(b"refused not a request"), answer
    assert not ended(resident.pid)
    status = resident.status()
    assert status is not None and status["pid"] == str(resident.pid)


def test_descriptors_sent_with_a_status_or_stop_request_are_not_kept(resident: Resident) -> None:
    """The resident process closes every descriptor a request brought, whatever the request:
    one it kept would be inherited by every child it forks, and would hold a pipe open for
    ever (its reader never seeing the end)."""
    resident.start()
    read, write = os.pipe()
    payload = marshal.dumps({"status": True})
    answer = send(resident.socket, len(payload).to_bytes(8, "big"), payload, [write] * 3)
    os.close(write)

    assert answer.startswith(b"pid ")
    ready, _, _ = select.select([read], [], [], TIMEOUT)
    assert ready and os.read(read, 1) == b"", "the resident process still holds the pipe"
    os.close(read)


def test_a_request_sent_a_byte_at_a_time_is_dropped_when_its_time_is_up(
    resident: Resident,
) -> None:
    """The resident process answers one connection at a time: a caller that sends its
    request a byte now and then (each within `REQUEST_TIMEOUT_S` of the last) must not hold
    it, and every `moot` after it, for longer than that time in all."""
    resident.start()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
        slow.connect(resident.socket)
        slow.sendall((1000).to_bytes(8, "big"))
        started = time.monotonic()
        answered: list[float] = []

        def status_in_a_thread() -> None:
            if resident.status() is not None:
                answered.append(time.monotonic() - started)

        asking = threading.Thread(target=status_in_a_thread)
        asking.start()
        with contextlib.suppress(OSError):  # dropped: a write fails at last
            while asking.is_alive() and time.monotonic() - started < 3 * REQUEST_TIMEOUT_S:
                slow.send(b"x")
                asking.join(REQUEST_TIMEOUT_S / 10)
        asking.join(TIMEOUT)

    assert answered and answered[0] < REQUEST_TIMEOUT_S + 3, answered


def test_a_caller_that_never_reads_its_lines_holds_nobody_up(
    resident: Resident, tmp_path: Path
) -> None:
    """A caller makes its child stop and go on (SIGTSTP, SIGCONT) over and over and never
    reads the lines that say so: once its socket is full, the resident process must not wait
    for it to read, or nobody else is answered again."""
    resident.start()
    model = tmp_path / "sleeping.json"
    sleep = {"name": "bash", "arguments": {"command": "sleep 60"}}
    model.write_text(json.dumps({"turns": [{"tool_calls": [sleep]}, {"text": "done"}]}))
    argv = ["-p", "hi", "--model", f"scripted:{model}", "--permission-mode", "bypassPermissions"]
    code = (
        "import sys; from moot.cli.resident import client, place;"
        f"sys.stdout.buffer.write(client.request({argv!r}, place.identity()))"
    )
    payload = subprocess.run(
        [sys.executable, "-c", code], env=resident.env, cwd=resident.repo,
        capture_output=True, check=True, timeout=TIMEOUT,
    ).stdout  # fmt: skip
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as caller,
        open(os.devnull, "r+b") as null,
    ):
        caller.connect(resident.socket)
        rights = array.array("i", [null.fileno()] * 3 + [os.open("/", os.O_PATH)]).tobytes()
        caller.sendmsg(
            [len(payload).to_bytes(8, "big")], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)]
        )
        caller.sendall(payload)
        first = caller.recv(64)
        assert first.startswith(b"started "), first
        child = int(first.split()[1])
        caller.setblocking(False)  # this caller's own sends never wait either
        answered: list[bool] = []
        asking: threading.Thread | None = None
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline and not answered:
                with contextlib.suppress(BlockingIOError):
                    caller.send(b"signal %d\nsignal %d\n" % (signal.SIGTSTP, signal.SIGCONT))
                time.sleep(0.002)  # pacing the signals, not waiting for anything
                if asking is None and time.monotonic() > deadline - 15:
                    asking = threading.Thread(
                        target=lambda: answered.append(resident.status() is not None)
                    )
                    asking.start()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        assert asking is not None
        asking.join(TIMEOUT)

    assert answered == [True]


# ---- who may ask -------------------------------------------------------------------------

LESS_PRIVILEGED = {
    "no capabilities": ["setpriv", "--bounding-set=-all", "--inh-caps=-all"],
    "another group": ["setpriv", "--regid=4242", "--keep-groups"],
}


@pytest.mark.parametrize("wrapper", LESS_PRIVILEGED.values(), ids=LESS_PRIVILEGED.keys())
def test_a_caller_with_fewer_capabilities_or_another_group_is_refused(
    resident: Resident, wrapper: list[str]
) -> None:
    """A child of the resident process has the resident process's credentials: a caller that
    dropped capabilities or runs with another group (a service's bounding set, `setpriv`)
    would get back what it gave up, and run commands with them."""
    if os.geteuid() != 0:
        pytest.skip("only root can drop capabilities or change groups to ask (CI runs as root)")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    resident.start()
    assert "answer: started" in answer_to(resident), "an ordinary caller is served"

    answer = answer_to(resident, *wrapper)

    assert "answer: refused the caller is confined" in answer, answer
    assert "started" not in answer


FOREIGN_LISTENERS = {
    "no_new_privs": ["setpriv", "--no-new-privs"],
    "bubblewrap": [
        "bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--unshare-pid", "--unshare-net", "--die-with-parent",
    ],
}  # fmt: skip


@pytest.mark.parametrize("wrapper", FOREIGN_LISTENERS.values(), ids=FOREIGN_LISTENERS.keys())
def test_moot_hands_nothing_to_a_confined_process_that_took_the_sockets_name(
    tmp_path: Path, runtime: Path, wrapper: list[str]
) -> None:
    """A sandboxed command that can write the socket's directory (the workspace or an added
    directory holds `/tmp` or the runtime directory) can listen under the socket's name. The
    `moot` the person runs next must not hand it its environment (the keys the sandbox keeps
    from commands) and its terminal: it checks who listens as the resident process checks who
    asks, runs by itself, and starts a resident process of its own."""
    if shutil.which(wrapper[0]) is None:
        pytest.skip(f"{wrapper[0]} is not installed")
    env = {**moot_env(tmp_path / "home"), "MOOT_TEST_SECRET": "not-for-a-sandbox"}
    resident = resident_in(tmp_path, runtime, env, "hello")
    asked = resident.moot("resident", "status")
    path = re.search(r"\(socket (\S+);", asked.stdout).group(1)  # type: ignore[union-attr]
    got = tmp_path / "got"
    fake = subprocess.Popen(
        [*wrapper, sys.executable, "-c", FAKE, path, str(got)], env=resident.env
    )
    try:
        until(lambda: os.path.exists(path), "the listener")
        done = resident.ask("hi")
        fake.wait(TIMEOUT)
    finally:
        if fake.poll() is None:
            fake.kill()
            fake.wait()
        # The `moot` that ran by itself started a resident process, which took the name: once
        # it is up, the runtime's end kills it.
        resident.up()

    assert done.stdout == "hello\n", done.stderr
    assert b"not-for-a-sandbox" not in got.read_bytes()
    assert got.read_bytes() == b""


CONNECT = """
import socket, sys
try:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(sys.argv[1])
    client.settimeout(20)
    print("connected:", client.recv(200).decode())
except OSError as exc:
    print("unreachable:", exc)
"""


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
def test_a_sandboxed_command_is_refused_even_where_its_workspace_holds_the_socket(
    resident: Resident, runtime: Path, backend: str
) -> None:
    """The sandboxes hide `/tmp` and `/run`, where the socket lives; a workspace that holds
    its directory shows it all the same. Then bubblewrap's command connects and is refused
    (other namespaces), and Landlock's cannot make a Unix socket at all."""
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.bubblewrap import BubblewrapSandbox
    from moot.sandbox.bwrap_probe import bwrap_unavailable
    from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable

    make, unavailable = {
        "bubblewrap": (BubblewrapSandbox, bwrap_unavailable),
        "landlock": (LandlockSandbox, landlock_unavailable),
    }[backend]
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    resident.start()
    sandbox = make(SandboxPolicy(workspace=runtime))

    async def run() -> str:
        try:
            command = f"python3 -c {shlex.quote(CONNECT)} {shlex.quote(resident.socket)}"
            result = await sandbox.run(command, cwd=runtime, env=os.environ, timeout=30)
            return result.stdout + result.stderr
        finally:
            await sandbox.close()

    said = asyncio.run(run())

    if backend == "bubblewrap":
        assert "connected: refused the caller is in other namespaces" in said, said
    else:
        assert "unreachable:" in said and "connected" not in said, said
    assert resident.served() == 0


# ---- where the socket lives ----------------------------------------------------------------


def test_a_runtime_directory_others_may_write_or_another_user_owns_is_not_used(
    tmp_path: Path, runtime: Path
) -> None:
    """`XDG_RUNTIME_DIR` must be the user's alone (the XDG spec): one that another user owns
    (root under `su`, which keeps the caller's) or may write lets that user rename the
    `moot` directory away between the check and the use, and put their own socket there;
    `/tmp/moot-<uid>` is used instead."""
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    linked = tmp_path / "linked"
    own = runtime
    linked.symlink_to(own)
    unsafe = [open_to_all, linked]
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        unsafe.append(theirs)

    for directory in unsafe:
        chosen = place.directory({"XDG_RUNTIME_DIR": str(directory)})

        assert chosen is None or not chosen.startswith(str(tmp_path)), directory
    assert place.directory({"XDG_RUNTIME_DIR": str(own)}) == str(own / "moot")


def test_a_socket_path_at_the_longest_allowed_starts(resident: Resident, runtime: Path) -> None:
    """The resident process binds under another name first and renames: that name must fit
    in a socket's path whenever the socket's own does, or no resident process ever starts
    (and each `moot` starts one more in vain)."""
    name = "/moot/01234567-01234567.sock"
    longest = runtime / ("r" * (place.SOCKET_PATH_MAX - len(str(runtime)) - 1 - len(name)))
    longest.mkdir(mode=0o700)
    resident.env["XDG_RUNTIME_DIR"] = str(longest)

    resident.start()

    assert len(resident.socket) == place.SOCKET_PATH_MAX
    resident.stop()


def test_a_symlink_planted_as_the_environment_lists_temporary_is_not_followed(
    tmp_path: Path, runtime: Path
) -> None:
    """What writes the list of variables beside the socket never writes through a link a
    sandboxed command could have planted there (where it can write the directory)."""
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    base = runtime / "moot"
    base.mkdir(mode=0o700)
    os.symlink(victim, base / f"name.env.{os.getpid()}")

    place.note_read_at_import(str(base), "name", ["TERM_PROGRAM"])

    assert victim.read_text() == "keep me\n"
    assert place.read_at_import(str(base), "name") == ["TERM_PROGRAM"]


def test_a_fifo_planted_as_the_environment_list_is_not_waited_on(runtime: Path) -> None:
    """Every `moot` reads the list before it connects: a FIFO there would hang them all."""
    base = runtime / "moot"
    base.mkdir(mode=0o700)
    os.mkfifo(base / "name.env")

    done = subprocess.run(
        [sys.executable, "-c", f"from moot.cli.resident import place; "
         f"print(place.read_at_import({str(base)!r}, 'name'))"],
        capture_output=True, text=True, timeout=10,
    )  # fmt: skip

    assert done.stdout == "[]\n", done.stderr

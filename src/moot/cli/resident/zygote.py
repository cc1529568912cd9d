"""The resident process: `python -P -m moot.cli.resident.zygote KEY`.

It imports what moot's front ends import (`preload.PRELOAD`), noting each environment variable
those imports read, then listens on its socket (`place.socket_path`) with one thread and no event
loop, so that a fork is safe. Each request is checked (`peer.check`; then the same identity,
the same values of the variables its imports read, and no module changed on disk since), and
forked: the fork becomes the caller's `moot` (`child.become`) and returns from `serve` to run
it. The resident process stays in the caller's place for the child's signals and reports the
child's stops and end (the lines `client` reads).

It ends after `IDLE_S` with no request and no child, when a module it imported changed on disk
(answering `refused stale`, so that the caller starts a new one), when another resident process
took its socket's name, or when asked (`moot resident stop`). It never ends a running child.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass, field

from moot.cli.resident import peer, place
from moot.cli.resident.child import Request, become, name_process
from moot.cli.resident.client import FORWARDED
from moot.cli.resident.preload import changed, fingerprint, preload

IDLE_S = 30 * 60
"""How long the resident process waits for a request once its last child has ended."""
REQUEST_MAX = 16 << 20
REQUEST_TIMEOUT_S = 2.0
"""A caller sends its request at once; one that does not is dropped, not waited for."""
TERMINAL_SIGNALS = frozenset(
    {signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH, signal.SIGHUP}
)
"""What a terminal or a shell's job control sends to the whole foreground process group."""
CHECK_S = 60.0
"""How often an idle resident process checks that its socket is still its own."""


@dataclass
class _Running:
    """A child and the connection to the `moot` standing in for it (None once it hung up)."""

    conn: socket.socket | None
    buffer: bytes = b""


@dataclass
class Zygote:
    """The resident process's state: its socket, what it loaded and its running children."""

    path: str
    listener: socket.socket
    identity: dict[str, object]
    environ_read: dict[str, str | None]
    files: dict[str, tuple[int, int]]
    own: tuple[tuple[str, ...], tuple[int, ...]]
    wakeup: tuple[int, int]
    inode: int
    """The socket file's (a socket's own `fstat` is another inode, sockfs's)."""
    children: dict[int, _Running] = field(default_factory=dict)
    listening: bool = True
    served: int = 0
    idle_since: float = field(default_factory=time.monotonic)

    @classmethod
    def start(
        cls, path: str, identity: dict[str, object], environ_read: dict[str, str | None]
    ) -> Zygote:
        """Bind `path` (under a temporary name first, so that a caller never finds a socket
        nobody listens on yet); `identity` is `place.identity()` before the imports."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Shorter than `path` (`<pid>.new` against `<key>-<values>.sock`): a socket's path
        # has at most `place.SOCKET_PATH_MAX` bytes, and `path` may have them all.
        temporary = os.path.join(os.path.dirname(path), f"{os.getpid()}.new")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        listener.bind(temporary)
        listener.listen(16)
        listener.setblocking(False)
        os.rename(temporary, path)
        inode = os.stat(path).st_ino
        wakeup = os.pipe()
        for fd in wakeup:
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wakeup[1])
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, lambda signum, frame: None)  # ends the loop (below)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        return cls(
            path=path,
            listener=listener,
            identity=identity,
            environ_read=environ_read,
            files=fingerprint(),
            own=peer.confinement("self"),
            wakeup=wakeup,
            inode=inode,
        )

    def serve(self) -> Request | None:
        """Answer requests until this process should end (None), or, in a fork, the request
        that fork is to run."""
        while self.listening or self.children:
            poller = select.poll()
            poller.register(self.wakeup[0], select.POLLIN)
            if self.listening:
                poller.register(self.listener, select.POLLIN)
            for running in self.children.values():
                if running.conn is not None:
                    poller.register(running.conn, select.POLLIN)
            events = poller.poll(CHECK_S * 1000)
            for fd, _mask in events:
                if fd == self.wakeup[0]:
                    self._woken()
                elif fd == self.listener.fileno():
                    if (request := self._accept()) is not None:
                        return request
                else:
                    self._heard(fd)
            self._still_ours()
        return None

    def _woken(self) -> None:
        """Signals came: reap children, or stop listening on SIGTERM."""
        with contextlib.suppress(BlockingIOError):
            got = os.read(self.wakeup[0], 512)
            if signal.SIGTERM in got:
                self.stop_listening()
        self._reap()

    def _reap(self) -> None:
        flags = os.WNOHANG | os.WUNTRACED | os.WCONTINUED
        while self.children:
            try:
                pid, status = os.waitpid(-1, flags)
            except ChildProcessError:
                return
            if pid == 0:
                return
            running = self.children.get(pid)
            if running is None:
                continue
            if os.WIFSTOPPED(status):
                self._say(running, "stopped")
            elif os.WIFCONTINUED(status):
                self._say(running, "continued")
            else:
                if os.WIFSIGNALED(status):
                    self._say(running, f"killed {os.WTERMSIG(status)}")
                else:
                    self._say(running, f"exit {os.waitstatus_to_exitcode(status)}")
                if running.conn is not None:
                    running.conn.close()
                del self.children[pid]
                self.idle_since = time.monotonic()

    def _say(self, running: _Running, line: str) -> None:
        # Never waiting: a caller that does not read its lines (which it can make come, by
        # stopping and continuing its child) would otherwise hold this process once its socket
        # is full. A caller that reads loses nothing: a few lines never fill a socket.
        if running.conn is not None:
            with contextlib.suppress(OSError):
                running.conn.send(f"{line}\n".encode(), socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)

    def _heard(self, fd: int) -> None:
        """A line from a caller standing in for its child (a signal), or its hang-up."""
        pid = next(
            (pid for pid, r in self.children.items() if r.conn and r.conn.fileno() == fd), None
        )
        if pid is None:
            return
        running = self.children[pid]
        assert running.conn is not None
        try:
            chunk = running.conn.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            # The caller is gone (killed, its terminal closed): the child's terminal is no
            # longer anyone's, so it ends as on a hang-up.
            running.conn.close()
            running.conn = None
            for signum in (signal.SIGHUP, signal.SIGCONT):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signum)
            return
        running.buffer += chunk
        *lines, running.buffer = running.buffer.split(b"\n")
        running.buffer = running.buffer[-64:]
        for line in lines:
            word, _, value = line.decode("ascii", "replace").partition(" ")
            if word == "signal" and value.isdigit() and int(value) in FORWARDED:
                # What a terminal sends, it sends to a process group (so an editor moot runs
                # hears a resize too); what someone sends the process, to the child alone.
                send = os.killpg if int(value) in TERMINAL_SIGNALS else os.kill
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    send(pid, int(value))

    def _accept(self) -> Request | None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return None
        fds: list[int] = []
        try:
            conn.settimeout(REQUEST_TIMEOUT_S)
            peer.check(conn, self.own)
            data, fds = _received(conn)
            if data.get("stop") is True or data.get("status") is True:
                # What came with it is closed here too: a descriptor kept would stay open in
                # this process and be inherited by every child it forks.
                _close_all(fds)
                fds = []
                if data.get("stop") is True:
                    conn.sendall(b"stopping\n")
                    conn.close()
                    self.stop_listening()
                    return None
                conn.sendall(self._status().encode())
                conn.close()
                return None
            request = self._checked(data, fds)
        except (peer.Refused, ValueError) as exc:
            _close_all(fds)
            with contextlib.suppress(OSError):
                conn.sendall(f"refused {exc}\n".encode(), socket.MSG_NOSIGNAL)
            conn.close()
            return None
        except Exception as exc:  # one caller's request never ends the process for all
            if not isinstance(exc, OSError):
                print(f"moot resident: a request failed: {exc!r}", file=sys.stderr)
            _close_all(fds)
            conn.close()
            return None
        conn.settimeout(None)
        pid = os.fork()
        if pid == 0:
            self._leave(conn)
            return request
        with contextlib.suppress(OSError):  # as the child does: whichever runs first
            os.setpgid(pid, pid)
        _close_all(fds)
        self.served += 1
        self.children[pid] = _Running(conn)
        self._say(self.children[pid], f"started {pid}")
        return None

    def _checked(self, data: dict[str, object], fds: list[int]) -> Request:
        if data.get("identity") != self.identity:
            raise ValueError("another interpreter, import path, locale or moot")
        environ = data.get("environ")
        if not isinstance(environ, dict) or any(
            environ.get(name) != value for name, value in self.environ_read.items()
        ):
            raise ValueError("another environment than the one moot was loaded in")
        if (path := changed(self.files)) is not None:
            self.stop_listening()
            raise ValueError(f"stale: {path} changed")
        request = Request.parse(data, fds)
        _within_reach(request)
        return request

    def _status(self) -> str:
        return (
            f"pid {os.getpid()}\nserved {self.served}\n"
            f"children {' '.join(map(str, self.children)) or '-'}\nmodules {len(self.files)}\n"
            f"environment {','.join(self.environ_read) or '-'}\n"
        )

    def stop_listening(self) -> None:
        """Take no more requests (the running children are still reported)."""
        if not self.listening:
            return
        self.listening = False
        if self._ours():
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.listener.close()

    def _still_ours(self) -> None:
        """Stop when the socket's name is another resident process's now, or after `IDLE_S`
        with nothing to do."""
        if not self.listening:
            return
        if not self._ours():
            self.listening = False
            self.listener.close()
        elif not self.children and time.monotonic() - self.idle_since > IDLE_S:
            self.stop_listening()

    def _ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _leave(self, conn: socket.socket) -> None:
        """In a fork: close what is the resident process's (its socket, its connections, its
        signal pipe), each through what owns it, so nothing closes a number reused since."""
        conn.close()
        if self.listening:
            self.listener.close()
        for running in self.children.values():
            if running.conn is not None:
                running.conn.close()
        self.children.clear()
        signal.set_wakeup_fd(-1)
        for fd in self.wakeup:
            os.close(fd)


def _within_reach(request: Request) -> None:
    """ValueError unless a child can take the caller's resource limits and niceness: none may
    raise a hard limit or (unless root) its priority, and a caller given more room than this
    process has would get less than in its own process."""
    import resource

    for which, _soft, hard in request.limits:
        try:
            ours = resource.getrlimit(which)
        except (ValueError, OSError):
            raise ValueError("not a request") from None
        if _ceiling(hard) > _ceiling(ours[1]):  # no process may raise its own hard limit
            raise ValueError("the caller's resource limits are above this process's")
    if request.nice < os.getpriority(os.PRIO_PROCESS, 0) and os.geteuid() != 0:
        raise ValueError("the caller runs at a higher priority than this process")


def _ceiling(hard: int) -> float:
    import resource

    return float("inf") if hard == resource.RLIM_INFINITY else hard


def _received(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """The request on `conn` and the descriptors sent with it."""
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    # Close-on-exec until a child makes them its 0, 1 and 2: none other is ever run with them.
    header, fds, _flags, _addr = socket.recv_fds(conn, 8, 4, socket.MSG_CMSG_CLOEXEC)
    try:
        if len(header) != 8:
            raise ValueError("not a request")
        size = int.from_bytes(header, "big")
        if size > REQUEST_MAX:
            raise ValueError("a request too large")
        payload = bytearray()
        while len(payload) < size:
            # The whole request within the time, not each piece of it: a byte now and then
            # would otherwise hold this process, and every `moot` waiting on it, for as long.
            conn.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = conn.recv(min(1 << 20, size - len(payload)))
            if not chunk:
                raise ValueError("a request cut short")
            payload += chunk
        try:
            data = marshal.loads(bytes(payload))
        except (EOFError, TypeError, ValueError):
            # What marshal cannot read (cut short, a list as a key) is refused like any other
            # bad request: an exception out of here would end this process, and every `moot`
            # standing in for a child would then hang it up.
            raise ValueError("not a request") from None
        if not isinstance(data, dict):
            raise ValueError("not a request")
    except BaseException:
        _close_all(fds)
        raise
    return data, fds


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def main(argv: list[str]) -> int:
    """Load, listen and serve; in a fork, run the caller's `moot`."""
    expected = argv[0] if argv else ""
    ident = place.identity()  # before the imports, which may add to the import path
    if place.key(ident) != expected:
        print(f"moot resident: this process is not the one asked for ({expected})", file=sys.stderr)
        return 1
    environ_read = preload()
    base = place.directory()
    if base is None:
        print("moot resident: no private directory for the socket", file=sys.stderr)
        return 1
    if "*" in environ_read:
        # An import that looked at all of the environment: no caller could be checked to
        # share what it saw, so there is no resident process.
        print("moot resident: an import read the whole environment", file=sys.stderr)
        return 1
    place.note_read_at_import(base, expected, list(environ_read))
    path = place.socket_path(ident)
    if path is None:
        print("moot resident: the socket's path is too long", file=sys.stderr)
        return 1
    os.chdir("/")  # it holds no directory of anyone's
    name_process("moot-resident")
    gc.collect()
    gc.freeze()  # every fork shares the loaded heap; no collection touches it again
    zygote = Zygote.start(path, ident, environ_read)
    request = zygote.serve()
    if request is None:
        return 0
    try:
        become(request)
    except OSError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    from moot.cli import main as moot

    return moot(attach=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

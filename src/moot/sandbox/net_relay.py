"""The relay inside a sandbox: its own loopback's port, handed to the session's proxy.

A sandbox without a network of its own (bubblewrap's `--unshare-net`, Docker's `none`) has a
loopback nobody else shares, so the proxy on the host's loopback is out of its reach. A Unix
socket crosses that line: the proxy listens on one (`net_proxy.ProxyAddress.socket`), the
backend binds it into the sandbox at `SOCKET_INSIDE`, and `RELAY` (a few lines of Python,
started inside) listens on `127.0.0.1:PORT_INSIDE` there and copies each connection to that
socket. `socat` would do, but is not installed everywhere; a Python is wherever moot runs.

Run with a command after its arguments, the relay listens first, then becomes the command
(`exec`): the command keeps its process, its exit status and its signals, and the relay (a
forked child with no output of its own) dies with the sandbox's PID namespace.
"""

from __future__ import annotations

import os
import shutil
import sys

PORT_INSIDE = 3128
"""The proxy's port on the sandbox's loopback (each sandbox has its own loopback)."""
SOCKET_INSIDE = "/run/moot-proxy.sock"
"""Where the proxy's Unix socket is bound inside the sandbox (`/run` is the sandbox's own)."""
NO_PROXY = "localhost,127.0.0.1,::1"

RELAY = r"""
import os, socket, sys, threading
path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(128)
if not argv:
    print("ready", flush=True)
elif os.fork():
    server.close()
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        sys.stderr.write(f"{argv[0]}: {error}\n")
        os._exit(127)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
def copy(a, b):
    try:
        while data := a.recv(262144):
            b.sendall(data)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(inside):
    try:
        outside = socket.socket(socket.AF_UNIX)
        outside.connect(path)
    except OSError:
        inside.close()
        return
    threading.Thread(target=copy, args=(outside, inside), daemon=True).start()
    copy(inside, outside)
while True:
    inside, _ = server.accept()
    threading.Thread(target=serve, args=(inside,), daemon=True).start()
"""


def relay_python() -> str:
    """A Python a sandbox that shows the host's files can run: the system's, else moot's own."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("python3") or os.path.realpath(sys.executable)


def relay_argv(python: str, argv: list[str], *, socket_path: str = SOCKET_INSIDE) -> list[str]:
    """`argv` run behind the relay (see the module docstring); isolated (`-I -S`): no site
    packages and nothing of the workspace on its path."""
    return [python, "-I", "-S", "-c", RELAY, socket_path, str(PORT_INSIDE), *argv]


def proxy_env(port: int = PORT_INSIDE, host: str = "127.0.0.1") -> dict[str, str]:
    """The variables that send a command's connections through the proxy, in both cases (curl
    reads `http_proxy` only in lower case, many tools the upper). `ALL_PROXY` is SOCKS5 with
    names resolved by the proxy (`socks5h`), so a name never needs the sandbox's own DNS."""
    http = f"http://{host}:{port}"
    values = {
        "HTTP_PROXY": http,
        "HTTPS_PROXY": http,
        "ALL_PROXY": f"socks5h://{host}:{port}",
        "NO_PROXY": NO_PROXY,
    }
    return {**values, **{name.lower(): value for name, value in values.items()}}

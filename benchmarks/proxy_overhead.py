"""What the network allowlist costs: `pip download` of a package from a local index, in the
bubblewrap sandbox, through the session's proxy against straight to the index.

A local HTTP server on 127.0.0.5 serves a PEP 503 simple index with one wheel (`WHEEL_MB` of
incompressible data, so the bytes count as well as the requests). Each round runs the same
`pip download --no-deps --no-cache-dir` twice, in turn: once in a sandbox with the host's
network (`SandboxPolicy(network=True)`: the index by its address, nothing between), once in a
sandbox behind the proxy (`SandboxPolicy(proxy=...)`: the index by a name only the proxy
resolves, `index.test`, which the allowlist allows; the relay inside, the Unix socket, the
proxy's decision and copy). The row is the ratio of the medians (target <= 1.10, judged:
FAIL past it); for reference, the same download on the host through the proxy's TCP port
against straight to the index. Needs bubblewrap; without it the rows say why.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import io
import os
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.bwrap_probe import bwrap_unavailable
from moot.sandbox.net_proxy import NetworkProxy
from moot.sandbox.net_rules import NetworkRules
from report import Row, ms
from timing import median

NAME = "proxy"
TARGET = "proxied pip download <= 1.10x direct"
ADDRESS = "127.0.0.5"
HOST = "index.test"
WHEEL_MB = 8
PACKAGE = "moot-bench-pkg"
WHEEL = "moot_bench_pkg-1.0-py3-none-any.whl"


def _wheel() -> bytes:
    """A valid wheel holding `WHEEL_MB` MiB of random bytes."""
    files = {
        "moot_bench_pkg/__init__.py": b"",
        "moot_bench_pkg/blob.bin": os.urandom(WHEEL_MB << 20),
        "moot_bench_pkg-1.0.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: moot-bench-pkg\nVersion: 1.0\n"
        ),
        "moot_bench_pkg-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: moot\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "moot_bench_pkg-1.0.dist-info/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("moot_bench_pkg-1.0.dist-info/RECORD", record)
    return buffer.getvalue()


@contextmanager
def _index() -> Iterator[int]:
    """The simple index on `ADDRESS` while the block runs; yields its port."""
    wheel = _wheel()
    sha = hashlib.sha256(wheel).hexdigest()
    pages = {
        "/simple/": f'<a href="/simple/{PACKAGE}/">{PACKAGE}</a>'.encode(),
        f"/simple/{PACKAGE}/": f'<a href="/files/{WHEEL}#sha256={sha}">{WHEEL}</a>'.encode(),
        f"/files/{WHEEL}": wheel,
    }

    class Index(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = pages.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            kind = "application/octet-stream" if self.path.endswith(".whl") else "text/html"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((ADDRESS, 0), Index)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _pip(index: str, dest: Path) -> str:
    host = index.removeprefix("http://").partition(":")[0]  # plain HTTP: pip must be told
    return (
        f"{sys.executable} -m pip download --no-deps --no-cache-dir --disable-pip-version-check"
        f" -q --index-url {index}/simple/ --trusted-host {host} --dest {dest} {PACKAGE}"
        f" && rm -f {dest}/{WHEEL}"
    )


async def _rounds(workspace: Path, port: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per download in each way, the ways taken in turn within each round."""
    from moot.sandbox.bubblewrap import BubblewrapSandbox

    proxy = NetworkProxy(NetworkRules(allowed=(HOST,)), hosts={HOST: ADDRESS})
    address = await proxy.start(tcp=True)
    direct = BubblewrapSandbox(SandboxPolicy(workspace, network=True))
    proxied = BubblewrapSandbox(SandboxPolicy(workspace, proxy=proxy))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(Path.home())}
    via = f"http://127.0.0.1:{address.port}"
    host_env = {**os.environ, "http_proxy": via, "HTTP_PROXY": via, "no_proxy": ""}
    ways = {
        "sandbox, direct": (direct, f"http://{ADDRESS}:{port}", env),
        "sandbox, proxied": (proxied, f"http://{HOST}:{port}", env),
        "host, direct": (None, f"http://{ADDRESS}:{port}", dict(os.environ)),
        "host, proxied": (None, f"http://{HOST}:{port}", host_env),
    }
    times: dict[str, list[float]] = {way: [] for way in ways}
    try:
        for round_ in range(rounds + 1):  # the first round warms the caches, untimed
            for way, (sandbox, index, environ) in ways.items():
                command = _pip(index, workspace)
                started = time.perf_counter()
                if sandbox is not None:
                    result = await sandbox.run(command, cwd=workspace, env=environ, timeout=120)
                    code, said = result.exit_code, result.stderr
                else:
                    process = await asyncio.create_subprocess_shell(
                        command, env=environ, stderr=asyncio.subprocess.PIPE
                    )
                    code, said = await process.wait(), (await process.stderr.read()).decode()  # type: ignore[union-attr]
                elapsed = time.perf_counter() - started
                assert code == 0, f"{way}: {said[-500:]}"
                if round_:
                    times[way].append(elapsed)
    finally:
        await direct.close()
        await proxied.close()
        await proxy.close()
    return times


def run(*, quick: bool) -> list[Row]:
    """Time `pip download` in the sandbox, direct and through the proxy."""
    reason = bwrap_unavailable()
    if reason is not None:
        return [Row("proxied pip download / direct", f"not measured (bubblewrap: {reason})")]
    rounds = 3 if quick else 9
    scratch = tempfile.TemporaryDirectory(prefix="moot-bench-proxy-", dir="/var/tmp")
    with scratch, _index() as port:
        times = asyncio.run(_rounds(Path(scratch.name), port, rounds))
    medians = {way: median(found) for way, found in times.items()}
    ratio = medians["sandbox, proxied"] / medians["sandbox, direct"]
    host_ratio = medians["host, proxied"] / medians["host, direct"]
    return [
        Row(
            f"proxied pip download of a {WHEEL_MB} MiB wheel from a local index / direct, "
            f"in bubblewrap (median of {rounds})",
            f"{ratio:.3f}x ({ms(medians['sandbox, proxied'])} vs {ms(medians['sandbox, direct'])})",
            "<= 1.10x",
            missed=ratio > 1.10,
        ),
        Row(
            "  reference: the same on the host, through the proxy's TCP port / direct",
            f"{host_ratio:.3f}x ({ms(medians['host, proxied'])} vs {ms(medians['host, direct'])})",
        ),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    from report import table

    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

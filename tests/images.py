"""Image and PDF bytes for the attachment tests, and a real X server whose clipboard holds
one (Xvfb and xclip: the tests fail, not skip, under CI=true when they are absent).

`png` is a whole image; `jpeg`, `gif` and `pdf` are only what a header reader sees (the
runtime's check refuses them: a file to attach comes from `pdf_files`)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def png(width: int = 3, height: int = 2) -> bytes:
    """A valid RGB PNG of `width` x `height` (grey)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def jpeg(width: int = 640, height: int = 480) -> bytes:
    """A JPEG's header up to its frame (what the size is read from), then an end marker."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def gif(width: int = 5, height: int = 7) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b";"


def pdf(pages: int = 2) -> bytes:
    """A PDF's objects for `pages` empty pages, without the xref a reader needs (placeholders
    count its pages; attaching one is refused: use `pdf_files.pdf`)."""
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects = [
        b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
        f"2 0 obj << /Type /Pages /Kids [{kids}] /Count {pages} >> endobj".encode(),
        *(
            f"{3 + i} 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj".encode()
            for i in range(pages)
        ),
    ]
    return b"%PDF-1.4\n" + b"\n".join(objects) + b"\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not installed (.ci/run installs it)")
    pytest.skip(f"{what} is not installed")


@contextmanager
def x_clipboard(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh Xvfb display; yields the environment that points at it (`DISPLAY`)."""
    xvfb, xclip = shutil.which("Xvfb"), shutil.which("xclip")
    if xvfb is None:
        _missing("Xvfb (apt: xvfb)")
    if xclip is None:
        _missing("xclip (apt: xclip)")
    assert xvfb is not None
    server, number = _xvfb(xvfb)
    try:
        env = {**os.environ, "DISPLAY": f":{number}"}
        env.pop("WAYLAND_DISPLAY", None)
        yield env
    finally:
        server.terminate()
        server.wait(timeout=10)


_XVFB_ARGS = ("-nolisten", "tcp", "-screen", "0", "320x240x24")


def _xvfb(xvfb: str) -> tuple[subprocess.Popen[bytes], int]:
    """An Xvfb server on a display of this process's own: left to pick the first free number,
    two test workers' servers raced for display 0, and one's shutdown removed the other's
    socket ("Can't open display :0"). It writes the number to `-displayfd` once it takes
    connections; a number another server holds makes it exit, and the next is tried."""
    first = 100 + os.getpid() % 20_000
    for number in range(first, first + 20):
        read, write = os.pipe()
        server = subprocess.Popen(
            [xvfb, f":{number}", "-displayfd", str(write), *_XVFB_ARGS],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as numbers:
            ready = numbers.readline().strip()
        socket = Path(f"/tmp/.X11-unix/X{number}")
        for _ in range(1000):  # bounded: with a number given, it may say so before it listens
            if ready != str(number) or socket.exists() or server.poll() is not None:
                break
            time.sleep(0.01)
        if ready == str(number) and socket.exists() and server.poll() is None:
            return server, number
        server.kill()
        server.wait(timeout=10)
    raise AssertionError(f"Xvfb did not start on any display from :{first}")


@contextmanager
def on_clipboard(env: dict[str, str], data: bytes, target: str) -> Iterator[None]:
    """The display's clipboard holds `data` as `target` while this lasts (xclip stays to serve
    it; waits, polling, until the clipboard offers it)."""
    owner = _own_clipboard(env, data, target)
    try:
        yield
    finally:
        owner.terminate()
        owner.wait(timeout=10)


def _own_clipboard(env: dict[str, str], data: bytes, target: str) -> subprocess.Popen[bytes]:
    owner = _xclip_in(env, data, target)
    deadline = time.monotonic() + 20
    offered = b""
    while time.monotonic() < deadline:
        if owner.poll() is not None:  # it lost the selection or could not take it
            assert owner.stderr is not None
            said = owner.stderr.read()
            if b"Can't open display" in said:
                # Seen twice in CI with two workers, the server up and its socket there: the
                # display is tried again (bounded by the deadline) rather than the test failed.
                time.sleep(0.1)
                owner = _xclip_in(env, data, target)
                continue
            raise AssertionError(f"xclip ended ({owner.returncode}): {said!r}")
        offered = subprocess.run(
            ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
            capture_output=True,
            env=env,
            timeout=10,
        ).stdout
        if target.encode() in offered.split():
            return owner
    owner.terminate()
    raise AssertionError(f"the clipboard never offered {target}; it offered {offered!r}")


def _xclip_in(env: dict[str, str], data: bytes, target: str) -> subprocess.Popen[bytes]:
    """xclip holding `data` as the clipboard's `target` (it stays to serve it)."""
    owner = subprocess.Popen(
        ["xclip", "-quiet", "-selection", "clipboard", "-t", target, "-i"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert owner.stdin is not None
    owner.stdin.write(data)
    owner.stdin.close()
    return owner

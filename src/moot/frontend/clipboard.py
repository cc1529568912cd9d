"""The system clipboard's image, for `ctrl+v` in the app and the REPL.

A terminal pastes text itself (bracketed paste) but never an image: moot asks the clipboard
tools of the desktop it runs on. Wayland: `wl-paste`; X11: `xclip`, else `xsel`; macOS:
`pngpaste`, else `osascript`. `read_image` returns the image's bytes, None when the clipboard
holds no image (the key then pastes the clipboard's text, `read_text`), and raises
`NoClipboardTool` naming what to install when no tool is there; `paste` is the key's whole
reading, the same in both front ends.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping

from moot.paths import host_program

TIMEOUT_S = 5.0
"""A clipboard tool that takes longer (an X server gone away) is given up on."""
_IMAGE_TARGETS = ("image/png", "image/jpeg", "image/gif", "image/webp")


class NoClipboardTool(RuntimeError):
    """No clipboard tool for this desktop is installed; the message names what to install."""


def _run(argv: list[str], env: Mapping[str, str] | None) -> bytes | None:
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=TIMEOUT_S, env=dict(env) if env else None
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _which(name: str, env: Mapping[str, str]) -> str | None:
    # Never a program the workspace (the current directory) puts on PATH: it would run on the host.
    return host_program(name, (os.getcwd(),), env.get("PATH", os.defpath))


def read_image(env: Mapping[str, str] | None = None) -> bytes | None:
    """The clipboard's image (PNG where the clipboard offers one), None when it holds none.

    Raises:
        NoClipboardTool: no tool to read this desktop's clipboard is installed.
    """
    env = os.environ if env is None else env
    if sys.platform == "darwin":
        return _mac_image(env)
    tried: list[str] = []
    if env.get("WAYLAND_DISPLAY"):
        tried.append("wl-clipboard (wl-paste)")
        if tool := _which("wl-paste", env):
            offered = (_run([tool, "--list-types"], env) or b"").decode(errors="replace")
            target = _first_image(offered.split())
            return _run([tool, "--no-newline", "--type", target], env) if target else None
    if env.get("DISPLAY"):
        tried.append("xclip")
        if tool := _which("xclip", env):
            got = _run([tool, "-selection", "clipboard", "-t", "TARGETS", "-o"], env)
            target = _first_image((got or b"").decode(errors="replace").split())
            if target is None:
                return None
            return _run([tool, "-selection", "clipboard", "-t", target, "-o"], env)
        if _which("xsel", env):
            # xsel reads text only: it cannot ask for an image's type, so it says none is there.
            return None
    if not tried:
        raise NoClipboardTool(
            "no display to read a clipboard from (neither WAYLAND_DISPLAY nor DISPLAY is set)"
        )
    raise NoClipboardTool(f"pasting an image needs {' or '.join(tried)}: install it")


def _first_image(targets: list[str]) -> str | None:
    for wanted in _IMAGE_TARGETS:
        if wanted in targets:
            return wanted
    return None


def _mac_image(env: Mapping[str, str]) -> bytes | None:
    if tool := _which("pngpaste", env):
        return _run([tool, "-"], env) or None
    if tool := _which("osascript", env):
        got = _run([tool, "-e", "the clipboard as «class PNGf»"], env)
        hexdigits = re.search(r"«data PNGf([0-9A-Fa-f]+)»", (got or b"").decode(errors="replace"))
        return bytes.fromhex(hexdigits.group(1)) if hexdigits else None
    raise NoClipboardTool("pasting an image needs pngpaste (brew install pngpaste)")


def read_text(env: Mapping[str, str] | None = None) -> str | None:
    """The clipboard's text, None when no tool could read it."""
    env = os.environ if env is None else env
    candidates: list[list[str]] = []
    if sys.platform == "darwin":
        candidates.append(["pbpaste"])
    if env.get("WAYLAND_DISPLAY"):
        candidates.append(["wl-paste", "--no-newline"])
    if env.get("DISPLAY"):
        candidates += [["xclip", "-selection", "clipboard", "-o"], ["xsel", "-b", "-o"]]
    for argv in candidates:
        if (tool := _which(argv[0], env)) and (got := _run([tool, *argv[1:]], env)) is not None:
            return got.decode(errors="replace")
    return None


async def paste(say: Callable[[str], None]) -> bytes | str | None:
    """What `ctrl+v` pastes: the clipboard's image (its bytes), else its text (line ends as
    `\\n`); None, and why `say`s so, when it holds neither or no tool can read it. The tools
    run in a thread: a clipboard that answers slowly holds no key."""
    try:
        image = await asyncio.to_thread(read_image)
    except NoClipboardTool as exc:
        say(str(exc))
        return None
    if image is not None:
        return image
    text = await asyncio.to_thread(read_text)
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        say("the clipboard holds no image and no text")
        return None
    return text

"""The system clipboard through a command, for when the terminal's own (OSC 52) is not enough.

Terminals that honour OSC 52 put text on the clipboard even over SSH, but many ignore it
silently; a clipboard command on this machine (`wl-copy` under Wayland, `xclip` or `xsel`
under X, `pbcopy` on macOS) is tried as well, when one is there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping

from moot.paths import host_search_path

TIMEOUT_S = 5.0


def clipboard_commands(environ: Mapping[str, str] | None = None) -> list[list[str]]:
    """The clipboard commands to try here, best first; only those on `PATH`."""
    env = os.environ if environ is None else environ
    # Never a program the workspace (the current directory) puts on PATH: it would run on the host.
    path = host_search_path((os.getcwd(),), env.get("PATH", os.defpath))
    wanted: list[list[str]] = []
    if env.get("WAYLAND_DISPLAY"):
        wanted.append(["wl-copy"])
    if env.get("DISPLAY"):
        wanted += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    if sys.platform == "darwin":
        wanted.append(["pbcopy"])
    found = [(shutil.which(argv[0], path=path), argv[1:]) for argv in wanted]
    return [[program, *args] for program, args in found if program]


def copy_with_command(text: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Put `text` on the clipboard with the first command that works; its name, or None when
    none is here or none worked. Blocking: call it off the UI thread."""
    for argv in clipboard_commands(environ):
        try:
            done = subprocess.run(
                argv,
                input=text.encode(),
                # Not captured: xclip and wl-copy stay behind to serve the selection, holding
                # any pipe they were given open, and the call would wait for them.
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=TIMEOUT_S,
                env=None if environ is None else dict(environ),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return os.path.basename(argv[0])
    return None

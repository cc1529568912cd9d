"""Run a program and end it (exit status 0) the first time a given function returns: how
`start_instructions` counts what a start-up costs up to a point a person sees.

    python stop_at.py MODULE:QUALNAME moot ARGS...   moot's own command line
    python stop_at.py MODULE:QUALNAME SCRIPT ARGS... a Python script

The function is replaced before the program starts; its module is imported for that, which
only moves that import earlier (every point named is on the program's path anyway).
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
from typing import Any


def stop_after(target: str) -> None:
    """End the process once `target` (`module:Class.method` or `module:function`) returns."""
    module_name, _, qualname = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)

    def stopping(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        os._exit(0)  # at once: no atexit, no flush beyond what the function did itself

    setattr(owner, name, stopping)


def main() -> None:
    target, program, *args = sys.argv[1:]
    stop_after(target)
    if program == "moot":
        from moot.cli import main as moot

        sys.argv = ["moot", *args]
        sys.exit(moot())  # `argv` None: moot as the program, its heap tuned as its own
    sys.argv = [program, *args]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()

"""What keeps the workspace off a hook's Python import path.

Hooks run on the host in the workspace directory, and the model can write workspace files
(sandboxed commands may). Python puts the working directory first on `sys.path` for
`python -m MODULE` and `python -c CODE`, so with a `json.py` the model wrote there a hook
`python3 -m json.tool` (or `python -m black`, which imports `click`, ...) would run it on the
host. Two changes to a hook's environment close that:

- `PYTHONSAFEPATH=1` (Python 3.11+: nothing prepended to `sys.path`) for a command that runs
  Python with `-m` or `-c`. Not for one that names a script (`python3 ~/hooks/fmt.py`): Python
  puts the script's own directory first, where its helper modules are; a script in the
  workspace is fingerprinted (`scripts.fingerprint`), its neighbours are not, hence
  `.moot/hooks/`, which no model writes.
- `PYTHONPATH` entries that lie in the workspace (a relative one does: the hook starts there)
  are dropped for every hook.

An interpreter older than 3.11 ignores `PYTHONSAFEPATH`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from moot.hooks.scripts import command_words

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?|pypy3?|py")
"""A word naming a Python interpreter, by its base name."""


def hook_environment(base: Mapping[str, str], workspace: str, command: str) -> dict[str, str]:
    """`base` for `command`, run in `workspace` (a real path): see the module docstring."""
    env = dict(base)
    if "PYTHONPATH" in env:
        kept = [e for e in env["PYTHONPATH"].split(os.pathsep) if e and not _inside(e, workspace)]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    if _runs_python_from_the_working_directory(command):
        env["PYTHONSAFEPATH"] = "1"
    return env


def _inside(entry: str, workspace: str) -> bool:
    """Whether a `PYTHONPATH` entry, read from `workspace`, is it or lies in it."""
    real = os.path.realpath(os.path.join(workspace, entry))
    return real == workspace or real.startswith(workspace + os.sep)


def _runs_python_from_the_working_directory(command: str) -> bool:
    """Whether a Python the command starts takes `-m` or `-c` among its own options (`-m x`,
    `-mjson.tool`, `-Bc`, `-X dev -m x`), before a script's name ends them."""
    words = iter(command_words(command))
    for word in words:
        if not _PYTHON.fullmatch(os.path.basename(word)):
            continue
        for option in words:
            if not option.startswith("-") or option.startswith("--") or option == "-":
                break  # a script (its arguments are its own), a separator, or stdin
            for index, letter in enumerate(option[1:], 1):
                if letter in "mc":
                    return True
                if letter in "XW":  # takes a value: the rest of the word, or the next one
                    if index == len(option) - 1:
                        next(words, None)
                    break
    return False

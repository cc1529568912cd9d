"""`--add-dir`: directories besides the workspace that the file tools read and write and the
sandbox binds writable, each held to the workspace's containment (`Workspace.added_roots`).

None may hold moot's own directories (the session store, settings with their hooks, saved
keys) or the home directory, or lie inside moot's: a command could then write what moot runs
on the host. The home's credentials stay out of sight as long as the home is not added.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from moot.client.errors import SetupError


def added_dirs(given: Sequence[str], cwd: Path) -> tuple[Path, ...]:
    """The real paths of `--add-dir`'s directories (relative ones from `cwd`).

    Raises:
        SetupError: One is no directory, or holds (or lies in) the home directory's whole or
            moot's own directories; the message names it.
    """
    from moot.paths import config_dir, data_dir

    own = [Path(os.path.realpath(p)) for p in (config_dir(), data_dir())]
    home = Path(os.path.realpath(Path.home()))
    found: list[Path] = []
    for name in given:
        real = Path(os.path.realpath(cwd / os.path.expanduser(name)))
        if not real.is_dir():
            raise SetupError(f"--add-dir {name}: not a directory")
        if home.is_relative_to(real):
            raise SetupError(f"--add-dir {name}: it holds the home directory ({home})")
        for place in own:
            if place.is_relative_to(real) or real.is_relative_to(place):
                raise SetupError(f"--add-dir {name}: it holds or lies in moot's own {place}")
        if real not in found:
            found.append(real)
    return tuple(found)

"""Approve a project's settings files as the person would (`moot trust --yes`), for tests whose
project settings are the person's own: a repository's grants are held until then."""

from __future__ import annotations

import os
from pathlib import Path


def trust_settings(project: Path, home: Path | None = None) -> None:
    """Approve what `project`'s `.moot/settings*.json` hold now, in `home`'s data directory
    (`MOOT_HOME`; the one the process has when None)."""
    from moot.settings import approve_held

    environ = dict(os.environ) if home is None else {**os.environ, "MOOT_HOME": str(home)}
    approve_held(project, environ)

"""Where the data shipped with moot lives: the top-level `themes/`, `skills/` and `agents/`
folders of the repository.

An installed wheel carries them inside the package (`moot/_shipped/<name>`, see
`[tool.hatch.build.targets.wheel.force-include]` in pyproject.toml); an editable install or a
checkout reads them from the repository's top level.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path | None:
    """The folder of shipped `name` data (`themes`, `skills`, `agents`), or None when there is
    none."""
    for candidate in (_PACKAGE / "_shipped" / name, _PACKAGE.parent.parent / name):
        if candidate.is_dir():
            return candidate
    return None

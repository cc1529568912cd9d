"""What a focus (paths or names from the conversation) names among the mapped files."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from moot.repomap.languages import language_for

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def resolve_focus(
    root: Path, paths: Collection[str], focus: Sequence[str]
) -> tuple[set[str], set[str]]:
    """The mapped files and the identifiers that the focus strings name.

    A string names a file when it is the file's path (relative, `./`-prefixed or absolute),
    the end of its path (`app/cli.py`), its file name or its stem (`cli`). Unless it is a
    path or a source file's name, it also names identifiers: itself, or the parts of a dotted
    (`Config.load`) or `::` path.

    Returns:
        The focused paths, and the focused identifiers.
    """
    files: set[str] = set()
    names: set[str] = set()
    for item in focus:
        text = item.strip().replace(os.sep, "/")
        if os.path.isabs(text):
            text = os.path.relpath(text, root).replace(os.sep, "/")
        text = text.removeprefix("./")
        if not text:
            continue
        if text in paths:
            files.add(text)
        elif "/" in text:
            files.update(path for path in paths if path.endswith("/" + text))
        else:
            for path in paths:
                name = path.rpartition("/")[2]
                if name == text or name.partition(".")[0] == text:
                    files.add(path)
        if "/" not in text and language_for(text) is None:  # `core.py` names no identifier `py`
            names.update(part for part in re.split(r"\.|::", text) if _IDENTIFIER.fullmatch(part))
    return files, names

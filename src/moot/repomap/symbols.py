"""Where a name is defined: a lookup over the same index the repository map is built from."""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from moot.repomap.tags import FileTags


class Symbol(msgspec.Struct, frozen=True):
    """One definition of a name."""

    path: str
    line: int
    kind: str
    """class, function, method, ... as the language's tags query calls it."""
    signature: str
    """The declaration on one line, without its indentation."""


def find_symbols(files: Mapping[str, FileTags], name: str) -> list[Symbol]:
    """The definitions of `name`, by path and line.

    Args:
        files: The index's tags by path.
        name: An identifier, or a qualified one (`Config.load`, `config::load`): then only
            definitions of the last part that sit in a definition of the part before it.
    """
    parts = [part for part in re.split(r"\.|::", name.strip()) if part]
    if not parts:
        return []
    *outer, wanted = parts
    found: list[Symbol] = []
    for path, tags in files.items():
        definitions = tags.definitions
        for definition in definitions:
            if definition.name != wanted:
                continue
            if outer and (
                definition.parent < 0 or definitions[definition.parent].name != outer[-1]
            ):
                continue
            signature = definition.signature.lstrip(" \t")
            found.append(Symbol(path, definition.line, definition.kind, signature))
    found.sort(key=lambda symbol: (symbol.path.split("/"), symbol.line))
    return found


def similar_names(files: Mapping[str, FileTags], name: str, limit: int = 10) -> list[str]:
    """Defined names that equal `name` but for case, or contain it; shortest first."""
    wanted = re.split(r"\.|::", name.strip())[-1].casefold()
    if not wanted:
        return []
    matches = {
        definition.name
        for tags in files.values()
        for definition in tags.definitions
        if wanted in definition.name.casefold()
    }
    return sorted(matches, key=lambda found: (len(found), found))[:limit]

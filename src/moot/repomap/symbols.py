"""Where a name is defined: a lookup over the same index the repository map is built from."""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from moot.repomap.rank import RankFacts
from moot.repomap.tags import FileTags


class Symbol(msgspec.Struct, frozen=True):
    """One definition of a name."""

    path: str
    line: int
    kind: str
    """class, function, method, ... as the language's tags query calls it."""
    signature: str
    """The declaration on one line, without its indentation."""


def find_symbols(
    files: Mapping[str, FileTags], name: str, facts: Mapping[str, RankFacts] | None = None
) -> list[Symbol]:
    """The definitions of `name`, by path and line.

    Args:
        files: The index's tags by path.
        name: An identifier, or a qualified one (`Config.load`, `config::load`): then only
            definitions of the last part that sit in a definition of the part before it.
        facts: The same files' names (`SourceIndex.facts`): only files that define the name
            are read from `files`.
    """
    parts = [part for part in re.split(r"\.|::", name.strip()) if part]
    if not parts:
        return []
    *outer, wanted = parts
    found: list[Symbol] = []
    paths = (
        files if facts is None else [path for path, fact in facts.items() if wanted in fact.defined]
    )
    for path in paths:
        definitions = files[path].definitions
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


def similar_names(
    files: Mapping[str, FileTags | RankFacts], name: str, limit: int = 10
) -> list[str]:
    """Defined names that equal `name` but for case, or contain it; shortest first."""
    wanted = re.split(r"\.|::", name.strip())[-1].casefold()
    if not wanted:
        return []
    matches = {
        defined
        for tags in files.values()
        for defined in (
            tags.defined if isinstance(tags, RankFacts) else (d.name for d in tags.definitions)
        )
        if wanted in defined.casefold()
    }
    return sorted(matches, key=lambda found: (len(found), found))[:limit]

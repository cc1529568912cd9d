"""What one source file defines and references, found with its language's tags query.

A tags query (tree-sitter's code-navigation format) captures each definition's node as
`@definition.<kind>` and each reference as `@reference.<kind>`, with the identifier itself as
`@name` in the same match. Definitions keep the line that declares them (the map shows it) and
the definition they sit in; references are only counted by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

import msgspec

if TYPE_CHECKING:
    from tree_sitter import Node

    from moot.repomap.languages import Grammar

MAX_SIGNATURE = 160
"""Characters of a declaration the map shows; longer ones are cut with `…`."""
_WEAK_KINDS = frozenset({"constant", "variable"})
"""Kinds a more specific match of the same name replaces (`const f = () => ...` is a function)."""
_OPENING_SPACE = re.compile(r"([(\[])\s+")
_CLOSING_SPACE = re.compile(r",?\s+([)\]])")


class Definition(NamedTuple):
    """A name a file defines. (A named tuple: a warm map rebuilds tens of thousands.)"""

    name: str
    kind: str
    """From the query's capture: class, function, method, interface, type, constant, ..."""
    line: int
    """1-based line of the declaration."""
    signature: str
    """The declaration up to its body, on one line, indented as in the file."""
    parent: int
    """Index of the definition this one sits in (a method's class), or -1."""


class FileTags(msgspec.Struct, frozen=True):
    """The definitions and references of one file."""

    language: str
    lines: int = 0
    """How many lines the file has."""
    definitions: tuple[Definition, ...] = ()
    """In the order they appear in the file."""
    references: dict[str, int] = {}
    """Name to the number of places that reference it."""

    def to_json(self) -> str:
        """The tags as compact JSON, for the cache (the language is stored beside it)."""
        return json.dumps(
            [self.lines, [list(d) for d in self.definitions], self.references],
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, language: str, text: str) -> FileTags:
        """Tags read back from `to_json`.

        Raises:
            ValueError: The text is not what `to_json` writes.
        """
        try:
            lines, definitions, references = json.loads(text)
            return cls(language, lines, tuple(Definition._make(d) for d in definitions), references)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bad cached tags: {exc}") from exc


def extract_tags(source: bytes, grammar: Grammar) -> FileTags:
    """Parse `source` and collect its definitions and references.

    Args:
        source: The file's bytes; tree-sitter recovers from syntax errors, so a broken file
            still yields what can be recognised.
        grammar: The file's language.
    """
    # Imported here, not at the top: tree-sitter is loaded only when a file must be parsed,
    # so `import moot` and a map built wholly from the cache never load it.
    from tree_sitter import QueryCursor

    tree = grammar.parser.parse(source)
    found: dict[int, tuple[str, str, Node]] = {}  # name's start byte -> (name, kind, node)
    counts: dict[bytes, int] = {}  # decoded once per name, at the end
    counted: set[int] = set()  # two patterns may match one name (the wheel's and moot's)
    roles = grammar.roles
    for pattern, captures in QueryCursor(grammar.query).matches(tree.root_node):
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = pattern_role(captures)
        names = captures.get("name")
        if not names:
            continue
        definition, is_reference = role
        if definition:
            kind = definition[len("definition.") :]
            key = names[0].start_byte
            seen = found.get(key)
            if seen is None or (seen[1] in _WEAK_KINDS and kind not in _WEAK_KINDS):
                found[key] = (_text(names[0]), kind, captures[definition][0])
        if is_reference:
            for node in names:
                start = node.start_byte
                if start not in counted:
                    counted.add(start)
                    raw = node.text or b""
                    counts[raw] = counts.get(raw, 0) + 1
    references = {raw.decode("utf-8", "replace"): count for raw, count in counts.items()}
    lines = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    return FileTags(grammar.language, lines, _definitions(source, found.values()), references)


def pattern_role(captures: Mapping[str, object]) -> tuple[str, bool]:
    """What a pattern of a tags query finds, from the capture names of one of its matches.

    Returns:
        Its `@definition.<kind>` capture name ("" when it has none), and whether it has a
        `@reference.<kind>` capture. Tags queries never make these captures optional, so one
        match tells for every match of the pattern.
    """
    definition = next((name for name in captures if name.startswith("definition.")), "")
    return definition, any(name.startswith("reference.") for name in captures)


def _definitions(source: bytes, found: Iterable[tuple[str, str, Node]]) -> tuple[Definition, ...]:
    ordered = sorted(found, key=lambda item: (item[2].start_byte, -item[2].end_byte))
    definitions: list[Definition] = []
    open_scopes: list[tuple[int, int]] = []  # (end byte, index) of definitions still open
    for name, kind, node in ordered:
        while open_scopes and open_scopes[-1][0] < node.end_byte:
            open_scopes.pop()
        parent = open_scopes[-1][1] if open_scopes else -1
        line = node.start_point[0] + 1
        definitions.append(Definition(name, kind, line, _signature(source, node), parent))
        open_scopes.append((node.end_byte, len(definitions) - 1))
    return tuple(definitions)


def _signature(source: bytes, node: Node) -> str:
    """The declaration from the start of its line up to its body (or the line's end)."""
    start = source.rfind(b"\n", 0, node.start_byte) + 1
    end = source.find(b"\n", node.start_byte)
    end = len(source) if end < 0 else end
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        end = body.start_byte  # a signature spread over lines, or a body on the same line
    raw = source[start : min(end, start + 4 * MAX_SIGNATURE)].decode("utf-8", "replace").rstrip()
    stripped = raw.lstrip(" \t")
    indent = raw[: len(raw) - len(stripped)]
    text = " ".join(stripped.split())
    if "\n" in stripped:  # `def f(\n    a,\n)` -> `def f(a)`
        text = _CLOSING_SPACE.sub(r"\1", _OPENING_SPACE.sub(r"\1", text))
    if len(text) > MAX_SIGNATURE:
        text = text[: MAX_SIGNATURE - 1] + "…"
    return indent + text


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")

"""Which files the repository map reads, and the tree-sitter grammar and tags query for each.

Grammars come from the per-language wheels (`tree-sitter-python`, ...), which hold the compiled
parser and work offline; each wheel also ships the grammar's `queries/tags.scm`. moot adds
patterns of its own from `queries/*-extra-tags.scm` in this package, each file saying what it
adds and why. TypeScript and TSX use JavaScript's tags query too, as tree-sitter-typescript
intends (its own file holds only what TypeScript adds).
"""

from __future__ import annotations

import importlib
from importlib import resources
from types import ModuleType
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from tree_sitter import Parser, Query


class LanguageSpec(msgspec.Struct, frozen=True):
    """Where one language's grammar and tags query come from."""

    name: str
    """The language's name in the map's cache: python, javascript, typescript, tsx, go, rust."""
    extensions: tuple[str, ...]
    """File name endings, with the dot."""
    grammar: str
    """The wheel's module, e.g. `tree_sitter_python`."""
    function: str
    """The module's function that returns the language, e.g. `language` or `language_tsx`."""
    wheel_queries: tuple[str, ...]
    """Modules whose `TAGS_QUERY` (their wheel's `queries/tags.scm`) the tags query joins."""
    extra_queries: tuple[str, ...]
    """moot's own query files in `moot/repomap/queries/`, appended after the wheels'."""


_ECMA = ("tree_sitter_javascript", "tree_sitter_typescript")
LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python",
        (".py", ".pyi"),
        "tree_sitter_python",
        "language",
        ("tree_sitter_python",),
        ("python-extra-tags.scm",),
    ),
    LanguageSpec(
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),
        "tree_sitter_javascript",
        "language",
        ("tree_sitter_javascript",),
        ("ecma-extra-tags.scm", "javascript-extra-tags.scm"),
    ),
    LanguageSpec(
        "typescript",
        (".ts", ".mts", ".cts"),
        "tree_sitter_typescript",
        "language_typescript",
        _ECMA,
        ("ecma-extra-tags.scm", "typescript-extra-tags.scm"),
    ),
    LanguageSpec(
        "tsx",
        (".tsx",),
        "tree_sitter_typescript",
        "language_tsx",
        _ECMA,
        ("ecma-extra-tags.scm", "typescript-extra-tags.scm"),
    ),
    LanguageSpec(
        "go", (".go",), "tree_sitter_go", "language", ("tree_sitter_go",), ("go-extra-tags.scm",)
    ),
    LanguageSpec(
        "rust",
        (".rs",),
        "tree_sitter_rust",
        "language",
        ("tree_sitter_rust",),
        ("rust-extra-tags.scm",),
    ),
)
_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
SKIPPED_SUFFIXES = (".min.js", ".bundle.js")
"""Built or minified output: large, generated, and not what anyone edits."""


def language_for(name: str) -> LanguageSpec | None:
    """The language of a file, by its name; None for files the map does not read."""
    dot = name.rfind(".")
    if dot <= 0 or name.endswith(SKIPPED_SUFFIXES):
        return None
    return _BY_EXTENSION.get(name[dot:].lower())


def family(language: str) -> str:
    """The languages whose files can use each other's names: JavaScript, TypeScript and TSX
    form one; every other language is its own."""
    return _FAMILIES.get(language, language)


_FAMILIES = {"typescript": "javascript", "tsx": "javascript"}


class GrammarMissing(Exception):
    """tree-sitter or a language's grammar wheel is not installed."""


class Grammar(msgspec.Struct, frozen=True):
    """A language's parser and compiled tags query."""

    language: str
    parser: Parser
    """Not thread-safe: a `Grammars` (and so each parser) belongs to one build."""
    query: Query
    roles: dict[int, tuple[str, bool]] = {}
    """Per pattern of the query, what it finds (`tags.pattern_role`), learnt from matches."""


class Grammars:
    """The grammars one build of the map uses, each loaded the first time a file needs it."""

    def __init__(self) -> None:
        self._loaded: dict[str, Grammar | GrammarMissing] = {}

    def get(self, spec: LanguageSpec) -> Grammar:
        """The grammar for `spec`, loaded once per instance.

        Raises:
            GrammarMissing: tree-sitter or the language's wheel cannot be imported.
        """
        found = self._loaded.get(spec.name)
        if found is None:
            try:
                found = _load(spec)
            except GrammarMissing as exc:
                found = exc
            self._loaded[spec.name] = found
        if isinstance(found, GrammarMissing):
            raise found
        return found


def tags_query_text(spec: LanguageSpec) -> str:
    """The tags query source for a language: the wheels' tags.scm files, then moot's own.

    Raises:
        GrammarMissing: A wheel the query comes from is not installed.
    """
    parts = [_import(module).TAGS_QUERY for module in spec.wheel_queries]
    folder = resources.files(__package__).joinpath("queries")
    parts += [folder.joinpath(name).read_text(encoding="utf-8") for name in spec.extra_queries]
    return "\n".join(parts)


def _load(spec: LanguageSpec) -> Grammar:
    # Imported here, not at the top: tree-sitter and the grammars are native modules that only
    # the repository map needs, and `import moot` must stay light (see STYLE.md).
    try:
        from tree_sitter import Language, Parser, Query
    except ImportError as exc:
        raise GrammarMissing("tree-sitter is not installed (pip install tree-sitter)") from exc
    language = Language(getattr(_import(spec.grammar), spec.function)())
    return Grammar(spec.name, Parser(language), Query(language, tags_query_text(spec)))


def _import(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        wheel = module.replace("_", "-")
        raise GrammarMissing(f"{wheel} is not installed (pip install {wheel})") from exc

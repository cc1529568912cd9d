"""The repository map: the files of a workspace that matter most, and what they define.

Source files (Python, JavaScript, TypeScript/TSX, Go, Rust) are parsed with tree-sitter and
their language's tags query, which finds each definition and each reference by name
(`tags.py`). Files are linked where one references a name another defines, and ranked by
PageRank, tilted toward the files and names of the conversation (`rank.py`). The map shows the
best files with their top declarations, as many as fit a token budget (`render.py`). Source
files come from the workspace's file index; a session keeps their tags (`index.py`), parses
what changed in parser processes (`parallel.py`) for a bounded time, the rest in the
background, and says what it has not parsed yet. Parsed files are cached per workspace in the
user cache directory, keyed by path and stat, their tags by content (`cache.py`), so an
unchanged workspace is mapped without parsing anything; a new session whose source files all
stat as an earlier session's look found them answers with that session's map without reading
the cache's rows (`saved_look.py`).

Importing this package does not import tree-sitter; only parsing a file does.
"""

from moot.repomap.focus import resolve_focus
from moot.repomap.index import RepoIndex
from moot.repomap.map import RepoMap, build_repo_map, index_workspace, map_repository
from moot.repomap.symbols import Symbol, find_symbols, similar_names

__all__ = [
    "RepoIndex",
    "RepoMap",
    "Symbol",
    "build_repo_map",
    "find_symbols",
    "index_workspace",
    "map_repository",
    "resolve_focus",
    "similar_names",
]

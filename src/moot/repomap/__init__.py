"""The repository map: the files of a workspace that matter most, and what they define.

Source files (Python, JavaScript, TypeScript/TSX, Go, Rust) are parsed with tree-sitter and
their language's tags query, which finds each definition and each reference by name
(`tags.py`). Files are linked where one references a name another defines, and ranked by
PageRank, tilted toward the files and names of the conversation (`rank.py`). The map shows the
best files with their top declarations, as many as fit a token budget (`render.py`). Parsed
files are cached per workspace in the user cache directory, keyed by path, `mtime_ns`, size
and language (`cache.py`), so an unchanged workspace is mapped without parsing anything.

Importing this package does not import tree-sitter; only parsing a file does.
"""

from moot.repomap.map import RepoMap, build_repo_map, index_workspace, resolve_focus
from moot.repomap.symbols import Symbol, find_symbols, similar_names

__all__ = [
    "RepoMap",
    "Symbol",
    "build_repo_map",
    "find_symbols",
    "index_workspace",
    "resolve_focus",
    "similar_names",
]

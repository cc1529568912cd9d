"""Which files a walk skips (ignore files), and which it keeps (a glob pattern).

Ignore files are read as ripgrep reads them: `.gitignore`, `.ignore` and `.rgignore` at every
level from the workspace root down, each pattern relative to its own directory, and the root's
`.git/info/exclude`. `.rgignore` files decide first (the deepest directory's first), then
`.ignore` files, then `.gitignore` files, then the excludes; within a file the last matching
pattern (negations included) decides, as git does. The patterns themselves are parsed and matched by
`pathspec`. The user's global excludes are not read, and neither are ignore files above the
workspace root.

Glob patterns (`glob` and `grep`'s filters) read like gitignore patterns: without a `/` they
match a name at any depth (`*.py`), with one they are anchored at the directory searched
(`src/**/*.ts`); `**` spans directories and `{a,b}` alternatives are expanded.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pathspec

GITIGNORE = ".gitignore"
IGNORE_FILES = (GITIGNORE, ".ignore", ".rgignore")
"""The ignore files of a directory, the later one deciding when two match a path."""
EXCLUDE = ".git/info/exclude"
"""The repository's own excludes, read at the root only."""
_KINDS = (".rgignore", ".ignore", GITIGNORE, EXCLUDE)
"""The ignore files in the order ripgrep asks them: the first whose rules (the deepest
directory's first) match a path decides."""
_MAX_GITIGNORE_BYTES = 1 << 20


Hidden = Callable[[str, bool], bool]
"""Whether a workspace-relative path (`/`-joined; is it a directory?) must not be shown."""


class HiddenInodes(Protocol):
    """What a `Read(...)` deny rule hides under another name: a hard link shares its file's
    content (`moot.permissions.links.DeniedInodes`). One per call."""

    def covers(self, info: os.stat_result) -> bool:
        """Whether the file `info` (an `lstat` or `fstat`) describes is a hidden one."""
        ...


class GitIgnore:
    """The `.gitignore` rules below one workspace root, each file read once per instance.

    Make one per walk or search: files are cached, so a long-lived instance would miss edits.
    """

    def __init__(self, root: Path, hidden: Hidden | None = None) -> None:
        """Args:
        root: The workspace root.
        hidden: Also skip what this says is hidden: paths a `Read(...)` deny rule covers, so
            a walk (glob, ls, grep) never shows what the read tool may not open.
        """
        self._root = root
        self._hidden = hidden
        self._specs: dict[tuple[str, ...], pathspec.GitIgnoreSpec | None] = {}
        """By directory and ignore file."""

    def ignored(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the entry at `root/parts...` is ignored.

        Only patterns that match the entry itself count, not ones that match it because they
        match a directory above it: walks never enter an ignored directory, so this matters
        only when a search starts inside one on purpose, and then (as in ripgrep) the search
        sees its contents.

        Args:
            parts: The entry's path components below the root.
            is_dir: Whether it is a directory (patterns ending in `/` match only those).
        """
        if self._hidden is not None and self._hidden("/".join(parts), is_dir):
            return True
        for kind in _KINDS:
            for depth in range(len(parts) - 1, -1, -1):
                decision = self._decision(kind, parts, depth, is_dir)
                if decision is not None:
                    return decision
        return False

    def _decision(self, kind: str, parts: tuple[str, ...], depth: int, is_dir: bool) -> bool | None:
        """What the ignore file `kind` of the directory `parts[:depth]` says of the entry
        (None: nothing)."""
        spec = self._spec(parts[:depth], kind)
        if spec is None:
            return None
        rel = "/".join(parts[depth:]) + ("/" if is_dir else "")
        result = spec.check_file(rel)
        if result.include is None:
            return None
        if depth == len(parts) - 1 or result.index is None:
            return bool(result.include)
        parent = "/".join(parts[depth:-1]) + "/"
        if not spec.patterns[result.index].match_file(parent):
            return bool(result.include)
        return _direct_decision(spec, rel, parent)

    def _spec(self, directory: tuple[str, ...], kind: str) -> pathspec.GitIgnoreSpec | None:
        key = (*directory, kind)
        if key in self._specs:
            return self._specs[key]
        spec = None
        if kind != EXCLUDE or not directory:
            lines = read_lines(self._root, directory, kind)
            if lines:
                import pathspec  # here, not at the top: start-up reads no ignore file

                spec = pathspec.GitIgnoreSpec.from_lines(lines)
        self._specs[key] = spec if spec is not None and spec.patterns else None
        return self._specs[key]


def read_lines(root: Path, directory: tuple[str, ...], name: str) -> list[str]:
    """The lines of the ignore file `name` in `directory` below `root` (none when it is not
    there or is a symlink, which may point outside)."""
    if name == EXCLUDE:
        try:
            if not stat.S_ISDIR(os.lstat(root / ".git").st_mode):
                return []  # a worktree's `.git` file, or a symlink: not read
        except OSError:
            return []
    try:
        fd = os.open(
            root.joinpath(*directory, name),
            os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
        )
    except OSError:
        return []
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        return file.read(_MAX_GITIGNORE_BYTES).decode("utf-8", "replace").splitlines()


def _direct_decision(spec: pathspec.GitIgnoreSpec, rel: str, parent: str) -> bool | None:
    """The last pattern that matches `rel` itself rather than through its `parent` directory."""
    for pattern in reversed(spec.patterns):
        if pattern.include is None or not pattern.match_file(rel):
            continue
        if not pattern.match_file(parent):
            return bool(pattern.include)
    return None


class GlobPattern:
    """A glob a path must match, relative to the directory searched."""

    def __init__(self, pattern: str) -> None:
        """Compile `pattern`.

        Raises:
            ValueError: The pattern is empty.
        """
        if not pattern.strip():
            raise ValueError("the glob pattern is empty")
        self.pattern = pattern
        alternatives = expand_braces(pattern)
        self.basename_globs: tuple[str, ...] | None = (
            tuple(alternatives) if all("/" not in alt for alt in alternatives) else None
        )
        """The alternatives when none has a `/`: they match file names alone (ripgrep types)."""
        self.suffixes: tuple[str, ...] | None = _literal_suffixes(alternatives)
        """What every matching path ends with, one per alternative (`.py` of `src/**/*.py`),
        or None when some alternative ends in a wildcard: a quick test before the match."""
        self._whole: re.Pattern[str] | None = None
        self._names: list[re.Pattern[str]] = []
        self._paths: list[re.Pattern[str]] = []
        for alt in alternatives:
            if alt.endswith("/"):
                alt += "**"
            if "/" in alt:
                self._paths.append(re.compile(_translate(alt.removeprefix("/")) + r"\Z", re.S))
            else:
                self._names.append(re.compile(_translate(alt) + r"\Z", re.S))

    def select(self, paths: Iterable[str], offset: int = 0) -> list[str]:
        """The paths that match, each read from `offset` (the length of the directory searched
        and its `/`): what `matches` keeps, tested by one expression, in C."""
        if self._whole is None:
            whole = [f"(?:.*/)?(?=[^/]*\\Z){p.pattern}" for p in self._names]  # the name alone
            whole += [p.pattern for p in self._paths]
            self._whole = re.compile("|".join(f"(?:{w})" for w in whole), re.S)
        match = self._whole.match
        if offset:
            return [rel for rel in paths if match(rel, offset)]
        return list(filter(match, paths))

    def matches(self, rel: str) -> bool:
        """Whether the path `rel` (components joined by `/`) matches."""
        name = rel.rsplit("/", 1)[-1]
        return any(p.match(name) for p in self._names) or any(p.match(rel) for p in self._paths)

    def matches_or_under(self, rel: str) -> bool:
        """Whether `rel` or a directory above it matches (an excluded directory's contents)."""
        parts = rel.split("/")
        return any(self.matches("/".join(parts[:end])) for end in range(1, len(parts) + 1))


def _literal_suffixes(alternatives: list[str]) -> tuple[str, ...] | None:
    """The literal end of each alternative's last component (after its last wildcard), or None
    when one has none; an escape (`\\`) gives None too rather than be read wrongly."""
    found: list[str] = []
    for alt in alternatives:
        if alt.endswith("/"):  # `dir/` matches whatever is inside
            return None
        last = alt.rsplit("/", 1)[-1]
        if "\\" in last:
            return None
        cut = max(last.rfind(char) for char in "*?[]")
        tail = last[cut + 1 :]
        if not tail:
            return None
        found.append(tail)
    return tuple(found)


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` → `a.py`, `a.pyi`; nested braces work, unmatched ones stay literal."""
    depth, start = 0, -1
    commas: list[int] = []
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start, commas = index, []
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                if not commas:
                    continue
                head, tail = pattern[:start], pattern[index + 1 :]
                bounds = [start, *commas, index]
                options = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                return [
                    expanded
                    for option in options
                    for expanded in expand_braces(head + option + tail)
                ]
        elif char == "," and depth == 1:
            commas.append(index)
    return [pattern]


def _translate(glob: str) -> str:
    """A glob as a regular expression: `*` and `?` stay within a directory, `**` spans them."""
    out: list[str] = []
    index, size = 0, len(glob)
    while index < size:
        char = glob[index]
        if glob.startswith("**", index):
            index += 2
            if index < size and glob[index] == "/":
                out.append("(?:.*/)?")
                index += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find(
                "]", index + 2 if glob[index + 1 : index + 2] in ("!", "^") else index + 1
            )
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[index + 1 : end]
                negated = body[:1] in ("!", "^")
                if negated:
                    body = "^" + body[1:]
                # A negated class must not match the separator: `[!a]` stays in one name.
                out.append(("(?!/)" if negated else "") + "[" + body.replace("\\", "\\\\") + "]")
                index = end
        elif char == "\\" and index + 1 < size:
            index += 1
            out.append(re.escape(glob[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)

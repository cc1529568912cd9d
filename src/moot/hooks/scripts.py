"""The workspace files hook commands name, and how to tell that one changed.

Hooks run on the host, outside the sandbox, so a model that could rewrite a script a hook runs
could run anything there at the next hook. Two defences, both from the words of each command
(`./check.sh`, `python3 tools/hook.py`, `"$MOOT_PROJECT_DIR"/x.sh`):

- `protected_scripts`: the named files, as written and as resolved through symlinks, are
  protected like `.moot/`: read-only inside the sandbox, and a file tool's write of one is an
  ask only the person answers.
- `fingerprint`: what each named path is when the session begins (missing, a link and where
  it leads, a file and a digest of its content). The runner checks it before every run and
  refuses to run a hook whose script changed, was re-linked or appeared since, whoever did it.

A bare program name (`prettier`, `ruff`) counts too where the hooks' `PATH` would look for it in
the workspace (a relative entry such as `node_modules/.bin`, or an absolute one inside it such
as an activated `.venv/bin`): each such place up to the program's first match, so that neither
a rewritten `node_modules/.bin/prettier` nor one planted ahead of the person's own runs.

Best effort by nature: a path the shell builds at run time is not seen, and an interpreter may
load other workspace files (Python looks beside the script first; `python_path` keeps the
workspace itself off its path). Keep hook scripts in `.moot/hooks/`, which is read-only to the
model as a whole.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable

from moot.workspace.host_git import path_state

Fingerprint = tuple[tuple[str, str, str], ...]
"""Per named path: (workspace-relative path, what it is, its link target or content digest)."""

_PROJECT_VARIABLES = (
    "${MOOT_PROJECT_DIR}",
    "$MOOT_PROJECT_DIR",
    "${CLAUDE_PROJECT_DIR}",
    "$CLAUDE_PROJECT_DIR",
)


def named_paths(command: str, base: str, path: str | None = None) -> list[str]:
    """Workspace-relative paths that words of `command` name inside `base` (a real path):
    words that exist there, path-like ones (`./x`, `a/b`) that do not exist yet, and where a
    bare name would be looked up in the workspace on `path` (the process's `PATH` when None)."""
    found: list[str] = []
    search = _searched_to_the_workspace(base, path)
    for word in command_words(command):
        if search and word and "/" not in word and "=" not in word and not word.startswith("-"):
            for rel in _looked_up(word, base, search):
                if rel not in found:
                    found.append(rel)
        for variable in _PROJECT_VARIABLES:
            word = word.replace(variable, base)
        name, equals, value = word.partition("=")
        if equals and "/" not in name:  # CONF=path: the value may name a file
            word = value
        if not word or word.startswith("-") or "\0" in word:
            continue
        lexical = os.path.normpath(os.path.join(base, word))
        if not lexical.startswith(base + os.sep):
            continue
        if "/" in word or os.path.lexists(lexical):
            rel = os.path.relpath(lexical, base)
            if rel not in found:
                found.append(rel)
    return found


def _searched_to_the_workspace(base: str, path: str | None) -> list[str]:
    """The directories of `path` (the process's `PATH` when None) as the shell, started in
    `base`, searches them, up to the last one inside `base`: none when no entry is (the usual
    case, which then costs no lookup at all)."""
    entries = (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep)
    directories = [os.path.normpath(os.path.join(base, entry)) for entry in entries]  # "" is base
    inside = [i for i, d in enumerate(directories) if d == base or d.startswith(base + os.sep)]
    return directories[: inside[-1] + 1] if inside else []


def _looked_up(name: str, base: str, search: list[str]) -> list[str]:
    """Where the shell would look for the program `name` inside `base`: each workspace
    directory of `search` in order, up to the first place that holds a program."""
    places = []
    for directory in search:
        candidate = os.path.join(directory, name)
        inside = candidate.startswith(base + os.sep)
        if inside:
            places.append(os.path.relpath(candidate, base))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            break  # what runs: nothing after it does
    return places


def command_words(command: str, depth: int = 0) -> list[str]:
    """The words of a command line, split at `;`, `&&`, `|` and the like too, and the words of
    quoted command lines inside it (`sh -c 'a && ./b.sh'`), a few levels deep."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: take the plain words
        words = command.split()
    if depth < 3:
        words += [inner for w in words if " " in w for inner in command_words(w, depth + 1)]
    return words


def protected_scripts(
    commands: Iterable[str], base: str, path: str | None = None
) -> tuple[str, ...]:
    """The existing files the commands name, as written and as resolved through symlinks
    (when that stays inside `base`), workspace-relative."""
    found: set[str] = set()
    for command in commands:
        for rel in named_paths(command, base, path):
            lexical = os.path.join(base, rel)
            if os.path.isfile(lexical) and not os.path.islink(lexical):
                found.add(rel)
            real = os.path.realpath(lexical)
            if real.startswith(base + os.sep) and os.path.isfile(real):
                found.add(os.path.relpath(real, base))
    return tuple(sorted(found))


def fingerprint(command: str, base: str, path: str | None = None) -> Fingerprint:
    """What the paths `command` names are now (see the module docstring)."""
    return tuple(
        (rel, *path_state(os.path.join(base, rel))) for rel in named_paths(command, base, path)
    )

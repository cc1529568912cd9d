"""What a tool call touches, worked out once before any rule is matched.

`describe` turns an `ApprovalRequest` into a `Call`: for file tools the paths touched
(`Target`, each in its normalised and symlink-resolved forms); for `bash` the sub-commands of the
command (`Command`, with the files its command line reads and writes, and whether a prefix rule
may safely cover it); for `web_fetch` the host. `moot.permissions.decide` matches rules against
these. `command_writes` gives the workspace files a command line writes, for the `bash` tool to
snapshot before it runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from moot.permissions.shell import SubCommand, split_command
from moot.protocol.approval import ApprovalRequest

FILE_EDIT_TOOLS = frozenset({"write", "edit", "multi_edit"})
"""Tools that write the file named by their `path` argument (what acceptEdits lets run)."""
_PATH_READERS = frozenset({"read", "git_diff", "git_log"})
"""Tools whose `path` argument names the one file (or directory) they read."""
_SEARCH_TOOLS = {"glob": "pattern", "grep": "glob", "ls": None}
"""Tools that read below a directory `path`, with the argument that narrows it to names."""
_RISKY_ENV = re.compile(
    r"PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|HOME|CDPATH"
    r"|LD_.*|DYLD_.*|PYTHON.*|NODE_OPTIONS|PERL5?(?:LIB|OPT)|RUBY(?:LIB|OPT)|GIT_.*"
    r"|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|EDITOR|VISUAL|PAGER|SSH_ASKPASS|SUDO_ASKPASS"
    r"|SHELL|MANPAGER|LESSOPEN|LESSCLOSE|BROWSER"
    r"|XDG_.*|(?i:npm_config_.*)|.*_PATH"  # npm reads its variables in any case
)
"""Variables that change which program runs or what it loads (`XDG_CONFIG_HOME=. git status`
reads `./git/config`, whose `core.fsmonitor` git runs); set on a command, they make a prefix
rule's promise about that command meaningless."""
_SETS_VARIABLES = frozenset({"export", "declare", "typeset", "readonly", "local"})
"""Builtins whose `NAME=value` arguments set variables, as a leading assignment does."""
_COMPUTED = re.compile(r"[$`*?\[{]")
"""A word the shell would still expand: no rule can say which file it names."""
_DEVICE = re.compile(
    r"/dev/(?:null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd/[0-9]+)"
    r"|/proc/self/fd/[0-9]+"
)
"""Written as a name, these write to a device or an open descriptor, not to a file."""


class Target(msgspec.Struct, frozen=True):
    """One path a call touches, in each form a rule may be matched against."""

    forms: tuple[str, ...]
    """Absolute paths: normalised, and resolved through symlinks (when that differs)."""
    is_dir: bool


class Command(msgspec.Struct, frozen=True):
    """One sub-command of a shell command, with the files its command line names."""

    sub: SubCommand
    reads: tuple[Target, ...]
    """Plain arguments (and `key=value` values) and `<` files: what it may read."""
    writes: tuple[Target, ...]
    """The files it writes: its `>`, `>>`, `&>`, `<>`, ... files and those its options and
    operands name (`SubCommand.writes`); devices (`/dev/null`) left out."""
    checkable: bool
    """A prefix rule may cover it: every file it writes is named (no expansion in the name,
    nothing `SubCommand.writes_unnamed`), and no assignment changes what runs. Its writes are
    decided as edits of those files (`moot.permissions.decide`)."""
    changes_what_runs: bool = False
    """It sets a variable that changes which program runs or what it loads (`PATH=.`,
    `XDG_CONFIG_HOME=. git status`, `export LD_PRELOAD=...`): commands after it, or the one it
    runs, do what no rule can see."""

    @property
    def shown(self) -> str:
        heredoc = ("<<", "<<-", "<<<")
        files = [f"{r.op} {r.target}" for r in self.sub.redirects if r.op not in heredoc]
        return " ".join([*self.sub.assignments, self.sub.text, *files]).strip()


class Call(msgspec.Struct, frozen=True):
    """A request with what rules are matched against worked out once."""

    request: ApprovalRequest
    root: str
    targets: tuple[Target, ...] | None
    """For file tools: the paths touched (empty when the path is unusable); None otherwise."""
    commands: tuple[Command, ...] | None
    """For bash: the sub-commands; None when the command cannot be parsed (or is not bash)."""
    host: str | None
    """For web_fetch: the URL's host."""
    added: tuple[str, ...] = ()
    """The added directories' real paths (`--add-dir`): edited as the workspace is."""

    @property
    def tool(self) -> str:
        return self.request.tool

    @property
    def unparsed_command(self) -> bool:
        return self.tool == "bash" and self.commands is None


def describe(call: ApprovalRequest, workspace_root: Path, added_roots: Iterable[Path] = ()) -> Call:
    root = os.path.realpath(workspace_root)
    added = tuple(os.path.realpath(r) for r in added_roots)
    args = call.arguments if isinstance(call.arguments, dict) else {}
    targets = commands = host = None
    if call.tool in FILE_EDIT_TOOLS or call.tool in _PATH_READERS:
        targets = _targets(root, [args.get("path")])
    elif call.tool in _SEARCH_TOOLS:
        targets = _targets(root, _search_paths(call.tool, args))
    elif call.tool == "bash":
        command = args.get("command")
        split = split_command(command) if isinstance(command, str) else None
        commands = None if split is None else _commands(split, root)
    elif call.tool == "web_fetch":
        host = _host(args.get("url"))
    return Call(call, root, targets, commands, host, added)


def _search_paths(tool: str, args: dict[str, object]) -> list[object]:
    """The directory searched and, when the name filter is a plain name, the file it names."""
    base = args.get("path")
    base = "." if base is None else base
    paths = [base]
    narrow = _SEARCH_TOOLS[tool]
    name = args.get(narrow) if narrow else None
    if isinstance(base, str) and isinstance(name, str) and name and not set(name) & set("*?[{"):
        paths.append(os.path.join(base, name))
    return paths


def _targets(root: str, paths: Iterable[object]) -> tuple[Target, ...]:
    """Each usable path in its normalised and real forms; unusable ones are left out (the tool
    refuses them itself, and no rule could speak about them)."""
    targets = []
    for path in paths:
        if not isinstance(path, str) or not path.strip() or "\x00" in path:
            continue
        joined = os.path.join(root, path)
        lexical = os.path.normpath(joined)
        try:
            real = os.path.realpath(joined)  # what the kernel resolves, `..` after a link too
        except OSError:
            # A link the kernel will not read (`/proc/1/cwd`) or a loop: no real form to match.
            # The tools resolve the same way and refuse, so only the command line's form counts.
            real = lexical
        forms = (lexical,) if real == lexical else (lexical, real)
        targets.append(Target(forms, os.path.isdir(real)))
    return tuple(targets)


_CHANGES_DIRECTORY = frozenset({"cd", "pushd"})
_MAX_DIRECTORIES = 8


def _commands(subs: list[SubCommand], root: str) -> tuple[Command, ...]:
    """Each sub-command described where its relative names may land: `cd sub && echo > x`
    writes `sub/x`. Every directory a `cd` before it may have entered counts (it may fail, or
    be in a subshell); after a `cd` to a place no one can name, relative writes are unknown."""
    directories, lost = [root], False
    out: list[Command] = []
    for sub in subs:
        out.append(_command(sub, root, directories, lost))
        if sub.words[:1] and sub.words[0] in _CHANGES_DIRECTORY:
            target = _cd_target(sub.words[1:])
            if target is None:
                lost = True
            elif target != "-":
                moved = [os.path.normpath(os.path.join(d, target)) for d in directories]
                directories = list(dict.fromkeys([*directories, *moved]))
                lost = lost or len(directories) > _MAX_DIRECTORIES
    return tuple(out)


def _cd_target(args: tuple[str, ...]) -> str | None:
    """Where `cd ARGS` goes, as written (`-`: back to a place already counted); None when
    that is not known from the line (`cd`, `cd $X`)."""
    operands = [a for a in args if not (a.startswith("-") and a != "-")]
    if len(operands) != 1 or _COMPUTED.search(operands[0]):
        return None
    return os.path.expanduser(operands[0])


def _located(names: list[str], directories: list[str]) -> list[str]:
    """Each name as it may land from each directory (absolute names stay as they are)."""
    located: list[str] = []
    for name in names:
        located += [name] if os.path.isabs(name) else [os.path.join(d, name) for d in directories]
    return located


def _command(sub: SubCommand, root: str, directories: list[str], lost: bool) -> Command:
    reads: list[str] = []
    exported = sub.words[1:] if sub.words[:1] and sub.words[0] in _SETS_VARIABLES else ()
    assigned = [*sub.assignments, *(w for w in exported if "=" in w and not w.startswith("-"))]
    risky = any(_RISKY_ENV.fullmatch(a.partition("=")[0].rstrip("+")) for a in assigned)
    uncertain = risky
    for word in sub.words[1:]:
        if not word.startswith("-"):
            reads.append(word)
        if "=" in word:
            reads.append(word.partition("=")[2])  # dd if=.env, --file=.env
    for redirect in sub.redirects:
        op, target = redirect.op.lstrip("0123456789"), redirect.target
        if op.endswith("<") or op == "<>":
            reads.append(target)
    writes = written_names(sub)
    uncertain = uncertain or sub.writes_unnamed or any(_COMPUTED.search(w) for w in writes)
    uncertain = uncertain or (lost and any(not os.path.isabs(w) for w in _plain(writes)))
    located = _targets(root, _located(_plain(writes), directories))
    written = tuple(t for t in located if not _DEVICE.fullmatch(t.forms[0]))
    read = _targets(root, _located(_plain(reads), directories))
    return Command(sub, read, written, not uncertain, risky)


def written_names(sub: SubCommand) -> list[str]:
    """The files `sub` writes, as written: its redirections' and its options' and operands'."""
    writes: list[str] = []
    for redirect in sub.redirects:
        op, target = redirect.op.lstrip("0123456789"), redirect.target
        descriptor = target == "-" or target.rstrip("-").isdigit()
        if op in ("<<", "<<-", "<<<") or (op in ("<&", ">&") and descriptor):
            continue  # here-documents and descriptor copies (or closes, `2>&-`) name no file
        if op != "<":
            writes.append(target)
    return [*writes, *sub.writes]


def command_writes(command: str, workspace_root: Path) -> list[Path]:
    """The workspace files a shell command line names as written, to keep before it runs.

    Args:
        command: The command line.
        workspace_root: The workspace; files outside it, devices and names the shell would
            still expand are left out.

    Returns:
        Absolute paths below the root, each once, resolved through symlinks (what the write
        reaches); none when the line cannot be parsed.
    """
    root = os.path.realpath(workspace_root)
    subs = split_command(command) or []
    found: dict[str, None] = {}
    for described in _commands(subs, root):
        for target in described.writes:
            path = target.forms[-1]  # resolved through symlinks: what the write reaches
            if inside(path, root):
                found[path] = None
    return [Path(path) for path in found]


def _plain(words: list[str]) -> list[str]:
    """The words that name a file as written (`~` expanded as the shell would)."""
    return [os.path.expanduser(w) for w in words if w and not _COMPUTED.search(w)]


def _host(url: object) -> str | None:
    if not isinstance(url, str):
        return None
    try:
        return urlsplit(url.strip()).hostname or None
    except ValueError:
        return None


def in_a_root(path: str, call: Call) -> bool:
    """Whether `path` lies below the workspace or an added directory (`--add-dir`)."""
    return any(inside(path, root) for root in (call.root, *call.added))


def inside(path: str, root: str) -> tuple[str, ...]:
    """The parts of `path` below `root`; () when it is outside (or the root itself)."""
    prefix = root.rstrip("/") + "/"
    return tuple(path[len(prefix) :].split("/")) if path.startswith(prefix) else ()

"""Permission rules as people write them in settings: `Tool` or `Tool(specifier)`.

Rules live under `permissions.allow`, `permissions.ask` and `permissions.deny` and follow the
shape the widely used coding agents share, so existing rules carry over:

- `Read`, `Edit`, `Write`, `Glob`, `Grep`, `LS` take a gitignore-style path pattern
  (`Edit(src/**)`, `Read(./.env)`, `Read(**/*.pem)`, `Read(*.key)`):
  - `pattern` or `./pattern`: relative to the workspace root. As in `.gitignore`, a pattern
    without a `/` (other than a trailing one) matches at any depth, so `Read(.env)` covers
    `config/.env` too while `Read(./.env)` covers only the top-level one; `dir/` matches the
    directory and everything in it. `../pattern` is relative to the root's parent.
  - `/pattern`: relative to the project root too (the settings files all belong to the
    project, so "relative to the settings file's project" is the workspace root).
  - `//pattern`: an absolute path (`Read(//etc/**)`); `~/pattern`: below the home directory.
    `~user/` is not supported.
  Patterns are matched against the path a tool would touch after normalisation and after
  symlinks are resolved (see `moot.permissions.decide`). Negations (`!x`) are refused: one rule
  is one pattern.
- `Bash` takes a command prefix as `moot.permissions.shell.matches_prefix` reads it
  (`Bash(npm run test:*)`, `Bash(git status)`).
- `WebFetch` takes `domain:example.com` (that host and its subdomains) or
  `domain:*.example.com` (subdomains only).
- Any other tool is named as the model sees it (`git_commit`, `mcp__github__create_issue`),
  without a specifier; `mcp__server` and `mcp__server__*` cover every tool of that server.

`Tool(*)` means the same as `Tool`. Which moot tools a rule name covers is in `covers`:
`Read` covers read, glob, grep and ls (a denied path must not be searchable either); `Edit`
covers edit, multi_edit and write; each moot tool is also covered by its own name. A `Read`
deny or ask rule also restricts the tools that must read a file to change it (`restricts`):
edit and multi_edit match text against it and answer with what they found, and write keeps
an existing file's encoding and line endings and needs a read before it overwrites, so its
success or failure would tell whether the file is there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    import pathspec

FILE_RULES = frozenset({"Read", "Edit", "Write", "Glob", "Grep", "LS"})
"""Rule names whose specifier is a path pattern."""
SPECIFIER_RULES = FILE_RULES | {"Bash", "WebFetch"}
"""Rule names that take a specifier at all."""

_COVERS: dict[str, frozenset[str]] = {
    # Everything that shows what files hold or which files exist: a bare `Read` deny takes
    # them all away, and a `Read(path)` deny keeps the path out of each of them.
    "Read": frozenset(
        {"read", "glob", "grep", "ls", "git_diff", "git_log", "git_show", "git_status"}
        | {"repo_map", "symbols"}
    ),
    "Edit": frozenset({"edit", "multi_edit", "write"}),
    "Write": frozenset({"write"}),
    "Glob": frozenset({"glob"}),
    "Grep": frozenset({"grep"}),
    "LS": frozenset({"ls"}),
    "Bash": frozenset({"bash"}),
    "WebFetch": frozenset({"web_fetch"}),
}
COMMAND_TOOLS = frozenset({"lint", "test"})
"""Tools whose calls are decided as the `bash` command they run (`moot.tools.verify_tool`): a
bare `Bash` deny takes them away with `bash`."""
READ_TO_CHANGE = frozenset({"edit", "multi_edit", "write"})
"""Tools that read a file to change it: a `Read` deny or ask rule restricts them too (their
errors, or whether they succeed, would show what the file holds or that it exists). Not an
allow: `Read(src/**)` lets nothing be written."""
_RULE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}(?:__\*)?")
_HOST = re.compile(r"(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")

RuleKind = Literal["allow", "ask", "deny"]


class PathPattern(msgspec.Struct, frozen=True, dict=True):
    """A file rule's specifier, compiled: a gitignore line anchored at a directory.

    Built by `parse`, which also compiles the line (`dict=True` holds the compiled form).
    """

    anchor: str
    """The directory the pattern is relative to: absolute, or relative to the workspace
    root ("" is the root itself)."""
    pattern: str
    """The gitignore-style line matched against paths relative to `anchor`."""
    floating: bool
    """Matches at any depth (no `/` inside, or a leading `**/`), so also outside `anchor`."""

    @classmethod
    def parse(cls, specifier: str) -> PathPattern:
        """Compile a file rule's specifier (see the module docstring for the forms).

        Raises:
            ValueError: An unsupported form (`~user/`, `!negation`, a comment).
        """
        anchor, pattern = _anchor_and_pattern(specifier)
        if pattern.startswith(("!", "#")):
            raise ValueError(f"a path pattern cannot start with {pattern[0]!r}: {specifier!r}")
        body = pattern.rstrip("/")
        floating = "/" not in body or body.startswith("**/")
        compiled = cls(anchor, pattern, floating)
        try:
            compiled._spec  # noqa: B018  # compile now, so that a bad pattern fails at load
        except ValueError as exc:  # pathspec's GitWildMatchPatternError is a ValueError
            raise ValueError(f"invalid path pattern {specifier!r}: {exc}") from None
        return compiled

    @cached_property
    def _spec(self) -> pathspec.PathSpec:
        """The gitignore line, compiled once (not a field: not compared, not shown)."""
        import pathspec  # here, not at the top: most sessions have no path rules (start-up time)

        spec = pathspec.GitIgnoreSpec.from_lines([self.pattern])
        for line in spec.patterns:
            # pathspec's `.` stops at a newline, and a directory named "a\nb" would slip past
            # `*.pem`; a file name may hold any byte but `/` and NUL.
            if line.regex is not None:
                line.regex = re.compile(line.regex.pattern, line.regex.flags | re.DOTALL)
        return spec

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled gitignore line (one pattern, never negated), for fast walks."""
        regex = self._spec.patterns[0].regex
        assert regex is not None
        return regex

    def matches(self, path: str, root: str, *, is_dir: bool = False) -> bool:
        """Whether an absolute, normalised path is covered.

        Args:
            path: The path a tool would touch (absolute, normalised).
            root: The workspace root (real path) that relative anchors hang from.
            is_dir: `path` is a directory: `dir/` patterns and `dir/**` cover it too.
        """
        for anchor in _anchors(self.anchor, root):
            if path == anchor:
                rel = "."
            elif path.startswith(anchor.rstrip("/") + "/"):
                rel = path[len(anchor.rstrip("/")) + 1 :]
            else:
                continue
            if self._match(rel, is_dir):
                return True
        # A floating pattern (`.env`, `**/*.pem`) names files anywhere, not only in the anchor.
        return self.floating and self._match(path.lstrip("/"), is_dir)

    def _match(self, rel: str, is_dir: bool) -> bool:
        if self._spec.match_file(rel):
            return True
        return is_dir and rel != "." and self._spec.match_file(rel + "/")


def _anchor_and_pattern(specifier: str) -> tuple[str, str]:
    if specifier.startswith("//"):
        return "/", "/" + specifier[2:].lstrip("/")
    if specifier == "~" or specifier.startswith("~/"):
        rest = specifier[2:].lstrip("/")
        return os.path.expanduser("~"), "/" + (rest or "**")
    if specifier.startswith("~"):
        raise ValueError(f"only ~/ (your home) is supported, not ~user/: {specifier!r}")
    if specifier.startswith(("./", "../")) or specifier in (".", ".."):
        parts = specifier.split("/")
        ups: list[str] = []
        while parts and parts[0] in (".", ".."):
            if parts.pop(0) == "..":
                ups.append("..")
        rest = "/".join(parts).lstrip("/")
        return "/".join(ups), "/" + (rest or "**")
    return "", specifier  # `/x` stays anchored at the root; `x` follows gitignore's rules


def _anchors(anchor: str, root: str) -> set[str]:
    """The anchor as written and as its real path (a symlinked /tmp or home matches both)."""
    absolute = os.path.normpath(os.path.join(root, anchor)) if anchor else root
    return {absolute, os.path.realpath(absolute)}


class DomainPattern(msgspec.Struct, frozen=True):
    """A `WebFetch(domain:...)` specifier."""

    domain: str
    """The host, lower-case, without a trailing dot."""
    subdomains_only: bool = False
    """Written as `*.example.com`: the bare domain itself is not covered."""

    @classmethod
    def parse(cls, specifier: str) -> DomainPattern:
        """Raises: ValueError: not `domain:<host>` or `domain:*.<host>`."""
        kind, _, host = specifier.partition(":")
        if kind.strip() != "domain" or not host.strip():
            raise ValueError(
                f"WebFetch takes domain:<host>, e.g. domain:example.com; got {specifier!r}"
            )
        host = host.strip().lower().rstrip(".")
        if not _HOST.fullmatch(host):
            raise ValueError(f"not a host name (no scheme, port or path): {host!r}")
        if host.startswith("*."):
            return cls(host[2:], subdomains_only=True)
        return cls(host)

    def matches(self, host: str) -> bool:
        """Whether a URL's host is this domain (unless subdomains only) or below it."""
        host = host.lower().rstrip(".")
        return host.endswith("." + self.domain) or (
            host == self.domain and not self.subdomains_only
        )


class Rule(msgspec.Struct, frozen=True, dict=True):
    """One permission rule: a tool name and, for some tools, what the rule is limited to.

    Equal, hashed and shown by `tool` and `specifier` alone; the compiled specifier (`path`,
    `domain`) is worked out on construction and kept beside them (`dict=True`).

    Raises:
        ValueError: On construction, for a name or specifier that is not a valid rule.
    """

    tool: str
    """The name as written: `Read`, `Edit`, `Write`, `Bash`, `WebFetch`, `Grep`, `Glob`, `LS`,
    or any tool's own name (`git_commit`, `mcp__server__tool`)."""
    specifier: str | None = None
    """What is inside the parentheses; None for the whole tool."""

    def __post_init__(self) -> None:
        name, specifier = self.tool, self.specifier
        wildcard_outside_mcp = name.endswith("__*") and not name.startswith("mcp__")
        if not _RULE_NAME.fullmatch(name) or wildcard_outside_mcp:
            raise ValueError(
                f"rule {str(self)!r}: a tool name is letters, digits, '_' or '-' "
                "(and mcp__server__* for all of a server's tools)"
            )
        if specifier is None:
            return
        if name not in SPECIFIER_RULES:
            raise ValueError(_no_specifier_message(str(self), name))
        if not specifier.strip():
            raise ValueError(f"rule {str(self)!r} has an empty specifier; write {name} alone")
        # Compile the specifier now, once, so that a bad one fails at load, not mid-run.
        if name in FILE_RULES:
            self.path  # noqa: B018
        elif name == "WebFetch":
            self.domain  # noqa: B018
        else:  # Bash: read the prefix
            from moot.permissions.shell import SubCommand, matches_prefix  # lazy: start-up time

            matches_prefix(SubCommand((), ""), str(self))

    @cached_property
    def path(self) -> PathPattern | None:
        """The compiled specifier of a file rule."""
        if self.specifier is None or self.tool not in FILE_RULES:
            return None
        return PathPattern.parse(self.specifier)

    @cached_property
    def domain(self) -> DomainPattern | None:
        """The compiled specifier of a WebFetch rule."""
        if self.specifier is None or self.tool != "WebFetch":
            return None
        return DomainPattern.parse(self.specifier)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def restricts(self, tool: str) -> bool:
        """Whether this rule, as a deny or ask rule, speaks about calls of `tool`: the tools it
        `covers`, and for `Read` also those that read a file to change it (`READ_TO_CHANGE`)."""
        return self.covers(tool) or (self.tool == "Read" and tool in READ_TO_CHANGE)

    def covers(self, tool: str) -> bool:
        """Whether this rule speaks about calls of the moot tool named `tool` at all (and so
        what it allows, as an allow rule)."""
        if tool == self.tool or tool in _COVERS.get(self.tool, ()):
            return True
        if self.tool.startswith("mcp__"):
            server = self.tool.removesuffix("__*")
            return server.count("__") == 1 and tool.startswith(server + "__")
        return False


def parse_rule(text: str) -> Rule:
    """Read one rule as written in settings.

    Args:
        text: `Tool` or `Tool(specifier)`, e.g. `Edit(src/**)` or `Bash(npm run test:*)`.

    Returns:
        The rule, its specifier compiled.

    Raises:
        ValueError: Says what is wrong with the rule and how it should look.
    """
    if not isinstance(text, str):
        raise ValueError(f"a rule is a string such as 'Edit(src/**)', not {type(text).__name__}")
    name, paren, rest = text.strip().partition("(")
    name = name.strip()
    if not name:
        raise ValueError(f"rule {text!r} has no tool name; write Tool or Tool(specifier)")
    if paren and not rest.endswith(")"):
        raise ValueError(f"rule {text!r} is missing its closing ')' at the end")
    if not paren and ")" in name:
        raise ValueError(f"rule {text!r} has a ')' without a '('")
    specifier = rest[:-1].strip() if paren else None
    if specifier == "":
        raise ValueError(f"rule {text!r} has empty parentheses; write {name} for every call")
    return Rule(name, None if specifier == "*" else specifier)


def _no_specifier_message(text: str, name: str) -> str:
    known = {rule.lower(): rule for rule in SPECIFIER_RULES} | {"web_fetch": "WebFetch"}
    if name.lower() in known:
        suggestion = known[name.lower()]
        return f"rule {text!r}: did you mean {suggestion}(...)? Rule names are case-sensitive"
    kinds = ", ".join(sorted(SPECIFIER_RULES))
    return f"rule {text!r}: only {kinds} take a specifier; write {name} alone"


class RuleSet:
    """The allow, ask and deny rules in force, parsed from settings' rule lists."""

    __slots__ = ("allow", "ask", "deny")

    def __init__(
        self,
        allow: Iterable[str | Rule] = (),
        ask: Iterable[str | Rule] = (),
        deny: Iterable[str | Rule] = (),
    ) -> None:
        """Parse the rule lists (`permissions.allow/ask/deny`).

        Raises:
            ValueError: A malformed rule, named with its list and position
                (`permissions.deny[2]: ...`).
        """
        self.allow: tuple[Rule, ...] = _parse_all("allow", allow)
        """Rules that let a call run without asking."""
        self.ask: tuple[Rule, ...] = _parse_all("ask", ask)
        """Rules that make a call ask even when the mode or an allow rule would run it."""
        self.deny: tuple[Rule, ...] = _parse_all("deny", deny)
        """Rules that refuse a call; a bare tool name hides the tool from the model."""

    def __repr__(self) -> str:
        listed = ", ".join(f"{k}={[str(r) for r in getattr(self, k)]}" for k in self.__slots__)
        return f"RuleSet({listed})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleSet):
            return NotImplemented
        return (self.allow, self.ask, self.deny) == (other.allow, other.ask, other.deny)

    __hash__ = None  # type: ignore[assignment]  # equal by value, like the lists it holds

    def extended(
        self,
        *,
        allow: Iterable[str | Rule] = (),
        ask: Iterable[str | Rule] = (),
        deny: Iterable[str | Rule] = (),
    ) -> RuleSet:
        """A new set with more rules (approvals for a session, `--allowedTools`); no duplicates."""
        combined = RuleSet(allow, ask, deny)
        return RuleSet(
            _union(self.allow, combined.allow),
            _union(self.ask, combined.ask),
            _union(self.deny, combined.deny),
        )


def tool_hidden(tool_name: str, rules: RuleSet) -> bool:
    """Whether a bare deny rule (`Bash`, `Read`, `mcp__x`) removes a tool from the model's list.

    Args:
        tool_name: The tool's name as the model sees it.
        rules: The rules in force.
    """
    if tool_name == "finish":  # it ends a peer call (`moot.permissions.decide`, step 1)
        return False
    names = (tool_name, "bash") if tool_name in COMMAND_TOOLS else (tool_name,)
    return any(
        rule.specifier is None and rule.restricts(name) for rule in rules.deny for name in names
    )


def _parse_all(kind: RuleKind, rules: Iterable[str | Rule]) -> tuple[Rule, ...]:
    if isinstance(rules, str):
        raise ValueError(f"permissions.{kind} must be a list of rules, not one string")
    parsed: list[Rule] = []
    for index, rule in enumerate(rules):
        if isinstance(rule, Rule):
            parsed.append(rule)
            continue
        try:
            parsed.append(parse_rule(rule))
        except ValueError as exc:
            raise ValueError(f"permissions.{kind}[{index}]: {exc}") from None
    return tuple(parsed)


def _union(first: tuple[Rule, ...], second: tuple[Rule, ...]) -> tuple[Rule, ...]:
    return first + tuple(rule for rule in second if rule not in first)


def read_denied(
    rules: RuleSet, root: Path, workspace_root: Path | None = None
) -> Callable[[str, bool], bool] | None:
    """A predicate for the paths `Read(...)` deny rules cover, for walks to hide them.

    Given a path relative to `root` (`/`-joined) and whether it is a directory. None when no
    deny rule speaks about reading files, so walks pay nothing.

    Args:
        rules: The rules in force.
        root: The directory walked: the workspace root, or an added root (`--add-dir`).
        workspace_root: The workspace root, which relative rules hang from, when `root` is
            not it.
    """
    denied = [r for r in rules.deny if r.path is not None and r.covers("read")]
    if not denied:
        return None
    base = str(root)
    anchor = base if workspace_root is None else str(workspace_root)

    def hidden(rel: str, is_dir: bool) -> bool:
        path = f"{base}/{rel}" if rel and rel != "." else base
        return any(
            rule.path is not None and rule.path.matches(path, anchor, is_dir=is_dir)
            for rule in denied
        )

    return hidden

"""Split a shell command into every simple command it would run, for permission rules.

Issue 6: a shell command runs only when every sub-command is allowed, so `git status && rm -rf
build` needs both, and a `Bash(rm:*)` denial must also catch `echo $(rm -rf /)`,
`bash -c 'rm -rf /'`, `find . | xargs rm` and `sudo rm -rf /`. `split_command` returns the simple
commands in source order (a command before the commands nested in it; commands in here-doc
bodies last), or None when it cannot say for sure what would run, and then the caller asks.

None comes back for: unbalanced quotes, parentheses or keywords; a here-doc with no closing
delimiter line; function definitions, `((...))`, `for ((...))`, `coproc`, arrays;
expansions that run a variable's value as code (`$((x))`, `${a[i]}`, `${s:n}`, `${!x}`,
`${x@P}`: with `x='a[$(rm x)]'` each runs rm); a command name the shell computes (`$CMD`,
`"$(which rm)"`, `r*`, `{rm,-rf,/}`); wrapper options it does not know, or that an unquoted
expansion could turn into other words (`sudo $OPTS rm`); `eval` of several words. `if`,
`while`, `until`, `for`, `select`, `case`, `[[ ]]`, subshells and brace groups are parsed, and
the commands of every branch are reported whether or not that branch would run.

Expansions and globs inside words stay as written (`$HOME`, `${x}`, `$(date)`, `*.py`), so rules
match what was typed. A wrapper is reported and so is what it runs (`sudo rm x` gives `sudo rm x`
and `rm x`), recursively: `sudo`, `doas`, `su -c`, `runuser -c`, `env`, `xargs`, `nohup`, `nice`,
`time`, `timeout`, `setsid`, `stdbuf`, `command`, `builtin`, `exec`, `busybox`, `toybox`,
`find -exec`, `sh`/`bash`/... `-c`, `eval`, `chroot`, `unshare`, `setpriv`, `flock`, `watch`,
... (`shell_wrappers`), and programs that run commands through their options or script: sed's
`e`, `git rebase -x`, `sort --compress-program`, `trap`, `alias`, ... (`shell_runners`). What
runs commands that are on no command line is reported with `SubCommand.unseen` set: a shell
reading its script from a pipe, a here-string or `/dev/stdin`, `. <(...)`, `bash -c "$x"`,
awk's `system()`, `git -c`. Each command also carries the files its options and operands write
(`SubCommand.writes`: `tee F`, `sort -o F`, `git log --output=F`; `shell_writes`). Other
programs that run commands (`python -c`, `ssh host cmd`, `make`, a script file: `bash x.sh`)
are plain commands here: every sub-command must be allowed, so they need an allow rule of
their own, and whoever allows them allows what they run.

Why hand-written: `bashlex` (a port of bash's parser) is GPL-3.0-or-later, which moot
(Apache-2.0) should not depend on, and `shlex` splits words but knows nothing of `$(...)`,
backticks, here-docs or operators glued to words (`a&&b`, `echo hi>out`). This is a small
recursive-descent parser for bash's grammar whose lexer and parser share one position, so
`$(...)` is parsed by the same code as the top level and ends exactly where bash ends it (quotes,
nested parentheses, `case` patterns and comments inside). `shlex` only normalizes rule text.
The grammar is in `shell_parser`, its lexer in `shell_lexer`, the wrapper tables in
`shell_wrappers` and `shell_runners`, the files commands write in `shell_writes` (with GNU
option reading in `shell_getopt` and sed's script in `shell_sed`), and the values they share in
`shell_types`.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from moot.permissions.shell_types import Redirect, SubCommand, Unparseable

__all__ = ["Redirect", "SubCommand", "matches_prefix", "split_command"]


def split_command(command: str) -> list[SubCommand] | None:
    """Every simple command that `command` would run, or None when that cannot be known.

    Args:
        command: A bash command line, possibly several lines.

    Returns:
        The sub-commands in source order (empty for a blank line or a comment), or None when the
        command cannot be parsed with confidence; the caller should then ask.
    """
    if "\0" in command:
        return None
    from moot.permissions.shell_parser import Parser  # lazy: only bash calls need the parser

    try:
        return Parser(command).parse()
    except (Unparseable, RecursionError):
        return None


_BASH_RULE = re.compile(r"Bash(?:\((?P<spec>.*)\))?", re.DOTALL)


def matches_prefix(sub: SubCommand, rule: str, *, by_name: bool = False) -> bool:
    """Whether a `Bash` rule matches one sub-command.

    Rule forms (the widely used convention; `Bash(...)` may be omitted):
    `Bash` or `Bash(*)` matches any command. `Bash(git status)` matches exactly that text.
    `Bash(npm run test:*)` matches text that starts with `npm run test`, as a plain string
    prefix: `npm run test`, `npm run test --watch` and also `npm run test:unit` and
    `npm run testing`. `Bash(git log *)` matches `git log` and `git log` followed by a space and
    anything, so not `git logs`. Any other `*` is literal. Rule words are normalized like
    commands (quotes removed, whitespace collapsed), and `assignments` are not looked at.

    `by_name` is how deny and ask rules match: a program given by a path is matched by its
    name as well, on both sides, so `Bash(rm:*)` speaks about `/bin/rm x`, `/usr/bin/rm x` and
    `./rm x` too. Allow rules match as written: `Bash(rm:*)` does not allow `./rm`, a program
    of the workspace that only shares the name (nor `/bin/rm`; `Bash(/bin/rm:*)` does).

    Raises:
        ValueError: The rule is empty or its quotes do not balance.
    """
    match = _BASH_RULE.fullmatch(rule.strip())
    spec = rule if match is None else match.group("spec")
    if spec is None or spec.strip() == "*":
        return True
    spec = spec.strip()
    if _matches(sub.text, spec, named=False):
        return True
    return by_name and _matches(_named(sub.words), spec, named=True)


def _matches(text: str, spec: str, *, named: bool) -> bool:
    if spec.endswith(":*"):
        return text.startswith(_normalize(spec[:-2], named))
    if spec.endswith(" *"):
        prefix = _normalize(spec[:-2], named)
        return text == prefix or text.startswith(prefix + " ")
    return text == _normalize(spec, named)


def _named(words: tuple[str, ...]) -> str:
    """The command's text with its program given by name (`/bin/rm x` is `rm x`)."""
    if not words:
        return ""
    return " ".join((posixpath.basename(words[0].rstrip("/")) or words[0], *words[1:]))


def _normalize(spec: str, named: bool = False) -> str:
    try:
        words = shlex.split(spec)
    except ValueError as error:
        raise ValueError(f"cannot read the Bash rule {spec!r}: {error}") from None
    if not words:
        raise ValueError("a Bash rule needs a command, `*`, or no parentheses at all")
    return _named(tuple(words)) if named else " ".join(words)

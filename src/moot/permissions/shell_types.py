"""The values the shell modules pass between them: what `split_command` returns (`SubCommand`,
`Redirect`), the lexer's `Word`, and `Unparseable`, which any stage raises when it cannot say for
sure what a command would run. A leaf module, so the parser, the lexer and the wrapper table can
all import it without importing each other in a circle.
"""

from __future__ import annotations

import re

import msgspec


class Redirect(msgspec.Struct, frozen=True):
    """One redirection of a command (or of the subshell, group or loop around it)."""

    op: str
    """The operator as written, with its descriptor number: `>`, `>>`, `<`, `2>`, `&>`, `>&`,
    `2>&`, `<<` / `<<-` (a here-doc), `<<<` (a here-string)."""
    target: str
    """The file after quote removal; a descriptor or `-` after the `&` forms; a here-doc's
    delimiter."""


class SubCommand(msgspec.Struct, frozen=True):
    """One simple command that would run."""

    words: tuple[str, ...]
    """The command name and its arguments after quote removal, expansions kept as written.
    Empty for a statement that only assigns or redirects (`X=1`, `> out.txt`)."""
    text: str
    """The words joined by single spaces: what `Bash(...)` rules match."""
    assignments: tuple[str, ...] = ()
    """Leading `NAME=value` words (after quote removal): the command's extra environment. Rules
    ignore them; the decision function should weigh them (`PATH=.`, `LD_PRELOAD=...`)."""
    redirects: tuple[Redirect, ...] = ()
    """Its redirections, then those of every compound command around it."""
    writes: tuple[str, ...] = ()
    """Files its options and operands write (`tee F`, `cp a F`, `sort -o F`, `git log
    --output=F`; see `moot.permissions.shell_writes`), as written; `redirects` has the rest."""
    writes_unnamed: bool = False
    """It may also write files its command line does not name (`curl -O`, `find -delete`)."""
    unseen: bool = False
    """It runs commands the command line does not show, so no rule can be checked against
    them: a shell reading its script from its input (a pipe, a here-string, `/dev/stdin`) or
    from a process substitution, `su` or `chroot` starting one, `sed`'s `e` of the pattern
    space (see `moot.permissions.shell_wrappers`)."""
    appended: bool = False
    """It is run by `xargs`, which adds the arguments it reads: its words are not all of them."""


def names(text: str) -> frozenset[str]:
    return frozenset(text.split())


class Unparseable(Exception):
    """Raised anywhere in the parser; `split_command` turns it into None."""


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class Word(msgspec.Struct, frozen=True):
    raw: str
    value: str
    quoted: bool = False
    """Some of it is quoted or escaped: not a keyword; a quoted here-doc delimiter."""
    dynamic: bool = False
    """The shell substitutes something into it when it runs (`$x`, `$(...)`, backticks)."""
    splits: bool = False
    """A substitution outside double quotes: it may become several words."""
    pattern: bool = False
    """Unquoted glob or brace-expansion characters: it may become other words."""

"""Wrapper commands: the ones that run another command given in their arguments.

`WRAPPERS` maps a command name (`sudo`, `doas`, `su`, `runuser`, `env`, `xargs`, `nohup`,
`nice`, `time`, `timeout`, `setsid`, `stdbuf`, `command`, `builtin`, `exec`, `busybox`,
`toybox`, `find`, `eval`, `sh`/`bash`/...) to a function that, given its arguments, returns the
commands it runs (`Inner`) or the scripts it runs (str, parsed again by the caller). Options a
wrapper does not know, or that an unquoted expansion could change, raise `Unparseable`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from moot.permissions.shell_types import ASSIGNMENT, Unparseable, Word, names


class Inner(msgspec.Struct, frozen=True):
    words: Sequence[Word]
    assignments: Sequence[str] = ()


_Wrapper = Callable[[Sequence[Word]], list[Inner | str]]
"""Given a wrapper's arguments: the commands it runs, or scripts (str) to parse."""


class _Options(msgspec.Struct, frozen=True):
    """A wrapper's options (GNU getopt, stopping at the first operand) and what follows them.

    An unknown option raises, since its argument could be taken for the command.
    """

    flags: str = ""
    with_arg: str = ""
    """Short options taking an argument, glued on or as the next word."""
    attached: str = ""
    """Short options whose optional argument can only be glued on (`xargs -i{}`)."""
    no_run: str = ""
    """Short options after which nothing is run (`sudo -l`, `command -v`)."""
    long_flags: frozenset[str] = frozenset()
    long_with_arg: frozenset[str] = frozenset()
    long_no_run: frozenset[str] = frozenset()
    operands: int = 0
    """Operands between the options and the command (`timeout DURATION`)."""
    assignments: bool = False
    """`NAME=value` words may come before the command (`env`, `sudo`)."""
    numeric: bool = False
    """`-N` is an option (`nice -10`)."""
    dash: bool = False
    """A lone `-` is an option (`env -`)."""

    def __call__(self, args: Sequence[Word]) -> list[Inner | str]:
        i = 0
        while i < len(args):
            value = args[i].value
            if value == "--":
                i += 1
                break
            if not value.startswith("-") or (value == "-" and not self.dash):
                break
            if value.startswith("--"):
                name, equals, _ = value[2:].partition("=")
                if name in self.long_no_run or name in ("help", "version"):
                    return []
                if name in self.long_with_arg:
                    i += 0 if equals else 1
                elif name not in self.long_flags:
                    raise Unparseable
            elif not (self.numeric and value[1:].isdigit()):
                for position, letter in enumerate(value[1:], start=2):
                    if letter in self.no_run:
                        return []
                    if letter in self.with_arg:
                        i += 1 if position == len(value) else 0
                        break
                    if letter in self.attached:
                        break
                    if letter not in self.flags:
                        raise Unparseable
            i += 1
        i += self.operands
        assignments = []
        while self.assignments and i < len(args) and ASSIGNMENT.match(args[i].raw):
            assignments.append(args[i].value)
            i += 1
        if any(word.splits for word in args[: i + 1]):
            raise Unparseable  # `sudo $OPTS rm`: the split words could name another command
        return [Inner(args[i:], assignments)] if i < len(args) else []


def _shell(args: Sequence[Word]) -> list[Inner | str]:
    """`bash -c SCRIPT`: the script is parsed too. A script file or stdin is not looked into."""
    command, i = False, 0
    while i < len(args):
        word = args[i]
        if word.splits:
            raise Unparseable
        value = word.value
        if value in ("-", "--"):
            i += 1
            break
        if value in ("--rcfile", "--init-file"):
            i += 2
        elif value.startswith("--"):
            i += 1
        elif len(value) > 1 and value[0] in "-+":
            command = command or (value[0] == "-" and "c" in value)
            i += 1 + value.count("o") + value.count("O")  # `-o pipefail` takes the next word
        else:
            break
    if not command:
        return []
    if i >= len(args) or args[i].dynamic:
        raise Unparseable  # `bash -c "$SCRIPT"`: the script is not known until it runs
    return [args[i].value]


def _eval(args: Sequence[Word]) -> list[Inner | str]:
    if not args:
        return []
    if len(args) > 1 or args[0].dynamic:
        raise Unparseable
    return [args[0].value]


def _su(args: Sequence[Word]) -> list[Inner | str]:
    """`su [-] [user] -c SCRIPT`: the script is parsed too; `runuser -u USER [--] CMD`: CMD."""
    runs: list[Inner | str] = []
    user_mode = False  # `runuser -u`: the operands are a command, not a user and shell arguments
    i = 0
    while i < len(args):
        word, value = args[i], args[i].value
        if word.splits:
            raise Unparseable
        if value == "--":
            if not user_mode and i + 1 < len(args):
                raise Unparseable  # `su root -- -c x`: the rest goes to the shell
            i += 1
            break
        name, equals, rest = value.partition("=")
        script: tuple[str, Word] | None = None
        if name in ("--command", "--session-command"):
            if not equals:
                i += 1
                word, rest = _argument(args, i)
            script = rest, word
        elif value.startswith("-") and value not in ("-", "--login"):
            for position, letter in enumerate(value[1:], start=2):
                if letter in "cCsgGwu":  # these take an argument, glued on or the next word
                    glued = value[position:]
                    if not glued:
                        i += 1
                        word, glued = _argument(args, i)
                    script = (glued, word) if letter in "cC" else None
                    user_mode = user_mode or letter == "u"
                    break
                if letter not in "lmpfPT":
                    raise Unparseable
        elif user_mode:
            break
        if script is not None:
            if script[1].dynamic:
                raise Unparseable
            runs.append(script[0])
        i += 1
    if user_mode and i < len(args):
        runs.append(Inner(args[i:]))
    return runs


def _argument(args: Sequence[Word], i: int) -> tuple[Word, str]:
    if i >= len(args):
        raise Unparseable
    return args[i], args[i].value


_FIND_ACTIONS = names("-exec -execdir -ok -okdir")


def _find(args: Sequence[Word]) -> list[Inner | str]:
    """`find ... -exec CMD ... ;` (or `+`): each CMD."""
    if any(word.splits for word in args):
        raise Unparseable  # `find . $X` could be `find . -exec ...`
    inners: list[Inner | str] = []
    i = 0
    while i < len(args):
        if args[i].value in _FIND_ACTIONS:
            ends = [j for j in range(i + 1, len(args)) if args[j].value in (";", "+")]
            if not ends or ends[0] == i + 1 or "{}" in args[i + 1].value:
                raise Unparseable  # no end, no command, or the found file is the command
            inners.append(Inner(args[i + 1 : ends[0]]))
            i = ends[0]
        i += 1
    return inners


WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Options(
        flags="AbBEHknNPS",  # not `-s`/`-i`: they hand the command to a shell, quoted its way
        with_arg="CDgpRrTtUu",
        no_run="eKlVv",
        long_flags=names(
            "askpass background bell preserve-env set-home login no-update non-interactive"
            " preserve-groups reset-timestamp stdin shell"
        ),
        long_with_arg=names(
            "chdir chroot close-from command-timeout group host other-user prompt role type user"
        ),
        long_no_run=names("edit list remove-timestamp validate"),
        assignments=True,
    ),
    "doas": _Options(flags="ns", with_arg="u", no_run="LC"),
    "env": _Options(
        flags="i0v",
        with_arg="uC",
        long_flags=names("ignore-environment null debug"),
        long_with_arg=names("unset chdir"),
        assignments=True,
        dash=True,
    ),
    "xargs": _Options(
        flags="0oprtx",
        with_arg="aEdILnPs",
        attached="eil",
        long_flags=names(
            "null interactive no-run-if-empty verbose exit open-tty show-limits replace eof"
            " max-lines"
        ),
        long_with_arg=names("arg-file delimiter max-args max-procs max-chars process-slot-var"),
    ),
    "nohup": _Options(),
    "nice": _Options(with_arg="n", long_with_arg=names("adjustment"), numeric=True),
    "time": _Options(
        flags="apqv",
        with_arg="fo",
        long_flags=names("append portability quiet verbose"),
        long_with_arg=names("format output"),
    ),
    "timeout": _Options(
        flags="v",
        with_arg="ks",
        long_flags=names("foreground preserve-status verbose"),
        long_with_arg=names("kill-after signal"),
        operands=1,
    ),
    "setsid": _Options(flags="cfw", long_flags=names("ctty fork wait")),
    "stdbuf": _Options(with_arg="eio", long_with_arg=names("error input output")),
    "command": _Options(flags="p", no_run="vV"),
    "builtin": _Options(),
    "busybox": _Options(),
    "toybox": _Options(),
    "exec": _Options(flags="cl", with_arg="a"),
    "eval": _eval,
    "find": _find,
    "su": _su,
    "runuser": _su,
    **dict.fromkeys(names("sh bash dash zsh ksh mksh ash"), _shell),
}

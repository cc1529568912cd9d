"""Programs that run commands through their options or their script, read like wrappers.

Allow lists treat many of these as filters or plain tools, and deny rules never see what they
run unless it is read out: `sed -n '1e rm x' f`, `awk 'BEGIN{system("rm x")}'`, `git -c
core.pager='rm x' log`, `sort --compress-program=./evil`, `watch rm x`, `flock f -c 'rm x'`,
`strace -o '|rm x' ls`. `RUNNERS` maps each name to a `shell_wrappers.Wrapper`: the commands
it runs (`Inner`), scripts it hands to a shell (str), or `UNSEEN` where they are on no command
line (sed's `e` of the pattern space, awk's `system()` and pipes, git's `-c` configuration,
`parallel`, `at`, `script` and `sg` without a command, `enable -f`). Builtins that arrange for
a command to run later are read the same way: `trap ACTION`, `alias name=VALUE`,
`hash -p PATH name`. A script in a file the command line
names (`sed -f x.sed`, `awk -f x.awk`) is not looked into, as for a shell (see
`shell_wrappers`), unless it is the program's input (`-f /dev/stdin`): then it is `UNSEEN`.

Interpreters (`python -c`, `perl -e`, `node -e`, `ruby -e`) run code, not commands: a
`Bash(...)` rule does not look into code, and whoever allows an interpreter allows any code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from moot.permissions.shell_getopt import SORT, UnknownOption, getopt
from moot.permissions.shell_getopt import Options as GetoptOptions
from moot.permissions.shell_sed import read_sed
from moot.permissions.shell_types import Unparseable, Word, names
from moot.permissions.shell_wrappers import (
    UNSEEN,
    Inner,
    Options,
    Runs,
    Unseen,
    Wrapper,
    reads_input,
)


def _script(*words: Word) -> str | Unseen:
    """The script a shell is handed (the words joined by spaces), known only when literal."""
    if any(word.dynamic for word in words):
        return UNSEEN
    return " ".join(word.value for word in words)


def _word(value: str) -> Word:
    return Word(value, value)


def _sed(args: Sequence[Word]) -> Runs:
    """sed's `e command` runs the command; `e` alone and `s///e` run the pattern space."""
    call = read_sed([word.value for word in args])
    if call.sandboxed:
        return []  # sed itself refuses `e`, `r` and `w`
    if any(word.dynamic and word.value in call.scripts for word in args):
        return [UNSEEN]  # `sed "$S"`: the script, `e` commands and all, is known at run time
    runs: Runs = list(call.script.runs)
    stdin = any(_INPUT_NAME.fullmatch(name) for name in call.from_file)
    if call.script.runs_input or stdin:
        runs.append(UNSEEN)
    return runs


_INPUT_NAME = re.compile(r"-|/dev/stdin|/dev/fd/[0-9]+|/proc/[^/]+/fd/[0-9]+|<\(.*|\$.*", re.DOTALL)
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;{}\n]*(?<!\|)\|(?!\|)")
"""awk's `system(...)` and its pipes: `print ... | "cmd"`, `"cmd" | getline`, gawk's `|&`
(a `|` in a pattern, `/a|b/`, or `||` is neither)."""


def _awk(args: Sequence[Word]) -> Runs:
    i = 0
    programs: list[Word] = []
    while i < len(args) and args[i].value.startswith("-") and args[i].value != "-":
        option = args[i].value
        if option == "--":
            i += 1
            break
        if option in ("-F", "-v", "-f", "-e", "--source", "--file"):
            if i + 1 >= len(args):
                raise Unparseable
            if option != "-F" and option != "-v":
                program = args[i + 1]
                if option in ("-f", "--file") and not reads_input(program):
                    program = _word("")  # a program file: see the module docstring
                programs.append(program)
            i += 2
        elif option.startswith(("-F", "-v")):
            i += 1
        else:
            raise Unparseable  # gawk's `-l` loads a library, `-E` a program file, ...
    if not programs:
        if i >= len(args):
            return []
        programs.append(args[i])
    for program in programs:
        if program.dynamic or reads_input(program) or _AWK_RUNS.search(program.value):
            return [UNSEEN]
    return []


_GIT_TRANSPORT_SCRIPTS = {
    "fetch": ("", "--upload-pack"),
    "pull": ("", "--upload-pack"),
    "clone": ("-u", "--upload-pack"),
    "ls-remote": ("-u", "--upload-pack"),
    "fetch-pack": ("", "--upload-pack"),
    "push": ("", "--receive-pack"),
    "send-pack": ("", "--receive-pack"),
    "archive": ("", "--exec"),
}
"""git commands whose option names the program git starts (through a shell) at the other end
of a local or ssh transport: `git ls-remote -u 'rm x' .` runs `rm x` here."""
_GIT_PUSH_EXEC = ("push", "send-pack", "fetch-pack")
"""Commands that also take `--exec`, an old name of the option above."""
_GIT_FILTERS = names(
    "--tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter"
    " --tag-name-filter --setup"
)
"""filter-branch's options whose values are shell scripts it runs."""
_GIT_SEND_EMAIL = ("--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server")
"""send-email's options that name a command (`--smtp-server` when it is a path)."""


def _git(args: Sequence[Word]) -> Runs:
    """git's `-c`/`--config-env` (a pager, an alias, an editor, a hook path...) and
    `--exec-path` can make git run anything; `grep -O`, `difftool -x` run a given command;
    `rebase -x`, `submodule foreach` a script; `bisect run` a command; `fetch`, `clone`,
    `ls-remote`, `push`, `archive` the `--upload-pack`/`--receive-pack`/`--exec` program, and
    `filter-branch` its filters, through a shell; `send-email` its `--*-cmd`; `instaweb` a
    web server."""
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        option = args[i].value
        if option in ("-c", "--config-env") or option.startswith(("--config-env=", "--exec-path")):
            return [UNSEEN]
        i += 2 if option in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(args):
        return []
    command, rest = args[i].value, args[i + 1 :]
    values = [word.value for word in rest]
    if command == "grep" and any(
        v.startswith(("-O", "--open-files-in-pager")) or _cluster_has(v, "O") for v in values
    ):
        return [UNSEEN]
    if command == "difftool" and any(v.startswith(("-x", "--extcmd")) for v in values):
        return [UNSEEN]
    if command == "rebase":
        return [_script(word) for word in _option_values(rest, "-x", "--exec")]
    if command == "submodule" and "foreach" in values:
        at = values.index("foreach") + 1
        while at < len(values) and values[at].startswith("-"):
            at += 1
        return [_script(*rest[at:])] if at < len(values) else []
    if command == "bisect" and values[:1] == ["run"] and len(rest) > 1:
        return [Inner(rest[1:])]
    if command in _GIT_TRANSPORT_SCRIPTS:
        short, long = _GIT_TRANSPORT_SCRIPTS[command]
        given = _option_values(rest, short or long, long)
        if command in _GIT_PUSH_EXEC:
            given += _option_values(rest, "--exec", "--exec")
        return [_script(word) for word in given]
    if command == "filter-branch":
        return [
            _script(word)
            for option in _GIT_FILTERS
            for word in _option_values(rest, option, option)
        ]
    if command == "send-email" and any(v.startswith(_GIT_SEND_EMAIL) for v in values):
        return [UNSEEN]
    if command == "instaweb":
        return [UNSEEN]
    return []


def _cluster_has(value: str, letter: str) -> bool:
    return value.startswith("-") and not value.startswith("--") and letter in value


def _option_values(args: Sequence[Word], short: str, long: str) -> list[Word]:
    """The words given to `-x VALUE`, `-xVALUE`, `--long=VALUE` or `--long VALUE`."""
    found: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value in (short, long) and i + 1 < len(args):
            found.append(args[i + 1])
        elif value.startswith(long + "="):
            found.append(_word(value.partition("=")[2]) if not word.dynamic else word)
        elif value.startswith(short) and len(value) > len(short) and not value.startswith("--"):
            found.append(_word(value[len(short) :]) if not word.dynamic else word)
    return found


def _sort(args: Sequence[Word]) -> Runs:
    """`sort --compress-program=PROG` runs PROG (with `-d` to decompress)."""
    try:
        parsed = getopt(SORT, [word.value for word in args])
    except UnknownOption:
        raise Unparseable from None
    programs = parsed.values("--compress-program")
    if programs and any(word.dynamic for word in args):
        raise Unparseable
    return [Inner((_word(program),)) for program in programs]


def _rg(args: Sequence[Word]) -> Runs:
    """`rg --pre CMD` runs CMD on every file it searches."""
    return [Inner((word,), appended=True) for word in _option_values(args, "--pre", "--pre")]


_TAR_RUNS = (
    *("--to-command", "--checkpoint-action", "--info-script", "--new-volume-script"),
    *("--use-compress-program", "--rsh-command", "--rmt-command"),
)


def _tar(args: Sequence[Word]) -> Runs:
    """tar runs a program for `-I`/`--use-compress-program`, `--to-command`, `-F`, ..."""
    for at, word in enumerate(args):
        value = word.value
        if value.startswith(_TAR_RUNS):
            return [UNSEEN]
        if value.startswith("--"):
            continue
        letters = value[1:] if value.startswith("-") else (value if at == 0 else "")
        if "I" in letters or "F" in letters:  # `-I PROG`, `-F SCRIPT`, old style `cIf PROG`
            return [UNSEEN]
    return []


_STRACE = Options(
    flags="AcCdDfFikNnqrtTvwxyzZY",
    with_arg="abeEIoOpPsSuUX",
    no_run="hV",
    long_flags=names(
        "follow-forks output-separately summary-only summary summary-wall-clock seccomp-bpf"
        " quiet decode-fds decode-pids relative-timestamps absolute-timestamps syscall-times"
        " instruction-pointer stack-trace no-abbrev verbose raw"
    ),
    long_with_arg=names(
        "output trace signal status trace-path attach user env string-limit columns"
        " trace-fds daemonize"
    ),
)


def _strace(args: Sequence[Word]) -> Runs:
    """The traced command; `-o '|cmd'` and `-o '!cmd'` pipe the trace into a command."""
    runs = _STRACE(args)
    for word in args:
        for lead in ("--output=", "-o", ""):
            if word.value.startswith(lead) and word.value[len(lead) : len(lead) + 1] in "|!":
                if len(word.value) > len(lead):
                    runs.append(UNSEEN if word.dynamic else word.value[len(lead) + 1 :])
                break
    return runs


_WATCH = Options(
    flags="bcegptwx",
    with_arg="nq",
    attached="d",
    no_run="hv",
    long_flags=names(
        "beep color no-color differences errexit chgexit precise no-title no-wrap exec no-rerun"
    ),
    long_with_arg=names("interval equexit"),
)


def _watch(args: Sequence[Word]) -> Runs:
    """watch runs its words joined by spaces through `sh -c`, unless `-x` execs them."""
    runs = _WATCH(args)
    if not runs:
        return runs
    (inner,) = runs
    assert isinstance(inner, Inner)
    options = [w.value for w in args[: len(args) - len(inner.words)]]
    if "--exec" in options or any(_cluster_has(v, "x") for v in options):
        return runs
    return [_script(*inner.words)]


_SCRIPT = GetoptOptions(
    flags="aefqhV",
    with_arg="cIOBTEmo",
    optional="t",
    long_flags=names("append return flush force quiet"),
    long_with_arg=names("command log-in log-out log-io log-timing echo logging-format"),
    long_optional=names("timing output-limit"),
)


def _script_command(args: Sequence[Word]) -> Runs:
    """`script -c CMD` runs CMD through a shell; without it, a shell reading its input."""
    values = [word.value for word in args]
    try:
        parsed = getopt(_SCRIPT, values)
    except UnknownOption:
        raise Unparseable from None
    if parsed.has("-h", "-V", "--help", "--version"):
        return []
    commands = parsed.values("-c", "--command")
    if not commands or any(word.dynamic for word in args):
        return [UNSEEN]
    return list(commands)


_FLOCK = Options(
    flags="sxeunoF",
    with_arg="wE",
    no_run="hV",
    long_flags=names("shared exclusive unlock nonblock nb close no-fork verbose"),
    long_with_arg=names("wait timeout conflict-exit-code"),
    operands=1,
)


def _flock(args: Sequence[Word]) -> Runs:
    """`flock FILE CMD ...`, or `flock FILE -c SCRIPT` (through a shell); `flock FD` runs
    nothing."""
    runs = _FLOCK(args)
    if not runs:
        return runs
    (inner,) = runs
    assert isinstance(inner, Inner)
    first = inner.words[0].value
    if first in ("-c", "--command"):
        if len(inner.words) < 2:
            raise Unparseable
        return [_script(inner.words[1])]
    if first.startswith("--command="):
        script = _script(inner.words[0])
        return [script if isinstance(script, Unseen) else script.partition("=")[2]]
    return runs


def _sg(args: Sequence[Word]) -> Runs:
    """`sg GROUP [-c] COMMAND` runs COMMAND through a shell; `sg GROUP` starts one."""
    i = 1 if args and args[0].value == "-" else 0
    i += 1  # the group
    if i < len(args) and args[i].value == "-c":
        i += 1
    if i >= len(args):
        return [UNSEEN]
    return [_script(*args[i:])]


def _at(args: Sequence[Word]) -> Runs:
    """at and batch run commands they read from their input, or from `-f FILE`."""
    values = [word.value for word in args]
    if any(v in ("-l", "-r", "-d", "-c", "-V", "-h") for v in values):
        return []  # list, remove, show: nothing is queued
    if "-f" in values:
        at = values.index("-f") + 1
        return [UNSEEN] if at >= len(args) or reads_input(args[at]) else []
    return [UNSEEN]


def _trap(args: Sequence[Word]) -> Runs:
    """`trap ACTION SIGNAL...` runs ACTION as a script when the signal comes (EXIT: at the end)."""
    if args and args[0].value == "--":
        args = args[1:]
    if len(args) < 2 or args[0].value in ("-", "", "-l", "-p", "-P"):
        return []  # listing, or resetting signals
    return [_script(args[0])]


def _alias(args: Sequence[Word]) -> Runs:
    """An alias's value runs where its name is used (`shopt -s expand_aliases`): a script."""
    runs: Runs = []
    for word in args:
        _, equals, value = word.value.partition("=")
        if equals and not word.value.startswith("-"):
            runs.append(UNSEEN if word.dynamic else value)
    return runs


def _hash(args: Sequence[Word]) -> Runs:
    """`hash -p PATH NAME` makes NAME run PATH: the program it names is what runs."""
    values = [word.value for word in args]
    if "-p" in values[:-1]:
        return [Inner((args[values.index("-p") + 1],))]
    return []


def _enable(args: Sequence[Word]) -> Runs:
    """`enable -f FILE NAME` loads a builtin from a shared object: its code is unseen."""
    return [UNSEEN] if any(_cluster_has(word.value, "f") for word in args) else []


def _always_unseen(args: Sequence[Word]) -> Runs:
    """parallel builds its commands from what it reads; newgrp starts a shell."""
    if any(word.value in ("--help", "--version") for word in args):
        return []
    return [UNSEEN]


RUNNERS: dict[str, Wrapper] = {
    "sed": _sed,
    **dict.fromkeys(names("awk gawk mawk nawk"), _awk),
    "git": _git,
    "sort": _sort,
    "rg": _rg,
    "tar": _tar,
    "strace": _strace,
    "watch": _watch,
    "script": _script_command,
    "flock": _flock,
    "sg": _sg,
    "at": _at,
    "batch": _at,
    "trap": _trap,
    "alias": _alias,
    "hash": _hash,
    "enable": _enable,
    "parallel": _always_unseen,
    "newgrp": _always_unseen,
}

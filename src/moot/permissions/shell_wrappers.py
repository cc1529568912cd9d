"""Wrapper commands: the ones that run another command given in their arguments.

`WRAPPERS` maps a command name (`sudo`, `doas`, `su`, `runuser`, `env`, `xargs`, `nohup`,
`nice`, `time`, `timeout`, `setsid`, `stdbuf`, `command`, `builtin`, `exec`, `busybox`,
`toybox`, `find`, `eval`, `.`/`source`, `sh`/`bash`/..., and `chroot`, `unshare`, `nsenter`,
`fakeroot`, `setpriv`, `ionice`, `chrt`, `taskset`, `pkexec`) to a function that, given its
arguments, returns the commands it runs (`Inner`), the scripts it runs (str, parsed again by
the caller), or `UNSEEN`: commands that are on no command line. A shell reads its script from
its input when it is given none (`echo 'rm x' | sh`, `bash <<< 'rm x'`, `bash -s`), or from a
file that is its input (`sh /dev/stdin`, `. /dev/fd/0`, `source <(...)`); `su`, `chroot`,
`unshare`, `doas -s` with no command start such a shell. Options a wrapper does not know, or
that an unquoted expansion could change, raise `Unparseable`. Programs that run commands by
their options (`sed`, `awk`, `git -c`, `watch`, `flock`, ...) are in `shell_runners`.

A shell given a script file (`bash build.sh`, `. venv/bin/activate`) runs what the file holds,
which the command line does not show, like `./build.sh` or `make`: the rules see the file's
name, and whoever allows it allows what it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import msgspec

from moot.permissions.shell_types import ASSIGNMENT, Unparseable, Word, names


class Inner(msgspec.Struct, frozen=True):
    words: Sequence[Word]
    assignments: Sequence[str] = ()
    appended: bool = False
    """`xargs` adds the arguments it reads to these words."""


class Unseen(msgspec.Struct, frozen=True):
    """The wrapper runs commands that are on no command line (a shell reading its input)."""


UNSEEN = Unseen()
Runs = list[Inner | str | Unseen]
Wrapper = Callable[[Sequence[Word]], Runs]
"""Given a wrapper's arguments: the commands it runs, scripts (str) to parse, or `UNSEEN`."""

_INPUT_FILE = re.compile(r"-|/dev/stdin|/dev/fd/[0-9]+|/proc/(?:self|thread-self|[0-9]+)/fd/[0-9]+")
"""A script file that is the shell's own input, or a pipe: what it holds is on no command line."""


def reads_input(word: Word) -> bool:
    """Whether a script file named by `word` is the program's input (`/dev/stdin`), a
    process substitution (`<(...)`), or a name known only when the line runs (`$F`, `*.sh`)."""
    return word.dynamic or word.pattern or _INPUT_FILE.fullmatch(word.value) is not None


def _process_substitution(word: Word) -> bool:
    """`<(...)`: one file name (`/dev/fd/63`), never split, never an option."""
    return word.raw.startswith(("<(", ">("))


def computed(word: Word) -> Word:
    """`word` as one word whose value is known only at run time (xargs' and find's `{}`)."""
    return msgspec.structs.replace(word, dynamic=True)


class Options(msgspec.Struct, frozen=True):
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
    shell: str = ""
    """Short options that start a shell, reading commands from its input (`doas -s`)."""
    bare_shell: bool = False
    """Given no command, it starts a shell, reading commands from its input (`chroot DIR`)."""

    def __call__(self, args: Sequence[Word]) -> Runs:
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
                    if letter in self.shell:
                        return [UNSEEN]
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
        if i < len(args):
            return [Inner(args[i:], assignments)]
        return [UNSEEN] if self.bare_shell else []


def _shell(args: Sequence[Word]) -> Runs:
    """`bash -c SCRIPT`: the script is parsed too. A shell reading its input is `UNSEEN`."""
    command = from_input = False
    i = 0
    while i < len(args):
        word = args[i]
        if word.splits and not _process_substitution(word):
            raise Unparseable  # `bash $FLAGS x`: the split words could be `-c ...`
        value = word.value
        if value in ("-", "--"):
            i += 1
            break
        if value in ("--help", "--version"):
            return []
        if value in ("--rcfile", "--init-file"):
            i += 2
        elif value.startswith("--"):
            i += 1
        elif len(value) > 1 and value[0] in "-+":
            command = command or (value[0] == "-" and "c" in value)
            from_input = from_input or (value[0] == "-" and "s" in value)
            i += 1 + value.count("o") + value.count("O")  # `-o pipefail` takes the next word
        else:
            break
    if command:
        if i >= len(args) or args[i].dynamic:
            return [UNSEEN]  # `bash -c "$SCRIPT"`, `xargs bash -c`: known when it runs
        return [args[i].value]
    if from_input or i >= len(args) or reads_input(args[i]):
        return [UNSEEN]  # `echo 'rm x' | sh`, `bash <<< 'rm x'`, `bash /dev/stdin`
    return []  # a script file: see the module docstring


def _source(args: Sequence[Word]) -> Runs:
    """`. FILE`, `source FILE`: a file that is the shell's input runs commands unseen."""
    if args and args[0].value == "--":
        args = args[1:]
    return [UNSEEN] if args and reads_input(args[0]) else []


def _eval(args: Sequence[Word]) -> Runs:
    if not args:
        return []
    if any(word.dynamic for word in args):
        return [UNSEEN]  # `eval "$(ssh-agent)"`: the script is known when it runs
    return [" ".join(word.value for word in args)]  # eval joins its words with spaces


def _su(args: Sequence[Word]) -> Runs:
    """`su [-] [user] -c SCRIPT`: the script is parsed too; `runuser -u USER [--] CMD`: CMD."""
    runs: Runs = []
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
            runs.append(UNSEEN if script[1].dynamic else script[0])
        i += 1
    if user_mode and i < len(args):
        runs.append(Inner(args[i:]))
    return runs or [UNSEEN]  # no command: a login shell, reading commands from its input


def _argument(args: Sequence[Word], i: int) -> tuple[Word, str]:
    if i >= len(args):
        raise Unparseable
    return args[i], args[i].value


_FIND_ACTIONS = names("-exec -execdir -ok -okdir")


def _find(args: Sequence[Word]) -> Runs:
    """`find ... -exec CMD ... ;` (or `+`): each CMD, its `{}` a name known only at run time."""
    if any(word.splits for word in args):
        raise Unparseable  # `find . $X` could be `find . -exec ...`
    inners: Runs = []
    i = 0
    while i < len(args):
        if args[i].value in _FIND_ACTIONS:
            ends = [j for j in range(i + 1, len(args)) if args[j].value in (";", "+")]
            if not ends or ends[0] == i + 1 or "{}" in args[i + 1].value:
                raise Unparseable  # no end, no command, or the found file is the command
            words = [computed(w) if "{}" in w.value else w for w in args[i + 1 : ends[0]]]
            inners.append(Inner(words))
            i = ends[0]
        i += 1
    return inners


_XARGS = Options(
    flags="0oprtx",
    with_arg="aEdILnPs",
    attached="eil",
    long_flags=names(
        "null interactive no-run-if-empty verbose exit open-tty show-limits replace eof max-lines"
    ),
    long_with_arg=names("arg-file delimiter max-args max-procs max-chars process-slot-var"),
)


def _xargs(args: Sequence[Word]) -> Runs:
    """The command xargs runs, with the arguments it reads added (or put in for `-I R`)."""
    runs = _XARGS(args)
    if not runs:
        return runs  # xargs runs echo
    (inner,) = runs
    assert isinstance(inner, Inner)
    replace = _replace_string([w.value for w in args[: len(args) - len(inner.words)]])
    words = [computed(w) if replace and replace in w.value else w for w in inner.words]
    return [Inner(words, inner.assignments, appended=True)]


def _replace_string(options: list[str]) -> str | None:
    """The string `-I R`, `-i[R]` or `--replace[=R]` has xargs replace with what it reads."""
    replace = None
    i = 0
    while i < len(options):
        option = options[i]
        i += 1
        if option.startswith("--replace"):
            replace = option.partition("=")[2] or "{}"
        elif option.startswith("-") and not option.startswith("--"):
            for at, letter in enumerate(option[1:], start=2):
                if letter in "Ii":
                    replace = option[at:] or (options[i] if letter == "I" else "{}")
                    break
                if letter in _XARGS.with_arg:
                    break
    return replace


WRAPPERS: dict[str, Wrapper] = {
    "sudo": Options(
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
    "doas": Options(flags="n", with_arg="u", no_run="LC", shell="s"),
    "env": Options(
        flags="i0v",
        with_arg="uC",
        long_flags=names("ignore-environment null debug"),
        long_with_arg=names("unset chdir"),
        assignments=True,
        dash=True,
    ),
    "xargs": _xargs,
    "nohup": Options(),
    "nice": Options(with_arg="n", long_with_arg=names("adjustment"), numeric=True),
    "time": Options(
        flags="apqv",
        with_arg="fo",
        long_flags=names("append portability quiet verbose"),
        long_with_arg=names("format output"),
    ),
    "timeout": Options(
        flags="v",
        with_arg="ks",
        long_flags=names("foreground preserve-status verbose"),
        long_with_arg=names("kill-after signal"),
        operands=1,
    ),
    "setsid": Options(flags="cfw", long_flags=names("ctty fork wait")),
    "stdbuf": Options(with_arg="eio", long_with_arg=names("error input output")),
    "command": Options(flags="p", no_run="vV"),
    "builtin": Options(),
    "busybox": Options(),
    "toybox": Options(),
    "exec": Options(flags="cl", with_arg="a"),
    "eval": _eval,
    "find": _find,
    "su": _su,
    "runuser": _su,
    ".": _source,
    "source": _source,
    **dict.fromkeys(names("sh bash dash zsh ksh mksh ash yash posh"), _shell),
    "chroot": Options(
        long_flags=names("skip-chdir"),
        long_with_arg=names("groups userspec"),
        operands=1,
        bare_shell=True,
    ),
    "unshare": Options(
        flags="muinpCTUfrc",
        with_arg="RwSG",
        long_flags=names(
            "mount uts ipc net pid user cgroup time fork kill-child mount-proc mount-binfmt"
            " map-root-user map-current-user map-auto keep-caps"
        ),
        long_with_arg=names(
            "propagation setgroups root wd setuid setgid map-user map-group map-users"
            " map-groups monotonic boottime"
        ),
        no_run="hV",
        bare_shell=True,
    ),
    "nsenter": Options(
        flags="aFZe",
        with_arg="tSG",
        attached="muinpCUTrwW",
        long_flags=names(
            "all mount uts ipc net pid cgroup user time preserve-credentials root wd env"
            " no-fork join-cgroup follow-context user-parent keep-caps"
        ),
        long_with_arg=names("target setuid setgid wdns"),
        no_run="hV",
        bare_shell=True,
    ),
    "fakeroot": Options(
        flags="u",
        with_arg="lfisb",
        long_flags=names("unknown-is-real"),
        long_with_arg=names("lib faked fd-base"),
        no_run="hv",
        bare_shell=True,
    ),
    "setpriv": Options(
        no_run="dhV",
        long_flags=names("nnp no-new-privs clear-groups keep-groups init-groups reset-env"),
        long_with_arg=names(
            "ruid euid reuid rgid egid regid groups inh-caps ambient-caps bounding-set"
            " securebits pdeathsig selinux-label apparmor-profile landlock-access landlock-rule"
        ),
        long_no_run=names("dump"),
    ),
    "ionice": Options(
        flags="t",
        with_arg="cn",
        no_run="pPuhV",
        long_flags=names("ignore"),
        long_with_arg=names("class classdata"),
        long_no_run=names("pid pgid uid"),
    ),
    "chrt": Options(
        flags="abdefiorRv",
        with_arg="TPD",
        no_run="pmhV",
        long_flags=names("all-tasks batch deadline fifo idle other rr reset-on-fork verbose ext"),
        long_with_arg=names("sched-runtime sched-period sched-deadline"),
        long_no_run=names("pid max"),
        operands=1,
    ),
    "taskset": Options(
        flags="ac",
        no_run="phV",
        long_flags=names("all-tasks cpu-list"),
        long_no_run=names("pid"),
        operands=1,
    ),
    "pkexec": Options(
        long_flags=names("keep-cwd disable-internal-agent"),
        long_with_arg=names("user"),
        bare_shell=True,
    ),
}

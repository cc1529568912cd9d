"""What a `sed` command line runs and writes, read from its options and its script.

`sed` looks like a filter, and allow lists treat it as one, but GNU sed's script can run shell
commands (`e command`; `e` alone and the `e` flag of `s` run the pattern space) and write
files (`w file`, `W file`, the `w` flag of `s`), and `-i` rewrites its input files. So
`sed -n '1e rm x' f` runs rm and `sed -n 'w keep.py' f` overwrites keep.py. `read_sed` finds
all of it: the scripts (`-e`, `--expression`, or the first operand), the files edited in
place, and every command of the script, parsed as GNU sed 4.9 parses it. Where this parser
could end a command somewhere else than sed does (a delimiter inside a bracket expression,
characters after a command), it gives up (`Unparseable`), and the caller asks.

`--sandbox` makes sed refuse `e`, `r` and `w`; then the script's commands run and write
nothing. A script read from a file (`-f`) is not looked into: its commands are not known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from moot.permissions.shell_getopt import Options, UnknownOption, getopt
from moot.permissions.shell_types import Unparseable, names

SED = Options(
    flags="nErsuzb",
    with_arg="efl",
    optional="i",
    long_flags=names(
        "quiet silent debug posix regexp-extended separate sandbox unbuffered null-data"
        " zero-terminated follow-symlinks binary"
    ),
    long_with_arg=frozenset({"expression", "file", "line-length"}),
    long_optional=frozenset({"in-place"}),
)
_SIMPLE = frozenset("=dDgGhHnNpPxzF")
_NUMBERED = frozenset("lLqQ")
_LABELLED = frozenset("btT:")
_FILES = frozenset("rRwW")
_TEXT = frozenset("aic")
_S_FLAGS = re.compile(r"[gpiImMe0-9]*")
_ADDRESS_NUMBER = re.compile(r"[0-9]+(?:~[0-9]+)?")


class SedScript(msgspec.Struct, frozen=True):
    """What one sed script does beyond filtering its input."""

    runs: tuple[str, ...] = ()
    """The shell commands of its `e command`s."""
    runs_input: bool = False
    """It runs text it reads as a command (`e` alone, the `e` flag of `s`)."""
    writes: tuple[str, ...] = ()
    """Files its `w` and `W` commands and `s///w` write."""
    reads: tuple[str, ...] = ()
    """Files its `r` and `R` commands read."""


class SedCall(msgspec.Struct, frozen=True):
    """What a whole `sed` command line runs and writes."""

    script: SedScript
    in_place: tuple[str, ...] = ()
    """Files `-i` rewrites, and their backups (`-i.bak`)."""
    scripts: tuple[str, ...] = ()
    """The script texts as given (each `-e`, or the first operand)."""
    from_file: tuple[str, ...] = ()
    """Script files (`-f`): what they do is not known."""
    sandboxed: bool = False
    """`--sandbox`: `e`, `r` and `w` are refused by sed itself."""
    backup_pattern: bool = False
    """`-i` was given a backup suffix with `*`: the backups' names are built at run time."""


def read_sed(args: Sequence[str]) -> SedCall:
    """Read a sed command line (the words after `sed`).

    Raises:
        Unparseable: An unknown option, or a script this parser could read otherwise than sed.
    """
    try:
        parsed = getopt(SED, args)
    except UnknownOption:
        raise Unparseable from None
    scripts = parsed.values("-e", "--expression")
    from_file = parsed.values("-f", "--file")
    operands = list(parsed.operands)
    if not scripts and not from_file:
        if not operands:
            return SedCall(SedScript())  # sed prints its usage
        scripts = [operands.pop(0)]
    in_place: list[str] = []
    pattern = False
    if parsed.has("-i", "--in-place"):
        suffixes = [v for name, v in parsed.options if name in ("-i", "--in-place") and v]
        suffix = suffixes[-1] if suffixes else ""
        pattern = "*" in suffix
        for file in operands:
            in_place.append(file)
            if suffix and not pattern:
                in_place.append(file + suffix)
    script = read_script("\n".join(scripts))
    return SedCall(
        script,
        tuple(in_place),
        tuple(scripts),
        tuple(from_file),
        parsed.has("--sandbox"),
        pattern,
    )


def read_script(text: str) -> SedScript:
    """Every command of a sed script that runs or writes something.

    Raises:
        Unparseable: Where sed might read the script otherwise.
    """
    return _Reader(text).read()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.runs: list[str] = []
        self.runs_input = False
        self.writes: list[str] = []
        self.reads: list[str] = []

    def read(self) -> SedScript:
        while self._next_command():
            pass
        return SedScript(tuple(self.runs), self.runs_input, tuple(self.writes), tuple(self.reads))

    def _peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def _skip(self, chars: str) -> None:
        while self._peek() and self._peek() in chars:
            self.pos += 1

    def _next_command(self) -> bool:
        self._skip(" \t\n;")
        if not self._peek():
            return False
        self._addresses()
        command = self._peek()
        self.pos += 1
        if command == "{":
            return True  # a command may follow at once: `1{p}`
        if command == "}" or command in _SIMPLE:
            pass
        elif command == "#":
            self._to_line_end()
            return True
        elif command in _NUMBERED:
            self._skip(" \t")
            while self._peek().isdigit():
                self.pos += 1
        elif command in _LABELLED or command == "v":
            self._label()
        elif command in _FILES:
            name = self._to_line_end().strip()
            (self.writes if command in "wW" else self.reads).append(name)
            return True
        elif command == "e":
            shell = self._to_line_end().strip()
            if shell:
                self.runs.append(shell)
            else:
                self.runs_input = True
            return True
        elif command in _TEXT:
            self._text()
            return True
        elif command == "s":
            return self._substitute()
        elif command == "y":
            delimiter = self._delimiter()
            self._part(delimiter, brackets=False)
            self._part(delimiter, brackets=False)
        else:
            raise Unparseable  # an unknown command: sed refuses it; do not guess
        self._end_of_command()
        return True

    def _addresses(self) -> None:
        for _ in range(2):
            self._skip(" \t")
            if number := _ADDRESS_NUMBER.match(self.text, self.pos):
                self.pos = number.end()
            elif self._peek() == "$":
                self.pos += 1
            elif self._peek() in ("/", "\\"):
                if self._peek() == "\\":
                    self.pos += 1
                delimiter = self._delimiter()
                self._part(delimiter, brackets=True)
                self._skip("IM")
            else:
                break
            self._skip(" \t")
            if self._peek() != ",":
                break
            self.pos += 1
            self._skip(" \t")
            if self._peek() in ("+", "~"):
                self.pos += 1
        self._skip(" \t!")

    def _delimiter(self) -> str:
        char = self._peek()
        if not char or char in "\n\\":
            raise Unparseable
        self.pos += 1
        return char

    def _part(self, delimiter: str, *, brackets: bool) -> None:
        """Up to and past the next unescaped `delimiter`, a bracket expression kept whole."""
        while True:
            char = self._peek()
            if not char or char == "\n":
                raise Unparseable  # sed: unterminated (an escaped newline is skipped below)
            if char == "\\":
                self.pos += 2
            elif char == delimiter:
                self.pos += 1
                return
            elif char == "[" and brackets:
                self._bracket(delimiter)
            else:
                self.pos += 1

    def _bracket(self, delimiter: str) -> None:
        """`[...]`; a delimiter inside one is read differently by sed versions: give up."""
        end = self.pos + 1
        if self.text[end : end + 1] == "^":
            end += 1
        if self.text[end : end + 1] == "]":
            end += 1
        while end < len(self.text) and self.text[end] != "]":
            if self.text.startswith(("[:", "[=", "[."), end):
                close = self.text.find(self.text[end + 1] + "]", end + 2)
                if close < 0:
                    raise Unparseable
                end = close + 2
            else:
                end += 1
        inside = self.text[self.pos : end]
        if end >= len(self.text) or delimiter in inside or "\n" in inside:
            raise Unparseable
        self.pos = end + 1

    def _substitute(self) -> bool:
        delimiter = self._delimiter()
        self._part(delimiter, brackets=True)
        self._part(delimiter, brackets=False)
        flags = _S_FLAGS.match(self.text, self.pos)
        assert flags is not None  # the pattern matches the empty string
        self.pos = flags.end()
        if "e" in flags.group():
            self.runs_input = True
        if self._peek() == "w":
            self.pos += 1
            self.writes.append(self._to_line_end().strip())
            return True
        self._end_of_command()
        return True

    def _label(self) -> None:
        """A label (or `v`'s version): it ends at a blank or `;` where sed may read on; ending
        it early can only show more commands than sed runs, never fewer."""
        self._skip(" \t")
        while self._peek() and self._peek() not in "; \t\n":
            self.pos += 1

    def _text(self) -> None:
        """`a`, `i`, `c`: the text runs to the end of the line; a backslash goes on."""
        while self._peek():
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            line = self.text[self.pos : end]
            self.pos = min(end + 1, len(self.text))
            if not _continues(line):
                return

    def _to_line_end(self) -> str:
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        line = self.text[self.pos : end]
        self.pos = end
        return line

    def _end_of_command(self) -> None:
        self._skip(" \t")
        if self._peek() not in ("", ";", "\n", "}", "#"):
            raise Unparseable  # sed: extra characters after command


def _continues(line: str) -> bool:
    """Whether a line ends in an odd number of backslashes (the text goes on)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1

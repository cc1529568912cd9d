"""GNU `getopt_long`, as the programs whose options the permission checks read parse them.

What a command writes (`moot.permissions.shell_writes`) depends on options that GNU tools
accept in more spellings than a table of exact words would catch: glued to other short
options (`sort -ruo out`), glued to their value (`-oout`, `--output=out`), after the operands
(`sed s/a/b/ file -i`: GNU getopt permutes), and abbreviated to any unambiguous prefix
(`sort --outp=out`, `cp --target=dir`). `getopt` reads all of them, and gives up on an option
it does not know rather than guess whether it takes the next word.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from moot.permissions.shell_types import names


class Options(msgspec.Struct, frozen=True):
    """One program's options, as its `getopt_long` call declares them."""

    flags: str = ""
    """Short options without an argument."""
    with_arg: str = ""
    """Short options with a required argument (glued on, or the next word)."""
    optional: str = ""
    """Short options whose argument, if any, is glued on (`sed -i.bak`)."""
    long_flags: frozenset[str] = frozenset()
    long_with_arg: frozenset[str] = frozenset()
    """Long options with a required argument (`--name=value` or `--name value`)."""
    long_optional: frozenset[str] = frozenset()
    """Long options whose argument, if any, follows `=`."""
    permute: bool = True
    """Options may follow operands (GNU's default); False stops at the first operand."""


class Parsed(msgspec.Struct, frozen=True):
    """What `getopt` found: each option as `-x` or `--long-name` with its value, and the
    operands in order."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]

    def values(self, *names: str) -> list[str]:
        """The values given to any of the options `names` (`-o`, `--output`), in order."""
        return [value for name, value in self.options if name in names and value is not None]

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)


_EVERY_PROGRAMS = frozenset({"help", "version"})
"""Long options every GNU program takes (they print and exit)."""


class UnknownOption(Exception):
    """An option the table does not know, or an abbreviation of several."""


def getopt(spec: Options, args: Sequence[str]) -> Parsed:
    """Read `args` (the words after the program's name) as `getopt_long` would.

    Raises:
        UnknownOption: An option `spec` does not declare, an ambiguous abbreviation, or a
            missing argument.
    """
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands += args[i:]
            break
        if not word.startswith("-") or word == "-":
            operands.append(word)
            if not spec.permute:
                operands += args[i:]
                break
            continue
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            full = _long_name(spec, name)
            if full in spec.long_with_arg and not equals:
                if i >= len(args):
                    raise UnknownOption(word)
                value, i = args[i], i + 1
            elif (full in spec.long_flags or full in _EVERY_PROGRAMS) and equals:
                raise UnknownOption(word)
            options.append((f"--{full}", value if equals or full in spec.long_with_arg else None))
            continue
        for at, letter in enumerate(word[1:], start=2):
            rest = word[at:]
            if letter in spec.flags:
                options.append((f"-{letter}", None))
            elif letter in spec.with_arg:
                if not rest:
                    if i >= len(args):
                        raise UnknownOption(word)
                    rest, i = args[i], i + 1
                options.append((f"-{letter}", rest))
                break
            elif letter in spec.optional:
                options.append((f"-{letter}", rest or None))
                break
            else:
                raise UnknownOption(word)
    return Parsed(tuple(options), tuple(operands))


def _long_name(spec: Options, name: str) -> str:
    """The long option `name` spells, exactly or as the one option it abbreviates."""
    known = spec.long_flags | spec.long_with_arg | spec.long_optional | _EVERY_PROGRAMS
    if name in known:
        return name
    matches = [option for option in known if name and option.startswith(name)]
    if len(matches) != 1:
        raise UnknownOption(f"--{name}")
    return matches[0]


SORT = Options(
    flags="bcCdfghiMmnRrsuVz",
    with_arg="kostST",
    long_flags=names(
        "debug dictionary-order general-numeric-sort human-numeric-sort ignore-case"
        " ignore-leading-blanks ignore-nonprinting merge month-sort numeric-sort random-sort"
        " reverse stable unique version-sort zero-terminated"
    ),
    long_with_arg=names(
        "batch-size buffer-size compress-program field-separator files0-from key output"
        " parallel random-source sort temporary-directory"
    ),
    long_optional=names("check"),
)
"""GNU sort's options: one table for what `sort` writes (`-o`) and what it runs
(`--compress-program`)."""

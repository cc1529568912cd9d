"""The files a command line names as written, besides its redirections.

A `Bash(git log:*)` rule allows running git log; it must not let `git log --output=keep.py`
overwrite a file that an edit of it would have asked about. So `written` reads the options and
operands of well-known commands that write files the command line names:

- writers by purpose: `tee F`, `cp`/`install`/`ln` (their destination), `mv` (its sources and
  destination), `rm`/`unlink`/`truncate` (their operands), `dd of=F`;
- output options: `sort -o F`, `uniq IN OUT`, `sed -i` (and `sed`'s `w F`), git's `--output`
  (`git log`, `git diff`, ...), `git format-patch -o`, `git archive -o`, `git config -f`,
  `git bundle create F`, `curl -o`/`-D`/`-c`/`--trace`..., `wget -O`/`-o`, `find -fprint`,
  `strace -o`, `time -o`, `script F`.

Some write files the command line does not name (`curl -O`, `wget URL`, `find -delete`, `sed -f
script`, awk's `print > file`, a writer run by `xargs`, which adds the arguments it reads):
`Writes.unnamed` says so, and no prefix rule may then cover the command. Options are read as
the programs' GNU `getopt_long` reads them (`moot.permissions.shell_getopt`: glued, after the
operands, abbreviated); an option not in the tables makes the writes unnamed too.

What a program writes by its own choosing (a build's outputs, `git checkout`, an archive's
contents, a formatter's rewrites) is not here: that is the sandbox's to confine.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

import msgspec

from moot.permissions.shell_getopt import SORT, Options, Parsed, UnknownOption, getopt
from moot.permissions.shell_sed import read_sed
from moot.permissions.shell_types import Unparseable, Word, names


class Writes(msgspec.Struct, frozen=True):
    """The files a command's options and operands write."""

    files: tuple[str, ...] = ()
    """Named on the command line, as written (relative to where it runs)."""
    unnamed: bool = False
    """It may also write files the command line does not name."""


_NONE = Writes()
_UNNAMED = Writes(unnamed=True)


def written(words: Sequence[Word], *, appended: bool = False) -> Writes:
    """What the command `words` writes by its options and operands.

    Args:
        words: The command name and its arguments.
        appended: `xargs` adds arguments read at run time.
    """
    if not words:
        return _NONE
    reader = _WRITERS.get(posixpath.basename(words[0].value))
    if reader is None:
        return _NONE
    if appended:
        return _UNNAMED  # `xargs rm`: the files come from its input
    try:
        writes = reader(words[1:])
    except (UnknownOption, Unparseable):
        return _UNNAMED
    return Writes(tuple(dict.fromkeys(writes.files)), writes.unnamed)  # `mv a b` names b twice


def _values(args: Sequence[Word]) -> list[str]:
    return [word.value for word in args]


def _gnu(spec: Options, args: Sequence[Word]) -> Parsed:
    return getopt(spec, _values(args))


# ---- writers by purpose ---------------------------------------------------------------------

_TEE = Options(
    flags="aip",
    long_flags=names("append ignore-interrupts"),
    long_optional=names("output-error"),
)
_CP = Options(
    flags="abdfHilLnPprRsTuvxZ",
    with_arg="St",
    long_flags=names(
        "archive attributes-only copy-contents debug dereference force interactive link"
        " no-clobber no-dereference no-target-directory one-file-system parents recursive"
        " remove-destination strip-trailing-slashes symbolic-link verbose keep-directory-symlink"
    ),
    long_with_arg=names("no-preserve sparse suffix target-directory"),
    long_optional=names("backup context preserve reflink update"),
)
_MV = Options(
    flags="bfinTuvZ",
    with_arg="St",
    long_flags=names(
        "debug exchange force interactive no-clobber no-copy no-target-directory"
        " strip-trailing-slashes verbose"
    ),
    long_with_arg=names("suffix target-directory"),
    long_optional=names("backup context update"),
)
_INSTALL = Options(
    flags="bcCdDpsTvZ",
    with_arg="gmoSt",
    long_flags=names(
        "compare debug directory no-target-directory preserve-context preserve-timestamps"
        " strip verbose"
    ),
    long_with_arg=names("group mode owner strip-program suffix target-directory"),
    long_optional=names("backup context"),
)
_LN = Options(
    flags="bdfFiLnPrsTv",
    with_arg="St",
    long_flags=names(
        "directory force interactive logical no-dereference no-target-directory physical"
        " relative symbolic verbose"
    ),
    long_with_arg=names("suffix target-directory"),
    long_optional=names("backup"),
)
_RM = Options(
    flags="dfiIrRv",
    long_flags=names("dir force no-preserve-root one-file-system recursive verbose"),
    long_optional=names("interactive preserve-root"),
)
_UNLINK = Options()
_TRUNCATE = Options(
    flags="co",
    with_arg="rs",
    long_flags=names("io-blocks no-create"),
    long_with_arg=names("reference size"),
)


def _tee(args: Sequence[Word]) -> Writes:
    return Writes(_gnu(_TEE, args).operands)


def _operands(spec: Options) -> Callable[[Sequence[Word]], Writes]:
    def operands(args: Sequence[Word]) -> Writes:
        return Writes(_gnu(spec, args).operands)

    return operands


def _copier(spec: Options, *, moves: bool = False) -> Callable[[Sequence[Word]], Writes]:
    """cp, mv, install: each source's copy at the destination (mv: the sources too)."""

    def copier(args: Sequence[Word]) -> Writes:
        parsed = _gnu(spec, args)
        operands = list(parsed.operands)
        if spec is _INSTALL and parsed.has("-d", "--directory"):
            return Writes(tuple(operands))
        return Writes(_destinations(parsed, operands) + (tuple(operands) if moves else ()))

    return copier


def _destinations(parsed: Parsed, operands: list[str]) -> tuple[str, ...]:
    """Where each source lands: in `-t DIR`, at the last operand, or in it when it is a
    directory (whether it is one is seen only when the command runs, so both are named)."""
    parents = parsed.has("--parents")
    targets = parsed.values("-t", "--target-directory")
    if targets:
        return tuple(_inside(targets[-1], source, parents) for source in operands)
    if len(operands) < 2:
        return ()
    *sources, destination = operands
    if parsed.has("-T", "--no-target-directory"):
        return (destination,)
    inside = tuple(_inside(destination, source, parents) for source in sources)
    return inside if len(sources) > 1 else (destination, *inside)


def _inside(directory: str, source: str, parents: bool) -> str:
    return posixpath.join(directory, source if parents else posixpath.basename(source.rstrip("/")))


def _ln(args: Sequence[Word]) -> Writes:
    parsed = _gnu(_LN, args)
    operands = list(parsed.operands)
    if len(operands) == 1 and not parsed.values("-t", "--target-directory"):
        return Writes((posixpath.basename(operands[0].rstrip("/")),))  # a link in `.`
    return Writes(_destinations(parsed, operands))


def _dd(args: Sequence[Word]) -> Writes:
    return Writes(tuple(w.value[3:] for w in args if w.value.startswith("of=")))


# ---- output options -------------------------------------------------------------------------

_UNIQ = Options(
    flags="cdiuz",
    with_arg="fsw",
    optional="D",
    long_flags=names("count ignore-case repeated unique zero-terminated"),
    long_with_arg=names("check-chars skip-chars skip-fields"),
    long_optional=names("all-repeated group"),
)


def _sort(args: Sequence[Word]) -> Writes:
    return Writes(tuple(_gnu(SORT, args).values("-o", "--output")))


def _uniq(args: Sequence[Word]) -> Writes:
    return Writes(_gnu(_UNIQ, args).operands[1:2])


def _sed(args: Sequence[Word]) -> Writes:
    call = read_sed(_values(args))
    dynamic = any(word.dynamic and word.value in call.scripts for word in args)
    files = call.in_place + (() if call.sandboxed else call.script.writes)
    unnamed = dynamic or call.backup_pattern or bool(call.from_file and not call.sandboxed)
    return Writes(files, unnamed)


def _git(args: Sequence[Word]) -> Writes:
    """git's output options, after its own options (`-C dir` moves relative outputs)."""
    values = _values(args)
    cwd = ""
    i = 0
    while i < len(values) and values[i].startswith("-"):
        option = values[i]
        if option in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            if i + 1 >= len(values):
                return _NONE
            if option == "-C":
                cwd = posixpath.join(cwd, values[i + 1])
            i += 2
        elif option in _GIT_FLAGS or "=" in option or option.startswith(_GIT_VALUED):
            i += 1
        else:
            return _UNNAMED  # an option git itself may not know; do not guess
    if i >= len(values):
        return _NONE
    command, rest = values[i], values[i + 1 :]
    files = _git_outputs(command, rest)
    return Writes(tuple(posixpath.join(cwd, f) for f in files.files), files.unnamed)


_GIT_VALUED = ("--exec-path", "--list-cmds", "--attr-source")
_GIT_FLAGS = names(
    "-p -P --paginate --no-pager --bare --no-replace-objects --literal-pathspecs"
    " --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks"
    " --no-advice --no-lazy-fetch"
)


def _git_outputs(command: str, args: list[str]) -> Writes:
    files: list[str] = []
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word == "--":
            break
        name, equals, value = word.partition("=")
        if name.startswith("--outp") and not name.startswith("--output-i"):
            if not equals:  # `--output FILE`, and (format-patch) `--output-directory DIR`
                if at >= len(args):
                    break
                value, at = args[at], at + 1
            files.append(value)
        elif command in ("format-patch", "archive") and word.startswith("-o"):
            if word == "-o":
                if at >= len(args):
                    break
                value, at = args[at], at + 1
            else:
                value = word[2:]
            files.append(value)
        elif command == "config" and (word == "-f" or name == "--file"):
            if not equals:
                if at >= len(args):
                    break
                value, at = args[at], at + 1
            files.append(value)
    if command == "bundle" and len(args) >= 2 and args[0] == "create":
        files.append(args[1])
    return Writes(tuple(files))


_CURL_WRITES = {
    "o": "output",
    "D": "dump-header",
    "c": "cookie-jar",
}
_CURL_LONG_WRITES = names(
    "output output-dir dump-header cookie-jar trace trace-ascii stderr libcurl etag-save hsts"
    " alt-svc"
)
_CURL_LONG_UNNAMED = names("remote-name remote-name-all remote-header-name config")
_CURL_SHORT_ARGS = frozenset("AbcCdDeEFHKmoPQrtTuUwxXyYz")
_CURL_READERS = names(
    "cookie data data-ascii data-binary data-raw data-urlencode form form-string header json"
    " url user user-agent request referer max-time connect-timeout retry proxy"
)


def _curl(args: Sequence[Word]) -> Writes:
    """curl's own option parser takes unambiguous abbreviations too; its options are many,
    so an unknown one is taken to have no value: a value read as an option can only name
    more writes, never hide one."""
    values = _values(args)
    files: list[str] = []
    unnamed = False
    i = 0
    while i < len(values):
        word = values[i]
        i += 1
        if word.startswith("--") and len(word) > 2:
            name = word[2:].partition("=")[0]
            if name in _CURL_READERS:
                i += 1
                continue
            writes = [o for o in _CURL_LONG_WRITES if o.startswith(name)]
            if writes and i < len(values):
                files.append(values[i])
                i += 1
            if any(o.startswith(name) for o in _CURL_LONG_UNNAMED):
                unnamed = True
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], start=2):
                if letter in "OJK":
                    unnamed = True
                if letter in _CURL_SHORT_ARGS:
                    value = word[at:]
                    if not value and i < len(values):
                        value, i = values[i], i + 1
                    if letter in _CURL_WRITES:
                        files.append(value)
                    break
    return Writes(tuple(f for f in files if f != "-"), unnamed)


_WGET_SHORT_ARGS = frozenset("aABDeiIloOPQRtTUwXYn")


def _wget(args: Sequence[Word]) -> Writes:
    """wget saves each URL under its own name unless `-O` names the file."""
    values = _values(args)
    files: list[str] = []
    document = False
    i = 0
    while i < len(values):
        word = values[i]
        i += 1
        if word.startswith("--") and len(word) > 2:
            name, equals, value = word[2:].partition("=")
            for option in ("output-document", "output-file", "append-output", "save-cookies"):
                if option.startswith(name) and len(name) >= 3:
                    if not equals and i < len(values):
                        value, i = values[i], i + 1
                    files.append(value)
                    document = document or option == "output-document"
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], start=2):
                if letter in _WGET_SHORT_ARGS:
                    value = word[at:]
                    if not value and i < len(values):
                        value, i = values[i], i + 1
                    if letter in "Ooa":
                        files.append(value)
                        document = document or letter == "O"
                    break
    return Writes(tuple(f for f in files if f != "-"), unnamed=not document)


_FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fprintf": 2, "-fls": 1}


def _find(args: Sequence[Word]) -> Writes:
    values = _values(args)
    files = [
        values[i + 1]
        for i, word in enumerate(values[:-1])
        if word in _FIND_WRITES and i + _FIND_WRITES[word] < len(values)
    ]
    return Writes(tuple(files), unnamed="-delete" in values)


_AWK_OUTPUT = re.compile(r"\bprintf?\b[^;{}\n]*>")
"""`print ... > file` (a `>` elsewhere, `$2 > 5`, compares)."""


def _awk(args: Sequence[Word]) -> Writes:
    """awk's `print > "file"` names its file inside the program: not known here."""
    values = _values(args)
    i = 0
    while i < len(values) and values[i].startswith("-") and values[i] != "-":
        option = values[i]
        if option == "--":
            i += 1
            break
        if option in ("-F", "-v"):
            i += 2
        elif option.startswith(("-F", "-v")):
            i += 1
        else:
            return _UNNAMED  # `-f progfile`, gawk's `-e`, `-o file`, ...: not looked into
    program = values[i] if i < len(values) else ""
    return Writes(unnamed=_AWK_OUTPUT.search(program) is not None)


def _strace(args: Sequence[Word]) -> Writes:
    values = _values(args)
    files = [
        word[2:] or (values[i + 1] if i + 1 < len(values) else "")
        for i, word in enumerate(values)
        if word.startswith("-o")
    ]
    files += [word.partition("=")[2] for word in values if word.startswith("--output=")]
    return Writes(tuple(f for f in files if f and not f.startswith(("|", "!"))))


_TIME = Options(
    flags="apqv",
    with_arg="fo",
    long_flags=names("append portability quiet verbose"),
    long_with_arg=names("format output"),
    permute=False,
)


def _time(args: Sequence[Word]) -> Writes:
    """GNU time's `-o FILE` (its options end where the command it times begins)."""
    return Writes(tuple(_gnu(_TIME, args).values("-o", "--output")))


def _script(args: Sequence[Word]) -> Writes:
    operands = [w.value for w in args if not w.value.startswith("-")]
    return Writes(tuple(operands[-1:]) or ("typescript",), unnamed=True)


_WRITERS: dict[str, Callable[[Sequence[Word]], Writes]] = {
    "tee": _tee,
    "cp": _copier(_CP),
    "mv": _copier(_MV, moves=True),
    "install": _copier(_INSTALL),
    "ln": _ln,
    "rm": _operands(_RM),
    "unlink": _operands(_UNLINK),
    "truncate": _operands(_TRUNCATE),
    "dd": _dd,
    "sort": _sort,
    "uniq": _uniq,
    "sed": _sed,
    "git": _git,
    "curl": _curl,
    "wget": _wget,
    "find": _find,
    "strace": _strace,
    "time": _time,
    "script": _script,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
}
"""Each writer's name, and how to read the files its arguments write."""

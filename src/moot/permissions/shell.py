"""Split a shell command into every simple command it would run, for permission rules.

Issue 6: a shell command runs only when every sub-command is allowed, so `git status && rm -rf
build` needs both, and a `Bash(rm:*)` denial must also catch `echo $(rm -rf /)`,
`bash -c 'rm -rf /'`, `find . | xargs rm` and `sudo rm -rf /`. `split_command` returns the simple
commands in source order (a command before the commands nested in it; commands in here-doc
bodies last), or None when it cannot say for sure what would run, and then the caller asks.

None comes back for: unbalanced quotes, parentheses or keywords; a here-doc with no closing
delimiter line; function definitions, `((...))`, `for ((...))`, `coproc`, arrays; a command name
the shell computes (`$CMD`, `"$(which rm)"`, `r*`, `{rm,-rf,/}`); wrapper options it does not
know, or that an unquoted expansion could turn into other words (`sudo $OPTS rm`); `eval` of
anything but one plain string; `bash -c "$SCRIPT"`. `if`, `while`, `until`, `for`, `select`,
`case`, `[[ ]]`, subshells and brace groups are parsed, and the commands of every branch are
reported whether or not that branch would run.

Expansions and globs inside words stay as written (`$HOME`, `${x}`, `$(date)`, `*.py`), so rules
match what was typed. A wrapper is reported and so is what it runs (`sudo rm x` gives `sudo rm x`
and `rm x`), recursively: `sudo`, `doas`, `su -c`, `runuser -c`, `env`, `xargs`, `nohup`, `nice`,
`time`, `timeout`, `setsid`, `stdbuf`, `command`, `builtin`, `exec`, `busybox`, `toybox`,
`find -exec`, `sh`/`bash`/`zsh`/... `-c` and `eval`. Other programs that run commands
(`python -c`, `ssh host cmd`, `make`, `watch`, `flock -c`, `parallel`, `trap`) are plain commands
here: every sub-command must be allowed, so they need an allow rule of their
own, and whoever allows them allows what they run.

Why hand-written: `bashlex` (a port of bash's parser) is GPL-3.0-or-later, which moot
(Apache-2.0) should not depend on, and `shlex` splits words but knows nothing of `$(...)`,
backticks, here-docs or operators glued to words (`a&&b`, `echo hi>out`). This is a small
recursive-descent parser for bash's grammar whose lexer and parser share one position, so
`$(...)` is parsed by the same code as the top level and ends exactly where bash ends it (quotes,
nested parentheses, `case` patterns and comments inside). `shlex` only normalizes rule text.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["Redirect", "SubCommand", "matches_prefix", "split_command"]


@dataclass(frozen=True)
class Redirect:
    """One redirection of a command (or of the subshell, group or loop around it)."""

    op: str
    """The operator as written, with its descriptor number: `>`, `>>`, `<`, `2>`, `&>`, `>&`,
    `2>&`, `<<` / `<<-` (a here-doc), `<<<` (a here-string)."""
    target: str
    """The file after quote removal; a descriptor or `-` after the `&` forms; a here-doc's
    delimiter."""


@dataclass(frozen=True)
class SubCommand:
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
    try:
        return _Parser(command).parse()
    except (_Unparseable, RecursionError):
        return None


_BASH_RULE = re.compile(r"Bash(?:\((?P<spec>.*)\))?", re.DOTALL)


def matches_prefix(sub: SubCommand, rule: str) -> bool:
    """Whether a `Bash` rule matches one sub-command.

    Rule forms (the widely used convention; `Bash(...)` may be omitted):
    `Bash` or `Bash(*)` matches any command. `Bash(git status)` matches exactly that text.
    `Bash(npm run test:*)` matches text that starts with `npm run test`, as a plain string
    prefix: `npm run test`, `npm run test --watch` and also `npm run test:unit` and
    `npm run testing`. `Bash(git log *)` matches `git log` and `git log` followed by a space and
    anything, so not `git logs`. Any other `*` is literal. Rule words are normalized like
    commands (quotes removed, whitespace collapsed), and `assignments` are not looked at.

    Raises:
        ValueError: The rule is empty or its quotes do not balance.
    """
    match = _BASH_RULE.fullmatch(rule.strip())
    spec = rule if match is None else match.group("spec")
    if spec is None or spec.strip() == "*":
        return True
    spec = spec.strip()
    if spec.endswith(":*"):
        return sub.text.startswith(_normalize(spec[:-2]))
    if spec.endswith(" *"):
        prefix = _normalize(spec[:-2])
        return sub.text == prefix or sub.text.startswith(prefix + " ")
    return sub.text == _normalize(spec)


def _normalize(spec: str) -> str:
    try:
        words = shlex.split(spec)
    except ValueError as error:
        raise ValueError(f"cannot read the Bash rule {spec!r}: {error}") from None
    if not words:
        raise ValueError("a Bash rule needs a command, `*`, or no parentheses at all")
    return " ".join(words)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


class _Unparseable(Exception):
    """Raised anywhere in the parser; `split_command` turns it into None."""


_MAX_DEPTH = 16
"""Nesting of `$(...)`, backticks and `bash -c` beyond which we give up (and ask)."""
_METACHARS = frozenset(" \t\n|&;()<>")
_REDIRECTS = r"\d*(?:<<<|<<-|<<|>>|<&|>&|<>|>\||<|>)|&>>|&>"
_REDIRECT = re.compile(_REDIRECTS)
_OPERATOR = re.compile(_REDIRECTS + r"|;;&|;;|;&|;|&&|&|\|\||\|&|\||\(\(|\(|\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_GLOB = re.compile(r"[*?]|\[.*\]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_RESERVED = _names(
    "if then else elif fi do done case esac while until for select function coproc { } ! [[ ]]"
)
_ANSI_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})"
    r"|U([0-9a-fA-F]{1,8})|(c)|(.))",
    re.DOTALL,
)
_ANSI_SIMPLE = dict(zip("abeEfnrtv", "\a\b\x1b\x1b\f\n\r\t\v", strict=True))


@dataclass(frozen=True)
class _Word:
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


@dataclass(frozen=True)
class _Token:
    kind: Literal["word", "op", "newline", "eof"]
    text: str = ""
    word: _Word = _Word("", "")
    nested: tuple[SubCommand, ...] = ()


class _Parser:
    """A lexer and recursive-descent parser for bash, sharing one position in one string."""

    def __init__(self, text: str, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise _Unparseable
        self.text = text
        self.pos = 0
        self.depth = depth
        self._peeked: _Token | None = None
        self._heredocs: list[tuple[str, bool, bool]] = []  # delimiter, strip tabs, expands
        self._late: list[SubCommand] = []  # commands found in here-doc bodies

    def parse(self) -> list[SubCommand]:
        out = self._list(frozenset({""}))
        if self._heredocs:
            raise _Unparseable  # `cat <<EOF` and nothing after: no end to bound it by
        return out + self._late

    # Grammar. `ends` holds the tokens that close a list: "" for the end of input, operators
    # such as ")" or ";;", and keywords such as "fi", recognized only where a command starts.

    def _list(self, ends: frozenset[str], allow_empty: bool = True) -> list[SubCommand]:
        out: list[SubCommand] = []
        while True:
            self._skip_newlines()
            if self._peek().text in ends:
                break
            out += self._and_or()
            allow_empty = True
            tok = self._peek()
            if tok.kind == "newline" or (tok.kind == "op" and tok.text in (";", "&")):
                self._next()
            elif tok.text not in ends:
                raise _Unparseable
        if not allow_empty:
            raise _Unparseable  # `()`, `{ }`, `if then`: bash rejects empty bodies
        return out

    def _clause(self, *ends: str) -> tuple[list[SubCommand], str]:
        out = self._list(frozenset(ends), allow_empty=False)
        return out, self._next().text

    def _and_or(self) -> list[SubCommand]:
        out = self._pipeline()
        while self._peek_op("&&", "||"):
            self._next()
            self._skip_newlines()
            out += self._pipeline()
        return out

    def _pipeline(self) -> list[SubCommand]:
        if self._peek_word("!"):
            self._next()
        out = self._command()
        while self._peek_op("|", "|&"):
            self._next()
            self._skip_newlines()
            out += self._command()
        return out

    def _command(self) -> list[SubCommand]:
        tok = self._peek()
        keyword = tok.text if tok.kind == "word" and tok.text in _RESERVED else None
        if self._peek_op("(") or keyword == "{":
            self._next()
            body, _ = self._clause(")" if keyword is None else "}")
        elif keyword == "if":
            body = self._if()
        elif keyword in ("while", "until"):
            self._next()
            condition, _ = self._clause("do")
            body = condition + self._clause("done")[0]
        elif keyword in ("for", "select"):
            body = self._for()
        elif keyword == "case":
            body = self._case()
        elif keyword == "[[":
            body = self._conditional()
        elif keyword is None and (tok.kind == "word" or self._peek_redirect()):
            return self._simple()
        else:  # `((`, `function`, `coproc`, a stray `fi` or `)`, an operator
            raise _Unparseable
        return self._with_redirects(body)

    def _simple(self) -> list[SubCommand]:
        assignments: list[str] = []
        words: list[_Word] = []
        redirects: list[Redirect] = []
        nested: list[SubCommand] = []
        while True:
            tok = self._peek()
            if self._peek_redirect():
                redirects.append(self._redirect(nested))
            elif tok.kind == "word":
                self._next()
                nested += tok.nested
                if not words and _ASSIGNMENT.match(tok.text):
                    assignments.append(tok.word.value)
                else:
                    words.append(tok.word)
            elif self._peek_op("(", "(("):
                raise _Unparseable  # `f() { ...; }` defines a function; `a=(1 2)` an array
            else:
                break
        unwrapped = self._unwrap(words, tuple(assignments)) if words else []
        return [_sub(words, assignments, redirects), *unwrapped, *nested]

    def _if(self) -> list[SubCommand]:
        self._next()
        out: list[SubCommand] = []
        end = "elif"
        while end == "elif":
            condition, _ = self._clause("then")
            body, end = self._clause("elif", "else", "fi")
            out += condition + body
        if end == "else":
            out += self._clause("fi")[0]
        return out

    def _for(self) -> list[SubCommand]:
        self._next()
        name = self._next()
        if name.kind != "word" or not _NAME.fullmatch(name.text):
            raise _Unparseable  # includes `for ((i = 0; ...))`
        out: list[SubCommand] = []
        self._skip_newlines()
        if self._peek_word("in"):
            self._next()
            while (tok := self._peek()).kind == "word":
                out += self._next().nested
            if tok.kind != "newline" and not self._peek_op(";"):
                raise _Unparseable
            self._next()
        elif self._peek_op(";"):
            self._next()
        self._skip_newlines()
        self._expect("do")
        return out + self._clause("done")[0]

    def _case(self) -> list[SubCommand]:
        self._next()
        subject = self._next()
        if subject.kind != "word":
            raise _Unparseable
        out = list(subject.nested)
        self._skip_newlines()
        self._expect("in")
        while True:
            self._skip_newlines()
            if self._peek_word("esac"):
                break
            if self._peek_op("("):
                self._next()
            separator = "|"
            while separator == "|":
                pattern = self._next()
                separator = self._next().text
                if pattern.kind != "word" or separator not in ("|", ")"):
                    raise _Unparseable
                out += pattern.nested
            out += self._list(frozenset({";;", ";&", ";;&", "esac"}))
            if self._peek_word("esac"):
                break
            self._next()
        self._next()
        return out

    def _conditional(self) -> list[SubCommand]:
        """`[[ ... ]]`: one command whose `&&`, `<`, `(` are its own words."""
        words = [self._next().word]
        nested: list[SubCommand] = []
        while words[-1].raw != "]]":
            tok = self._next()
            if tok.kind == "op" and tok.text in ("&&", "||", "(", ")", "<", ">"):
                words.append(_Word(tok.text, tok.text))
            elif tok.kind == "word":
                words.append(tok.word)
                nested += tok.nested
            else:
                raise _Unparseable
        return [_sub(words), *nested]

    def _with_redirects(self, body: list[SubCommand]) -> list[SubCommand]:
        redirects: list[Redirect] = []
        nested: list[SubCommand] = []
        while self._peek_redirect():
            redirects.append(self._redirect(nested))
        if redirects:
            body = [replace(sub, redirects=sub.redirects + tuple(redirects)) for sub in body]
        return body + nested

    def _redirect(self, nested: list[SubCommand]) -> Redirect:
        op = self._next().text
        target = self._next()
        if target.kind != "word":
            raise _Unparseable
        nested += target.nested
        if op.lstrip("0123456789") in ("<<", "<<-"):
            # Read at the next newline. A quoted delimiter means a literal body.
            self._heredocs.append((target.word.value, op.endswith("-"), not target.word.quoted))
        return Redirect(op, target.word.value)

    def _unwrap(self, words: Sequence[_Word], env: tuple[str, ...]) -> list[SubCommand]:
        """The commands a wrapper (`sudo`, `xargs`, `bash -c`, ...) runs, recursively.

        Each inherits the assignments in force (`PATH=. bash -c 'git status'`), so the decision
        function sees them on the command they affect.
        """
        if words[0].dynamic or words[0].pattern or not words[0].value:
            raise _Unparseable  # `$CMD x`, `r* x`: what runs is not known until it runs
        wrapper = _WRAPPERS.get(posixpath.basename(words[0].value))
        out: list[SubCommand] = []
        for inner in wrapper(words[1:]) if wrapper else []:
            if isinstance(inner, str):
                subs = _Parser(inner, self.depth + 1).parse()
                out += [replace(sub, assignments=env + sub.assignments) for sub in subs]
            else:
                inner_env = env + tuple(inner.assignments)
                out.append(_sub(inner.words, inner_env))
                out += self._unwrap(inner.words, inner_env)
        return out

    # Tokens.

    def _peek(self) -> _Token:
        if self._peeked is None:
            self._peeked = self._lex()
        return self._peeked

    def _next(self) -> _Token:
        tok = self._peek()
        self._peeked = None
        if tok.kind == "newline":
            self._late += tok.nested
        return tok

    def _peek_op(self, *ops: str) -> bool:
        tok = self._peek()
        return tok.kind == "op" and tok.text in ops

    def _peek_word(self, text: str) -> bool:
        tok = self._peek()
        return tok.kind == "word" and tok.text == text

    def _peek_redirect(self) -> bool:
        tok = self._peek()
        return tok.kind == "op" and _REDIRECT.fullmatch(tok.text) is not None

    def _expect(self, text: str) -> None:
        if self._next().text != text:
            raise _Unparseable

    def _skip_newlines(self) -> None:
        while self._peek().kind == "newline":
            self._next()

    # Characters.

    def _lex(self) -> _Token:
        text = self.text
        while True:
            while text.startswith((" ", "\t"), self.pos):
                self.pos += 1
            if text.startswith("\\\n", self.pos):
                self.pos += 2
            elif text.startswith("#", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                break
        if self.pos >= len(text):
            return _Token("eof")
        if text[self.pos] == "\n":
            self.pos += 1
            return _Token("newline", "\n", nested=self._read_heredocs())
        if text.startswith(("<(", ">("), self.pos):
            return self._word()
        if match := _OPERATOR.match(text, self.pos):
            self.pos = match.end()
            return _Token("op", match.group())
        return self._word()

    def _word(self) -> _Token:
        text, start = self.text, self.pos
        value: list[str] = []
        bare: list[str] = []
        nested: list[SubCommand] = []
        quoted = dynamic = splits = False
        if text.startswith(("<(", ">("), start):  # process substitution
            self.pos += 2
            nested += self._substitution()
            value.append(text[start : self.pos])
            dynamic = splits = True
        while self.pos < len(text) and text[self.pos] not in _METACHARS:
            char = text[self.pos]
            if char == "\\":
                after = text[self.pos + 1 : self.pos + 2]
                if not after:
                    raise _Unparseable  # a backslash at the very end
                if after != "\n":  # backslash-newline joins lines
                    value.append(after)
                    quoted = True
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise _Unparseable
                value.append(text[self.pos + 1 : end])
                quoted, self.pos = True, end + 1
            elif char == '"' or text.startswith('$"', self.pos):
                self.pos += 1 if char == '"' else 2
                dynamic |= self._expanding(value, nested, '"')
                quoted = True
            elif text.startswith("$'", self.pos):
                self._ansi_c(value)
                quoted = True
            elif char == "`":
                self._backtick(value, nested, in_quotes=False)
                dynamic = splits = True
            elif char == "$":
                expanded = self._dollar(value, nested)
                dynamic |= expanded
                splits |= expanded
            else:
                value.append(char)
                bare.append(char)
                self.pos += 1
        if self.pos == start:
            raise _Unparseable
        unquoted = "".join(bare)
        pattern = bool(_GLOB.search(unquoted) or _BRACE_EXPANSION.search(unquoted))
        word = _Word(text[start : self.pos], "".join(value), quoted, dynamic, splits, pattern)
        return _Token("word", word.raw, word, tuple(nested))

    def _expanding(self, value: list[str], nested: list[SubCommand], closing: str | None) -> bool:
        """Text where `$` and backticks expand: inside `"..."`, or a here-doc body (no closing).

        Returns whether anything expands.
        """
        text = self.text
        escapable = '$`"\\' if closing else "$`\\"
        dynamic = False
        while True:
            if self.pos >= len(text):
                if closing:
                    raise _Unparseable
                return dynamic
            char = text[self.pos]
            if char == closing:
                self.pos += 1
                return dynamic
            if char == "\\":
                after = text[self.pos + 1 : self.pos + 2]
                if after == "\n":  # a line continuation
                    self.pos += 2
                elif after and after in escapable:
                    value.append(after)
                    self.pos += 2
                else:  # `"\a"` keeps its backslash
                    value.append(char)
                    self.pos += 1
            elif char == "$":
                dynamic |= self._dollar(value, nested)
            elif char == "`":
                self._backtick(value, nested, in_quotes=True)
                dynamic = True
            else:
                value.append(char)
                self.pos += 1

    def _dollar(self, value: list[str], nested: list[SubCommand]) -> bool:
        """`$name`, `${...}`, `$(...)`, `$((...))` or a lone `$`; returns whether it expands."""
        text, start = self.text, self.pos
        after = text[start + 1 : start + 2]
        if text.startswith("$((", start):
            self._arithmetic()
        elif after == "(":
            self.pos += 2
            nested += self._substitution()
        elif after == "{":
            self.pos += 2
            self._braced(nested)
        elif name := _NAME.match(text, start + 1):
            self.pos = name.end()
        elif after and after in "0123456789@*#?$!-":
            self.pos += 2
        else:
            value.append("$")
            self.pos += 1
            return False
        value.append(text[start : self.pos])
        return True

    def _substitution(self) -> list[SubCommand]:
        """The commands of `$(...)`, `<(...)` or `>(...)`, up to and including the `)`."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _Unparseable
        out = self._list(frozenset({")"}))
        self._next()
        self.depth -= 1
        return out

    def _arithmetic(self) -> None:
        text, depth = self.text, 2
        for i in range(self.pos + 3, len(text)):
            if text[i] in "`'\"\\" or text.startswith("$(", i):
                break  # rare inside `$((...))`; not worth the risk of getting it wrong
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 1:
                if not text.startswith(")", i + 1):
                    break  # `$((a) b)` is a command substitution of a subshell; ask
                self.pos = i + 2
                return
        raise _Unparseable

    def _braced(self, nested: list[SubCommand]) -> None:
        """Skip the rest of `${...}`, parsing command substitutions in it (`${x:-$(cmd)}`)."""
        text, depth, scratch = self.text, 1, []
        while depth:
            char = text[self.pos : self.pos + 1]
            if not char or char == "'":
                raise _Unparseable  # quote rules inside `${}` differ with context; ask
            if char == '"':
                self.pos += 1
                self._expanding(scratch, nested, '"')
            elif char == "$":
                self._dollar(scratch, nested)
            elif char == "`":
                self._backtick(scratch, nested, in_quotes=True)
            else:
                depth += {"{": 1, "}": -1}.get(char, 0)
                self.pos += 2 if char == "\\" else 1

    def _backtick(self, value: list[str], nested: list[SubCommand], in_quotes: bool) -> None:
        text, start = self.text, self.pos
        inner: list[str] = []
        i = start + 1
        while text[i : i + 1] != "`":
            if i >= len(text):
                raise _Unparseable
            after = text[i + 1 : i + 2]
            if text[i] == "\\" and after and (after in "$`\\" or (in_quotes and after == '"')):
                inner.append(after)
                i += 2
            else:
                inner.append(text[i])
                i += 1
        self.pos = i + 1
        nested += _Parser("".join(inner), self.depth + 1).parse()
        value.append(text[start : self.pos])

    def _ansi_c(self, value: list[str]) -> None:
        """`$'...'`, decoded, so `$'\\x72m'` is seen as `rm`."""
        text, i = self.text, self.pos + 2
        while text[i : i + 1] != "'":
            if i >= len(text):
                raise _Unparseable
            if text[i] != "\\":
                value.append(text[i])
                i += 1
                continue
            escape = _ANSI_ESCAPE.match(text, i)
            if escape is None or escape.group(6):
                raise _Unparseable  # a trailing backslash; `\cX` control characters
            simple, octal, hex2, hex4, hex8, _, other = escape.groups()
            if simple:
                value.append(_ANSI_SIMPLE.get(simple, simple))
            elif other is not None:
                value.append("\\" + other)
            else:
                code = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
                if not 0 < code <= 0x10FFFF:
                    raise _Unparseable  # NUL ends the string in bash
                value.append(chr(code))
            i = escape.end()
        self.pos = i + 1

    def _read_heredocs(self) -> tuple[SubCommand, ...]:
        """Consume the bodies of the here-docs started on the line that just ended."""
        text = self.text
        nested: list[SubCommand] = []
        for delimiter, strip_tabs, expands in self._heredocs:
            start = self.pos
            while True:
                if self.pos >= len(text):
                    raise _Unparseable  # no delimiter line: cannot tell where the body ends
                line_start = self.pos
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[line_start:end]
                self.pos = min(end + 1, len(text))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
            if expands:  # an unquoted delimiter: `$(...)` and backticks in the body run
                body = _Parser(text[start:line_start], self.depth + 1)
                body._expanding([], nested, None)
                nested += body._late
        self._heredocs.clear()
        return tuple(nested)


def _sub(
    words: Sequence[_Word], assignments: Sequence[str] = (), redirects: Sequence[Redirect] = ()
) -> SubCommand:
    values = tuple(word.value for word in words)
    return SubCommand(values, " ".join(values), tuple(assignments), tuple(redirects))


# Wrappers: commands that run another command given in their arguments.


@dataclass(frozen=True)
class _Inner:
    words: Sequence[_Word]
    assignments: Sequence[str] = ()


_Wrapper = Callable[[Sequence[_Word]], list[_Inner | str]]
"""Given a wrapper's arguments: the commands it runs, or scripts (str) to parse."""


@dataclass(frozen=True)
class _Options:
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

    def __call__(self, args: Sequence[_Word]) -> list[_Inner | str]:
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
                    raise _Unparseable
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
                        raise _Unparseable
            i += 1
        i += self.operands
        assignments = []
        while self.assignments and i < len(args) and _ASSIGNMENT.match(args[i].raw):
            assignments.append(args[i].value)
            i += 1
        if any(word.splits for word in args[: i + 1]):
            raise _Unparseable  # `sudo $OPTS rm`: the split words could name another command
        return [_Inner(args[i:], assignments)] if i < len(args) else []


def _shell(args: Sequence[_Word]) -> list[_Inner | str]:
    """`bash -c SCRIPT`: the script is parsed too. A script file or stdin is not looked into."""
    command, i = False, 0
    while i < len(args):
        word = args[i]
        if word.splits:
            raise _Unparseable
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
        raise _Unparseable  # `bash -c "$SCRIPT"`: the script is not known until it runs
    return [args[i].value]


def _eval(args: Sequence[_Word]) -> list[_Inner | str]:
    if not args:
        return []
    if len(args) > 1 or args[0].dynamic:
        raise _Unparseable
    return [args[0].value]


def _su(args: Sequence[_Word]) -> list[_Inner | str]:
    """`su [-] [user] -c SCRIPT`: the script is parsed too; `runuser -u USER [--] CMD`: CMD."""
    runs: list[_Inner | str] = []
    user_mode = False  # `runuser -u`: the operands are a command, not a user and shell arguments
    i = 0
    while i < len(args):
        word, value = args[i], args[i].value
        if word.splits:
            raise _Unparseable
        if value == "--":
            if not user_mode and i + 1 < len(args):
                raise _Unparseable  # `su root -- -c x`: the rest goes to the shell
            i += 1
            break
        name, equals, rest = value.partition("=")
        script: tuple[str, _Word] | None = None
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
                    raise _Unparseable
        elif user_mode:
            break
        if script is not None:
            if script[1].dynamic:
                raise _Unparseable
            runs.append(script[0])
        i += 1
    if user_mode and i < len(args):
        runs.append(_Inner(args[i:]))
    return runs


def _argument(args: Sequence[_Word], i: int) -> tuple[_Word, str]:
    if i >= len(args):
        raise _Unparseable
    return args[i], args[i].value


_FIND_ACTIONS = _names("-exec -execdir -ok -okdir")


def _find(args: Sequence[_Word]) -> list[_Inner | str]:
    """`find ... -exec CMD ... ;` (or `+`): each CMD."""
    if any(word.splits for word in args):
        raise _Unparseable  # `find . $X` could be `find . -exec ...`
    inners: list[_Inner | str] = []
    i = 0
    while i < len(args):
        if args[i].value in _FIND_ACTIONS:
            ends = [j for j in range(i + 1, len(args)) if args[j].value in (";", "+")]
            if not ends or ends[0] == i + 1 or "{}" in args[i + 1].value:
                raise _Unparseable  # no end, no command, or the found file is the command
            inners.append(_Inner(args[i + 1 : ends[0]]))
            i = ends[0]
        i += 1
    return inners


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Options(
        flags="AbBEHknNPS",  # not `-s`/`-i`: they hand the command to a shell, quoted its way
        with_arg="CDgpRrTtUu",
        no_run="eKlVv",
        long_flags=_names(
            "askpass background bell preserve-env set-home login no-update non-interactive"
            " preserve-groups reset-timestamp stdin shell"
        ),
        long_with_arg=_names(
            "chdir chroot close-from command-timeout group host other-user prompt role type user"
        ),
        long_no_run=_names("edit list remove-timestamp validate"),
        assignments=True,
    ),
    "doas": _Options(flags="ns", with_arg="u", no_run="LC"),
    "env": _Options(
        flags="i0v",
        with_arg="uC",
        long_flags=_names("ignore-environment null debug"),
        long_with_arg=_names("unset chdir"),
        assignments=True,
        dash=True,
    ),
    "xargs": _Options(
        flags="0oprtx",
        with_arg="aEdILnPs",
        attached="eil",
        long_flags=_names(
            "null interactive no-run-if-empty verbose exit open-tty show-limits replace eof"
            " max-lines"
        ),
        long_with_arg=_names("arg-file delimiter max-args max-procs max-chars process-slot-var"),
    ),
    "nohup": _Options(),
    "nice": _Options(with_arg="n", long_with_arg=_names("adjustment"), numeric=True),
    "time": _Options(
        flags="apqv",
        with_arg="fo",
        long_flags=_names("append portability quiet verbose"),
        long_with_arg=_names("format output"),
    ),
    "timeout": _Options(
        flags="v",
        with_arg="ks",
        long_flags=_names("foreground preserve-status verbose"),
        long_with_arg=_names("kill-after signal"),
        operands=1,
    ),
    "setsid": _Options(flags="cfw", long_flags=_names("ctty fork wait")),
    "stdbuf": _Options(with_arg="eio", long_with_arg=_names("error input output")),
    "command": _Options(flags="p", no_run="vV"),
    "builtin": _Options(),
    "busybox": _Options(),
    "toybox": _Options(),
    "exec": _Options(flags="cl", with_arg="a"),
    "eval": _eval,
    "find": _find,
    "su": _su,
    "runuser": _su,
    **dict.fromkeys(_names("sh bash dash zsh ksh mksh ash"), _shell),
}

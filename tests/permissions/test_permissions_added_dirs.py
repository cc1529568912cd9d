"""`decide` with added directories (`--add-dir`): an edit there runs in acceptEdits as one in
the workspace does, its `.git` and `.moot/` stay firm asks, and what lies outside every root
still asks. Relative rules hang from the workspace; absolute ones match in an added directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.permissions.decide import decide
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet
from moot.protocol.approval import ApprovalRequest
from moot.protocol.modes import PermissionMode
from moot.tools.base import SideEffect

ACCEPT = PermissionMode.ACCEPT_EDITS


def _call(tool: str, **arguments: object) -> ApprovalRequest:
    effect = SideEffect.RUNS_COMMANDS if tool == "bash" else SideEffect.WRITES_WORKSPACE
    return ApprovalRequest(
        session_id="s1",
        agent="main",
        call_id="c1",
        tool_call_id="t1",
        tool=tool,
        side_effect=effect,
        arguments=arguments,
    )


def _roots(tmp_path: Path) -> tuple[Path, Path]:
    root, other = tmp_path / "ws", tmp_path / "other"
    for directory in (root, other / ".git", other / ".moot", other / "src"):
        directory.mkdir(parents=True)
    return root, other


def test_an_edit_in_an_added_directory_runs_in_accept_edits(tmp_path: Path) -> None:
    root, other = _roots(tmp_path)
    edit = _call("write", path=str(other / "src" / "a.py"), content="x")

    verdict = decide(edit, ACCEPT, RuleSet(), root, added_roots=(other,))
    without = decide(edit, ACCEPT, RuleSet(), root)

    assert verdict.decision == "allow", verdict.reason
    assert without.decision == "ask"


def test_a_shell_write_into_an_added_directory_runs_in_accept_edits(tmp_path: Path) -> None:
    root, other = _roots(tmp_path)
    command = _call("bash", command=f"echo hi > {other}/src/out.txt")
    rules = RuleSet(allow=["Bash(echo:*)"])

    assert decide(command, ACCEPT, rules, root, added_roots=(other,)).decision == "allow"
    assert decide(command, ACCEPT, rules, root).decision == "ask"


@pytest.mark.parametrize("name", [".git/config", ".git/hooks/pre-commit", ".moot/settings.json"])
def test_an_added_directorys_protected_paths_stay_firm_asks(tmp_path: Path, name: str) -> None:
    root, other = _roots(tmp_path)
    edit = _call("write", path=str(other / name), content="x")

    for mode in (ACCEPT, PermissionMode.BYPASS_PERMISSIONS):
        verdict = decide(edit, mode, RuleSet(), root, added_roots=(other,))
        assert (verdict.decision, verdict.firm) == ("ask", True), (mode, verdict.reason)


@pytest.mark.parametrize(
    "escape",
    ["{other}/../elsewhere.txt", "{other}-too/a.txt", "{other}/link/a.txt", "{tmp}/a.txt"],
)
def test_what_lies_outside_every_root_still_asks(tmp_path: Path, escape: str) -> None:
    root, other = _roots(tmp_path)
    (tmp_path / "outside").mkdir()
    (other / "link").symlink_to(tmp_path / "outside")
    path = escape.format(other=other, tmp=tmp_path)

    verdict = decide(
        _call("write", path=path, content="x"), ACCEPT, RuleSet(), root, added_roots=(other,)
    )

    assert verdict.decision == "ask", verdict.reason


def test_an_added_directory_holding_the_workspace_keeps_its_protected_paths(
    tmp_path: Path,
) -> None:
    root, _ = _roots(tmp_path)
    (root / ".moot").mkdir()
    for name in (".moot/settings.json", "ws/.moot/settings.json", "ws/.git/config"):
        edit = _call("write", path=str(tmp_path / name), content="x")
        verdict = decide(edit, ACCEPT, RuleSet(), root, added_roots=(tmp_path,))
        assert (verdict.decision, verdict.firm) == ("ask", True), name


def test_rules_relative_to_the_workspace_absolute_ones_in_an_added_directory(
    tmp_path: Path,
) -> None:
    root, other = _roots(tmp_path)
    edit = _call("write", path=str(other / "src" / "a.py"), content="x")
    default = PermissionMode.DEFAULT

    relative = RuleSet(allow=["Edit(src/**)"])
    absolute = RuleSet(allow=[f"Edit(/{other}/src/**)"])
    denied = RuleSet(deny=[f"Edit(/{other}/src/**)"])

    assert decide(edit, default, relative, root, added_roots=(other,)).decision == "ask"
    assert decide(edit, default, absolute, root, added_roots=(other,)).decision == "allow"
    assert decide(edit, ACCEPT, denied, root, added_roots=(other,)).decision == "deny"


def test_the_sessions_policy_carries_the_added_directories(tmp_path: Path) -> None:
    root, other = _roots(tmp_path)
    policy = RulesPolicy(RuleSet(), root, mode=ACCEPT, added_roots=(other,))

    verdict = policy.decide(_call("edit", path=str(other / "src" / "a.py"), old="a", new="b"))

    assert verdict.decision == "allow", verdict.reason


def test_a_script_hooks_run_in_an_added_directory_stays_a_firm_ask(tmp_path: Path) -> None:
    root, other = _roots(tmp_path)
    script = str(other / "tools" / "lint.sh")
    edit = _call("write", path=script, content="x")
    command = _call("bash", command=f"echo x >> {script}")
    rules = RuleSet(allow=["Bash(echo:*)"])

    for mode in (ACCEPT, PermissionMode.BYPASS_PERMISSIONS):
        for call in (edit, command):
            verdict = decide(call, mode, rules, root, protected=(script,), added_roots=(other,))
            assert (verdict.decision, verdict.firm) == ("ask", True), (mode, verdict.reason)

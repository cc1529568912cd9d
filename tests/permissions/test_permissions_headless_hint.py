"""A run nobody watches refuses what would ask and says what would let it run (issue 28, item
13): the advice must be true in the mode it was given in. It said "--permission-mode
acceptEdits / bypassPermissions" whatever asked, so a protected path refused in bypass mode
suggested the mode it was already in (and an allow rule, which lifts nothing there), and a
command refused in acceptEdits mode suggested acceptEdits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from moot.frontend.flags import rule_list
from moot.mcp_server.tools import refusal
from moot.permissions.decide import decide
from moot.permissions.headless import NoAsking
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet
from moot.protocol.approval import ApprovalRequest, SideEffect
from moot.protocol.modes import PermissionMode

PROTECTED = ("check.sh",)
CALLS = {
    "protected_write": ("write", SideEffect.WRITES_WORKSPACE, {"path": "check.sh", "content": "x"}),
    "protected_redirect": ("bash", SideEffect.RUNS_COMMANDS, {"command": "echo x > check.sh"}),
    "git_hook": ("write", SideEffect.WRITES_WORKSPACE, {"path": ".git/hooks/x", "content": ""}),
    "edit": ("write", SideEffect.WRITES_WORKSPACE, {"path": "notes.txt", "content": "x"}),
    "command": ("bash", SideEffect.RUNS_COMMANDS, {"command": "npm test && ls -l > out.txt"}),
    "fetch": ("web_fetch", SideEffect.NETWORK, {"url": "https://example.com/"}),
    "unparsed": ("bash", SideEffect.RUNS_COMMANDS, {"command": "echo $(( 1 +"}),
}  # fmt: skip
RULES = {
    "none": RuleSet(),
    "ask_rules": RuleSet(ask=["Bash(npm:*)", "Edit(notes.txt)", "WebFetch"]),
    "deny_elsewhere": RuleSet(deny=["Bash(rm:*)"]),
}


def request(name: str, mode: PermissionMode) -> ApprovalRequest:
    tool, side_effect, arguments = CALLS[name]
    return ApprovalRequest("s", "main", "c", "t", tool, side_effect, arguments, mode=mode.value)


def named_ways(text: str) -> tuple[list[str], list[str]]:
    """The allow rules and modes a refusal tells the person to use."""
    rules = [rule for found in re.findall(r'--allowedTools "([^"]*)"', text) for rule in
             rule_list([found])]  # fmt: skip
    return rules, re.findall(r"--permission-mode (\w+)", text)


@pytest.mark.parametrize("mode", list(PermissionMode), ids=str)
@pytest.mark.parametrize("rules_name", list(RULES))
@pytest.mark.parametrize("call_name", list(CALLS))
def test_a_headless_refusal_names_only_what_would_let_the_call_run(
    tmp_path: Path, mode: PermissionMode, rules_name: str, call_name: str
) -> None:
    rules = RULES[rules_name]
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    policy = RulesPolicy(rules, tmp_path, mode=mode, protected=PROTECTED)
    asked = request(call_name, mode)
    verdict = NoAsking(policy, tmp_path).decide(asked)
    if "cannot ask" not in verdict.reason:
        return  # settled without the person: nothing to advise
    told, modes = named_ways(verdict.reason)
    assert mode.value not in modes, verdict.reason
    for other in modes:
        again = decide(asked, PermissionMode(other), rules, tmp_path, protected=PROTECTED)
        assert again.decision == "allow", (other, again.reason, verdict.reason)
    if told:
        again = decide(asked, mode, rules.extended(allow=told), tmp_path, protected=PROTECTED)
        assert again.decision == "allow", (told, again.reason, verdict.reason)
    if "protected path" in verdict.reason:
        assert not told and not modes, verdict.reason
        assert "only with the person's approval" in verdict.reason
    elif not told and not modes:
        assert "no allow rule or mode lets it run" in verdict.reason
    # The MCP server's refusal gives the same advice.
    asked_verdict = policy.decide(asked)
    mcp_rules, mcp_modes = named_ways(refusal(asked_verdict, asked.tool))
    assert (sorted(mcp_rules), mcp_modes) == (sorted(told), modes)


def test_a_protected_write_in_bypass_mode_says_that_only_the_person_can_approve_it(
    tmp_path: Path,
) -> None:
    policy = RulesPolicy(RuleSet(), tmp_path, protected=PROTECTED)
    bypass = PermissionMode.BYPASS_PERMISSIONS
    verdict = NoAsking(policy, tmp_path).decide(request("protected_write", bypass))
    assert verdict.decision == "deny" and not verdict.unasked
    assert "--permission-mode" not in verdict.reason and "--allowedTools" not in verdict.reason
    assert "interactive session" in verdict.reason


def test_a_command_refused_in_accept_edits_mode_suggests_its_rule_and_bypass_only(
    tmp_path: Path,
) -> None:
    policy = RulesPolicy(RuleSet(), tmp_path, protected=PROTECTED)
    accept = PermissionMode.ACCEPT_EDITS
    verdict = NoAsking(policy, tmp_path).decide(request("command", accept))
    assert named_ways(verdict.reason) == (
        ["Bash(npm test:*)", "Bash(ls:*)"],
        ["bypassPermissions"],
    ), verdict.reason

"""A `Read(...)` deny also refuses the tools that read a file to change it: `edit` and
`multi_edit` (whose "closest match" would print the file, and whose success is an oracle on
its content) and `write` (which needs a read first, so its answer tells whether the file
exists). No answer the model gets ever holds a denied file's text (issue 11, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.core.approval import ApprovalRequest
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet, read_denied, tool_hidden
from moot.protocol import events as ev
from moot.protocol.modes import PermissionMode
from moot.tools.base import SideEffect, ToolContext
from moot.tools.files import file_tools
from moot.workspace.paths import Workspace
from runtime_helpers import agent, call, make_runtime, of, run_turn

SECRET = "API_KEY=sk-live-0123456789"
CTX = ToolContext("s", "r", "c", "a", "t")
DENY = ["Read(./.env)", "Read(keys/)"]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / ".env").write_text(f"{SECRET}\nOTHER=1\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id.pem").write_text(f"{SECRET}\n")
    (tmp_path / "env_link").symlink_to(".env")
    (tmp_path / "app.py").write_text("print('hi')\n")
    return Workspace(tmp_path)


PROBES = [
    call("edit", path=".env", old="API_KEY=sk-live-9", new="x"),  # the closest line
    call("edit", path=".env", old=SECRET, new="API_KEY=mine"),  # success is an oracle
    call("multi_edit", path=".env", edits=[{"old": "API_KEY=sk", "new": "y"}]),
    call("edit", path="keys/id.pem", old="API_KEY=sk-live-1", new="x"),
    call("edit", path="env_link", old="API_KEY=sk-live-1", new="x"),
    call("write", path=".env", content="overwritten"),  # "read it first" tells it exists
    call("write", path="keys/new.pem", content="made"),  # refused alike when absent
]


@pytest.mark.parametrize("mode", [PermissionMode.ACCEPT_EDITS, PermissionMode.BYPASS_PERMISSIONS])
async def test_no_file_tool_reveals_or_changes_a_read_denied_file(
    ws: Workspace, mode: PermissionMode
) -> None:
    ws.hidden = read_denied(RuleSet(deny=DENY), ws.root)
    policy = RulesPolicy(RuleSet(deny=DENY), ws.root, mode=mode)
    model = agent("main", {"tool_calls": PROBES}, "done")
    runtime = make_runtime(model, tools=file_tools(ws), approval=policy)

    finished, events = await run_turn(runtime)

    assert finished.state == "completed"
    decided = of(events, ev.ApprovalDecided)
    assert len(decided) == len(PROBES)
    assert all(not d.approved and "denied by Read(" in d.feedback for d in decided)
    assert all("0123456789" not in d.feedback for d in decided)
    for result in of(events, ev.ToolFinished):
        assert result.is_error and "0123456789" not in result.content
    assert (ws.root / ".env").read_text() == f"{SECRET}\nOTHER=1\n"
    assert not (ws.root / "keys" / "new.pem").exists()


async def test_the_tools_refuse_a_denied_file_alike_whether_or_not_it_exists(
    ws: Workspace,
) -> None:
    """Without a policy (a library user, or input changed after the decision) the tools
    refuse on their own, before opening the file."""
    ws.hidden = read_denied(RuleSet(deny=DENY), ws.root)
    tools = {t.name: t for t in file_tools(ws)}
    answers = []
    for name in ("keys/id.pem", "keys/absent.pem"):
        edited = await tools["edit"].invoke({"path": name, "old": "API_KEY=sk", "new": "x"}, CTX)
        multi = await tools["multi_edit"].invoke(
            {"path": name, "edits": [{"old": "API_KEY=sk", "new": "x"}]}, CTX
        )
        written = await tools["write"].invoke({"path": name, "content": "x"}, CTX)
        read = await tools["read"].invoke({"path": name}, CTX)
        for result in (edited, multi, written, read):
            assert result.is_error and "read-denied" in result.content
            assert "0123456789" not in result.content
        answers.append([r.content.replace(name, "<path>") for r in (edited, multi, written, read)])
    assert answers[0] == answers[1], "the answers differ only by the path named"
    assert (ws.root / "keys" / "id.pem").read_text() == f"{SECRET}\n"
    assert not (ws.root / "keys" / "absent.pem").exists()


def test_a_bare_read_deny_hides_the_tools_that_read_to_change() -> None:
    rules = RuleSet(deny=["Read"])
    assert all(tool_hidden(name, rules) for name in ("read", "edit", "multi_edit", "write"))


def test_a_read_allow_rule_never_allows_an_edit_and_a_read_ask_asks_for_one(
    ws: Workspace,
) -> None:
    """`restricts` widens deny and ask rules only: `Read(**)` allows reading, not writing."""
    policy = RulesPolicy(RuleSet(allow=["Read(**)"]), ws.root)
    assert policy.decide(_request("write", path="app.py", content="x")).decision == "ask"
    asked = RulesPolicy(RuleSet(ask=["Read(./.env)"]), ws.root, mode=PermissionMode.ACCEPT_EDITS)
    assert asked.decide(_request("edit", path=".env", old="a", new="b")).decision == "ask"


def _request(tool: str, **arguments: object) -> ApprovalRequest:
    return ApprovalRequest("s", "main", "c", "t", tool, SideEffect.WRITES_WORKSPACE, arguments)

"""Tool calls as a permission policy is asked about them (`ApprovalRequest`), for the tests of
`decide` and what it suggests: which session, agent and call ask changes no verdict."""

from __future__ import annotations

from moot.protocol.approval import ApprovalRequest, SideEffect


def bash_call(command: str) -> ApprovalRequest:
    """A `bash` call running `command`."""
    return ApprovalRequest(
        "s1", "main", "c1", "t1", "bash", SideEffect.RUNS_COMMANDS, {"command": command}
    )

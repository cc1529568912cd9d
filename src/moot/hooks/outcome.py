"""What hook commands said, one by one and together.

A command's exit code and output become a `Said`; the commands of one event combine into one
`HookOutcome`, deterministically: deny beats ask beats allow, any block blocks, texts join in
settings order, and the first changed tool input wins.

Exit 0 continues; its stdout may be a JSON object (`decision`, `reason`, `continue`,
`stopReason`, `hookSpecificOutput` with `permissionDecision`, `permissionDecisionReason`,
`updatedInput`, `additionalContext`), or, for UserPromptSubmit and SessionStart, plain text
added as context. Exit 2 blocks, with stderr as the reason. Anything else, a timeout included,
is a non-blocking error: recorded, shown, and the run goes on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from moot.protocol.events import HookCommandRun, HookEventName

Decision = Literal["none", "allow", "ask", "deny", "block"]
Outcome = Literal["ok", "allow", "ask", "deny", "block", "stop", "error", "timeout"]

BLOCKING: frozenset[HookEventName] = frozenset(
    {"PreToolUse", "UserPromptSubmit", "PostToolUse", "Stop"}
)
"""Events whose hooks can block with exit 2 or `decision: block`; elsewhere exit 2 is an error."""
CONTEXT_FROM_STDOUT: frozenset[HookEventName] = frozenset({"UserPromptSubmit", "SessionStart"})
CONTEXT_EVENTS: frozenset[HookEventName] = CONTEXT_FROM_STDOUT | {"PostToolUse"}
_RANK: dict[Decision, int] = {"none": 0, "allow": 1, "ask": 2, "deny": 3, "block": 3}
CAP = 4000
"""Characters of a command's stdout and stderr kept in the event log."""
MODEL_CAP = 10_000
"""Characters of hook text (context, reasons) the model is given, at most."""


class CommandRun(msgspec.Struct, frozen=True):
    """How one hook command ended."""

    command: str
    exit_code: int | None
    duration_ms: float
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


class Said(msgspec.Struct, frozen=True):
    """What one command said."""

    outcome: Outcome
    decision: Decision = "none"
    reason: str = ""
    context: str = ""
    updated_input: dict[str, Any] | None = None
    stop: bool = False
    stop_reason: str = ""


class HookOutcome(msgspec.Struct, frozen=True):
    """What the hooks of one event said together."""

    event: HookEventName
    commands: tuple[HookCommandRun, ...] = ()
    decision: Decision = "none"
    reason: str = ""
    """Why: the blocking commands' stderr or JSON reasons, joined."""
    context: str = ""
    """What the model is told: added context, a PostToolUse block's reason, Stop feedback."""
    updated_input: dict[str, Any] | None = None
    stop: bool = False
    """Some hook said `continue: false`."""
    stop_reason: str = ""
    errors: tuple[str, ...] = ()
    """Non-blocking errors, one line each, for the person."""

    @property
    def blocked(self) -> bool:
        return self.decision in ("deny", "block")


def interpret(event: HookEventName, run: CommandRun) -> Said:
    """What one command's exit code and output mean for `event`."""
    if run.timed_out:
        return Said("timeout")
    if run.exit_code == 2 and event in BLOCKING:
        reason = run.stderr.strip() or f"`{run.command}` exited with status 2"
        if event == "PreToolUse":
            return Said("deny", "deny", reason)
        return Said("block", "block", reason)
    if run.exit_code != 0:
        return Said("error")
    text = run.stdout.strip()
    data = _json_object(text)
    if data is None:
        context = text if event in CONTEXT_FROM_STDOUT else ""
        return Said("ok", context=context)
    try:
        return _from_json(event, data)
    except (TypeError, ValueError):
        return Said("error")


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _from_json(event: HookEventName, data: dict[str, Any]) -> Said:
    """Read the JSON a command printed; a field of the wrong type raises TypeError."""
    specific = _typed(data.get("hookSpecificOutput", {}), dict)
    decision: Decision = "none"
    reason = _typed(data.get("reason", ""), str)
    said = data.get("decision")
    if said == "block" and event in BLOCKING:
        decision = "deny" if event == "PreToolUse" else "block"
    elif said == "approve" and event == "PreToolUse":  # the older spelling of "allow"
        decision = "allow"
    permission = specific.get("permissionDecision")
    if event == "PreToolUse" and permission is not None:
        if permission not in ("allow", "deny", "ask"):
            raise ValueError(f"permissionDecision {permission!r}")
        decision = permission
        reason = _typed(specific.get("permissionDecisionReason", reason), str)
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    context = specific.get("additionalContext", "") if event in CONTEXT_EVENTS else ""
    stop = data.get("continue") is False
    outcome: Outcome = "stop" if stop else ("ok" if decision == "none" else decision)
    return Said(
        outcome,
        decision,
        reason,
        _typed(context, str),
        _typed(updated, dict) if updated is not None else None,
        stop,
        _typed(data.get("stopReason", ""), str),
    )


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def combine(event: HookEventName, runs: list[CommandRun]) -> HookOutcome:
    """One outcome from the commands of one event, in settings order."""
    said = [interpret(event, run) for run in runs]
    decision: Decision = max((s.decision for s in said), key=_RANK.__getitem__, default="none")
    winners = [s for s in said if _RANK[s.decision] == _RANK[decision] and decision != "none"]
    reason = "\n".join(s.reason for s in winners if s.reason)
    contexts = [s.context for s in said if s.context]
    if event == "PostToolUse" and decision == "block":
        contexts.append(f"PostToolUse hook feedback:\n{reason}")
    elif event == "Stop" and decision == "block":
        contexts = [f"Stop hook feedback:\n{reason}"]
    elif event == "UserPromptSubmit" and decision == "block":
        contexts = []  # the prompt is refused: nothing reaches the model
    updated = next((s.updated_input for s in said if s.updated_input is not None), None)
    stopping = [s for s in said if s.stop]
    return HookOutcome(
        event=event,
        commands=tuple(_record(run, s) for run, s in zip(runs, said, strict=True)),
        decision=decision,
        reason=_capped(reason),
        context=_capped("\n".join(contexts)),
        updated_input=updated,
        stop=bool(stopping),
        stop_reason=next((s.stop_reason for s in stopping if s.stop_reason), ""),
        errors=tuple(_error(run) for run, s in zip(runs, said, strict=True) if _failed(s)),
    )


def _capped(text: str) -> str:
    if len(text) <= MODEL_CAP:
        return text
    return text[:MODEL_CAP] + f"\n[... {len(text) - MODEL_CAP} more characters cut]"


def _failed(said: Said) -> bool:
    return said.outcome in ("error", "timeout")


def _error(run: CommandRun) -> str:
    if run.timed_out:
        return f"hook `{run.command}` timed out; its processes were killed"
    detail = run.stderr.strip().splitlines()
    last = f": {detail[-1]}" if detail else ""
    if run.exit_code == 0:
        return f"hook `{run.command}` printed JSON moot cannot use{last}"
    return f"hook `{run.command}` failed with status {run.exit_code}{last}"


def _record(run: CommandRun, said: Said) -> HookCommandRun:
    return HookCommandRun(
        command=run.command,
        exit_code=run.exit_code,
        duration_ms=round(run.duration_ms, 1),
        outcome=said.outcome,
        stdout=run.stdout[:CAP],
        stderr=run.stderr[:CAP],
    )

"""Readable views of a run's log: the call tree (`format_trace`) and one agent's status
(`agent_status`). Pure functions of the events, so a live run, a finished one and a resumed
one read the same."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from moot.protocol import events as ev

_WIDTH = 72


def _short(text: str, width: int = _WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def format_trace(events: Iterable[ev.Event]) -> str:
    """Who called whom, with what, and what each returned, indented by call depth:

    user → main [run_1]: write the report
      main → helper [call_2] (background): dig
        message helper → main: 50%
      ← helper completed: found it
    ← main completed: the report
    """
    lines: list[str] = []
    depth: dict[str, int] = {}
    for e in events:
        match e:
            case ev.TurnStarted():
                depth[e.call_id] = 0
                to = ", ".join(e.starting_agents) or e.agent  # several: each called below
                lines.append(f"user → {to} [{e.call_id}]: {_short(e.prompt)}")
            case ev.AgentCalled():
                depth[e.call_id] = e.depth
                how = " (background)" if e.background else ""
                lines.append(
                    f"{'  ' * e.depth}{e.caller} → {e.agent} [{e.call_id}]{how}: "
                    f"{_short(e.message)}"
                )
            case ev.MessageSent():
                pad = "  " * (depth.get(e.call_id, 0) + 1)
                lines.append(f"{pad}message {e.sender} → {e.to_agent}: {_short(e.text)}")
            case ev.AgentReturned() | ev.TurnFinished():
                pad = "  " * depth.get(e.call_id, 0)
                lines.append(f"{pad}← {e.agent} {e.state}: {_short(e.output)}")
    return "\n".join(lines)


def agent_status(events: Sequence[ev.Event], task_id: str) -> str:
    """One task's status and the messages it sent and received, oldest first.

    Raises:
        KeyError: No call of that id is in the log.
    """
    agent, status, lines = "", "", []
    for e in events:
        if e.call_id == task_id and isinstance(e, ev.TurnStarted | ev.AgentCalled):
            caller = e.caller if isinstance(e, ev.AgentCalled) else "user"
            text = e.message if isinstance(e, ev.AgentCalled) else e.prompt
            agent, status = e.agent, "running"
            lines.append(f"  [forward] {caller} -> {e.agent}: {_short(text)}")
        elif isinstance(e, ev.MessageSent) and task_id in (e.call_id, e.to_call_id):
            lines.append(f"  [message] {e.sender} -> {e.to_agent}: {_short(e.text)}")
        elif e.call_id == task_id and isinstance(e, ev.ApprovalRequested):
            status = "waiting for approval"
        elif e.call_id == task_id and isinstance(e, ev.ApprovalDecided):
            status = "running"
        elif e.call_id == task_id and isinstance(e, ev.AgentReturned | ev.TurnFinished):
            status = (
                str(e.state) if e.stop_reason == "completed" else f"{e.state} ({e.stop_reason})"
            )
            lines.append(f"  [return] {e.agent}: {_short(e.output)}")
    if not agent:
        raise KeyError(f"no task {task_id!r} in this run")
    head = [f"Task ID: {task_id}", f"Agent: {agent}", f"Status: {status}"]
    return "\n".join([*head, f"Messages ({len(lines)}):", *lines])

"""Readable views of a run's log: the call tree (`format_trace`) and one agent's status
(`agent_status`). Pure functions of the events, so a live run, a finished one and a resumed
one read the same; a call's state comes from `protocol.activity`, as the app's trace pane's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from moot.protocol import events as ev
from moot.protocol.activity import CallActivity

_WIDTH = 72


def _short(text: str, width: int = _WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def format_trace(events: Iterable[ev.Event]) -> str:
    """Who called whom, with what, and what each returned, indented by call depth; a call
    that has not returned by the log's end says what it is doing (running, waiting for
    approval, waiting for a message):

    user → main [run_1]: write the report
      main → helper [call_2] (background): dig
        message helper → main: 50%
      ← helper completed: found it
    ← main completed: the report
    """
    lines: list[str] = []
    depth: dict[str, int] = {}
    opened: dict[str, int] = {}
    """Each call's forward line."""
    activity: dict[str, CallActivity] = {}
    for e in events:
        if e.call_id in activity:
            activity[e.call_id].apply(e)
        match e:
            case ev.TurnStarted():
                depth[e.call_id], opened[e.call_id] = 0, len(lines)
                activity[e.call_id] = CallActivity()
                to = ", ".join(e.starting_agents) or e.agent  # several: each called below
                lines.append(f"user → {to} [{e.call_id}]: {_short(e.prompt)}")
            case ev.AgentCalled():
                depth[e.call_id], opened[e.call_id] = e.depth, len(lines)
                activity[e.call_id] = CallActivity()
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
    for call_id, now in activity.items():
        if now.ended is None:
            lines[opened[call_id]] += f" ({now.state})"
    return "\n".join(lines)


def agent_status(events: Sequence[ev.Event], task_id: str) -> str:
    """One task's status (running, waiting for approval, waiting for a message, or how it
    ended) and the messages it sent and received, oldest first.

    Raises:
        KeyError: No call of that id is in the log.
    """
    agent, lines = "", []
    activity = CallActivity()
    for e in events:
        if e.call_id == task_id:
            activity.apply(e)
        if e.call_id == task_id and isinstance(e, ev.TurnStarted | ev.AgentCalled):
            caller = e.caller if isinstance(e, ev.AgentCalled) else "user"
            text = e.message if isinstance(e, ev.AgentCalled) else e.prompt
            agent = e.agent
            lines.append(f"  [forward] {caller} -> {e.agent}: {_short(text)}")
        elif isinstance(e, ev.MessageSent) and task_id in (e.call_id, e.to_call_id):
            lines.append(f"  [message] {e.sender} -> {e.to_agent}: {_short(e.text)}")
        elif e.call_id == task_id and isinstance(e, ev.AgentReturned | ev.TurnFinished):
            lines.append(f"  [return] {e.agent}: {_short(e.output)}")
    if not agent:
        raise KeyError(f"no task {task_id!r} in this run")
    status, ended = activity.state, activity.ended
    if ended is not None and ended.stop_reason != "completed":
        status = f"{ended.state} ({ended.stop_reason})"
    head = [f"Task ID: {task_id}", f"Agent: {agent}", f"Status: {status}"]
    return "\n".join([*head, f"Messages ({len(lines)}):", *lines])

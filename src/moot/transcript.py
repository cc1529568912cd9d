"""A session's log as a readable transcript (`moot sessions show` and `export --format md`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from moot.protocol import events as ev
from moot.protocol.client import SessionSummary

_CLIP = 2000


def _clip(text: str) -> str:
    if len(text) <= _CLIP:
        return text
    return text[:_CLIP] + f"\n… ({len(text) - _CLIP} more characters)"


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def markdown(events: Iterable[ev.Event]) -> Iterator[str]:
    """Markdown blocks, one per event that a reader cares about (deltas are skipped)."""
    for e in events:
        who = f"**{e.agent}**"
        match e:
            case ev.TurnStarted():
                yield f"### user → {e.agent}\n\n{_quote(e.prompt)}"
                for file in e.files:
                    note = f" ({file.note})" if file.note else ""
                    yield f"*attached `{file.path}`{note}*"
            case ev.AgentCalled():
                yield f"#### {e.caller} → {e.agent} (depth {e.depth})\n\n{_quote(e.message)}"
            case ev.ModelResponded():
                if e.text:
                    yield f"{who}:\n\n{e.text}"
                for call in e.tool_calls:
                    args = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
                    yield f"{who} calls `{call.name}` `{_clip(args)}`"
            case ev.ToolFinished():
                mark = " (error)" if e.is_error else ""
                yield f"`{e.tool}` result{mark}:\n\n```\n{_clip(e.content)}\n```"
            case ev.ApprovalDecided(approved=False):
                yield f"denied by {e.by}: {e.feedback or 'no reason given'}"
            case ev.LimitHit():
                yield f"*limit: {e.stop_reason}: {e.detail}*"
            case ev.Error():
                yield f"*{e.source} error: {e.message}*"
            case ev.RunResumed():
                yield "*run resumed*"
            case ev.AgentReturned():
                yield f"#### {e.agent} returns ({e.state}, {e.stop_reason})"
            case ev.TurnFinished():
                yield (
                    f"*turn {e.state} ({e.stop_reason}): {e.turns} turns, "
                    f"{e.usage.total_tokens} tokens, ${e.cost_usd:.4f}*"
                )


def as_markdown(session: SessionSummary, events: Sequence[ev.Event]) -> str:
    """A session as a markdown document (`moot sessions show`, `export --format md`)."""
    head = f"# {session.title or session.id}\n\nsession `{session.id}` in `{session.workspace}`\n"
    return head + "\n" + "\n\n".join(markdown(events)) + "\n"


def as_json(session: SessionSummary, events: Sequence[ev.Event]) -> str:
    """A session and every event as JSON (`moot sessions export --format json`); what
    `moot.testing.FakeClient.from_export` plays."""
    about = {
        "id": session.id,
        "title": session.title,
        "workspace": session.workspace,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
    }
    body = {"session": about, "events": msgspec.to_builtins(events)}
    return json.dumps(body, ensure_ascii=False, indent=1)

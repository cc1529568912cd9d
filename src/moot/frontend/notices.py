"""The words of the notices a transcript shows for a session's events: one definition for the
app's chat and the REPL's scrollback, which each draw a `Notice` their own way (a block, a
dim line), at the depth of the call it belongs to when `in_call`."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from moot.frontend.display import one_line
from moot.protocol import events as ev
from moot.protocol.states import RunState

Clean = Callable[[str], str]
"""What a front end does to text that came from outside (the REPL strips terminal escapes)."""

BY = {"user": "you", "policy": "a rule", "hook": "a hook"}
"""Who answered an approval, as a notice names them."""


def _as_is(text: str) -> str:
    return text


class Notice(msgspec.Struct, frozen=True):
    """One line about what happened."""

    text: str
    warning: bool = False
    """Something went otherwise than asked (a refusal, a limit): shown as a warning."""
    in_call: bool = False
    """It belongs to the agent call that recorded it (a peer's shows indented under its call);
    else it is the session's and shows at the left."""


def refused_by(event: ev.ApprovalDecided, clean: Clean = _as_is) -> str:
    """Who refused a tool call, and why: `refused by you: not that file`."""
    why = f": {clean(event.feedback)}" if event.feedback else ""
    return f"refused by {BY[event.by]}{why}"


def notice(
    event: ev.Event,
    *,
    arrow: str = "→",
    message_width: int | None = None,
    clean: Clean = _as_is,
) -> Notice | None:
    """The notice `event` shows as, or None for an event that shows otherwise (or not at all).

    Args:
        event: A stored or live event.
        arrow: Between a message's sender and its receiver (the REPL's plain look: `->`).
        message_width: A message's text is cut to this many characters (None: whole).
        clean: Applied to the text the event quotes (a reason, a message).
    """
    match event:
        case ev.ApprovalDecided(approved=False):
            return Notice(refused_by(event, clean), warning=True, in_call=True)
        case ev.ApprovalDecided(approved=True, by="user", scope=scope, rule=rule):
            kept = f" ({scope}: {rule})" if rule else ""
            return Notice(f"allowed by you{kept}", in_call=True)
        case ev.LimitHit():
            return Notice(f"limit reached: {event.detail}", warning=True, in_call=True)
        case ev.ModeChanged():
            return Notice(f"mode: {event.mode} (was {event.previous})")
        case ev.AutoCommitted():
            note = f" ({event.note})" if event.note else ""
            return Notice(f"committed {event.sha[:10]} {event.subject}{note}")
        case ev.OpRefused():
            return Notice(f"{event.op}: {event.reason}", warning=True)
        case ev.RunResumed():
            gone = len(event.interrupted_tool_calls)
            tail = f"; {gone} interrupted tool calls not re-run" if gone else ""
            return Notice(f"resumed the interrupted turn{tail}")
        case ev.SessionResumed():
            return Notice(f"resumed · {event.model} · {event.mode or 'no modes'}")
        case ev.SessionForked():
            return Notice(f"forked from {event.source} at event {event.at}")
        case ev.HookRan(decision="deny" | "block"):
            reason = f": {clean(event.reason)}" if event.reason else ""
            return Notice(f"{event.hook_event} hook: {event.decision}{reason}", in_call=True)
        case ev.MessageSent():
            # A message between peers, or between an agent and the person (who answers with
            # `@agent ...`): shown where it was sent, as `format_trace` does.
            said = clean(event.text)
            text = one_line(said, message_width) if message_width else " ".join(said.split())
            who = clean(f"{event.sender} {arrow} {event.to_agent}")
            return Notice(f"message {who}: {text}", in_call=True)
    return None


def turn_stopped(event: ev.TurnFinished) -> Notice | None:
    """How a turn ended otherwise than completed (`turn failed (provider_error)`); None when it
    completed."""
    if event.state is RunState.COMPLETED:
        return None
    return Notice(f"turn {event.state} ({event.stop_reason})", warning=True)


def turn_spent(event: ev.TurnFinished) -> str:
    """What a turn cost: `2 model turns · 1,234 tokens · $0.0012 · 3.4s`."""
    tokens = event.usage.input_tokens + event.usage.output_tokens
    return (
        f"{event.turns} model turn{'s' * (event.turns != 1)} · {tokens:,} tokens"
        f" · ${event.cost_usd:.4f} · {event.duration_ms / 1000:.1f}s"
    )

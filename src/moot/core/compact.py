"""Compaction: a conversation made shorter, recorded as an event the fold applies.

Two halves. `apply` is pure: given messages and a compaction event, the messages the model reads
from then on (the fold calls it, live and on resume). `compact` decides what the event says: a
summary of the older messages by the model, keeping the recent ones verbatim; or, when the model
cannot summarise (an error, an empty or too-long answer), a deterministic fallback that blanks
the oldest tool outputs first and then drops the oldest turns behind a digest. The fallback asks
nothing and never fails, so a run does not die of a full context window.

`compact_history` answers the person's `Compact` between turns: it compacts an agent's
conversation with the person, which the session then folds in (`history_compacted`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec
from msgspec.structs import replace

from moot.protocol import events as ev
from moot.protocol.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from moot.providers.base import ModelRequest, ProviderError, ask_text, message_chars, model_info

if TYPE_CHECKING:
    from moot.protocol.events import ContextCompacted, HistoryCompacted
    from moot.providers.base import Provider

SUMMARY_HEAD = "Summary of the earlier conversation (compacted; what follows is verbatim):\n\n"
ELIDED = "[tool output dropped to fit the context window]"
SUMMARY_SYSTEM = (
    "You summarise the earlier part of a coding session so that the work can go on without "
    "it. Write markdown with exactly these sections: ## Task, ## Decisions, ## Files touched, "
    "## Open threads. Be specific: file paths, functions, commands, errors, what was tried. "
    "No preamble."
)
KEEP_SHARE = 0.4
"""Of the message budget, what recent messages may keep verbatim."""
MANUAL_KEEP_TOKENS = 4_000
"""What `/compact` keeps verbatim of a conversation no context window bounds."""
FALLBACK_SHARE = 0.6
"""Of the message budget, what the fallback shrinks to: room for the run to grow, so that it
does not compact again at the very next step."""
_RESULT_CHARS = 1_500
"""Of each tool output, what the summarising model reads."""


class Plan(msgspec.Struct, frozen=True):
    """What a compaction does: the fields of its event."""

    summary: str = ""
    replaced: int = 0
    elided: tuple[str, ...] = ()
    method: Literal["model", "fallback"] = "fallback"
    tokens_before: int = 0
    tokens_after: int = 0
    model: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float = 0.0


def apply(
    messages: Sequence[Message], e: ContextCompacted | HistoryCompacted | Plan
) -> list[Message]:
    """The messages after compaction `e`: results in `e.elided` blanked, the first `e.replaced`
    messages replaced by the summary (joined to the first kept message when that is the
    person's, so turns still alternate)."""
    elided = set(e.elided)
    out = [
        replace(m, content=ELIDED, attachments=())
        if elided and isinstance(m, ToolResultMessage) and m.tool_call_id in elided
        else m
        for m in messages
    ]
    if not e.replaced:
        return out
    text = SUMMARY_HEAD + e.summary
    rest = out[e.replaced :]
    if rest and isinstance(rest[0], UserMessage):
        return [replace(rest[0], content=f"{text}\n\n---\n\n{rest[0].content}"), *rest[1:]]
    return [UserMessage(content=text), *rest]


def tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of `messages`, as the pre-flight check counts them."""
    return sum(message_chars(m) for m in messages) // 4


def cuts(messages: Sequence[Message]) -> list[int]:
    """Where the kept part may begin: never at a tool result, whose call would be gone."""
    return [i for i in range(1, len(messages)) if not isinstance(messages[i], ToolResultMessage)]


def choose_cut(messages: Sequence[Message], keep_tokens: int) -> int | None:
    """The earliest cut whose verbatim tail fits `keep_tokens`, else the latest cut."""
    valid = cuts(messages)
    if not valid:
        return None
    tail, after = 0, {}
    for i in range(len(messages) - 1, 0, -1):
        tail += message_chars(messages[i])
        after[i] = tail // 4
    return next((i for i in valid if after[i] <= keep_tokens), valid[-1])


def last_turn_cut(messages: Sequence[Message], keep_tokens: int) -> int | None:
    """Where the person's latest turn begins, when that tail fits `keep_tokens` (what
    `/compact` keeps verbatim); else `choose_cut`."""
    starts = [i for i in cuts(messages) if isinstance(messages[i], UserMessage)]
    if starts and tokens(messages[starts[-1] :]) <= keep_tokens:
        return starts[-1]
    return choose_cut(messages, keep_tokens)


def fallback(messages: Sequence[Message], budget: int) -> Plan:
    """Shrink `messages` to `budget` tokens without a model: blank tool outputs, oldest first;
    if that is not enough, drop the oldest turns behind a digest (task, files touched). Linear
    in the number of messages."""
    chars = [message_chars(m) for m in messages]
    before = sum(chars) // 4
    total, elided = sum(chars), []
    for i, m in enumerate(messages):
        if total // 4 <= budget:
            break
        if isinstance(m, ToolResultMessage) and m.content != ELIDED:
            shrunk = message_chars(replace(m, content=ELIDED, attachments=()))
            total -= chars[i] - shrunk
            chars[i] = shrunk
            elided.append(m.tool_call_id)
    plan = Plan(elided=tuple(elided), tokens_before=before, tokens_after=total // 4)
    if total // 4 <= budget:
        return plan
    valid = cuts(messages)
    if not valid:
        return plan
    suffix = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + chars[i]
    files: dict[str, None] = {}
    done = 0
    chosen, summary = valid[-1], ""
    for cut in valid:
        for m in messages[done:cut]:
            for call in getattr(m, "tool_calls", ()):
                path = call.arguments.get("path") or call.arguments.get("file_path")
                if isinstance(path, str):
                    files[path] = None
        done = cut
        summary = _digest(messages, cut, files)
        if (len(SUMMARY_HEAD) + len(summary) + 8 + suffix[cut]) // 4 <= budget:
            chosen = cut
            break
    else:
        summary = _digest(messages, chosen, files)
    plan = replace(plan, summary=summary, replaced=chosen)
    return replace(plan, tokens_after=tokens(apply(messages, plan)))


def _digest(messages: Sequence[Message], cut: int, files: dict[str, None]) -> str:
    first = next((m.content for m in messages[:cut] if isinstance(m, UserMessage)), "")
    task = first[:600] + (" …" if len(first) > 600 else "")
    listed = list(files)[-30:]
    touched = "\n".join(f"- {f}" for f in listed) or "- none recorded"
    return (
        f"## Task\n{task or '(not recorded)'}\n\n"
        f"## Decisions\n{cut} earlier messages were dropped without a summary "
        "(summarising failed); ask the person if something is missing.\n\n"
        f"## Files touched\n{touched}\n\n"
        "## Open threads\nSee the messages that follow."
    )


def transcript(messages: Sequence[Message], max_chars: int) -> str:
    """The messages as plain text for the summarising model, tool outputs shortened; when
    longer than `max_chars`, its head and tail."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            lines.append(f"PERSON: {m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                lines.append(f"ASSISTANT: {m.content}")
            for call in m.tool_calls:
                args = json.dumps(call.arguments, ensure_ascii=False)[:400]
                lines.append(f"TOOL CALL {call.name} {args}")
        else:
            body = m.content[:_RESULT_CHARS] + (" …" if len(m.content) > _RESULT_CHARS else "")
            lines.append(f"TOOL RESULT {m.name}{' (error)' if m.is_error else ''}: {body}")
    text = "\n\n".join(lines)
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return f"{text[:half]}\n\n[… middle of the conversation left out …]\n\n{text[-half:]}"


async def summarise(
    provider: Provider,
    messages: Sequence[Message],
    *,
    focus: str,
    agent: str,
    max_chars: int,
) -> tuple[str, Usage, float]:
    """The model's summary of `messages`, and what asking cost.

    Raises:
        ProviderError: the model failed; the caller falls back.
    """
    ask = "Summarise this conversation." + (f" Keep above all: {focus}" if focus else "")
    request = ModelRequest(
        model=provider.name,
        system=SUMMARY_SYSTEM,
        messages=(UserMessage(content=f"{ask}\n\n{transcript(messages, max_chars)}"),),
        agent=agent,
        purpose="compact",
    )
    text, usage, cost = await ask_text(provider, request)
    return text.strip(), usage, cost


async def compact(
    messages: Sequence[Message],
    *,
    provider: Provider | None,
    budget: int | None,
    keep_tokens: int,
    focus: str = "",
    agent: str = "",
    window: int | None = None,
    cut: int | None = None,
) -> Plan:
    """Decide a compaction of `messages`: the model's summary when it fits `budget` (tokens the
    messages may take; None: no bound), else the fallback. `cut`: where the verbatim part begins
    (by default the earliest place whose tail fits `keep_tokens`). Never raises for a model
    failure."""
    before = tokens(messages)
    cut = choose_cut(messages, keep_tokens) if cut is None else cut
    spent = Plan()
    if cut is not None and provider is not None:
        # The summarising request must fit the window itself: its transcript is capped.
        max_chars = 4 * max(2_000, (window or 100_000) // 2)
        try:
            text, usage, cost = await summarise(
                provider, messages[:cut], focus=focus, agent=agent, max_chars=max_chars
            )
        except ProviderError:
            text, usage, cost = "", Usage(), 0.0
        spent = Plan(model=provider.name, usage=usage, cost_usd=cost)
        if text:
            plan = replace(spent, summary=text, replaced=cut, method="model", tokens_before=before)
            after = tokens(apply(messages, plan))
            if budget is None or after <= budget:
                return replace(plan, tokens_after=after)
    if budget is None:  # nothing bounds it: keep the recent part, drop the rest behind a digest
        budget = keep_tokens + 1_000
    plan = fallback(messages, int(budget * FALLBACK_SHARE))
    return replace(plan, model=spent.model, usage=spent.usage, cost_usd=spent.cost_usd)


async def compact_history(
    agent: str,
    messages: Sequence[Message],
    *,
    provider: Callable[[], Provider],
    focus: str,
    compact_at: float | None,
    pre_compact: Callable[[], Awaitable[object]] | None,
    submission: str,
) -> ev.Event:
    """The answer to a `Compact` between turns: `history_compacted` with the agent's older
    conversation summarised (the model's summary, or the fallback), or `op_refused` saying why
    nothing was compacted (a provider that cannot be made, a hook that failed to start, a
    conversation all recent, a summary that would not shrink it). Only recording it changes the
    session (`Runtime.record_session`).

    Args:
        agent: Whose conversation with the person is compacted.
        messages: That conversation, as the session holds it.
        provider: Makes the agent's provider (asked inside, so that failing to is an answer).
        focus: What the summary keeps above all (`/compact FOCUS`).
        compact_at: The share of the context window compaction aims under (`Limits`).
        pre_compact: Runs the PreCompact hooks first; None: there are none.
        submission: The `Compact`'s id, which the answer carries.

    Raises:
        asyncio.CancelledError: An `Interrupt` (or the session's end) stopped it.
    """

    def refused(reason: str) -> ev.Event:
        return ev.OpRefused(op="compact", reason=reason, submission_id=submission)

    try:
        made = provider()
        if pre_compact is not None:
            await pre_compact()
        info = model_info(made)
        window = info.context_window if info is not None else None
        budget = int(window * (compact_at or 0.8)) if window else None
        keep = int(budget * KEEP_SHARE) if budget else MANUAL_KEEP_TOKENS
        plan = await compact(
            messages,
            provider=made,
            budget=budget,
            keep_tokens=keep,
            focus=focus,
            agent=agent,
            window=window,
            cut=last_turn_cut(messages, keep),
        )
    except Exception as exc:  # a provider that cannot be made, a hook that failed to start
        return refused(f"compaction failed: {type(exc).__name__}: {exc}")
    if not (plan.replaced or plan.elided):
        return refused("nothing to compact yet: the conversation is all recent")
    if plan.tokens_after >= plan.tokens_before:
        # A short conversation summarised under four headings can come out longer: such a
        # compaction would only cost context, so it is not recorded.
        return refused(
            f"the summary would not shrink the conversation (about {plan.tokens_before:,} → "
            f"{plan.tokens_after:,} tokens): nothing was compacted"
        )
    return ev.HistoryCompacted(
        agent=agent,
        trigger="manual",
        focus=focus,
        submission_id=submission,
        **msgspec.structs.asdict(plan),
    )

"""Compactions: one event holds every choice a compaction made, so the fold applies it and a
resume folds to the same messages without asking a model again."""

from __future__ import annotations

from typing import Literal

import msgspec

from moot.protocol.events.base import EventBase
from moot.protocol.messages import Usage

CompactTrigger = Literal["manual", "auto", "overflow"]


class _Compaction(EventBase, frozen=True):
    """What a compaction did to a conversation; the fold applies it (`core/compact.py::apply`).

    The fold replaces the first `replaced` messages by one summary message (or puts the summary
    before the first kept message when that is the person's) and blanks the results of the
    tool calls in `elided`; later messages stay verbatim. The event holds every choice, so a
    resume folds to the same messages without asking a model again.
    """

    summary: str = ""
    replaced: int = 0
    """Leading messages the summary stands for (0: none; only tool outputs were elided)."""
    elided: tuple[str, ...] = ()
    """Tool call ids whose results are blanked (the deterministic fallback, oldest first)."""
    trigger: CompactTrigger = "manual"
    """manual: the person (`/compact`); auto: the next request would pass the threshold;
    overflow: the provider said the request was too long."""
    method: Literal["model", "fallback"] = "model"
    """model: the summary is the model's; fallback: summarising failed, nothing was asked."""
    focus: str = ""
    """What the person asked the summary to keep (`/compact focus`)."""
    tokens_before: int = 0
    tokens_after: int = 0
    """Estimated tokens of the messages before and after."""
    model: str = ""
    """The model that summarised (empty: none was asked)."""
    usage: Usage = msgspec.field(default_factory=Usage)
    """What summarising cost: it counts toward the run's budget and the session's ledger."""
    cost_usd: float = 0.0


class ContextCompacted(_Compaction, tag="context_compacted", frozen=True):
    """A call's conversation was compacted while its run went on (automatically, or after the
    provider refused a request as too long)."""


class HistoryCompacted(_Compaction, tag="history_compacted", frozen=True):
    """An agent's conversation with the person was compacted between runs (`Compact`); a
    session event, `agent` names whose conversation it is."""

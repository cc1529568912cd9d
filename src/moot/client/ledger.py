"""The cost ledger: tokens and cost per model per session, folded from the stored usage.

Usage is recorded with every model call (`usage` events), with each compaction that asked a
model (`context_compacted`, `history_compacted`) and with a title the model wrote
(`session_renamed`, `modelTitles`) and with an MCP server's request for the model
(`mcp_sampled`). Costs are the catalog's prices per million
tokens applied to the summed tokens, so a price in `models.json` or the settings' `models`
prices the whole history the same way; a model the catalog cannot price keeps what its provider
reported (a scripted model's `cost_usd`). A fork copies its original's events: its ledger begins
at its `session_forked`, so what was spent is counted once, in the session that spent it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from moot.protocol import events as ev
from moot.protocol.client import CostLine
from moot.protocol.messages import Usage
from moot.providers.catalog import CatalogEntry, lookup

KINDS = (
    "usage",
    "context_compacted",
    "history_compacted",
    "session_renamed",
    "mcp_sampled",
    "session_forked",
)
"""The events that carry usage, and where a fork's own spending begins (`session_forked`: what
comes before it was copied from the original, which counts it)."""


def ledger_lines(
    session_id: str,
    events: Iterable[ev.Event],
    *,
    since: datetime | None = None,
    models: Mapping[str, CatalogEntry] | None = None,
) -> list[CostLine]:
    """One line per model that reported usage in `events` (at or after `since`), by name."""
    usage: dict[str, Usage] = {}
    reported: dict[str, float] = {}
    calls: dict[str, int] = {}
    for e in events:
        if isinstance(e, ev.SessionForked):
            usage, reported, calls = {}, {}, {}
            continue
        if not isinstance(
            e,
            ev.UsageRecorded
            | ev.ContextCompacted
            | ev.HistoryCompacted
            | ev.SessionRenamed
            | ev.McpSampled,
        ):
            continue
        if not e.model or (since is not None and e.ts < since):
            continue
        usage[e.model] = usage.get(e.model, Usage()) + e.usage
        reported[e.model] = reported.get(e.model, 0.0) + e.cost_usd
        calls[e.model] = calls.get(e.model, 0) + 1
    lines = []
    for model in sorted(usage):
        tokens = usage[model]
        try:
            cost = lookup(model, models).cost(tokens)
        except ValueError:  # a malformed models.json: priced as the provider reported
            cost = None
        if cost is None and reported[model]:
            cost = reported[model]
        lines.append(
            CostLine(
                session_id=session_id,
                model=model,
                calls=calls[model],
                input_tokens=tokens.input_tokens,
                output_tokens=tokens.output_tokens,
                cache_read_tokens=tokens.cache_read_tokens,
                cache_write_tokens=tokens.cache_write_tokens,
                cost_usd=cost,
            )
        )
    return lines

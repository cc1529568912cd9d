"""`/cost`: the session's cost ledger; and the table `moot cost` prints across sessions."""

from __future__ import annotations

from collections.abc import Iterable

from moot.commands.registry import CommandContext, Registry
from moot.frontend.table import fitted
from moot.protocol.client import CostLine
from moot.protocol.messages import Usage


def register(registry: Registry) -> None:
    """Add `/cost` to `registry`."""

    @registry.command("cost", "Tokens and cost of this session, per model (catalog prices)")
    async def cost(context: CommandContext, args: str) -> None:
        client = context.client
        context.say(
            ledger_text(
                client.query.costs(session_id=client.session_id),
                per_session=False,
                width=context.columns,
            )
        )


def total(lines: Iterable[CostLine]) -> tuple[Usage, float, bool]:
    """Summed tokens and cost of `lines`, and whether every line had a price."""
    tokens, cost, priced = Usage(), 0.0, True
    for line in lines:
        tokens = tokens + Usage(
            input_tokens=line.input_tokens,
            output_tokens=line.output_tokens,
            cache_read_tokens=line.cache_read_tokens,
            cache_write_tokens=line.cache_write_tokens,
        )
        if line.cost_usd is None:
            priced = False
        else:
            cost += line.cost_usd
    return tokens, cost, priced


def ledger_text(lines: list[CostLine], *, per_session: bool, width: int = 10_000) -> str:
    """The ledger as a table for a terminal (`/cost`, `moot cost`), as a list when its rows
    would not fit in `width` characters."""
    if not lines:
        return "no model usage recorded"
    head = ["session"] if per_session else []
    rows = [[*head, "model", "calls", "input", "output", "cache read", "cache write", "cost"]]
    for line in lines:
        rows.append(
            [
                *([line.session_id] if per_session else []),
                line.model,
                str(line.calls),
                f"{line.input_tokens:,}",
                f"{line.output_tokens:,}",
                f"{line.cache_read_tokens:,}",
                f"{line.cache_write_tokens:,}",
                _usd(line.cost_usd),
            ]
        )
    tokens, cost, priced = total(lines)
    rows.append(
        [
            *([""] if per_session else []),
            "total",
            str(sum(line.calls for line in lines)),
            f"{tokens.input_tokens:,}",
            f"{tokens.output_tokens:,}",
            f"{tokens.cache_read_tokens:,}",
            f"{tokens.cache_write_tokens:,}",
            _usd(cost) + ("" if priced else " + unpriced"),
        ]
    )
    return fitted(rows, text_columns=2 if per_session else 1, width=width)


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"

"""Result rows and how they print: one plain-text table, columns what | measured | target.

A benchmark that judges a figure against its target itself (a ratio, where the machine's load
weighs on both sides alike) marks a row that misses it (`Row.missed`): the table says FAIL
there, and `scripts/bench` lists it under the table and exits nonzero."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    what: str
    """What was measured, and how."""
    measured: str
    """The value with its units."""
    target: str = ""
    """The goal it is held against; empty for reference rows."""
    missed: bool = False
    """The figure misses its target (judged by the benchmark that measured it)."""


def ms(seconds: float) -> str:
    """Seconds as milliseconds, with enough digits to tell sub-millisecond values apart."""
    value = seconds * 1000
    if value < 1:
        return f"{value:.3f} ms"
    if value < 10:
        return f"{value:.2f} ms"
    return f"{value:.1f} ms"


def mib(kib: float) -> str:
    """Kibibytes (what `ru_maxrss` counts on Linux) as MiB."""
    return f"{kib / 1024:.1f} MiB"


def table(rows: list[Row]) -> str:
    """The rows as aligned plain text under a header."""
    header = Row("what", "measured", "target")
    rows = [
        Row(r.what, r.measured, f"{r.target}  FAIL", missed=True) if r.missed else r for r in rows
    ]
    lines = [header, *rows]
    widths = [max(len(getattr(r, col)) for r in lines) for col in ("what", "measured", "target")]

    def line(r: Row) -> str:
        return f"{r.what:<{widths[0]}} | {r.measured:<{widths[1]}} | {r.target}".rstrip()

    rule = "-+-".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def failures(rows: list[Row]) -> list[str]:
    """One line for each row that misses its target."""
    return [f"FAIL: {r.what.strip()}: {r.measured}, target {r.target}" for r in rows if r.missed]

"""Result rows and how they print: one plain-text table, columns what | measured | target."""

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
    lines = [header, *rows]
    widths = [max(len(getattr(r, col)) for r in lines) for col in ("what", "measured", "target")]

    def line(r: Row) -> str:
        return f"{r.what:<{widths[0]}} | {r.measured:<{widths[1]}} | {r.target}".rstrip()

    rule = "-+-".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])

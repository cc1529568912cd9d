"""Tables a command shows (`/cost`, `/context`), fitted to the front end's width: aligned
columns when every row fits, else one entry per row with its values wrapped under it (a table
wider than the chat wrapped mid-row, one row across two lines)."""

from __future__ import annotations

from collections.abc import Sequence

INDENT = "  "
SEPARATOR = " · "


def fitted(rows: Sequence[Sequence[str]], *, text_columns: int = 1, width: int = 100) -> str:
    """`rows` (the first is the header) as aligned columns, or as a list when they would not
    fit in `width` characters.

    Args:
        rows: The header, then the rows; every row as long as the header.
        text_columns: How many leading columns hold text (left-aligned); the rest are numbers
            (right-aligned).
        width: The characters a line may hold.
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(w) if i < text_columns else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    if max(len(line) for line in lines) <= width:
        return "\n".join(lines)
    header, *body = rows
    listed = []
    for row in body:
        title = " ".join(cell for cell in row[:text_columns] if cell)
        values = [
            f"{name} {cell}"
            for name, cell in zip(header[text_columns:], row[text_columns:], strict=True)
            if cell
        ]
        listed += [title, *wrapped(values, width)]
    return "\n".join(listed)


def wrapped(pieces: Sequence[str], width: int, indent: str = INDENT) -> list[str]:
    """`pieces` joined by ` · ` into indented lines of at most `width` characters (a piece
    longer than that has a line of its own)."""
    lines: list[str] = []
    line = ""
    for piece in pieces:
        joined = f"{line}{SEPARATOR}{piece}" if line else piece
        if line and len(indent) + len(joined) > width:
            lines.append(indent + line)
            line = piece
        else:
            line = joined
    if line:
        lines.append(indent + line)
    return lines

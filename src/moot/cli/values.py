"""Values the command line's options take, checked as argparse reads them."""

from __future__ import annotations

import argparse


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def names(text: str) -> list[str]:
    """`a,b` (spaces allowed); `''` names none."""
    return [name.strip() for name in text.split(",") if name.strip()]


UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def age(text: str) -> float:
    """`30d` as seconds (units m, h, d, w)."""
    number, unit = text[:-1], text[-1:].lower()
    if unit not in UNITS or not number.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not an age such as 30d, 12h or 90m")
    return int(number) * UNITS[unit]

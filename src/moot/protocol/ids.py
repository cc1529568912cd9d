"""Identifiers: short, sortable by creation time, unique without coordination."""

from __future__ import annotations

import os
import time


def new_id(prefix: str) -> str:
    """A new id such as `ses_0190a1b2c3d4e5f6a7b8c9d0`: prefix, milliseconds, randomness.

    Hex milliseconds first so ids of one kind sort by creation time (handy in `sessions list`).
    """
    return f"{prefix}_{int(time.time() * 1000):012x}{os.urandom(6).hex()}"

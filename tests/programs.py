"""A program a test needs on this machine: in CI its absence fails the test (`.ci/run` must
install it), elsewhere it skips, naming what is missing."""

from __future__ import annotations

import os
import shutil

import pytest


def installed(program: str, package: str) -> str:
    """The path of `program` (from the apt package `package`)."""
    found = shutil.which(program)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{program} is not installed; .ci/run must install it ({package})")
        pytest.skip(f"{program} is not installed ({package})")
    return found


def ripgrep() -> str:
    return installed("rg", "ripgrep")

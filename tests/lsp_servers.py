"""The real language servers the tests run: basedpyright (a dev dependency, installed with
moot's venv: its `basedpyright-langserver` lies beside the Python running the tests) and
typescript-language-server with TypeScript (no Python dependency: `.ci/run` installs them with
npm into a prefix and sets `MOOT_LSP_NPM` to its `node_modules`). Without one, the tests that
need it are skipped, and fail in CI."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

TYPESCRIPT_VERSION = "6.0.3"
"""The last TypeScript with `tsserver.js` (7 is the native compiler, which
typescript-language-server does not drive)."""
TS_SERVER_VERSION = "5.3.0"


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not installed")
    pytest.skip(f"{what} is not installed")


def python_server_dir() -> Path:
    """The directory holding `basedpyright-langserver`, for a session's PATH."""
    beside = Path(sys.executable).parent
    if (beside / "basedpyright-langserver").is_file():
        return beside
    found = shutil.which("basedpyright-langserver")
    if found is None:
        _missing("basedpyright (the dev extra: `pip install -e .[dev]`)")
    assert found is not None
    return Path(found).parent


def typescript_server_dir() -> Path:
    """The `.bin` directory holding `typescript-language-server` and `tsc`."""
    npm = os.environ.get("MOOT_LSP_NPM", "")
    bin_dir = Path(npm) / ".bin" if npm else None
    if bin_dir is None or not (bin_dir / "typescript-language-server").exists():
        _missing("MOOT_LSP_NPM (a node_modules with typescript-language-server and typescript)")
    if shutil.which("node") is None:
        _missing("node")
    assert bin_dir is not None
    return bin_dir


def path_with(*dirs: Path) -> str:
    """PATH with `dirs` first."""
    return os.pathsep.join([*(str(d) for d in dirs), os.environ.get("PATH", os.defpath)])


def use_sandbox(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make sessions run in the sandbox `name` (`MOOT_SANDBOX`); without it here, skip (fail
    in CI, which runs every backend)."""
    why_not: str | None = None
    if name == "bubblewrap":
        from moot.sandbox.bwrap_probe import bwrap_unavailable

        why_not = bwrap_unavailable()
    elif name == "landlock":
        from moot.sandbox.landlock import landlock_unavailable

        why_not = landlock_unavailable()
    elif name == "docker":
        from moot.sandbox.docker import docker_unavailable

        why_not = docker_unavailable()
    if why_not is not None:
        _missing(f"the {name} sandbox ({why_not})")
    monkeypatch.setenv("MOOT_SANDBOX", name)

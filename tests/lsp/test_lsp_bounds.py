"""A running server that stops answering, or dies, never holds an edit past its bound: the
edit is done and its result says why no diagnostics came (`LanguageServers`, with short
bounds, over a server that misbehaves on purpose)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from moot.lsp.session import LanguageServers
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.settings.schema import LanguageServerSetting

FAKE = Path(__file__).parent / "fake_lsp_server.py"


@pytest.fixture
async def sandbox(tmp_path: Path):  # type: ignore[no-untyped-def]
    box = BubblewrapSandbox(SandboxPolicy(tmp_path))
    yield box
    await box.close()


def servers(root: Path, mode: str, sandbox: BubblewrapSandbox) -> LanguageServers:
    setting = LanguageServerSetting(command=sys.executable, args=[str(FAKE), mode])
    return LanguageServers(
        root, {"python": setting}, {"PATH": "/usr/bin:/bin"}, sandbox, cold_wait=3, warm_wait=1
    )


async def edit(found: LanguageServers, path: Path, text: str) -> tuple[float, str]:
    baseline = found.before_edit(path)
    assert baseline is not None
    await asyncio.to_thread(path.write_text, text)
    started = time.monotonic()
    note = await found.after_edit(baseline, path.name)
    return time.monotonic() - started, note


async def test_a_server_that_never_publishes_is_waited_for_within_the_bound(
    tmp_path: Path, sandbox: BubblewrapSandbox
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    found = servers(tmp_path, "silent", sandbox)
    try:
        cold, first = await edit(found, tmp_path / "a.py", "x = 2\n")
        warm, second = await edit(found, tmp_path / "a.py", "x = 3\n")
    finally:
        await found.close()

    assert cold < 3 + 1 and warm < 1 + 1
    name = Path(sys.executable).name
    assert first == f"[diagnostics: {name} did not answer within 3 s; the edit is done]"
    assert second == f"[diagnostics: {name} did not answer within 1 s; the edit is done]"
    assert found.running() and not found.running()[0].alive  # stopped with the servers


async def test_a_server_that_dies_mid_session_is_named_with_its_last_words(
    tmp_path: Path, sandbox: BubblewrapSandbox
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    found = servers(tmp_path, "dies", sandbox)
    try:
        took, first = await edit(found, tmp_path / "a.py", "x = 2\n")
        _, second = await edit(found, tmp_path / "a.py", "x = 3\n")
    finally:
        await found.close()

    assert took < 3 + 1
    assert "stopped (exit code 5): fake server: out of memory" in first, first
    assert "none for python files this session" in second
    assert (tmp_path / "a.py").read_text() == "x = 3\n"


@pytest.mark.parametrize("configured", [False, True])
async def test_pyright_checks_as_pyright_does_unless_the_project_says_otherwise(
    tmp_path: Path, sandbox: BubblewrapSandbox, configured: bool
) -> None:
    """basedpyright's own default reports import cycles and much else no project asked for;
    moot asks for pyright's `standard`, and a project's configuration wins over that."""
    from lsp_servers import path_with, python_server_dir

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__init__.py").write_text("")
    (tmp_path / "p" / "a.py").write_text("from p.b import g\n\n\ndef f() -> int:\n    return 1\n")
    (tmp_path / "p" / "b.py").write_text("from p.a import f\n\n\ndef g() -> int:\n    return f()\n")
    if configured:
        (tmp_path / "pyrightconfig.json").write_text('{"reportImportCycles": "error"}')
    environ = {"PATH": path_with(python_server_dir())}
    found = LanguageServers(tmp_path, {}, environ, sandbox)
    try:
        lines = await found.diagnostics([(tmp_path / "p" / "a.py", "p/a.py")])
    finally:
        await found.close()

    cycles = [line for line in lines if "Cycle detected in import chain" in line]
    assert bool(cycles) == configured, lines

"""Language servers under Landlock (`moot.lsp.piped`): forked by the sandbox's zygote, with
stdio pipes, and stopped whatever ends first (`LanguageServers`, over a fake server)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from moot.lsp.session import LanguageServers
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable
from moot.settings.schema import LanguageServerSetting

FAKE = Path(__file__).parent / "fake_lsp_server.py"


@pytest.fixture
def landlock() -> None:
    if (why := landlock_unavailable()) is not None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


@pytest.mark.usefixtures("landlock")
async def test_servers_stop_even_once_the_sandbox_has_closed(tmp_path: Path) -> None:
    """The zygote that reaped the server is gone: its end is seen all the same (a pidfd)."""
    (tmp_path / "a.py").write_text("x = 1\n")
    sandbox = LandlockSandbox(SandboxPolicy(tmp_path))
    setting = LanguageServerSetting(command=sys.executable, args=[str(FAKE), "silent"])
    found = LanguageServers(
        tmp_path, {"python": setting}, {"PATH": "/usr/bin:/bin"}, sandbox, cold_wait=2, warm_wait=1
    )
    baseline = found.before_edit(tmp_path / "a.py")
    assert baseline is not None
    (tmp_path / "a.py").write_text("x = 2\n")
    note = await found.after_edit(baseline, "a.py")
    (server,) = found.running()
    assert server.alive and "did not answer within 2 s" in note

    await sandbox.close()
    started = time.monotonic()
    await asyncio.wait_for(found.close(), 10)

    assert time.monotonic() - started < 5
    assert not server.alive
    assert not running(server.process.pid)


def running(pid: int) -> bool:
    """Not gone and not a zombie (reparented to this machine's init, which reaps it in its
    own time, once the zygote that would have is gone)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False

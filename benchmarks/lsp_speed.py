"""Diagnostics after an edit: how long an `edit` takes to come back with a language server's
verdict, in a 2,000-file Python repository, and what an edit costs when no server is there.

The repository: 20 packages of 100 modules, each importing a function from the next (so
the server has imports to resolve). Each `edit` is timed through `invoke`, as the runtime calls
it, wrapped as a session wraps it (`moot.tools.diagnosed.Diagnosed`): the edit, the server's
answer on the text before it (a baseline: errors already there are not the edit's) and on the
text after. Edits alternate between breaking an import and fixing it, so every other result
holds one new error. The server (basedpyright-langserver, found on PATH or beside this Python)
runs in bubblewrap as a session's does, or on the host where bubblewrap does not work.

- cold: the first edit, which starts the server (target <= 8 s);
- warm: the edits after it (target <= 1.5 s);
- no server: an edit of a `.py` file in a session where no server can run, against the same
  edit with no language servers at all (today's `edit`): the difference (target <= 5 ms).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from moot.lsp.session import LanguageServers
from moot.sandbox.base import SandboxPolicy
from moot.tools.base import Tool, ToolContext
from moot.tools.diagnosed import Diagnosed
from moot.tools.edit import edit_tool
from moot.workspace import Workspace
from report import Row, ms, table
from timing import median

NAME = "lsp"
PACKAGES, MODULES = 20, 100
_CTX = ToolContext("bench", "run", "call", "bench", "tool")
BROKEN, FIXED = "from pkg0.mod2 import f1", "from pkg0.mod1 import f1"


def _repository(root: Path) -> None:
    for p in range(PACKAGES):
        package = root / f"pkg{p}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for m in range(MODULES):
            uses = f"from pkg{p}.mod{m + 1} import f{m + 1}\n\n\n" if m + 1 < MODULES else ""
            calls = f"f{m + 1}(1)" if m + 1 < MODULES else "1"
            (package / f"mod{m}.py").write_text(
                f"{uses}def f{m}(x: int) -> int:\n    return x + {m}\n\n\n"
                f"def g{m}() -> int:\n    return {calls}\n"
            )
    (root / "pkg0" / "mod0.py").write_text(f"{FIXED}\n\n\ndef g() -> int:\n    return f1(2)\n")


def _server_path() -> str:
    beside = Path(sys.executable).parent
    found = shutil.which("basedpyright-langserver") or shutil.which("pyright-langserver")
    extra = [str(beside)] if (beside / "basedpyright-langserver").exists() else []
    if not extra and found is None:
        raise RuntimeError("no basedpyright-langserver or pyright-langserver on PATH")
    return os.pathsep.join([*extra, os.environ.get("PATH", os.defpath)])


def _sandbox(root: Path) -> object:
    policy = SandboxPolicy(root)
    try:
        from moot.sandbox.bubblewrap import BubblewrapSandbox

        return BubblewrapSandbox(policy)
    except FileNotFoundError:
        from moot.sandbox.host import HostSandbox

        return HostSandbox(policy)


async def _edit(tool: Tool, path: str, old: str, new: str) -> tuple[float, str]:
    started = time.perf_counter()
    result = await tool.invoke({"path": path, "old": old, "new": new}, _CTX)
    took = time.perf_counter() - started
    assert not result.is_error, result.content
    return took, result.content


async def _with_server(root: Path, edits: int) -> tuple[float, list[float], str]:
    sandbox = _sandbox(root)
    environ = {**os.environ, "PATH": _server_path()}
    servers = LanguageServers(root, {}, environ, sandbox)  # type: ignore[arg-type]
    workspace = Workspace(root)
    tool = Diagnosed(edit_tool(workspace), workspace, servers)
    try:
        cold, said = await _edit(tool, "pkg0/mod0.py", FIXED, BROKEN)
        assert "1 new error" in said, said
        warm = []
        for i in range(edits):
            old, new = (BROKEN, FIXED) if i % 2 == 0 else (FIXED, BROKEN)
            took, said = await _edit(tool, "pkg0/mod0.py", old, new)
            assert ("no new errors" if i % 2 == 0 else "1 new error") in said, said
            warm.append(took)
    finally:
        await servers.close()
        await sandbox.close()  # type: ignore[attr-defined]
    return cold, warm, getattr(sandbox, "name", "?")


async def _without_server(root: Path, edits: int) -> tuple[list[float], list[float], list[float]]:
    workspace = Workspace(root)
    plain = edit_tool(workspace)
    servers = LanguageServers(root, {}, {"PATH": ""}, _sandbox(root))  # type: ignore[arg-type]
    wrapped = Diagnosed(edit_tool(workspace), workspace, servers)
    timings: tuple[list[float], list[float]] = ([], [])
    edited = "x + 7  # edited\n"
    for _ in range(edits):
        for kept, tool in zip(timings, (plain, wrapped), strict=True):
            took, said = await _edit(tool, "pkg1/mod7.py", "x + 7\n", edited)
            assert "\n[" not in said, said
            kept.append(took)
            await _edit(tool, "pkg1/mod7.py", edited, "x + 7\n")
    own = []  # the wrapper's own work before the edit: a suffix and a cached look-up
    for _ in range(edits):
        started = time.perf_counter()
        assert wrapped._baseline({"path": "pkg1/mod7.py"}) is None
        own.append(time.perf_counter() - started)
    return timings[0], timings[1], own


def run(*, quick: bool) -> list[Row]:
    """Time cold and warm edits with a server, and edits with none."""
    with tempfile.TemporaryDirectory(prefix="moot-bench-lsp-") as scratch:
        root = Path(os.path.realpath(scratch))
        _repository(root)
        cold, warm, backend = asyncio.run(_with_server(root, 4 if quick else 10))
        plain, wrapped, own = asyncio.run(_without_server(root, 30 if quick else 200))
    files = PACKAGES * MODULES
    added = median(wrapped[5:]) - median(plain[5:])
    return [
        Row(f"edit + diagnostics, cold server ({files} files, {backend})", ms(cold), "<= 8 s"),
        Row(
            f"edit + diagnostics, warm server ({files} files, {backend})",
            f"p50 {ms(median(warm))}, max {ms(max(warm))}",
            "<= 1.5 s",
        ),
        Row(
            "edit of a .py file, no server available (invoke)",
            f"p50 {ms(median(wrapped[5:]))} vs {ms(median(plain[5:]))} without servers "
            f"({'+' if added >= 0 else '-'}{ms(abs(added))}; the check itself "
            f"p50 {ms(median(own))})",
            "<= +5 ms",
        ),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

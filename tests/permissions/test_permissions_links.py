"""A `Read(...)` deny hides the content, whatever its name (issue 28, item 9): with `hard_env`
a hard link of `.env`, `read hard_env` and `grep` (both backends) showed the secret. Every
file tool that shows or changes content refuses another name of a hidden file's inode, as it
refuses the path itself; the sandbox's masks are in `test_sandbox_contract.py`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from moot.client.prompt_files import PromptFiles
from moot.client.rules import inode_check
from moot.permissions.links import DeniedInodes
from moot.permissions.masks import mask_source, sandbox_masks
from moot.permissions.rules import RuleSet, read_denied
from moot.sandbox.base import SandboxMasks
from moot.tools.base import ToolContext
from moot.tools.files import file_tools
from moot.tools.git_tools import git_tools
from moot.tools.grep import grep_tool
from moot.tools.repo_map import repo_map_tool
from moot.tools.symbols import symbols_tool
from moot.workspace.paths import Workspace
from programs import ripgrep

SECRET = "sk-live-0123456789"
CTX = ToolContext("s", "r", "c", "a", "t")
DENY = RuleSet(deny=["Read(./.env)", "Read(keys/)"])


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """`.env` and `keys/id.pem` hidden; `hard_env`, `src/leak.py` and `pem_link` are other
    names of them, committed, and changed since."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.invalid")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / ".env").write_text(f"TOKEN = '{SECRET}'\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id.pem").write_text(f"PEM = '{SECRET}'\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 1\n")
    os.link(tmp_path / ".env", tmp_path / "hard_env")
    os.link(tmp_path / ".env", tmp_path / "src" / "leak.py")
    os.link(tmp_path / "keys" / "id.pem", tmp_path / "pem_link")
    git(tmp_path, "add", "hard_env", "src", "pem_link")
    git(tmp_path, "commit", "-q", "-m", "one")
    with (tmp_path / ".env").open("a") as file:  # in place: every name sees it
        file.write(f"def token():\n    return '{SECRET}'\n")
    workspace = Workspace(tmp_path)
    workspace.hidden = read_denied(DENY, workspace.root)
    workspace.hidden_inodes = inode_check(DENY, workspace.root)
    return workspace


def tools(ws: Workspace) -> dict[str, object]:
    found = {t.name: t for t in [*file_tools(ws), *git_tools(ws)]}
    found["repo_map"] = repo_map_tool(ws)
    found["symbols"] = symbols_tool(ws)
    return found


PROBES = [
    ("read", {"path": "hard_env"}),
    ("read", {"path": "src/leak.py"}),
    ("read", {"path": "pem_link"}),
    ("edit", {"path": "hard_env", "old": "sk-live-9", "new": "x"}),
    ("edit", {"path": "hard_env", "old": SECRET, "new": "mine"}),
    ("multi_edit", {"path": "src/leak.py", "edits": [{"old": "TOKEN", "new": "y"}]}),
    ("write", {"path": "hard_env", "content": "overwritten"}),
    ("grep", {"pattern": "sk-live", "path": "hard_env"}),
    ("git_diff", {}),
    ("git_show", {"rev": "HEAD"}),
    ("repo_map", {}),
    ("symbols", {"name": "token"}),
]


@pytest.mark.parametrize(("tool", "arguments"), PROBES, ids=lambda p: str(p)[:40])
async def test_no_file_tool_shows_or_changes_a_hidden_file_under_another_name(
    ws: Workspace, tool: str, arguments: dict[str, object]
) -> None:
    result = await tools(ws)[tool].invoke(dict(arguments), CTX)  # type: ignore[attr-defined]
    assert SECRET not in result.content, result.content
    assert "0123456789" not in str(result.display), result.display
    if tool in ("read", "edit", "multi_edit", "write", "grep"):
        assert result.is_error and "another name (a hard link)" in result.content
    assert (ws.root / ".env").read_text().startswith(f"TOKEN = '{SECRET}'\n")


@pytest.mark.parametrize("use_ripgrep", [True, False])
async def test_grep_skips_every_name_of_a_hidden_file(ws: Workspace, use_ripgrep: bool) -> None:
    if use_ripgrep:
        ripgrep()
    grep = grep_tool(ws, use_ripgrep=use_ripgrep)
    for output in ("content", "files", "count"):
        result = await grep.invoke({"pattern": "sk-live|main", "output": output}, CTX)
        assert SECRET not in result.content
        assert "hard_env" not in result.content and "leak.py" not in result.content
        assert "src/app.py" in result.content


def test_a_prompt_never_attaches_a_hidden_file_under_another_name(ws: Workspace) -> None:
    attached = PromptFiles(ws)("look at @hard_env and @src/app.py", lambda _: "")
    by_path = {file.path: file for file in attached}
    assert SECRET not in str(attached)
    assert "another name (a hard link)" in by_path["hard_env"].note
    assert "def main" in by_path["src/app.py"].text


def test_the_masks_hide_every_name_and_a_cached_source_finds_the_same(ws: Workspace) -> None:
    fresh = sandbox_masks(DENY, ws.root)
    assert {"hard_env", "src/leak.py", "pem_link", ".env"} <= set(fresh.hidden_files)
    source = mask_source(DENY, ws.root)
    assert source is not None and source() == fresh
    os.link(ws.root / ".env", ws.root / "later")
    assert "later" in source().hidden_files
    os.unlink(ws.root / "hard_env")
    assert "hard_env" not in source().hidden_files


def test_a_file_with_one_name_costs_no_walk(ws: Workspace) -> None:
    """Only a file with more than one name is looked up: a plain read asks no masks."""
    asked: list[SandboxMasks] = []

    def masks() -> SandboxMasks:
        asked.append(sandbox_masks(DENY, ws.root))
        return asked[-1]

    check = DeniedInodes(masks, str(ws.root))
    assert not check.covers(os.lstat(ws.root / "src" / "app.py"))
    assert asked == []
    assert check.covers(os.lstat(ws.root / "hard_env"))
    assert check.covers(os.lstat(ws.root / "pem_link"))
    assert len(asked) == 1  # worked out once for the call

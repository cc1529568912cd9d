"""`moot acp` driven by Zed's TypeScript ACP client (`@agentclientprotocol/sdk`, npm): a prompt,
a permission request, edits written through the editor's buffer (`fs/write_text_file`) and a
cancelled turn whose pending tool calls all get a final update (issue 33). The client is a
small node script (ts_editor.mjs); moot runs as a real process with a scripted model.

The SDK is no Python dependency: `MOOT_ACP_NPM` names a `node_modules` holding it (`.ci/run`
installs it at `VERSION`); without it the test is skipped, and fails in CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_client import call, scripted

VERSION = "2.4.0"
"""The `@agentclientprotocol/sdk` that `.ci/run` installs (the README quotes it)."""

pytestmark = pytest.mark.timeout(180)


def sdk() -> Path:
    modules = os.environ.get("MOOT_ACP_NPM", "")
    package = Path(modules) / "@agentclientprotocol" / "sdk" if modules else None
    if package is not None and package.is_dir() and shutil.which("node") is not None:
        return Path(modules)
    missing = "MOOT_ACP_NPM (a node_modules holding @agentclientprotocol/sdk) and node are not set"
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


def test_the_typescript_client_edits_through_its_buffer_and_cancels(tmp_path: Path) -> None:
    modules = sdk()
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello world\n")
    model = scripted(
        tmp_path / "m.json",
        call("read", path="notes.txt"),
        call("edit", path="notes.txt", old="unsaved world", new="edited world"),
        {"text": "done"},
        {"tool_calls": [
            {"name": "edit", "arguments": {"path": "notes.txt", "old": "edited", "new": "no"}},
            {"name": "write", "arguments": {"path": "other.txt", "content": "never"}},
        ]},
        {"text": "not reached", "delay": 30},
    )  # fmt: skip
    keep = ("MOOT_HOME", "PATH", "HOME", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"MOOT_SANDBOX": "none", "MOOT_ACP_NPM": str(modules)}
    moot = [sys.executable, "-m", "moot.cli", "acp", "--model", f"scripted:{model}"]
    script = Path(__file__).with_name("ts_editor.mjs")
    done = subprocess.run(
        ["node", str(script), str(workspace), "--", *moot],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    notes = str(workspace / "notes.txt")
    assert seen["agent"] == "moot"
    assert (seen["first"], seen["second"]) == ("end_turn", "cancelled")
    assert seen["asked"] == 2  # the first turn's edit, and the question the cancel ended
    assert seen["written"] == [notes]  # the edit went to the editor's buffer...
    assert seen["buffers"][notes] == "hello edited world\n"
    assert (workspace / "notes.txt").read_text() == "hello world\n"  # ...not to the disk
    assert not (workspace / "other.txt").exists()
    assert len(seen["announced"]) == 2 and set(seen["announced"]) <= set(seen["finished"])

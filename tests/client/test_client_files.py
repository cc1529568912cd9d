"""`Client.files` (what `@path` completion offers) over a real session: every file of the
workspace, not the first 20,000 in walk order (issue 31); never what a `Read(...)` deny rule
hides; fresh after a turn adds or removes files."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.client.local import SessionOptions, open_client
from moot.frontend.fuzzy import PathIndex


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    for group in range(26):
        directory = root / f"pkg{group:02}"
        directory.mkdir(parents=True)
        for number in range(1000):
            (directory / f"m{number:03}.py").touch()
    (root / "secret").mkdir()
    (root / "secret" / "key.pem").write_text("KEY\n")
    (root / "zz").mkdir()
    (root / "zz" / "last_one.py").touch()
    deep = root / "services" / "a" / "b" / "c" / "d" / "e" / "pkg99"
    deep.mkdir(parents=True)
    (deep / "handler.py").touch()
    (tmp_path / "script.yaml").write_text("- text: hi\n")
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    return root


async def test_every_file_is_offered_and_what_deny_rules_hide_never_is(workspace: Path) -> None:
    model = f"scripted:{workspace.parent / 'script.yaml'}"
    client = open_client(
        SessionOptions(cwd=workspace, model=model, disallowed_tools=["Read(secret/**)"])
    )
    try:
        listed = client.files()
        assert len(listed.paths) == 26_002 and listed.notes == ()
        assert "secret/key.pem" not in listed.paths
        ranked = PathIndex(listed.paths)
        assert ranked.rank("last_one", 5) == ["zz/last_one.py"]
        assert ranked.rank("pkg99", 5)[0] == "services/a/b/c/d/e/pkg99/handler.py"
        assert ranked.rank("pkg99handl", 5) == ["services/a/b/c/d/e/pkg99/handler.py"]

        (workspace / "zz" / "last_one.py").rename(workspace / "zz" / "renamed.py")
        (workspace / "pkg00" / "new").mkdir()
        (workspace / "pkg00" / "new" / "made.py").touch()
        again = client.files().paths
        assert "zz/renamed.py" in again and "pkg00/new/made.py" in again
        assert "zz/last_one.py" not in again and len(again) == 26_003
    finally:
        await client.close()

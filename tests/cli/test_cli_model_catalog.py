"""`moot -p` with a model catalog it cannot read: a usage error before any session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait


@pytest.mark.parametrize(
    "content", ["{not json", '{"ollama/qwen3-coder": {"context_windw": 1}}'], ids=["json", "field"]
)
def test_a_malformed_user_models_json_is_a_usage_error_before_any_session(
    tmp_path: Path, content: str
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    catalog = home / "config" / "models.json"
    catalog.write_text(content, encoding="utf-8")
    environ = {**os.environ, "MOOT_HOME": str(home), "OLLAMA_HOST": "127.0.0.1:9"}
    environ.pop("MOOT_MODEL", None)

    result = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", "ollama/qwen3-coder"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ,
        timeout=TIMEOUT,
    )

    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(f"moot: cannot read the model catalog {catalog}") or (
        result.stderr.startswith(f"moot: {catalog}: model ollama/qwen3-coder")
    ), result.stderr
    assert "Traceback" not in result.stderr
    assert not (home / "data" / "sessions.db").exists()

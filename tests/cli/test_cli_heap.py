"""`moot -p` as the program tunes its own heap: no collection while its session opens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TIMEOUT = 30  # seconds; a bound for a hung process, never a wait

PROBE = """
import gc, json, sys
import moot.cli.headless as headless

real, seen = headless.open_client, {}

def opening(*args, **kwargs):
    started = []
    def count(phase, info):
        if phase == "start":
            started.append(info["generation"])
    gc.callbacks.append(count)
    try:
        return real(*args, **kwargs)
    finally:
        gc.callbacks.remove(count)
        seen["collections"] = len(started)

headless.open_client = opening
sys.argv = ["moot", "-p", "how many files?", "--model", sys.argv[1]]
from moot.cli import main
code = main()
seen.update(code=code, enabled=gc.isenabled(), frozen=gc.get_freeze_count())
print(json.dumps(seen), file=sys.stderr)
"""


def test_moot_p_opens_its_session_without_a_collection_and_freezes_what_it_loaded(
    tmp_path: Path,
) -> None:
    """The session's modules load as it opens (most of moot's); the collector scanned that
    growing, long-lived heap ~20 times on the way (a few ms of every `moot -p`)."""
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    env.pop("MOOT_MODEL", None)
    model = f"scripted:{FIXTURES / 'three_turns.yaml'}"

    done = subprocess.run(
        [sys.executable, "-c", PROBE, model],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )

    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["code"] == 0, done.stderr
    assert seen["collections"] == 0
    assert seen["enabled"] and seen["frozen"] > 0

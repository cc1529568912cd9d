"""The sed script reader against GNU sed: every `e`, `r` and `w` it misses would be a command
run or a file written that no rule saw (`sed -n '1e rm x' f`, `sed -n 'w keep.py' f`).

GNU sed's `--sandbox` refuses exactly those commands, so it is the judge: for a script sed
accepts, `read_script` must find an `e`, `r` or `w` exactly when `--sandbox` refuses it. Scripts
it cannot read with confidence raise `Unparseable` (the command then asks): never wrong, only
cautious. Needs GNU sed: skipped without it, failed in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from moot.permissions.shell_sed import read_script, read_sed
from moot.permissions.shell_types import Unparseable

PIECES = (
    *("p", "d", "=", "$!N", "1!G;h;$!d", "q5", "l 5", "F", "z", "n", "x", "{p}", "{", "}"),
    *("s/a/b/", "s/a/b/g2p", "s|a|b|e", "s/[/]/x/", "s/[/]/x/e", "s/x/\\n/", "s/a\\/e/b/"),
    *("s/[[:alpha:]]/x/w f", "s/a/b/ w f", "s,a,b,I", "s/a/b/ ; e x", "s/a/&e/", "y/ab/ba/"),
    *("y/a\\/b/xyz/", "a text;e x", "i\\\ntext e", "c\\", "a\\", ":a;e x", ":a", "b a;e x"),
    *("ba", "t;e x", "T end", "#comment;e x", "#n", "e", "e echo hi", "1e echo", "$!e x"),
    *("/re/I,+3p", "\\%x%p", "0~2 w f", "0,/x/s//y/", "/a/,/b/{/c/d}", "1,3!p", "v 4.2"),
    *("r f", "R f", "W f", "w f", "w", "r", "s/a/b/w", "s/a/b/pe", "s/a/b/3e", "/x/e"),
    *("s/\\[/x/", "s/[]]/x/e", "s/[^/]/x/", "s/[a/]/x/", "y/[/x/", "s/a/b/;s/c/d/"),
)
SEPARATORS = (";", "\n", " ", "", ";\n", " ; ")


@st.composite
def scripts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5))
    return "".join(piece + draw(st.sampled_from(SEPARATORS)) for piece in pieces)


@pytest.fixture
def sed(tmp_path: Path) -> str:
    found = shutil.which("sed")
    version = subprocess.run([found or "sed", "--version"], capture_output=True, text=True)
    if found is None or "GNU sed" not in version.stdout:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("CI must provide GNU sed")
        pytest.skip("GNU sed is not installed")
    return found


def accepts(sed: str, script: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run sed on no input (so `e` never runs) in an empty directory (where `w` files go)."""
    return subprocess.run(
        [sed, *extra, "-n", "-e", script, "/dev/null"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=10,
    )


@settings(
    derandomize=True,
    database=None,
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(script=scripts())
def test_every_command_that_runs_or_touches_a_file_is_found(
    sed: str, tmp_path: Path, script: str
) -> None:
    try:
        read = read_script(script)
    except Unparseable:
        event("unparseable: the command asks")
        return
    if accepts(sed, script, tmp_path).returncode != 0:
        event("sed refuses it")
        return
    touches = bool(read.runs or read.runs_input or read.writes or read.reads)
    sandboxed = accepts(sed, script, tmp_path, "--sandbox")
    refused = "disabled in sandbox mode" in sandboxed.stderr
    event("e/r/w" if touches else "a plain filter")
    if touches and not refused:
        event("e/r/w found where sed runs none: cautious")
    assert touches or not refused, (script, read, sandboxed.stderr)


@pytest.mark.parametrize(
    ("args", "runs", "writes"),
    [
        (["-n", "1e rm x", "f"], ("rm x",), ()),
        (["s/a/b/", "keep.py", "-i"], (), ("keep.py",)),
        (["-i.bak", "-e", "s/a/b/", "k"], (), ("k", "k.bak")),
        (["--in-pl=.orig", "p", "k"], (), ("k", "k.orig")),
        (["-n", "w out", "f"], (), ("out",)),
        (["--expression=s/a/b/w out", "f"], (), ("out",)),
    ],
)
def test_a_command_line_reads_as_sed_reads_it(
    args: list[str], runs: tuple[str, ...], writes: tuple[str, ...]
) -> None:
    call = read_sed(args)
    assert call.script.runs == runs
    assert call.in_place + call.script.writes == writes

"""bubblewrap failing to set up before a command ran (its read-only bind of `/` races mounts
that go meanwhile: Docker's, as containers come and go) starts the command again; a command
that ran is never started twice, whatever it printed (`host.marked_start`, `Launch.ran`).

The failing start is a stand-in in front of the real bwrap: the race itself is about one start
in a thousand while Docker churns, too rare to wait for in a test."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.sandbox.host import SETUP_TRIES
from sandbox_contract import BACKENDS, require

RACE = (
    "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "
    '"/newroot/var/lib/docker/overlay2/0c1d/merged": No such file or directory'
)


def flaky_bwrap(where: Path, failures: int) -> tuple[Path, Path]:
    """A `bwrap` that fails as the race does at its first `failures` starts of a command (its
    probes pass through), then is the real one; and the log of the starts it saw."""
    real = shutil.which("bwrap")
    assert real is not None
    log, fake = where / "starts.log", where / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"bash -c"*)\n'
        f"  echo start >> {log}\n"
        f'  if [ "$(wc -l < {log})" -le {failures} ]; then\n'
        f"    echo {shlex.quote(RACE)} >&2; exit 1\n"
        "  fi;;\n"
        "esac\n"
        f'exec {real} "$@"\n'
    )
    fake.chmod(0o755)
    return fake, log


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    require(BACKENDS["bubblewrap"])
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


async def run(sandbox: BubblewrapSandbox, command: str) -> tuple[int | None, str, str]:
    try:
        result = await sandbox.run(command, cwd=sandbox.workspace, env=os.environ, timeout=20)
    finally:
        await sandbox.close()
    return result.exit_code, result.stdout, result.stderr


async def test_a_start_that_lost_the_race_for_a_mount_is_made_again(
    tmp_path: Path, workspace: Path
) -> None:
    fake, log = flaky_bwrap(tmp_path, failures=1)
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace), bwrap=str(fake))

    result = await run(sandbox, "echo ran >> ran.log; cat ran.log")

    assert result == (0, "ran\n", "")
    assert log.read_text() == "start\n" * 2


async def test_a_setup_that_keeps_failing_is_tried_a_few_times_then_shown(
    tmp_path: Path, workspace: Path
) -> None:
    fake, log = flaky_bwrap(tmp_path, failures=SETUP_TRIES)
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace), bwrap=str(fake))

    result = await run(sandbox, "echo ran >> ran.log")

    assert result == (1, "", RACE + "\n")
    assert log.read_text() == "start\n" * SETUP_TRIES
    assert not (workspace / "ran.log").exists()


async def test_a_command_that_fails_in_bwraps_words_runs_once(workspace: Path) -> None:
    """A command may end as a setup failure looks (a nested `bwrap`, which the sandbox
    refuses, does): it ran, so it is not started again."""
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace))

    result = await run(sandbox, f"echo ran >> ran.log; echo {shlex.quote(RACE)} >&2; exit 1")
    nested = await run(
        BubblewrapSandbox(SandboxPolicy(workspace)), "echo nested >> ran.log; bwrap --bind / / true"
    )

    assert result == (1, "", RACE + "\n")
    assert nested[0] == 1 and nested[2].startswith("bwrap: "), nested
    assert (workspace / "ran.log").read_text() == "ran\nnested\n"


async def test_the_command_holds_no_descriptor_of_the_mark_and_reads_as_it_was(
    workspace: Path,
) -> None:
    """The shell writes the mark and closes it before the command's first word: nothing the
    command starts inherits it, and the command's lines are numbered as they were."""
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace))

    result = await run(sandbox, "ls /proc/$$/fd | tr '\\n' ' '; echo $LINENO $0 $#")

    assert result == (0, "0 1 2 1 bash 0\n", "")

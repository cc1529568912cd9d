"""`moot sandbox status` and `moot sandbox run -- <command>`."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from moot.cli.args import parse
from moot.cli.sandbox import run_sandbox_cli
from moot.sandbox import bwrap_probe
from sandbox_contract import BACKENDS, require


def cli(argv: list[str], tmp_path: Path, setting: str | None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MOOT_SANDBOX"}
    if setting is not None:
        env["MOOT_SANDBOX"] = setting
    out, err = io.StringIO(), io.StringIO()
    code = run_sandbox_cli(parse(argv), out=out, err=err, environ=env, cwd=tmp_path)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from moot.sandbox import landlock

    monkeypatch.setattr(bwrap_probe, "bwrap_unavailable", lambda: "bwrap is not installed")
    monkeypatch.setattr(landlock, "landlock_unavailable", lambda: "landlock: no Landlock here")
    monkeypatch.setitem(sys.modules, "moot.sandbox.docker", None)


def test_run_passes_a_shell_line_or_quotes_a_command() -> None:
    assert parse(["sandbox", "run", "--", "echo $HOME | wc -c"]).argv[-1] == "echo $HOME | wc -c"
    assert parse(["sandbox", "run", "--timeout", "3", "--", "ls", "-la"]).timeout == 3


def test_status_on_the_host_says_it_is_not_a_sandbox(tmp_path: Path) -> None:
    code, out, _ = cli(["sandbox", "status"], tmp_path, "none")

    assert code == 0
    assert "setting: MOOT_SANDBOX=none" in out
    assert "host (NO sandbox)" in out


@pytest.mark.usefixtures("no_sandbox")
def test_status_without_a_sandbox_says_how_to_get_one(tmp_path: Path) -> None:
    code, out, _ = cli(["sandbox", "status"], tmp_path, None)

    assert code == 1
    assert "setting: auto (default)" in out
    assert "bwrap is not installed" in out and "MOOT_SANDBOX=none" in out


@pytest.mark.usefixtures("no_sandbox")
def test_run_without_a_sandbox_refuses(tmp_path: Path) -> None:
    code, out, err = cli(["sandbox", "run", "--", "touch", "x"], tmp_path, "auto")

    assert (code, out) == (125, "")
    assert "refused" in err
    assert not (tmp_path / "x").exists()


def test_run_on_the_host_prints_output_and_returns_the_exit_code(tmp_path: Path) -> None:
    code, out, err = cli(["sandbox", "run", "--", "echo hi; exit 3"], tmp_path, "none")

    assert (code, out) == (3, "hi\n")
    assert "NO sandbox" in err


def test_run_reports_timeouts_and_usage_errors(tmp_path: Path) -> None:
    timed_out = cli(["sandbox", "run", "--timeout", "0.2", "--", "sleep 5"], tmp_path, "none")
    empty = cli(["sandbox", "run"], tmp_path, "none")
    unknown = cli(["sandbox", "status"], tmp_path, "chroot")

    assert timed_out[0] == 124 and "timed out" in timed_out[2]
    assert empty[0] == 2 and "give a command" in empty[2]
    assert unknown[0] == 2 and "unknown sandbox setting 'chroot'" in unknown[2]


def test_run_in_bubblewrap_names_the_rule_a_command_broke(tmp_path: Path) -> None:
    require(BACKENDS["bubblewrap"])

    status = cli(["sandbox", "status"], tmp_path, "bubblewrap")
    quoted = cli(["sandbox", "run", "--", "echo", "in", ";", "touch", "/x"], tmp_path, None)
    code, out, err = cli(["sandbox", "run", "--", "echo in; touch /x"], tmp_path, None)

    assert status[0] == 0 and "bubblewrap" in status[1] and "network: off" in status[1]
    assert quoted[:2] == (0, "in ; touch /x\n"), "several arguments are quoted, not a line"
    assert code == 1 and out.startswith("in\n") and "Read-only file system" in out
    assert "moot: sandbox: the file system is read-only" in err


def test_the_settings_deny_rules_are_masked_as_in_a_session(tmp_path: Path) -> None:
    require(BACKENDS["bubblewrap"])
    (tmp_path / ".moot").mkdir()
    settings = {"sandbox": "bubblewrap", "permissions": {"deny": ["Read(./.env)"]}}
    (tmp_path / ".moot" / "settings.json").write_text(json.dumps(settings))
    (tmp_path / ".env").write_text("TOKEN=sk-secret\n")
    code, out, _ = cli(["sandbox", "status"], tmp_path, None)
    assert code == 0
    assert "settings: bubblewrap" in out and "hidden by deny rules: .env" in out
    code, out, _ = cli(["sandbox", "run", "--", "cat .env; echo done"], tmp_path, None)
    assert code == 0 and "sk-secret" not in out and out.endswith("done\n")


def test_without_bwrap_on_the_path_auto_runs_commands_under_landlock(tmp_path: Path) -> None:
    """The real `moot` with a PATH that has no `bwrap` (as in a container): `auto` takes
    Landlock, `status` says why not bubblewrap, and a command runs contained."""
    require(BACKENDS["landlock"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "cat", "touch", "mkdir", "env", "git", "ls"):
        if found := shutil.which(tool):
            (bin_dir / tool).symlink_to(found)
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_SANDBOX"}
    env |= {"PATH": str(bin_dir), "MOOT_HOME": str(tmp_path / "moot-home")}

    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "moot.cli", "sandbox", *args]
        return subprocess.run(argv, cwd=workspace, env=env, capture_output=True, text=True)

    status = moot("status")
    run = moot("run", "--", "echo in > sub/x && cat sub/x; touch /var/tmp/moot-cli-x; touch y")

    assert status.returncode == 0, status.stderr
    assert "sandbox: landlock: bubblewrap is not installed (no `bwrap` on PATH);" in status.stdout
    assert "Landlock ABI" in status.stdout and "the first that works" in status.stdout
    assert "new files" in status.stdout, "what Landlock holds differently is said"
    assert run.stdout.startswith("in\n") and "Permission denied" in run.stdout, run
    assert not os.path.exists("/var/tmp/moot-cli-x") and not (workspace / "y").exists()


def test_status_and_run_follow_the_network_settings(tmp_path: Path) -> None:
    require(BACKENDS["bubblewrap"])
    (tmp_path / ".moot").mkdir()
    # A repository's file: its denial applies at once, its allowlist waits for approval.
    network = {"allowedDomains": ["example.com"], "deniedDomains": ["denied.test"]}
    (tmp_path / ".moot" / "settings.json").write_text(json.dumps({"sandbox": {"network": network}}))

    code, out, _ = cli(["sandbox", "status"], tmp_path, "bubblewrap")
    assert code == 0
    assert (
        "network: only through moot's proxy; allowed: none; denied: denied.test; "
        "other hosts refused" in out
    )
    code, out, _ = cli(
        ["sandbox", "run", "--", "curl -sS http://denied.test/"], tmp_path, "bubblewrap"
    )
    assert "denied.test is denied by sandbox.network.deniedDomains" in out
    code, out, _ = cli(
        ["sandbox", "run", "--", "curl -sS http://example.com/"], tmp_path, "bubblewrap"
    )
    assert "example.com:80: it is not in sandbox.network.allowedDomains" in out

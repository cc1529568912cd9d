"""The `Sandbox` contract, held by every backend (`sandbox_contract.BACKENDS`), for real.

Containment (writes outside, protected paths, network, host sockets) is asserted for the
backends that contain; the host backend skips those tests. The rest holds for all.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import sandbox_contract
from moot.sandbox.base import CommandResult, SandboxPolicy
from moot.workspace.absent import AbsentPaths
from sandbox_contract import (
    Harness,
    gone,
    marker,
    on_host,
    processes_with,
    require_containment,
    until,
)

harness = sandbox_contract.harness
moot_home = sandbox_contract.moot_home
"""The fixture: one sandbox per backend in `sandbox_contract.BACKENDS`, over a fresh workspace."""

# ---- running a command ------------------------------------------------------------------


async def test_exit_code_stdout_and_stderr_come_back_apart(harness: Harness) -> None:
    result = await harness.run("echo out; echo err >&2; exit 7")

    assert (result.exit_code, result.stdout, result.stderr) == (7, "out\n", "err\n")
    assert result.backend == harness.backend.sandbox_name
    assert not result.timed_out and not result.truncated and result.output_file is None
    assert result.duration_ms > 0


async def test_the_command_runs_in_cwd(harness: Harness) -> None:
    sub = harness.workspace / "sub dir"
    sub.mkdir()

    result = await harness.run("pwd", cwd=sub)

    assert result.stdout == f"{sub}\n"


async def test_stdin_is_closed(harness: Harness) -> None:
    result = await harness.run('cat; read -r line; echo "read=$?"', timeout=10)

    assert (result.exit_code, result.stdout, result.timed_out) == (0, "read=1\n", False)


async def test_output_streams_while_the_command_runs(harness: Harness) -> None:
    """The command waits for a file that only the output callback creates."""
    go = harness.workspace / "go"
    seen: list[str] = []

    def on_output(text: str) -> None:
        seen.append(text)
        if "first" in text:
            go.touch()

    result = await harness.run(
        "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second",
        timeout=10,
        on_output=on_output,
    )

    assert not result.timed_out, "the first line did not arrive before the command ended"
    assert "".join(seen) == "first\nsecond\n" == result.stdout


async def test_only_named_variables_reach_a_command_and_never_a_secret(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Commands get the variables moot names and those the settings' `env` names, never one
    that looks secret, named or not: a denylist of secret words let `CI_JOB_JWT`,
    `SESSION_COOKIE` or a Sentry DSN through (issue 28)."""
    secrets = {
        "FAKE_API_KEY": "fake-key-value-1",
        "GITHUB_TOKEN": "fake-token-value-2",
        "AWS_SECRET_ACCESS_KEY": "fake-aws-value-3",
        "DB_PASSWORD": "fake-password-value-4",
        "DATABASE_URL": "postgres://me:fake-pw-value-5@db/app",
        "INNOCENT_LOOKING": "sk-ant-api03-fakefakefakefakefakefakefake6",
        "CI_JOB_JWT": "fake-jwt-value-7",
        "SESSION_COOKIE": "fake-cookie-value-8",
        "BEARER": "fake-bearer-value-9",
        "OAUTH": "fake-oauth-value-10",
        "CREDS": "fake-creds-value-11",
        "SLACK_WEBHOOK": "https://hooks.slack.com/services/T0/B0/fake-hook-value-12",
        "SENTRY_DSN": "https://fake-dsn-value-13@sentry.example/1",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MOOT_CONTRACT_UNNAMED", "unnamed-value")
    monkeypatch.setenv("MOOT_CONTRACT_NAMED", "kept")
    monkeypatch.setenv("VIRTUAL_ENV", "/opt/venv")
    named = ("MOOT_CONTRACT_NAMED", *secrets)  # as if the settings' `env` named them all
    policy = SandboxPolicy(workspace=harness.workspace, env_names=named)
    sandbox = harness.backend.make(policy)
    try:
        result = await sandbox.run("env", cwd=harness.workspace, env=os.environ, timeout=30)
    finally:
        await sandbox.close()

    for name, value in secrets.items():
        assert name not in result.stdout
        assert value not in result.stdout
    assert "unnamed-value" not in result.stdout
    assert "MOOT_CONTRACT_NAMED=kept\n" in result.stdout
    assert "VIRTUAL_ENV=/opt/venv\n" in result.stdout
    assert "\nPATH=" in f"\n{result.stdout}"


# ---- the workspace and the file system --------------------------------------------------


async def test_writes_inside_the_workspace_reach_the_host(harness: Harness) -> None:
    result = await harness.run("mkdir -p made && echo hello > made/file.txt", cwd=harness.scratch)

    assert result.exit_code == 0, result.stderr
    assert (harness.scratch / "made" / "file.txt").read_text() == "hello\n"


async def test_where_the_root_takes_no_new_entry_its_files_are_written_in_place(
    harness: Harness,
) -> None:
    """Landlock cannot keep `.git` read-only below a writable workspace root: the root is
    fixed instead (`Backend.fixed_guards`), its files still writable in place."""
    if not harness.backend.fixed_guards:
        pytest.skip(f"{harness.backend.name}'s workspace root takes new entries")
    (harness.workspace / "top.txt").write_text("top\n")

    made = await harness.run("touch made-at-root")
    written = await harness.run("echo more >> top.txt && cat top.txt")

    assert made.exit_code != 0 and harness.backend.refusal in made.stderr
    assert not on_host(harness.workspace / "made-at-root")
    assert (written.exit_code, written.stdout) == (0, "top\nmore\n"), written.stderr


async def test_tmp_is_writable(harness: Harness) -> None:
    # A name of its own, removed after: on the host backend this is the host's /tmp, where a
    # file another user left (CI runs this as root, then as an unprivileged user) is theirs.
    name = f"moot-contract-{uuid.uuid4().hex}"
    result = await harness.run(
        f'f="${{TMPDIR:-/tmp}}/{name}"; echo t > "$f" && cat "$f"; rm -f "$f"'
    )

    assert (result.exit_code, result.stdout) == (0, "t\n"), result.stderr


@pytest.fixture
def var_tmp_target() -> Iterator[Path]:
    """A path outside the workspace on the host's root file system, writable on the host."""
    path = Path("/var/tmp") / f"moot-contract-{uuid.uuid4().hex}"
    yield path
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


async def test_writes_outside_the_workspace_fail(
    harness: Harness,
    var_tmp_target: Path,
) -> None:
    require_containment(harness)
    beside = harness.outside / "beside.txt"

    on_root = await harness.run(f"echo x > {var_tmp_target}")
    next_door = await harness.run(f"echo x > {beside}")

    assert on_root.exit_code != 0
    assert harness.backend.refusal in on_root.stderr
    assert next_door.exit_code != 0
    assert not on_host(var_tmp_target)
    assert not on_host(beside)


@pytest.mark.parametrize(
    "command",
    [
        "echo changed > .git/config",
        "touch .git/hooks/pre-commit",
        "mkdir .git/new",
        "echo changed > .moot/settings.json",
        "rm .moot/settings.json",
    ],
)
async def test_protected_paths_are_read_only(harness: Harness, command: str) -> None:
    require_containment(harness)

    result = await harness.run(command)

    assert result.exit_code != 0
    assert harness.backend.refusal in result.stderr
    assert (harness.workspace / ".git" / "config").read_text() == "[core]\n"
    assert (harness.workspace / ".moot" / "settings.json").read_text() == "{}\n"
    assert not (harness.workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (harness.workspace / ".git" / "new").exists()


# ---- what deny rules cover --------------------------------------------------------------

SECRET = "hunter2-not-for-the-model"


def _no_secret(result: CommandResult) -> None:
    assert SECRET not in result.stdout and SECRET not in result.stderr, result


async def test_a_read_denied_file_reads_as_empty(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    harness.deny("Read(./.env)")

    result = await harness.run("cat .env; wc -c < .env")

    _no_secret(result)
    if harness.backend.masks_read_empty:
        assert (result.exit_code, result.stdout.strip()) == (0, "0")
    else:
        assert result.exit_code != 0 and result.stdout == ""
        assert "Permission denied" in result.stderr


async def test_grep_finds_a_secret_in_allowed_files_only(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"SECRET={SECRET}\n")
    (harness.workspace / "notes.txt").write_text("SECRET=placeholder\n")
    harness.deny("Read(./.env)")

    result = await harness.run("grep -r SECRET .")

    _no_secret(result)
    assert result.stdout == "./notes.txt:SECRET=placeholder\n"


async def test_a_read_denied_directory_is_empty_and_read_only(harness: Harness) -> None:
    require_containment(harness)
    secrets = harness.workspace / "secrets"
    (secrets / "nested").mkdir(parents=True)
    (secrets / "key.pem").write_text(f"{SECRET}\n")
    (secrets / "nested" / "token").write_text(f"{SECRET}\n")
    harness.deny("Read(secrets/**)")

    listing = await harness.run("ls -A secrets; cat secrets/key.pem secrets/nested/token")
    write = await harness.run("touch secrets/new")

    _no_secret(listing)
    assert listing.exit_code != 0
    if harness.backend.masks_read_empty:
        assert listing.stdout == ""
    else:  # the names show, the content does not
        assert sorted(listing.stdout.split()) == ["key.pem", "nested"]
    assert write.exit_code != 0
    assert not (secrets / "new").exists()


async def test_a_script_cannot_read_a_denied_file(harness: Harness) -> None:
    """Not only `cat`: a program opening the file by any path gets the mask."""
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "leak.sh").write_text(
        f'while IFS= read -r line; do echo "got $line"; done < {harness.workspace}/.env\n'
        "cd sub && head -c 100 ../.env; od -c ../.env\n"
    )
    (harness.workspace / "sub").mkdir()
    harness.deny("Read(./.env)")

    result = await harness.run("sh leak.sh")

    _no_secret(result)
    assert "got" not in result.stdout


async def test_a_symlink_to_a_denied_file_leads_to_the_mask(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "config").mkdir()
    os.symlink("../.env", harness.workspace / "config" / "settings")
    harness.deny("Read(./.env)")

    result = await harness.run("cat config/settings; grep -r TOKEN config")

    _no_secret(result)


async def test_a_hard_link_to_a_denied_file_is_masked_too(harness: Harness) -> None:
    """A rule names a path, but the content lives in the inode a hard link names too
    (issue 28, item 9): every name of it in the workspace is masked."""
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "deep" / "er").mkdir(parents=True)
    os.link(harness.workspace / ".env", harness.workspace / "hard_env")
    os.link(harness.workspace / ".env", harness.workspace / "deep" / "er" / "copy.py")
    harness.deny("Read(./.env)")

    result = await harness.run("cat hard_env deep/er/copy.py; grep -r TOKEN .; wc -c < hard_env")

    _no_secret(result)
    assert result.stdout.strip() == ("0" if harness.backend.masks_read_empty else "")


async def test_a_hard_link_cannot_be_made_to_a_masked_file(harness: Harness) -> None:
    """A masked file is another mount in the sandbox: `ln` to it fails (EXDEV), so no name
    made inside escapes the mask."""
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    harness.deny("Read(./.env)")

    made = await harness.run("ln .env made; ln -P .env made2; cat made made2")
    after = await harness.run("cat made made2")

    _no_secret(made)
    _no_secret(after)
    assert not on_host(harness.workspace / "made") and not on_host(harness.workspace / "made2")


async def test_a_denied_file_made_a_link_before_it_held_the_secret_is_masked_by_every_name(
    harness: Harness,
) -> None:
    """A command links a file of its own to the name a rule denies; the person then writes
    the secret into that file in place (`>>`): from the next command on, both names are
    masked."""
    require_containment(harness)
    harness.deny(f"Read(./{harness.rel}.env)")
    made = await harness.run("echo NOTHING=yet > mine && ln mine .env", cwd=harness.scratch)
    with (harness.scratch / ".env").open("a") as file:  # the person's editor, in place
        file.write(f"TOKEN={SECRET}\n")

    result = await harness.run("cat mine .env; grep -r TOKEN .", cwd=harness.scratch)

    assert made.exit_code == 0, made.stderr
    _no_secret(result)


async def test_a_hard_link_to_an_edit_denied_file_is_read_only_too(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / "locked.txt").write_text("original\n")
    os.link(harness.workspace / "locked.txt", harness.workspace / "other_name")
    harness.deny("Edit(./locked.txt)")

    write = await harness.run("echo changed > other_name")

    assert write.exit_code != 0
    assert (harness.workspace / "locked.txt").read_text() == "original\n"


async def test_an_edit_denied_path_is_read_only(harness: Harness) -> None:
    require_containment(harness)
    locked = harness.workspace / "locked"
    locked.mkdir()
    (locked / "a.txt").write_text("original\n")
    (harness.workspace / "free.txt").write_text("free\n")
    harness.deny("Edit(locked/**)")

    write = await harness.run("echo x > locked/a.txt")
    remove = await harness.run("rm -f locked/a.txt")
    read = await harness.run("cat locked/a.txt && echo y > free.txt")

    assert write.exit_code != 0 and remove.exit_code != 0
    assert (locked / "a.txt").read_text() == "original\n"
    assert (read.exit_code, read.stdout) == (0, "original\n"), read.stderr
    assert (harness.workspace / "free.txt").read_text() == "y\n"


async def test_a_file_that_appears_later_is_masked_from_the_next_command(
    harness: Harness,
) -> None:
    """Masks are worked out again before each command (Docker makes a new container)."""
    require_containment(harness)
    harness.deny("Read(.env)")
    first = await harness.run(
        f"mkdir made && echo TOKEN={SECRET} > made/.env && cat made/.env", cwd=harness.scratch
    )
    (harness.scratch / "later").mkdir()
    (harness.scratch / "later" / ".env").write_text(f"TOKEN={SECRET}\n")

    result = await harness.run("cat made/.env later/.env; grep -r TOKEN .", cwd=harness.scratch)

    assert first.stdout == f"TOKEN={SECRET}\n", "the command that made it may read it"
    assert (harness.scratch / "made" / ".env").read_text() == f"TOKEN={SECRET}\n"
    _no_secret(result)


async def test_renaming_the_directory_above_an_edit_mask_cannot_leave_it_behind(
    harness: Harness,
) -> None:
    """Only the masked path is a mount point, and Linux renames a directory holding mounts:
    every directory above one is bound onto itself, so renaming it fails (EBUSY)."""
    require_containment(harness)
    conf = harness.workspace / "conf"
    conf.mkdir()
    (conf / "app.toml").write_text("evil=0\n")
    harness.deny("Edit(./conf/app.toml)")

    (conf / "kept.txt").write_text("")

    swap = await harness.run("mv conf conf.old && mkdir conf && echo evil=1 > conf/app.toml")
    write = await harness.run("echo ok > conf/other.txt && rm conf/other.txt && echo done")
    in_place = await harness.run("echo ok > conf/kept.txt && echo done")

    assert swap.exit_code != 0
    assert (conf / "app.toml").read_text() == "evil=0\n"
    assert not on_host(harness.workspace / "conf.old")
    assert (in_place.exit_code, in_place.stdout) == (0, "done\n"), in_place.stderr
    if harness.backend.fixed_guards:  # its files are written in place only
        assert write.exit_code != 0 and harness.backend.refusal in write.stderr
    else:
        assert (write.exit_code, write.stdout) == (0, "done\n"), (
            "a guarded directory stays writable"
        )


async def test_a_hidden_file_stays_hidden_when_the_directories_above_it_are_renamed(
    harness: Harness,
) -> None:
    require_containment(harness)
    (harness.workspace / "sec" / "b").mkdir(parents=True)
    (harness.workspace / "sec" / "b" / "key").write_text(f"{SECRET}\n")
    harness.deny("Read(./sec/b/key)")

    await harness.run("mv sec s2; mv sec/b sec/c; mv sec/b/key sec/b/k2; true")
    read = await harness.run("cat s2/b/key sec/c/key sec/b/k2 sec/b/key; grep -r hunter2 .")

    _no_secret(read)
    assert sorted(os.listdir(harness.workspace / "sec")) == ["b"]
    assert os.listdir(harness.workspace / "sec" / "b") == ["key"]
    assert not on_host(harness.workspace / "s2")


async def test_a_path_no_command_may_make_is_swept_before_and_after_each_command_and_at_close(
    harness: Harness, tmp_path: Path
) -> None:
    """`core.hooksPath=.husky` with no `.husky` (issue 28, item 8): nothing can be mounted
    where nothing is, and moot makes nothing in the project, so what a command makes there is
    moved out of the workspace: after the command that made it, before the next command (a
    background one made it), and when the sandbox closes; the result says so."""
    require_containment(harness)
    quarantine = tmp_path / "quarantine"
    at = harness.rel  # where the root takes no new entry, `.husky` could not be made at all
    absent = AbsentPaths(harness.workspace, [f"{at}.husky", "tools/hooks"], quarantine)
    (harness.workspace / "tools").mkdir()
    sandbox = harness.backend.make(SandboxPolicy(workspace=harness.workspace, absent=absent))
    husky = harness.scratch / ".husky"
    try:
        run = functools.partial(sandbox.run, cwd=harness.workspace, env=os.environ, timeout=30)
        planted = await run(f"mkdir {at}.husky && echo 'touch /tmp/x' > {at}.husky/pre-commit")
        linked = await run(
            f"ln -s {harness.outside} tools/hooks && ln -s {harness.outside} {at}.husky"
        )
        await sandbox.start(f"mkdir {at}.husky", cwd=harness.workspace, env=os.environ)
        await until(lambda: on_host(husky))
        after_background = await run(f"test -e {at}.husky && echo there || echo gone")
        await sandbox.start(
            f"mkdir {at}.husky && exec sleep 300", cwd=harness.workspace, env=os.environ
        )
        await until(lambda: on_host(husky))
    finally:
        await sandbox.close()

    assert "which no command may make" in "".join(planted.swept), planted
    assert planted.exit_code == 0 and not on_host(husky)
    kept = [p for p in quarantine.rglob("pre-commit") if p.parent.name == ".husky"]
    assert [p.read_text() for p in kept] == ["touch /tmp/x\n"]
    assert len(linked.swept) == 2 and not on_host(harness.workspace / "tools" / "hooks")
    assert os.listdir(harness.outside) == []
    assert after_background.stdout == "gone\n" and len(after_background.swept) == 1
    assert not on_host(husky), "swept as the sandbox closed"


async def test_a_missing_moot_dir_is_made_read_only_before_a_command_could_make_it(
    harness: Harness,
) -> None:
    """A command that made `.moot/settings.json` would configure hooks that the next moot run
    executes on the host. `.git` is not made."""
    require_containment(harness)
    shutil.rmtree(harness.workspace / ".moot")
    shutil.rmtree(harness.workspace / ".git")
    settings = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}'

    result = await harness.run(f"mkdir -p .moot && echo '{settings}' > .moot/settings.json")

    moot = harness.workspace / ".moot"
    assert result.exit_code != 0 and harness.backend.refusal in result.stderr
    assert moot.is_dir() and not moot.is_symlink() and os.listdir(moot) == []
    assert stat.S_IMODE(moot.stat().st_mode) == 0o755
    assert not on_host(harness.workspace / ".git")


def _look_into_git(harness: Harness) -> str:
    """A command that prints what `.git` holds: its listing, or where a hidden directory's
    names show (`Backend.masks_read_empty`), its `HEAD`."""
    return "ls -A .git;" if harness.backend.masks_read_empty else "cat .git/HEAD;"


def _commit_all(workspace: Path) -> None:
    """Make the workspace a git repository (on the host) and commit all it holds."""
    shutil.rmtree(workspace / ".git")
    identity = ["-c", "user.name=moot", "-c", "user.email=moot@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "all"]):
        subprocess.run(["git", *identity, *args], cwd=workspace, check=True, capture_output=True)


def _need_git() -> None:
    """git on the host makes the repositories (CI installs it: missing there, it fails)."""
    if shutil.which("git") is None:
        if os.environ.get("CI"):
            pytest.fail("git is not installed; .ci/run must install it")
        pytest.skip("git is not installed")


async def test_git_shows_nothing_of_a_tracked_hidden_file(harness: Harness) -> None:
    """A masked `.env` looks emptied to git (`git diff` would print its lines as deleted), and
    `git show HEAD:.env` reads the object store: `.git` is hidden whole. (The Docker image
    has no git: there, that `.git` is empty.)"""
    require_containment(harness)
    _need_git()
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "a.txt").write_text("a\n")
    _commit_all(harness.workspace)
    harness.deny("Read(./.env)")

    result = await harness.run(
        _look_into_git(harness)
        + " if command -v git >/dev/null; then git diff; git show HEAD:.env;"
        " git log -p; git grep TOKEN HEAD; else echo no git; fi; true"
    )

    _no_secret(result)
    assert result.stdout in ("", "no git\n"), result
    if not result.stdout:
        assert "not a git repository" in result.stderr
    assert (harness.workspace / ".git" / "HEAD").exists()


async def test_git_is_left_alone_when_no_hidden_file_is_tracked(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / ".gitignore").write_text(".env\n")
    _need_git()
    _commit_all(harness.workspace)
    harness.deny("Read(./.env)")

    result = await harness.run("cat .git/HEAD .env; touch .git/x")

    _no_secret(result)
    assert result.stdout.startswith("ref: refs/heads/")
    assert result.exit_code != 0 and not on_host(harness.workspace / ".git" / "x")


# ---- moot's own files ------------------------------------------------------------------


def _moots_files(home: Path) -> list[Path]:
    """What moot keeps under `home` (as MOOT_HOME lays it out), each holding the secret."""
    files = [
        home / "data" / "sessions.db",
        home / "data" / "outputs" / "another-session" / "cmd-0001.txt",
        home / "config" / "keys.json",
        home / "config" / "settings.json",
        home / "cache" / "repomap" / "index",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET}\n")
    return files


async def test_moots_own_files_are_out_of_sight(harness: Harness) -> None:
    """The session store holds every session's transcript (and what denied files held before
    an edit); settings and saved keys hold keys. No command, in any project, reads them."""
    require_containment(harness)
    files = _moots_files(harness.moot_home)

    result = await harness.run(
        f"cat {' '.join(map(str, files))}; ls -AR {harness.moot_home};"
        f" grep -r hunter2 {harness.moot_home}; true"
    )

    _no_secret(result)
    assert "sessions.db" not in result.stdout and "another-session" not in result.stdout


async def test_a_command_reads_its_own_sessions_saved_output(harness: Harness) -> None:
    """The one part of moot's files a command sees, read-only: the full output a result
    names, so that the model can `grep` it in the shell."""
    long = await harness.run("seq 1 30000")
    assert long.output_file is not None

    result = await harness.run(f"tail -n 1 {long.output_file}; touch {long.output_file}.x")

    assert result.stdout == "30000\n", result
    if harness.backend.contained:
        assert result.exit_code != 0 and not on_host(Path(f"{long.output_file}.x"))


async def test_moots_files_inside_the_workspace_are_hidden_and_stay_put(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`MOOT_HOME=.moot-home` in a project: hidden like a denied path, directories above it
    guarded, so that renaming one cannot carry it out of sight of the next command."""
    require_containment(harness)
    home = harness.workspace / "sub" / ".moot-home"
    files = _moots_files(home)
    monkeypatch.setenv("MOOT_HOME", str(home))
    sandbox = harness.backend.make(SandboxPolicy(workspace=harness.workspace))
    try:
        run = functools.partial(sandbox.run, cwd=harness.workspace, env=os.environ, timeout=30)
        first = await run("grep -r hunter2 .; mv sub sub2; mv sub/.moot-home x; true")
        second = await run("grep -r hunter2 .; true")
    finally:
        await sandbox.close()

    _no_secret(first)
    _no_secret(second)
    assert all(path.read_text() == f"{SECRET}\n" for path in files), "where it was"


async def test_an_added_directory_shows_neither_moots_files_nor_the_homes_credentials(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An added directory holding the home's credentials or moot's own directories (the
    client refuses `--add-dir ~` and moot's directories, not a `~/.cache` holding a token, nor
    a policy made in Python): its bind showed the host's again over what hid them, writable.
    They stay hidden there, and the directories above them cannot be renamed away."""
    require_containment(harness)
    home = tmp_path / "home"
    files = _moots_files(home / ".local" / "moot")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"{SECRET}\n")
    (home / "notes.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MOOT_HOME", str(home / ".local" / "moot"))
    policy = SandboxPolicy(workspace=harness.workspace, added=(home,))
    sandbox = harness.backend.make(policy)
    try:
        run = functools.partial(sandbox.run, cwd=harness.workspace, env=os.environ, timeout=30)
        first = await run(
            f"cat {home}/notes.txt; grep -r hunter2 {home}; mv {home}/.local {home}/l; true"
        )
        second = await run(f"grep -r hunter2 {home}; true")
    finally:
        await sandbox.close()

    if not harness.backend.name.startswith("docker"):  # Docker takes no `--add-dir`
        assert first.stdout.startswith("mine\n"), first
    _no_secret(first)
    _no_secret(second)
    assert all(path.read_text() == f"{SECRET}\n" for path in files), "where it was"


@pytest.mark.parametrize("where", ["workspace", "added"])
async def test_a_resident_moots_directory_in_the_workspace_or_an_added_one_is_hidden(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str
) -> None:
    """The resident moot's socket directory in a workspace or an added directory (a runtime
    directory in the project, moot run in `/tmp`, `--add-dir /tmp`): a command neither sees
    what is in it nor can listen there in the resident process's place."""
    require_containment(harness)
    if where == "added" and harness.backend.name.startswith("docker"):
        pytest.skip("Docker takes no `--add-dir`")
    added = tmp_path / "added"
    added.mkdir()
    runtime = (harness.workspace if where == "workspace" else added) / "run"
    (runtime / "moot").mkdir(parents=True, mode=0o700)
    (runtime / "moot" / "key.env").write_text(f"{SECRET}\n")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    extra = (added,) if where == "added" else ()
    sandbox = harness.backend.make(SandboxPolicy(workspace=harness.workspace, added=extra))
    try:
        result = await sandbox.run(
            f"grep -r hunter2 {runtime}; touch {runtime}/moot/planted && echo planted; true",
            cwd=harness.workspace,
            env=os.environ,
            timeout=30,
        )
    finally:
        await sandbox.close()

    _no_secret(result)
    assert "planted" not in result.stdout
    assert not (runtime / "moot" / "planted").exists()


async def test_a_moot_home_holding_the_workspace_shows_only_the_workspace(
    harness: Harness, moot_home: Path
) -> None:
    require_containment(harness)
    _moots_files(moot_home)
    workspace = moot_home / "projects" / "app"
    workspace.mkdir(parents=True)
    (workspace / "mine.txt").write_text("mine\n")
    (moot_home / "projects" / "other").mkdir()
    (moot_home / "projects" / "other" / "theirs.txt").write_text(f"{SECRET}\n")
    sandbox = harness.backend.make(SandboxPolicy(workspace=workspace))
    try:
        result = await sandbox.run(
            f"cat mine.txt; echo more >> mine.txt; grep -r hunter2 {moot_home}; true",
            cwd=workspace,
            env=os.environ,
            timeout=30,
        )
    finally:
        await sandbox.close()

    _no_secret(result)
    assert result.stdout == "mine\n", result
    assert (workspace / "mine.txt").read_text() == "mine\nmore\n"


HOME_CREDENTIALS = (
    ".ssh/id_ed25519",
    ".netrc",
    ".pgpass",
    ".vault-token",
    ".cargo/credentials.toml",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".my.cnf",
    ".terraform.d/credentials.tfrc.json",
    ".m2/settings.xml",
    ".boto",
    ".s3cfg",
    ".env",
    ".bash_history",
)
"""Where people keep secrets in their home directory; all but the first two were readable in
bubblewrap before the home was hidden whole (issue 28)."""


def _plant(home: Path, paths: Iterable[str]) -> None:
    for rel in paths:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{SECRET}\n")


@pytest.fixture
def user_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`HOME` outside /tmp (bubblewrap's `/tmp` is not the host's anyway), holding the
    credentials of `HOME_CREDENTIALS` and an ordinary file, `notes.txt`."""
    home = Path(tempfile.mkdtemp(prefix="moot-contract-user-", dir="/var/tmp"))
    _plant(home, [*HOME_CREDENTIALS, "notes.txt"])
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home, ignore_errors=True)


async def test_nothing_of_the_home_directory_shows_but_a_workspace_inside_it(
    harness: Harness, user_home: Path
) -> None:
    """The home is hidden whole, not file by file: no list of credential files is complete."""
    require_containment(harness)
    workspace = user_home / "projects" / "app"
    workspace.mkdir(parents=True)
    (workspace / "app.txt").write_text("mine\n")
    sandbox = harness.backend.make(SandboxPolicy(workspace=workspace))
    try:
        result = await sandbox.run(
            f"cat app.txt; echo more >> app.txt; cd {user_home} &&"
            f" cat {' '.join(HOME_CREDENTIALS)} notes.txt; grep -r hunter2 {user_home}; true",
            cwd=workspace,
            env=os.environ,
            timeout=30,
        )
    finally:
        await sandbox.close()

    _no_secret(result)
    assert result.stdout == "mine\n", result
    assert (workspace / "app.txt").read_text() == "mine\nmore\n"


async def test_credentials_in_a_workspace_that_is_the_home_directory_are_hidden(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home cannot be hidden when it is the workspace: its credential files are, by name."""
    require_containment(harness)
    _plant(harness.workspace, HOME_CREDENTIALS)
    monkeypatch.setenv("HOME", str(harness.workspace))

    result = await harness.run(f"cat {' '.join(HOME_CREDENTIALS)}; grep -r hunter2 .; true")

    _no_secret(result)


# ---- root is no stronger than another user ---------------------------------------------
# moot runs as root in containers, CI and devcontainers. A command with root's capabilities
# could unmount a mask and read what lies under it, remount `/` writable, unmount `/run` to
# reach the host's sockets, make a device node of the disk, or open a file by its handle
# (CAP_DAC_READ_SEARCH) past every mount. These tests mean most when run as root, as CI
# runs them (and once more as an unprivileged user).

_NO_CAPABILITIES = "0000000000000000"


def _set_id_files(root: Path) -> list[str]:
    """The regular files below `root` (on the host) with a set-user-ID or set-group-ID bit,
    and any with file capabilities."""
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                found.append(f"{os.path.relpath(path, root)} {oct(info.st_mode)}")
            with contextlib.suppress(OSError):
                os.getxattr(path, "security.capability", follow_symlinks=False)
                found.append(f"{os.path.relpath(path, root)} has file capabilities")
    return found


_SET_ID_BY_SYSCALL = """
import os, stat
for what, call in [
    ("chmod", lambda: os.chmod("py1", 0o4755)),
    ("open", lambda: os.close(os.open("py2", os.O_CREAT | os.O_WRONLY, 0o6755))),
    ("mknod", lambda: os.mknod("py3", stat.S_IFREG | 0o4755)),
    ("capability", lambda: os.setxattr("py1", "security.capability",
        bytes.fromhex("01000002ffffffff00000000ffffffff00000000"))),
]:
    try:
        call()
    except OSError as error:
        print(what, error.strerror)
"""


async def test_no_set_id_file_is_left_on_the_host(harness: Harness) -> None:
    """What a command writes is on the host's disk as the user moot runs as: a set-user-ID
    copy of a shell would give any local user that user's rights, root's when moot runs as
    root (issue 28). Every way a command could ask for the bits, from the shell and from a
    program's own system calls, and file capabilities."""
    require_containment(harness)
    (harness.scratch / "set_id.py").write_text(_SET_ID_BY_SYSCALL)
    (harness.scratch / "py1").write_bytes(b"")
    python = sys.executable  # the host's; the Docker image has no Python: the shell's part runs

    result = await harness.run(
        "cp /bin/sh s1; chmod 4755 s1; cp /bin/sh s2; chmod u+s s2; chmod g+s s2;"
        " cp /bin/sh s3; chmod +s s3; chmod =rwxs s3; install -m 6755 /bin/sh s4;"
        " mkdir -p sub && cp -p /bin/sh sub/s5 && chmod 2755 sub/s5;"
        f" if [ -x {python} ]; then {python} set_id.py; fi; true",
        cwd=harness.scratch,
    )

    assert _set_id_files(harness.workspace) == [], result
    assert (harness.scratch / "s1").exists(), "the copies were made"


async def test_a_background_command_leaves_no_set_id_file(harness: Harness) -> None:
    require_containment(harness)
    process = await harness.sandbox.start(
        "cp /bin/sh bg && chmod 4755 bg; echo done", cwd=harness.scratch, env=os.environ
    )

    await until(lambda: process.exit_code is not None)

    assert "done" in process.read()
    assert (harness.scratch / "bg").exists(), "the copy was made"
    assert _set_id_files(harness.workspace) == []


async def test_commands_hold_no_capabilities(harness: Harness) -> None:
    require_containment(harness)

    result = await harness.run("grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status")

    fields = dict(line.split(":", 1) for line in result.stdout.splitlines())
    fields = {name: value.strip() for name, value in fields.items()}
    assert fields == {
        "CapInh": _NO_CAPABILITIES,
        "CapPrm": _NO_CAPABILITIES,
        "CapEff": _NO_CAPABILITIES,
        "CapAmb": _NO_CAPABILITIES,
        "NoNewPrivs": "1",
    }, result


async def test_a_mask_cannot_be_unmounted(harness: Harness) -> None:
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "secrets").mkdir()
    (harness.workspace / "secrets" / "key").write_text(f"{SECRET}\n")
    harness.deny("Read(./.env)", "Read(secrets/**)")

    result = await harness.run(
        "for m in .env secrets; do umount $m; umount -l $m; done;"
        " unshare -Urm sh -c 'umount -l .env; umount -l secrets; cat .env secrets/key';"
        " unshare -Um sh -c 'umount -l .env; cat .env'; cat .env secrets/key; true"
    )

    _no_secret(result)


_UNMOUNT_BY_SYSCALL = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS, MNT_DETACH, MS_REMOUNT, MS_BIND = 0x10000000, 0x20000, 2, 32, 4096
for flags in (0, CLONE_NEWUSER | CLONE_NEWNS):
    if flags and libc.unshare(flags) != 0:
        print("unshare:", os.strerror(ctypes.get_errno()))
        continue
    for target in (b".env", b"secrets", b"/run"):
        libc.umount2(target, MNT_DETACH)
    libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None)
    for path in (".env", "secrets/key"):
        try:
            print(open(path).read())
        except OSError as error:
            print(path, error)
"""


async def test_no_system_call_lifts_a_mask(harness: Harness) -> None:
    """What `umount` and `unshare` do, without the programs' own checks: the calls
    themselves, once as the command is and once in a user namespace of its own (where the
    kernel must keep the mounts it inherited locked together)."""
    require_containment(harness)
    (harness.workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (harness.workspace / "secrets").mkdir()
    (harness.workspace / "secrets" / "key").write_text(f"{SECRET}\n")
    (harness.workspace / "lift.py").write_text(_UNMOUNT_BY_SYSCALL)
    harness.deny("Read(./.env)", "Read(secrets/**)")
    python = sys.executable  # the host's; the Docker image has no Python, so it skips there

    result = await harness.run(f"if [ -x {python} ]; then {python} lift.py; fi")

    _no_secret(result)


async def test_the_read_only_mounts_cannot_be_made_writable(
    harness: Harness, var_tmp_target: Path
) -> None:
    require_containment(harness)
    (harness.workspace / "locked.txt").write_text("original\n")
    harness.deny("Edit(./locked.txt)")

    result = await harness.run(
        "for m in / /var/tmp .git locked.txt; do mount -o remount,rw $m;"
        " mount -o remount,bind,rw $m; done;"
        f" echo x > {var_tmp_target}; echo x > .git/config; echo x > locked.txt; true"
    )

    assert not on_host(var_tmp_target), result
    assert (harness.workspace / ".git" / "config").read_text() == "[core]\n"
    assert (harness.workspace / "locked.txt").read_text() == "original\n"


async def test_no_device_node_can_be_made(harness: Harness) -> None:
    """A node of the disk (or of memory) would read every file past the mounts."""
    require_containment(harness)

    result = await harness.run(
        "for at in /tmp/moot-disk ./moot-disk; do mknod $at b 8 0 && echo made $at;"
        " mknod $at-mem c 1 1 && echo made $at-mem; done; true"
    )

    assert "made" not in result.stdout, result
    assert "mknod" in result.stderr, "mknod ran (and failed)"
    assert not on_host(harness.workspace / "moot-disk")


async def test_kernel_settings_cannot_be_changed(harness: Harness) -> None:
    """`core_pattern` and `uevent_helper` name programs the kernel runs as root on the host.
    A command writes back the value it reads: should the write go through, nothing changes,
    and the test fails."""
    require_containment(harness)

    result = await harness.run(
        "mount -o remount,rw /proc/sys; mount -o remount,rw /sys;"
        " for f in /proc/sys/kernel/core_pattern /sys/kernel/uevent_helper; do"
        ' [ -e $f ] || continue; v=$(cat $f); printf "%s\\n" "$v" > $f && echo changed $f; done;'
        " true"
    )

    assert "changed" not in result.stdout, result


@pytest.fixture
def host_sleeper() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A `sleep` running on the host, and the marker in its arguments."""
    sleeper = marker()
    process = subprocess.Popen(["sleep", sleeper])
    yield process, sleeper
    process.kill()
    process.wait()


async def test_the_hosts_processes_are_out_of_reach(
    harness: Harness, host_sleeper: tuple[subprocess.Popen[bytes], str]
) -> None:
    require_containment(harness)
    host, sleeper = host_sleeper

    shown = f"cat /proc/{host.pid}/cmdline /proc/{os.getpid()}/cmdline;"
    if not harness.backend.namespaces:  # they show, like to any process of this machine
        shown = ""
    result = await harness.run(
        f"kill -9 {host.pid}; kill -9 {os.getpid()}; {shown} cat /proc/{os.getpid()}/environ;"
        f" ls -l /proc/{os.getpid()}/fd; true"
    )

    assert host.poll() is None, "the command killed a process of the host"
    assert sleeper not in result.stdout and "pytest" not in result.stdout, result
    assert "MOOT_HOME" not in result.stdout, result
    assert " -> " not in result.stdout, "what the host's process holds open shows"


async def test_a_command_inherits_only_its_standard_streams(harness: Harness) -> None:
    """A descriptor of a host directory (bubblewrap binds guards from descriptors) would lead
    past every mount with `openat(fd, "..")`."""
    (harness.workspace / "sec" / "b").mkdir(parents=True)
    (harness.workspace / "sec" / "b" / "key").write_text(f"{SECRET}\n")
    if harness.backend.contained:
        harness.deny("Read(./sec/b/key)")  # guards `sec` and `sec/b`

    result = await harness.run("ls /proc/$$/fd; true")  # `; true`: bash forks `ls`

    assert result.stdout.split() == ["0", "1", "2"], result


def _git_on_host(workspace: Path, *args: str) -> None:
    identity = ["-c", "user.name=moot", "-c", "user.email=moot@example.invalid"]
    subprocess.run(["git", *identity, *args], cwd=workspace, check=True, capture_output=True)


def _secret_only_in_history(workspace: Path, how: str) -> None:
    """A repository in `workspace` whose `.env` holds the secret only where `how` says: the
    work tree then has none, or one git no longer tracks."""
    shutil.rmtree(workspace / ".git")
    (workspace / "a.txt").write_text("a\n")
    env = workspace / ".env"
    for args in (["init", "-q", "-b", "main"], ["add", "a.txt"], ["commit", "-q", "-m", "a"]):
        _git_on_host(workspace, *args)
    env.write_text(f"TOKEN={SECRET}\n")
    if how in ("untracked since", "packed"):
        _git_on_host(workspace, "add", ".env")
        _git_on_host(workspace, "commit", "-q", "-m", "oops")
        _git_on_host(workspace, "rm", "-q", "--cached", ".env")
        _git_on_host(workspace, "commit", "-q", "-m", "untrack")
        if how == "packed":
            _git_on_host(workspace, "gc", "-q", "--prune=now")
    elif how == "deleted since":
        _git_on_host(workspace, "add", ".env")
        _git_on_host(workspace, "commit", "-q", "-m", "oops")
        _git_on_host(workspace, "rm", "-q", ".env")
        _git_on_host(workspace, "commit", "-q", "-m", "gone")
    elif how == "in the reflog":
        _git_on_host(workspace, "add", ".env")
        _git_on_host(workspace, "commit", "-q", "-m", "oops")
        _git_on_host(workspace, "reset", "-q", "--hard", "HEAD~1")
    elif how in ("stashed", "stash dropped"):
        _git_on_host(workspace, "stash", "push", "-q", "--include-untracked")
        if how == "stash dropped":
            _git_on_host(workspace, "stash", "drop", "-q")
    elif how == "staged, then reset":
        _git_on_host(workspace, "add", ".env")
        _git_on_host(workspace, "reset", "-q", ".env")
    else:
        raise AssertionError(how)


_DIG = (
    "ls -A .git; if command -v git >/dev/null; then git log -p --all; git log -g -p;"
    " git stash list -p; git fsck --lost-found; git cat-file --batch-all-objects --batch;"
    " fi; true"
)
"""Every way git in the shell could print a secret it holds."""


@pytest.mark.parametrize(
    "how",
    [
        "untracked since",
        "deleted since",
        "in the reflog",
        "stashed",
        "stash dropped",
        "packed",
        "staged, then reset",
    ],
)
async def test_git_shows_nothing_of_a_hidden_file_in_its_history(
    harness: Harness, how: str
) -> None:
    """The index tracks no hidden file, but git's objects hold one: `.git` is hidden whole."""
    require_containment(harness)
    _need_git()
    _secret_only_in_history(harness.workspace, how)
    harness.deny("Read(./.env)")

    result = await harness.run(_DIG.replace("ls -A .git;", _look_into_git(harness)))

    _no_secret(result)
    assert "HEAD" not in result.stdout, result
    assert (harness.workspace / ".git" / "HEAD").exists()


async def test_git_works_when_its_history_holds_nothing_hidden(harness: Harness) -> None:
    require_containment(harness)
    _need_git()
    _secret_only_in_history(harness.workspace, "untracked since")
    harness.deny("Read(./other.env)")

    result = await harness.run("cat .git/HEAD")

    assert result.stdout == "ref: refs/heads/main\n", result


async def test_a_linked_worktrees_repository_is_hidden_where_it_lies(
    harness: Harness, moot_home: Path
) -> None:
    """A worktree's `.git` is a file naming the main repository's, elsewhere on the host
    (outside /tmp here, so that bubblewrap would show it)."""
    require_containment(harness)
    _need_git()
    main = moot_home.parent / f"{moot_home.name}-main"
    main.mkdir()
    try:
        (main / ".env").write_text(f"TOKEN={SECRET}\n")
        for args in (["init", "-q", "-b", "main"], ["add", ".env"], ["commit", "-q", "-m", "x"]):
            _git_on_host(main, *args)
        _git_on_host(main, "rm", "-q", ".env")
        _git_on_host(main, "commit", "-q", "-m", "gone")
        shutil.rmtree(harness.workspace)
        _git_on_host(main, "worktree", "add", "-q", str(harness.workspace), "-b", "side")
        harness.deny("Read(./.env)")

        result = await harness.run(
            f"cat .git; ls -A {main}/.git; if command -v git >/dev/null; then git log -p --all;"
            f" git --git-dir={main}/.git log -p --all; fi; true"
        )
    finally:
        shutil.rmtree(main)

    _no_secret(result)
    assert "HEAD" not in result.stdout and "objects" not in result.stdout, result


# ---- the network and the host's sockets -------------------------------------------------


@pytest.fixture
def tcp_server() -> Iterator[socket.socket]:
    """A listening socket on the host's 127.0.0.1."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    yield server
    server.close()


async def test_a_server_on_the_hosts_loopback_is_out_of_reach(
    harness: Harness,
    tcp_server: socket.socket,
) -> None:
    port = tcp_server.getsockname()[1]

    result = await harness.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", timeout=10)

    if harness.backend.contained:
        assert result.exit_code != 0
        assert "connected" not in result.stdout
        with pytest.raises(BlockingIOError):
            tcp_server.accept()
    else:  # the host: the same test connects, so the test itself is sound
        assert (result.exit_code, result.stdout) == (0, "connected\n"), result.stderr


async def test_outside_addresses_are_unreachable(harness: Harness) -> None:
    require_containment(harness)

    # 192.0.2.1 is TEST-NET-1 (RFC 5737): with no route out, connecting fails at once.
    result = await harness.run("exec 3<>/dev/tcp/192.0.2.1/80", timeout=20)

    assert result.exit_code != 0 and not result.timed_out
    assert harness.backend.unreachable in result.stderr


async def test_names_do_not_resolve(harness: Harness) -> None:
    require_containment(harness)

    result = await harness.run("getent hosts example.com", timeout=20)

    assert result.exit_code != 0 and not result.timed_out
    assert result.stdout == ""


_CONNECT_UNIX = """
import socket, sys
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect(sys.argv[1])
print("connected:", sys.argv[1])
"""


def _unix_server(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    return server


async def test_the_hosts_unix_sockets_are_out_of_reach(harness: Harness) -> None:
    """A Unix socket (the Docker socket, the ssh agent, D-Bus) works across a read-only bind:
    the sandbox must not show the host's /tmp and /run, where they live, nor let a command
    unmount what covers them."""
    require_containment(harness)
    paths = [harness.outside / "agent.sock"]
    if os.access("/run", os.W_OK):
        paths.append(Path("/run") / f"moot-contract-{uuid.uuid4().hex[:8]}.sock")
    servers = [_unix_server(path) for path in paths]
    docker = [p for p in ("/run/docker.sock", "/var/run/docker.sock") if on_host(Path(p))]
    python = sys.executable  # the host's; the Docker image has none (nor needs it: see below)
    try:
        unmount = "for m in /run /var/run /tmp; do umount $m; umount -l $m; done"
        checks = " ; ".join(f"[ -e {path} ] && echo visible: {path}" for path in paths + docker)
        if not harness.backend.namespaces:  # they show: connecting is what must fail
            checks = " ; ".join(
                f"{python} -c {shlex.quote(_CONNECT_UNIX)} {path}" for path in paths + docker
            )
        result = await harness.run(f"{unmount}; {checks}; true")
    finally:
        for server, path in zip(servers, paths, strict=True):
            server.close()
            path.unlink()

    assert result.stdout == ""


# ---- killing: timeouts, interrupts, leftovers -------------------------------------------


async def test_a_timeout_kills_the_command_and_what_it_forked(harness: Harness) -> None:
    child, main = marker(), marker()

    result = await harness.run(f"sleep {child} & sleep {main}", timeout=0.5)

    assert result.timed_out and result.exit_code is None
    assert await gone(child) == [] and await gone(main) == []


async def test_a_process_that_ignores_sigterm_is_killed_too(harness: Harness) -> None:
    child = marker()

    # An ignored signal stays ignored across exec: `sleep` inherits the trap.
    result = await harness.run(f"trap '' TERM; sleep {child} & wait", timeout=0.5)

    assert result.timed_out
    assert await gone(child) == []


async def test_cancelling_a_command_kills_it(harness: Harness) -> None:
    child = marker()
    started = asyncio.Event()

    task = asyncio.create_task(
        harness.run(f"echo started; sleep {child} & wait", on_output=lambda _: started.set())
    )
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(child) == []


async def test_a_command_killed_while_it_starts_leaves_nothing_behind(harness: Harness) -> None:
    """The sandbox itself may still be setting up: `bwrap` killed then could orphan its child
    before `--die-with-parent` is armed (about one kill in twenty, 2-4 ms in)."""
    markers = [marker() for _ in range(30)]

    for index, child in enumerate(markers):
        result = await harness.run(f"sleep {child} & wait", timeout=0.001 * (1 + index % 10))
        assert result.timed_out or result.exit_code is not None

    assert [left for child in markers for left in await gone(child, within=2)] == []


async def test_a_finished_command_leaves_nothing_running(harness: Harness) -> None:
    """`&` does not outlive the call; `run_in_background` is for that."""
    child = marker()

    result = await harness.run(f"sleep {child} & echo done", timeout=10)

    assert (result.exit_code, result.stdout, result.timed_out) == (0, "done\n", False)
    assert await gone(child) == []


# ---- long output ------------------------------------------------------------------------


async def test_long_output_keeps_head_and_tail_and_saves_all_of_it(harness: Harness) -> None:
    result = await harness.run("seq 1 30000")
    full = "".join(f"{i}\n" for i in range(1, 30001))

    assert result.exit_code == 0 and result.truncated
    assert result.stdout.startswith("1\n2\n3\n")
    assert result.stdout.endswith("29999\n30000\n")
    assert "characters elided" in result.stdout
    assert len(result.stdout) < 31_000
    assert result.output_file is not None
    # Saved outside the project, in the user data dir (the session's Workspace lists it as a
    # read root, so the read tool still reaches it: tests/tools/test_tool_bash.py).
    assert not result.output_file.is_relative_to(harness.workspace)
    assert result.output_file.is_relative_to(Path(os.environ["MOOT_HOME"]))
    assert result.output_file.read_text() == full


async def test_short_output_is_not_saved(harness: Harness) -> None:
    result = await harness.run("seq 1 100")

    assert not result.truncated and result.output_file is None
    assert result.stdout == "".join(f"{i}\n" for i in range(1, 101))


# ---- background commands ----------------------------------------------------------------


async def test_a_background_command_streams_output_and_ends_with_its_code(
    harness: Harness,
) -> None:
    process = await harness.sandbox.start(
        "echo one; sleep 0.2; echo two; exit 3", cwd=harness.workspace, env=os.environ
    )
    output: list[str] = []

    def done() -> bool:
        output.append(process.read())
        return process.exit_code is not None

    await until(done)
    output.append(process.read())

    assert "".join(output) == "one\ntwo\n"
    assert process.exit_code == 3
    assert process.read() == ""
    assert process.id


async def test_killing_a_background_command_kills_what_it_started(harness: Harness) -> None:
    child, main = marker(), marker()
    process = await harness.sandbox.start(
        f"echo ready; sleep {child} & sleep {main}", cwd=harness.workspace, env=os.environ
    )
    output: list[str] = []

    def ready() -> bool:
        output.append(process.read())
        return "ready" in "".join(output)

    await until(ready)

    await process.kill()

    assert process.exit_code is not None and process.exit_code != 0
    assert await gone(child) == [] and await gone(main) == []


async def test_closing_the_sandbox_ends_background_commands(harness: Harness) -> None:
    child = marker()
    first = await harness.sandbox.start(f"sleep {child}", cwd=harness.workspace, env=os.environ)
    second = await harness.sandbox.start("sleep 30", cwd=harness.workspace, env=os.environ)

    assert first.id != second.id
    await until(lambda: bool(processes_with(child)))
    await harness.sandbox.close()

    assert await gone(child) == []

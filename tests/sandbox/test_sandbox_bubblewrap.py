"""Bubblewrap beyond the shared contract: its arguments, its probe, what it hides, and CI rules."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.permissions.masks import mask_source
from moot.permissions.rules import RuleSet
from moot.sandbox import bubblewrap, bwrap_cache, bwrap_probe
from moot.sandbox.base import SandboxMasks, SandboxPolicy, rename_guards
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.sandbox.bwrap_argv import PROC_READ_ONLY, bwrap_args
from moot.sandbox.bwrap_probe import bind_fd_supported, bwrap_unavailable, bwrap_version
from sandbox_contract import BACKENDS, Backend, require, until


def args_for(
    workspace: Path,
    *,
    network: bool = False,
    hidden: list[Path] | None = None,
    masks: SandboxMasks | None = None,
    guard_fds: dict[str, int] | None = None,
) -> list[str]:
    return bwrap_args(
        "bwrap",
        workspace=workspace,
        protected=(".git", ".moot"),
        network=network,
        tmp=Path("/private/tmp"),
        cwd=workspace,
        hidden=hidden or [],
        masks=masks,
        empty_file=Path("/private/empty"),
        guard_fds=guard_fds,
    )


def pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == flag]


def test_the_root_is_read_only_and_the_workspace_and_tmp_writable(tmp_path: Path) -> None:
    args = args_for(tmp_path)

    assert args[:4] == ["bwrap", "--ro-bind", "/", "/"]
    assert pairs(args, "--bind") == ["/private/tmp", str(tmp_path)]
    assert args.index("/private/tmp") < args.index(str(tmp_path)), "a workspace in /tmp stays"
    assert pairs(args, "--dev") == ["/dev"] and pairs(args, "--proc") == ["/proc"]
    assert "/run" in pairs(args, "--tmpfs"), "the host's sockets are hidden"
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"):
        assert flag in args
    assert pairs(args, "--chdir") == [str(tmp_path)]


def test_protected_paths_are_bound_read_only_after_the_workspace_when_they_exist(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()

    args = args_for(tmp_path)

    ro = pairs(args, "--ro-bind")
    assert str(tmp_path / ".git") in ro
    assert str(tmp_path / ".moot") not in ro, "a missing path cannot be bound"
    assert args.index(str(tmp_path / ".git")) > args.index(str(tmp_path))


def test_a_symlinked_protected_path_is_not_bound(tmp_path: Path) -> None:
    """Binding would follow it: `.moot -> .` would make the whole workspace read-only."""
    os.symlink(".", tmp_path / ".moot")

    assert str(tmp_path / ".moot") not in args_for(tmp_path)


def test_network_allowed_keeps_the_network_and_the_resolver(tmp_path: Path) -> None:
    args = args_for(tmp_path, network=True)

    assert "--unshare-net" not in args
    assert "/run/systemd/resolve" in pairs(args, "--ro-bind-try")


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    """A directory outside /tmp (which the sandbox replaces, so hides nothing in)."""
    made = Path(tempfile.mkdtemp(prefix="moot-test-", dir="/var/tmp"))
    yield made
    shutil.rmtree(made)


def test_hidden_paths_become_empty(var_tmp: Path) -> None:
    (var_tmp / ".ssh").mkdir()
    (var_tmp / ".npmrc").write_text("//registry/:_authToken=x\n")

    args = args_for(var_tmp / "ws", hidden=[var_tmp / ".ssh", var_tmp / ".npmrc"])

    assert str(var_tmp / ".ssh") in pairs(args, "--tmpfs")
    assert str(var_tmp / ".ssh") in pairs(args, "--remount-ro")
    assert args[args.index(str(var_tmp / ".npmrc")) - 1] == "/dev/null"


def test_only_the_sessions_outputs_show_in_the_hidden_data_dir(var_tmp: Path) -> None:
    data, outputs = var_tmp / "data", var_tmp / "data" / "outputs" / "s1"
    outputs.mkdir(parents=True)

    args = bwrap_args(
        "bwrap", workspace=var_tmp / "ws", protected=(), network=False, tmp=var_tmp / "t",
        cwd=var_tmp / "ws", hidden=[data], reveal=outputs,
    )  # fmt: skip

    start = args.index("--tmpfs", args.index("/run"))
    assert args[start : start + 7] == [
        "--tmpfs", str(data), "--ro-bind-try", str(outputs), str(outputs),
        "--remount-ro", str(data),
    ]  # fmt: skip


def test_nothing_in_the_sandboxs_own_tmp_is_hidden(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()

    args = args_for(tmp_path / "ws", hidden=[tmp_path / ".ssh"])

    assert str(tmp_path / ".ssh") not in args


def test_masks_come_after_the_workspace_parents_first(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    masks = SandboxMasks(
        hidden_files=("locked/.env", ".env"), hidden_dirs=("secrets",), read_only=("locked",)
    )

    args = args_for(tmp_path, masks=masks)

    def at(path: str) -> int:
        return args.index(str(tmp_path / path))

    assert args[at(".env") - 1] == "/private/empty"
    assert args[at("secrets") - 1] == "--tmpfs" and str(tmp_path / "secrets") in pairs(
        args, "--remount-ro"
    )
    assert pairs(args, "--ro-bind-try").count(str(tmp_path / "locked")) == 1
    assert args.index(str(tmp_path)) < at(".git") < at(".env") < at("locked") < at("locked/.env")


def test_directories_above_masks_are_guarded_first_from_descriptors(tmp_path: Path) -> None:
    """Bound onto themselves (writable) after the workspace, before the protected paths and
    the masks, parents first: a mount point cannot be renamed."""
    (tmp_path / ".git").mkdir()
    masks = SandboxMasks(hidden_files=("a/b/.env", "a/key"), read_only=("c/d",))
    fds = {"a": 11, "a/b": 12, "c": 13}

    args = args_for(tmp_path, masks=masks, guard_fds=fds)

    binds = [args[i + 1 : i + 3] for i, arg in enumerate(args) if arg == "--bind-fd"]
    assert binds == [
        [fd, str(tmp_path / rel)] for rel, fd in (("a", "11"), ("a/b", "12"), ("c", "13"))
    ]
    first, last = args.index("--bind-fd"), len(args) - args[::-1].index("--bind-fd")
    assert args.index(str(tmp_path)) < first and last < args.index(str(tmp_path / ".git"))
    assert last < args.index(str(tmp_path / "a/b/.env"))
    assert pairs(args, "--bind") == ["/private/tmp", str(tmp_path)], "nothing bound by path"


def test_without_bind_fd_real_directories_are_guarded_by_path(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink("elsewhere", tmp_path / "c")  # swapped for a link since: never bound writable
    masks = SandboxMasks(hidden_files=("a/b/.env", "c/d/key"))

    args = args_for(tmp_path, masks=masks)

    assert "--bind-fd" not in args
    assert pairs(args, "--bind") == ["/private/tmp", *(str(tmp_path / d) for d in ("", "a", "a/b"))]


def test_nothing_is_guarded_at_or_below_a_read_only_or_protected_path() -> None:
    masks = SandboxMasks(
        hidden_files=("locked/sub/.env", ".git/hooks/x", "/outside/a/key"),
        hidden_dirs=("d/secrets",),
        read_only=("locked",),
    )

    assert rename_guards(masks, (".git", ".moot", "deep/down/.hooks")) == ["d", "deep", "deep/down"]
    assert rename_guards(None, (".git", ".moot")) == []


def test_a_link_target_outside_is_masked_unless_the_sandbox_replaces_it(tmp_path: Path) -> None:
    masks = SandboxMasks(hidden_files=("/var/lib/app/key", "/tmp/elsewhere/key", "/run/key"))

    args = args_for(tmp_path / "ws", masks=masks)

    assert "/var/lib/app/key" in args
    assert "/tmp/elsewhere/key" not in args, "the private /tmp is not the host's"
    assert "/run/key" not in args


def test_the_probe_names_what_is_wrong(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)

    assert "No permissions to creating new namespace" in (bwrap_unavailable(str(fake)) or "")
    assert "could not be run" in (bwrap_unavailable(str(tmp_path / "missing")) or "")


# ---- the probe remembered across starts (moot.sandbox.bwrap_cache) ------------------------

NO_NAMESPACES = "bwrap: No permissions to creating new namespace"


@pytest.fixture
def fake_bwrap(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in `bwrap` that logs its first argument and works, until `broken` exists:
    then it fails as bwrap does where user namespaces are not allowed."""
    log, broken, fake = tmp_path / "runs.log", tmp_path / "broken", tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        f'#!/bin/sh\necho "$1" >> {log}\n'
        f"if [ -e {broken} ]; then echo '{NO_NAMESPACES}' >&2; exit 1; fi\n"
        '[ "$1" = --version ] && echo "bubblewrap 9.9"\nexit 0\n'
    )
    fake.chmod(0o755)
    return fake, log, broken


def new_start() -> None:
    """Forget what this process probed, as the next `moot` process would not know it."""
    bwrap_probe._probe.cache_clear()
    bwrap_probe._version.cache_clear()


def runs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_a_probe_that_worked_is_remembered_by_the_next_start(
    fake_bwrap: tuple[Path, Path, Path],
) -> None:
    fake, log, _ = fake_bwrap
    new_start()
    assert (bwrap_unavailable(str(fake)), bwrap_version(str(fake))) == (None, "bubblewrap 9.9")
    assert runs(log) == ["--ro-bind", "--version"]

    new_start()
    assert (bwrap_unavailable(str(fake)), bwrap_version(str(fake))) == (None, "bubblewrap 9.9")
    assert runs(log) == ["--ro-bind", "--version"], "nothing ran again"


@pytest.mark.parametrize("change", ["too old", "bwrap replaced", "another kernel", "garbage"])
def test_a_stale_entry_is_probed_again(
    fake_bwrap: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    fake, log, broken = fake_bwrap
    new_start()
    assert bwrap_unavailable(str(fake)) is None
    cache = bwrap_cache.cache_file()
    if change == "too old":
        entries = json.loads(cache.read_text())
        entries[str(fake)]["checked"] -= bwrap_cache.TTL + 1
        cache.write_text(json.dumps(entries))
    elif change == "bwrap replaced":
        fake.write_text(fake.read_text() + "# upgraded\n")
    elif change == "another kernel":
        uname = os.uname()
        kernel = os.uname_result((*uname[:2], uname.release + "-next", *uname[3:]))
        monkeypatch.setattr(bwrap_cache.os, "uname", lambda: kernel)
    else:
        cache.write_text("{not json")
    broken.touch()  # the fresh probe finds what a remembered answer would have hidden

    new_start()
    assert NO_NAMESPACES in (bwrap_unavailable(str(fake)) or "")
    tries = ["--ro-bind"] * len(bwrap_probe.ISOLATIONS)
    assert runs(log) == ["--ro-bind", "--version", *tries]


def test_a_failed_probe_is_not_remembered(fake_bwrap: tuple[Path, Path, Path]) -> None:
    fake, log, broken = fake_bwrap
    broken.touch()
    new_start()
    assert NO_NAMESPACES in (bwrap_unavailable(str(fake)) or "")
    broken.unlink()  # fixed: the next start must see it

    new_start()
    assert bwrap_unavailable(str(fake)) is None
    tries = ["--ro-bind"] * len(bwrap_probe.ISOLATIONS)
    assert runs(log) == [*tries, "--ro-bind", "--version"]


def test_the_strongest_isolation_that_works_is_used_and_remembered(tmp_path: Path) -> None:
    """Where the kernel allows no user namespace (inside many containers), commands still run
    with every capability dropped; the next start knows it without probing."""
    log, fake = tmp_path / "runs.log", tmp_path / "bwrap"
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\n'
        'case " $* " in *" --unshare-user "*) echo "bwrap: No permissions" >&2; exit 1;; esac\n'
        '[ "$1" = --version ] && echo "bubblewrap 9.9"\nexit 0\n'
    )
    fake.chmod(0o755)
    new_start()

    assert bwrap_unavailable(str(fake)) is None
    assert bwrap_probe.isolation_args(str(fake)) == ("--cap-drop", "ALL")
    probes = [line for line in runs(log) if line.startswith("--ro-bind")]
    assert ["--unshare-user" in p for p in probes] == [True, True, False]
    new_start()
    assert bwrap_probe.isolation_args(str(fake)) == ("--cap-drop", "ALL")
    assert len(runs(log)) == len(probes) + 1, "remembered: nothing ran again (but --version)"


def test_every_command_drops_every_capability(tmp_path: Path) -> None:
    args = args_for(tmp_path)

    assert args[args.index("--cap-drop") + 1] == "ALL"
    for path in PROC_READ_ONLY:
        assert args.index(path) > args.index("--proc"), "read-only over the fresh /proc"


async def test_a_sandbox_that_stopped_working_says_so_and_is_probed_at_the_next_start(
    fake_bwrap: tuple[Path, Path, Path], workspace: Path
) -> None:
    """A remembered answer may go stale (user namespaces turned off since): the command fails
    with bwrap's own words, and the entry is dropped."""
    fake, _, broken = fake_bwrap
    new_start()
    assert bwrap_unavailable(str(fake)) is None
    broken.touch()
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace), bwrap=str(fake))
    try:
        code, out, err = await run(sandbox, "echo hi")
    finally:
        await sandbox.close()

    assert (code, out) == (1, "")
    assert err.startswith(NO_NAMESPACES)
    assert bwrap_cache.remembered(str(fake)) is None
    new_start()
    assert NO_NAMESPACES in (bwrap_unavailable(str(fake)) or "")


def test_a_missing_backend_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = Backend(
        "nothing",
        make=lambda _: None,
        unavailable=lambda: "nothing: absent",
        install="apt-get install nothing",
    )  # type: ignore[arg-type,return-value]

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="nothing: absent"):
        require(missing)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must provide the nothing backend"):
        require(missing)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        require(missing)


# ---- for real --------------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.fixture
async def sandbox(workspace: Path) -> AsyncIterator[BubblewrapSandbox]:
    require(BACKENDS["bubblewrap"])
    made = BubblewrapSandbox(SandboxPolicy(workspace), kill_grace=0.5)
    yield made
    await made.close()


async def run(sandbox: BubblewrapSandbox, command: str) -> tuple[int | None, str, str]:
    result = await sandbox.run(command, cwd=sandbox.workspace, env=os.environ, timeout=20)
    return result.exit_code, result.stdout, result.stderr


async def test_the_sandbox_adds_nothing_to_the_workspace_but_an_empty_moot_dir(
    sandbox: BubblewrapSandbox, workspace: Path
) -> None:
    """`.moot` is made so that it can be bound read-only (`made_when_missing`); not `.git`."""
    await run(sandbox, "true")

    assert os.listdir(workspace) == [".moot"]
    assert os.listdir(workspace / ".moot") == []


async def test_commands_see_only_their_own_processes(sandbox: BubblewrapSandbox) -> None:
    code, out, _ = await run(sandbox, "ls /proc | grep -c '^[0-9]'")

    assert code == 0 and int(out) < 10


async def test_nothing_of_the_kernels_settings_in_proc_is_writable(
    sandbox: BubblewrapSandbox,
) -> None:
    """Docker's list of `/proc` paths a command must not write (uid 0 writes sysctls such as
    `kernel.core_pattern` with no capability at all): bwrap covers some, moot the others
    (`PROC_READ_ONLY`). `find -writable` asks the kernel (a read-only mount says EROFS)."""
    paths = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
    code, out, _ = await run(sandbox, f"find {' '.join(paths)} -writable 2>/dev/null; true")

    assert (code, out) == (0, "")
    _, mounts, _ = await run(sandbox, "cat /proc/self/mountinfo")
    tops = {line.split()[4]: line.split()[5] for line in mounts.splitlines()}
    assert tops["/proc/sys"].startswith("ro,"), "read-only, not merely hard to reach"


async def test_tmp_lasts_the_session_and_goes_with_it(sandbox: BubblewrapSandbox) -> None:
    # Each step says how it ended: a CI run once saw `cat` print nothing, and without the
    # codes and stderr it could not tell which command had failed, or how.
    written = await run(sandbox, "echo kept > /tmp/note && ls -la /tmp")
    read = await run(sandbox, "cat /tmp/note")
    private = sandbox.tmp

    await sandbox.close()

    assert written[0] == 0, written
    assert read == (0, "kept\n", ""), (written, read)
    assert not private.exists()


@pytest.fixture
def fake_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home outside /tmp (which the sandbox replaces anyway), holding credentials."""
    home = Path(tempfile.mkdtemp(prefix="moot-home-", dir="/var/tmp"))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-CONTENT\n")
    (home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=NPM-TOKEN-CONTENT\n")
    (home / "notes.txt").write_text("ordinary\n")
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home)


async def test_the_home_shows_only_its_toolchains_read_only(
    fake_home: Path, workspace: Path
) -> None:
    """An ordinary file is hidden as well as a credential (no list of them is complete); a
    toolchain `home.PASSES` names comes through, read-only, and what a command writes in its
    home stays out of the host's."""
    require(BACKENDS["bubblewrap"])
    (fake_home / ".cargo" / "bin").mkdir(parents=True)
    (fake_home / ".cargo" / "bin" / "tool").write_text("tool\n")
    (fake_home / ".cargo" / "credentials.toml").write_text('token = "CARGO-TOKEN"\n')
    keys = fake_home / "moot-keys.json"
    keys.write_text('{"anthropic": "MOOT-SAVED-KEY"}\n')
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace), keys_file=keys)
    try:
        code, out, _ = await run(
            sandbox,
            "cat ~/notes.txt ~/.cargo/bin/tool; ls -A ~/.cargo; ls -A ~/.ssh;"
            f" cat ~/.npmrc ~/.cargo/credentials.toml {keys} ~/.ssh/* 2>/dev/null;"
            " echo changed > ~/.cargo/bin/tool; echo scratch > ~/scratch && cat ~/scratch; true",
        )
    finally:
        await sandbox.close()

    assert code == 0
    assert out == "tool\nbin\nscratch\n"
    assert (fake_home / ".cargo" / "bin" / "tool").read_text() == "tool\n"
    assert not (fake_home / "scratch").exists()


async def test_commands_get_the_git_identity_and_nothing_else_of_the_git_config(
    fake_home: Path, workspace: Path
) -> None:
    """A `~/.gitconfig` can hold tokens; commands get their own with who commits."""
    require(BACKENDS["bubblewrap"])
    (fake_home / ".gitconfig").write_text(
        '[user]\n\tname = "Ada \\"L\\""\n\temail = ada@example.com\n'
        '[http]\n\textraHeader = "Authorization: Bearer GIT-HEADER-TOKEN"\n'
        '[url "https://GIT-URL-TOKEN@github.com/"]\n\tinsteadOf = https://github.com/\n'
    )
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace))
    try:
        code, out, err = await run(sandbox, "git config --global --list; cat ~/.gitconfig")
        # Each command's own copy, gone with its home (`gh auth setup-git` writes there).
        changed = await run(sandbox, "git config --global user.name Eve && stat -c %a ~/.gitconfig")
        _, after, _ = await run(sandbox, "git config --global user.name")
    finally:
        await sandbox.close()

    assert code == 0, err
    assert 'user.name=Ada "L"\nuser.email=ada@example.com\n' in out
    assert "TOKEN" not in out
    assert changed[:2] == (0, "644\n"), changed
    assert after == 'Ada "L"\n'
    assert "Eve" not in (fake_home / ".gitconfig").read_text()


async def test_a_symlinked_credential_directory_is_hidden_where_it_leads(
    fake_home: Path, workspace: Path, var_tmp: Path
) -> None:
    """Dotfiles managers (stow, chezmoi) make `~/.aws` a link into a repository of them."""
    require(BACKENDS["bubblewrap"])
    (var_tmp / "dotfiles" / "aws").mkdir(parents=True)
    (var_tmp / "dotfiles" / "aws" / "credentials").write_text("aws_secret=AWS-SECRET\n")
    os.symlink(var_tmp / "dotfiles" / "aws", fake_home / ".aws")
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace))
    try:
        code, out, _ = await run(
            sandbox, f"cat ~/.aws/credentials {var_tmp}/dotfiles/aws/credentials; true"
        )
    finally:
        await sandbox.close()

    assert (code, out) == (0, "")


async def test_a_denied_link_to_a_file_outside_masks_the_file(
    workspace: Path, tmp_path: Path
) -> None:
    """The file tools refuse the link by its name; bubblewrap shows the host, so the target
    outside the workspace is masked (Docker mounts only the workspace: the link dangles)."""
    require(BACKENDS["bubblewrap"])
    elsewhere = Path(tempfile.mkdtemp(prefix="moot-outside-", dir="/var/tmp"))
    try:
        (elsewhere / "prod.env").write_text("TOKEN=prod-secret\n")
        os.symlink(elsewhere / "prod.env", workspace / ".env")
        rules = RuleSet(deny=["Read(.env)"])
        sandbox = BubblewrapSandbox(SandboxPolicy(workspace, masks=mask_source(rules, workspace)))
        try:
            code, out, _ = await run(sandbox, f"cat .env {elsewhere}/prod.env; echo end")
            empty_dir = sandbox.empty_file.parent
        finally:
            await sandbox.close()
    finally:
        shutil.rmtree(elsewhere)

    assert (code, out) == (0, "end\n")
    assert not empty_dir.exists(), "close() removes the empty file"
    assert sorted(os.listdir(workspace)) == [".env", ".moot"], "no mount points added"


@pytest.mark.skipif(not os.path.exists("/run/docker.sock"), reason="no Docker socket to hide")
async def test_the_docker_socket_is_out_of_reach(sandbox: BubblewrapSandbox) -> None:

    code, out, _ = await run(
        sandbox,
        "for s in /run/docker.sock /var/run/docker.sock; do [ -e $s ] && echo $s; done; true",
    )

    assert (code, out) == (0, "")


async def test_network_allowed_reaches_the_hosts_loopback(workspace: Path) -> None:
    require(BACKENDS["bubblewrap"])
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace, network=True))
    try:
        port = server.getsockname()[1]
        code, out, err = await run(sandbox, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
    finally:
        await sandbox.close()
        server.close()

    assert (code, out) == (0, "connected\n"), err


async def test_a_guarded_directory_swapped_for_a_link_as_the_sandbox_starts_binds_nothing_outside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A background command may swap a guarded directory for a link to outside the workspace
    after the arguments are made, before bwrap mounts: bound by path, the link's target would
    be bound writable. Bound from the descriptor opened before, bwrap refuses to start; the
    next start (`host.SETUP_TRIES`) works everything out again, the link left unbound."""
    require(BACKENDS["bubblewrap"])
    # Not under /tmp: the sandbox has a private one, in which the link would lead nowhere.
    base = Path(tempfile.mkdtemp(prefix="moot-swap-", dir="/var/tmp"))
    workspace, outside = base / "ws", base / "outside"
    (workspace / "x").mkdir(parents=True)
    (workspace / "x" / ".env").write_text("TOKEN=x\n")
    outside.mkdir()
    (outside / ".env").touch()  # so that the mask over x/.env lands somewhere
    sandbox = BubblewrapSandbox(
        SandboxPolicy(workspace, masks=mask_source(RuleSet(deny=["Read(.env)"]), workspace))
    )
    made, starts = bwrap_args, []

    def then_swapped(*args: Any, **kwargs: Any) -> list[str]:
        made_args = made(*args, **kwargs)
        starts.append(made_args)
        if len(starts) == 1:
            os.rename(workspace / "x", workspace / "x.real")
            os.symlink("../outside", workspace / "x")
        return made_args

    monkeypatch.setattr(bubblewrap, "bwrap_args", then_swapped)  # where the sandbox finds it
    try:
        if not bind_fd_supported(sandbox.bwrap):
            why = f"{sandbox.bwrap} has no --bind-fd: guards are bound by path (racy)"
            if os.environ.get("CI"):
                pytest.fail(why)
            pytest.skip(why)
        code, _, err = await run(sandbox, f"echo escaped > {outside}/file")
        left = os.listdir(outside)
    finally:
        await sandbox.close()
        shutil.rmtree(base)

    assert len(starts) == 2, "bwrap refused the first start"
    assert code != 0 and "Read-only file system" in err, err
    assert left == [".env"]


async def test_a_command_cancelled_while_its_masks_are_worked_out_leaks_no_descriptor(
    tmp_path: Path,
) -> None:
    require(BACKENDS["bubblewrap"])
    (tmp_path / "conf" / "deep").mkdir(parents=True)
    (tmp_path / "conf" / "deep" / "app.toml").write_text("x")
    started, release = threading.Event(), threading.Event()

    def slow_masks() -> SandboxMasks:
        started.set()
        release.wait(5)
        return SandboxMasks(read_only=("conf/deep/app.toml",))

    sandbox = BubblewrapSandbox(SandboxPolicy(tmp_path, masks=slow_masks))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        started.clear()
        release.clear()
        task = asyncio.create_task(sandbox.run("true", cwd=tmp_path, env={}, timeout=10))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        for _ in range(100):  # the worker thread ends, then the descriptors it opened close
            await asyncio.sleep(0.01)
            if len(os.listdir("/proc/self/fd")) <= before:
                break
    await sandbox.close()
    assert len(os.listdir("/proc/self/fd")) <= before


_REFUSED_CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, number in (("openat2", 437), ("io_uring_setup", 425)):
    failed = libc.syscall(number, -100, b"x", 0, 0) == -1
    print(name, os.strerror(ctypes.get_errno()) if failed else "ran")
"""


async def test_the_kernel_refuses_set_id_bits_as_the_command_asks(
    sandbox: BubblewrapSandbox, workspace: Path
) -> None:
    """Refused, not cleared later: a background command that sets the bit and sleeps would
    otherwise keep a set-id file on the host's disk while it runs. `openat2` (its mode is out
    of a filter's reach) and io_uring (its opens pass no filter) are not there at all."""
    assert sandbox.set_id_filter is not None, "x86-64 and aarch64 have a filter"
    (workspace / "calls.py").write_text(_REFUSED_CALLS)

    code, out, err = await run(
        sandbox,
        f"cp /bin/sh s && chmod 4755 s; stat -c %a s; chmod 755 s && echo plain;"
        f" {sys.executable} calls.py",
    )

    assert (code, out) == (
        0,
        "755\nplain\nopenat2 Function not implemented\nio_uring_setup Function not implemented\n",
    ), err
    assert "Operation not permitted" in err


async def test_without_the_filter_the_bits_are_cleared_after_each_command(
    workspace: Path,
) -> None:
    """Where no filter can be had (a machine whose system calls `seccomp` does not know),
    the sweep clears what a command left, and its result says so."""
    require(BACKENDS["bubblewrap"])
    sandbox = BubblewrapSandbox(SandboxPolicy(workspace), seccomp=False)
    try:
        result = await sandbox.run(
            "cp /bin/sh s && chmod 4755 s && stat -c %a s",
            cwd=workspace,
            env=os.environ,
            timeout=20,
        )
        process = await sandbox.start("cp /bin/sh t && chmod 2755 t", cwd=workspace, env={})
        await until(lambda: process.exit_code is not None)
    finally:
        await sandbox.close()

    assert result.stdout == "4755\n", "not refused: there is no filter"
    assert "moot cleared the set-user-ID/set-group-ID bits of s:" in result.stderr
    assert stat.S_IMODE(os.lstat(workspace / "s").st_mode) == 0o755
    assert stat.S_IMODE(os.lstat(workspace / "t").st_mode) == 0o755


@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="no /etc/shadow here")
async def test_the_hosts_own_secrets_are_hidden(sandbox: BubblewrapSandbox) -> None:
    """Root owns them: a command moot runs as root reads them with no capability at all."""

    code, out, _ = await run(sandbox, "cat /etc/shadow /etc/gshadow 2>/dev/null; true")

    assert (code, out) == (0, "")

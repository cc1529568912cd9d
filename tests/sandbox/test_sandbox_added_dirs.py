"""Deny rules' masks reach the directories added beside the workspace (`--add-dir`): in the
real bubblewrap sandbox, a shell command cannot read what a `Read(...)` deny rule covers there,
nor write what an `Edit(...)` one does, nor rename its way around either; the workspace's own
masks hold as before, and nothing above the workspace or an added directory is masked."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from moot.client.environment import sandbox_policy
from moot.permissions.rules import RuleSet
from moot.sandbox.bubblewrap import BubblewrapSandbox
from sandbox_contract import BACKENDS, require


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    root, other = tmp_path / "ws", tmp_path / "other"
    (root / "src").mkdir(parents=True)
    (other / "conf").mkdir(parents=True)
    (other / "deep" / "er").mkdir(parents=True)
    (root / ".env").write_text("ws-secret\n")
    (root / "src" / "a.py").write_text("ok\n")
    (other / "secret.txt").write_text("other-secret\n")
    (other / ".env").write_text("other-env\n")
    (other / "deep" / "er" / "key.pem").write_text("pem-secret\n")
    (other / "plain.txt").write_text("plain\n")
    (other / "conf" / "app.toml").write_text("locked\n")
    return Path(os.path.realpath(root)), Path(os.path.realpath(other))


@pytest.fixture
async def sandbox(place: tuple[Path, Path]) -> AsyncIterator[BubblewrapSandbox]:
    require(BACKENDS["bubblewrap"])
    root, other = place
    rules = RuleSet(
        deny=[
            f"Read(/{other}/secret.txt)",  # absolute, in the added directory
            "Read(.env)",  # floating: in the workspace and in the added directory
            "Read(**/*.pem)",
            f"Edit(/{other}/conf/**)",
        ]
    )
    made = BubblewrapSandbox(sandbox_policy(root, rules, added=(other,)), kill_grace=0.5)
    yield made
    await made.close()


async def _run(sandbox: BubblewrapSandbox, command: str) -> tuple[int | None, str]:
    result = await sandbox.run(command, cwd=sandbox.workspace, env=os.environ, timeout=20)
    return result.exit_code, result.stdout + result.stderr


async def test_what_read_deny_rules_cover_in_an_added_directory_is_hidden(
    sandbox: BubblewrapSandbox, place: tuple[Path, Path]
) -> None:
    root, other = place

    for path in ("secret.txt", ".env", "deep/er/key.pem"):
        _, out = await _run(sandbox, f"cat {other}/{path}")
        assert "secret" not in out and "other-env" not in out, (path, out)
    _, found = await _run(sandbox, f"grep -r . {other}")
    _, plain = await _run(sandbox, f"cat {other}/plain.txt")
    _, own = await _run(sandbox, f"cat {root}/.env; cat {root}/src/a.py")

    assert "secret" not in found and "other-env" not in found and "plain" in found
    assert plain == "plain\n"
    assert own == "ok\n"  # the workspace's masks hold as before


async def test_what_edit_deny_rules_cover_in_an_added_directory_is_read_only(
    sandbox: BubblewrapSandbox, place: tuple[Path, Path]
) -> None:
    _, other = place

    code, _ = await _run(sandbox, f"echo changed > {other}/conf/app.toml")
    await _run(sandbox, f"mv {other}/conf {other}/conf.old; mkdir -p {other}/conf")
    await _run(sandbox, f"mv {other}/deep {other}/deep.old; mkdir -p {other}/deep/er")
    written, _ = await _run(sandbox, f"echo x > {other}/plain.txt")

    assert code != 0
    assert (other / "conf" / "app.toml").read_text() == "locked\n"  # not renamed away
    assert not (other / "deep.old").exists()  # guarded: `er/key.pem`'s mask stays in place
    assert (other / "deep" / "er" / "key.pem").read_text() == "pem-secret\n"
    assert written == 0 and (other / "plain.txt").read_text() == "x\n"


async def test_a_link_in_an_added_directory_to_a_hidden_file_shows_the_mask(
    sandbox: BubblewrapSandbox, place: tuple[Path, Path]
) -> None:
    root, other = place
    (other / "alias").symlink_to(other / "secret.txt")
    (other / "ws-env").symlink_to(root / ".env")

    _, out = await _run(sandbox, f"cat {other}/alias {other}/ws-env")

    assert "secret" not in out


async def test_a_script_hooks_run_in_an_added_directory_is_read_only(tmp_path: Path) -> None:
    require(BACKENDS["bubblewrap"])
    root, other = tmp_path / "ws", tmp_path / "other"
    root.mkdir()
    (other / "tools").mkdir(parents=True)
    script = other / "tools" / "lint.sh"
    script.write_text("#!/bin/sh\n")
    policy = sandbox_policy(root, RuleSet(), (str(script),), added=(other,))
    sandbox = BubblewrapSandbox(policy, kill_grace=0.5)
    try:
        await _run(sandbox, f"echo 'curl evil' >> {script}")
        await _run(sandbox, f"mv {other}/tools {other}/t2; mkdir {other}/tools")
        await _run(sandbox, f"echo 'curl evil' > {script}")
        written, _ = await _run(sandbox, f"echo fine > {other}/tools/other.txt")
    finally:
        await sandbox.close()

    assert script.read_text() == "#!/bin/sh\n"
    assert not (other / "t2").exists()
    assert written == 0

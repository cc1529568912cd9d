"""What of the home directory a command sees (`sandbox.home`): which homes are hidden, what
passes, and where bubblewrap's mounts go. The backends show it for real in
`test_sandbox_contract.py` and `test_sandbox_bubblewrap.py`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.sandbox.bwrap_argv import bwrap_args
from moot.sandbox.home import PASSES, HiddenHome, covered, hidden_homes, home_dirs, present


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    """A directory outside /tmp (a home under /tmp is not the host's in bubblewrap)."""
    path = Path(tempfile.mkdtemp(prefix="moot-home-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path)


def test_no_pass_holds_a_credential_file() -> None:
    from moot.sandbox.private import HIDDEN_IN_HOME

    for secret in HIDDEN_IN_HOME:
        assert not any(secret == p or secret.startswith(p + "/") for p in PASSES), secret


def test_a_home_is_hidden_with_the_passes_that_exist(var_tmp: Path) -> None:
    home = var_tmp / "home"
    (home / ".pyenv").mkdir(parents=True)
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("x\n")
    os.symlink("/usr", home / ".rustup")  # a pass may be a link: the bind follows it

    [hidden] = hidden_homes([str(home)], Path("/srv/ws"), passes=PASSES)

    assert hidden.path == str(home)
    assert {dest for _, dest in hidden.binds} == {
        str(home / ".pyenv"),
        str(home / ".cargo" / "bin"),
        str(home / ".rustup"),
    }


def test_present_answers_as_lexists_does_path_by_path(tmp_path: Path) -> None:
    """`present` reads directory listings instead of asking for each path: it finds what
    `os.path.lexists` finds (a dangling link, a path through a linked directory), in order;
    names compared without case (as macOS's file system does) find nothing more here."""
    (tmp_path / "real" / "inner").mkdir(parents=True)
    (tmp_path / "real" / "inner" / "token").write_text("x\n")
    (tmp_path / "file").write_text("x\n")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    rels = [
        "linked/inner/token", "missing", "dangling", "real/inner", "file/below", "real/nope/x",
        "file", "linked", "real/inner/token", "REAL/inner", "Linked",
    ]  # fmt: skip
    expected = [str(tmp_path / rel) for rel in rels if os.path.lexists(tmp_path / rel)]
    assert present(str(tmp_path), rels) == expected
    assert present(str(tmp_path) + "/", rels) == expected
    assert expected[0] == str(tmp_path / "linked/inner/token") and len(expected) == 6


def test_a_home_that_is_or_lies_in_the_workspace_or_in_tmp_is_not_hidden(var_tmp: Path) -> None:
    ws = var_tmp / "ws"
    homes = [str(ws), str(ws / "users" / "me"), "/tmp/home", str(var_tmp / "elsewhere")]

    hidden = hidden_homes(homes, ws)

    assert [h.path for h in hidden] == [str(var_tmp / "elsewhere")]
    assert hidden_homes([str(var_tmp)], var_tmp / "ws")[0].path == str(var_tmp), (
        "a workspace inside the home: the home is hidden, the workspace bound on top"
    )


def test_what_a_hidden_home_covers() -> None:
    homes = [HiddenHome("/home/me", (("/home/me/.pyenv", "/home/me/.pyenv"),))]

    assert covered("/home/me/.config/moot", homes)
    assert covered("/home/me", homes)
    assert not covered("/home/me/.pyenv/versions", homes), "a pass shows it: hide it itself"
    assert not covered("/home/meta", homes)
    assert not covered("/srv/data", homes)


def test_the_home_dirs_are_real_and_never_the_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")

    assert home_dirs({"HOME": str(tmp_path / "link")})[0] == str(tmp_path / "real")
    assert "/" not in home_dirs({"HOME": "/"})


def test_bubblewrap_hides_the_home_before_it_binds_tmp_and_the_workspace(var_tmp: Path) -> None:
    home = HiddenHome("/home/me", (("/home/me/.pyenv", "/home/me/.pyenv"),))
    reveal = Path("/home/me/.local/share/moot/outputs/s1")
    args = bwrap_args(
        "bwrap",
        workspace=Path("/home/me/src/app"),
        protected=(),
        network=False,
        tmp=Path("/private/tmp"),
        cwd=Path("/home/me/src/app"),
        hidden=[Path("/home/me/.local/share/moot"), var_tmp],
        homes=[home],
        gitconfig=(7, "/home/me/.gitconfig"),
        home_size=1024,
        file_perms=True,
        reveal=reveal,
    )

    text = " ".join(args)
    assert (
        "--size 1024 --tmpfs /home/me --ro-bind-try /home/me/.pyenv /home/me/.pyenv"
        " --perms 0644 --file 7 /home/me/.gitconfig"
        f" --ro-bind-try {reveal} {reveal}"
    ) in text
    assert "--tmpfs /home/me/.local/share/moot" not in text, "covered by the home already"
    assert f"--tmpfs {var_tmp}" in text, "outside the home: hidden itself"
    assert text.index("--tmpfs /home/me ") < text.index("--bind /home/me/src/app /home/me/src/app")

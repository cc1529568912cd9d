"""The workspace stays off a hook's Python import path (`hooks/python_path.py`): a module the
model wrote there never runs on the host through a hook's `python -m`, `python -c` or a
`PYTHONPATH` entry, and a hook script still finds its own helper modules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from moot.hooks import Hooks, parse_hooks
from moot.hooks.python_path import hook_environment

PLANTED = "import pathlib; pathlib.Path({marker!r}).touch()\n"


async def run_hook(workspace: Path, command: str, **environ: str) -> tuple[int | None, str]:
    config = parse_hooks({"Notification": [{"hooks": [{"type": "command", "command": command}]}]})
    hooks = Hooks(config, workspace, environ={"PATH": "/usr/bin:/bin", **environ})
    outcome = await hooks.run("Notification", {"message": "hi"})
    assert outcome is not None
    (ran,) = outcome.commands
    return ran.exit_code, ran.stdout + ran.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.mark.parametrize("form", ["-m json.tool", "-c 'import json; print(json.dumps({}))'"])
async def test_a_module_the_model_wrote_in_the_workspace_never_runs_through_python_m_or_c(
    workspace: Path, tmp_path: Path, form: str
) -> None:
    marker = tmp_path / "ran-on-the-host"
    (workspace / "json.py").write_text(PLANTED.format(marker=str(marker)))

    code, said = await run_hook(workspace, f"echo '{{}}' | {sys.executable} {form}")

    assert (code, said) == (0, "{}\n")
    assert not marker.exists()


async def test_a_pythonpath_entry_in_the_workspace_is_dropped_and_one_outside_kept(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran-on-the-host"
    (workspace / "lib").mkdir()
    (workspace / "lib" / "helper.py").write_text(PLANTED.format(marker=str(marker)))
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "lib" / "mine.py").write_text("print('mine')\n")
    (outside / "hook.py").write_text(
        "import mine\ntry:\n    import helper\nexcept ImportError:\n    print('no helper')\n"
    )
    pythonpath = f"lib:{workspace}/lib::{outside / 'lib'}"

    code, said = await run_hook(
        workspace, f"{sys.executable} {outside / 'hook.py'}", PYTHONPATH=pythonpath
    )

    assert (code, said) == (0, "mine\nno helper\n")
    assert not marker.exists()


async def test_a_hook_script_still_imports_its_own_helpers(workspace: Path, tmp_path: Path) -> None:
    """Python puts a script's own directory first: `PYTHONSAFEPATH` is not set for it."""
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    (hooks_dir / "helpers.py").write_text("WORD = 'helped'\n")
    (hooks_dir / "fmt.py").write_text("import helpers\nprint(helpers.WORD)\n")

    code, said = await run_hook(workspace, f"{sys.executable} {hooks_dir / 'fmt.py'} -c cfg")

    assert (code, said) == (0, "helped\n")


@pytest.mark.parametrize(
    ("command", "safe"),
    [
        ("python3 -m black .", True),
        ("python -mjson.tool", True),
        ("python3.11 -X dev -c 'print(1)'", True),
        ("python3 -Bc 'print(1)'", True),
        ("uv run python -m pytest -q", True),
        ("sh -c 'cd src && python3 -m ruff check'", True),
        ("/usr/bin/python3 -I -m x", True),
        ("python3 fmt.py -c cfg -m x", False),
        ("python3 -W ignore fmt.py", False),
        ("black --check .", False),
        ("ruff check -c x", False),
        ("echo python; ls -m", False),
    ],
)
def test_which_commands_run_python_from_the_working_directory(command: str, safe: bool) -> None:
    env = hook_environment({"PATH": "/bin"}, "/w", command)

    assert ("PYTHONSAFEPATH" in env) is safe

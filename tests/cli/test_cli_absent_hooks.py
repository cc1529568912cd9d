"""A hooks directory the git config names but that does not exist yet is protected all the
same (issue 28, item 8): with `core.hooksPath=.husky` and no `.husky`, a sandboxed command
made `.husky/pre-commit`, and the person's own `git commit` ran it. Whatever a command makes
there is moved out of the workspace, and the file tools ask before writing there, in every
mode (a run nobody watches refuses). Runs on bubblewrap and on Docker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moot.protocol import events as ev
from sandbox_contract import BACKENDS, DOCKER, require

PLANT = (
    "mkdir -p {dir} && printf '#!/bin/sh\\ntouch {mark}\\n' > {dir}/pre-commit"
    " && chmod +x {dir}/pre-commit"
)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def repository(root: Path, hooks_path: str) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for key, value in (("user.name", "T"), ("user.email", "t@example.invalid")):
        git(root, "config", key, value)
    git(root, "config", "core.hooksPath", hooks_path)
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")


def run_moot(work: Path, script: str, *flags: str, backend: str) -> list[ev.Event]:
    script_file = work.parent / "s.yaml"
    script_file.write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | {"MOOT_SANDBOX": backend}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{script_file}",
         "--output-format", "events", *flags],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    return [ev.event_from_json(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("backend", ["bubblewrap", "docker"])
@pytest.mark.parametrize(
    ("hooks_path", "made"),
    [(".husky", ".husky"), (".husky/_", ".husky/_"), ("tools/git/hooks", "tools/git/hooks")],
)
def test_a_command_cannot_plant_a_hook_where_the_config_names_a_missing_hooks_directory(
    tmp_path: Path, backend: str, hooks_path: str, made: str
) -> None:
    require(DOCKER if backend == "docker" else BACKENDS[backend])
    work = tmp_path / "work"
    repository(work, hooks_path)
    (work / "tools").mkdir()  # an existing directory on the way: the rest is missing
    mark = tmp_path / "hook-ran"
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    # In scripts: a command line naming `.husky/...` is refused before it runs (a protected
    # path); what a program writes by itself is the sandbox's to stop.
    plant = PLANT.format(dir=made, mark=mark)
    link = f"mkdir -p $(dirname {hooks_path}) && ln -s {linked} {hooks_path}"
    script = (
        "turns:\n"
        "  - tool_calls:\n"
        f"      - {{name: write, arguments: {{path: plant.sh, content: {json.dumps(plant)}}}}}\n"
        f"      - {{name: write, arguments: {{path: link.sh, content: {json.dumps(link)}}}}}\n"
        '  - tool_calls: [{name: bash, arguments: {command: "sh plant.sh"}}]\n'
        '  - tool_calls: [{name: bash, arguments: {command: "sh link.sh"}}]\n'
        f"  - tool_calls: [{{name: write, arguments: {{path: {made}/commit-msg, content: x}}}}]\n"
        "  - text: done\n"
    )

    events = run_moot(work, script, "--permission-mode", "bypassPermissions", backend=backend)

    results = [e for e in events if isinstance(e, ev.ToolFinished)]
    _, _, planted, symlinked = results
    for result in (planted, symlinked):
        assert result.is_error and "which no command may make" in result.content, result.content
    (refused,) = [e for e in events if isinstance(e, ev.ApprovalDecided) and not e.approved]
    assert "protected path" in refused.feedback and "person's approval" in refused.feedback
    assert not os.path.lexists(work / hooks_path), "nothing stands where git looks for hooks"
    (work / "a.txt").write_text("b\n")
    git(work, "commit", "-qam", "the person's own commit")  # runs hooks from core.hooksPath
    assert not mark.exists(), "the planted hook ran"
    assert os.listdir(linked) == []

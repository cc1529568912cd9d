"""The `lint` and `test` tools' parts: which runners a project's files name, how the runners'
outputs are read, and a call whose command changed since it was decided.

Runners not installed here (go, eslint, jest) are read from output in their documented formats;
ruff, pytest, node's test runner, vitest, cargo and make run for real in
`tests/cli/test_cli_verify.py`.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.host import HostSandbox
from moot.tools import verify_parse as parse
from moot.tools.base import OUTSIDE_A_RUN, ToolContext
from moot.tools.test import run_tests_tool
from moot.tools.verify_find import find_runners
from moot.tools.verify_results import Counts, FailedTest, Report, render
from moot.workspace import Workspace


def programs(tmp_path: Path, *names: str) -> dict[str, str]:
    """A PATH holding stand-in programs of these names (the finder only looks them up)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        program = bin_dir / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}


def test_pyproject_names_ruff_and_pytest_and_the_workspaces_venv_is_used_first(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "pytest").write_text("")
    env = programs(tmp_path, "ruff")
    [ruff] = find_runners(tmp_path, "lint", env=env)
    assert (ruff.name, ruff.program) == ("ruff", "ruff")
    assert ruff.line("src") == "ruff check --output-format json --output-file {report} src"
    [pytest_] = find_runners(tmp_path, "test", env=env)
    assert pytest_.program == ".venv/bin/pytest"
    assert pytest_.line("tests/test_a.py", "adds and not slow") == (
        ".venv/bin/pytest -q -o junit_family=xunit1 --junitxml={report} tests/test_a.py"
        " -k 'adds and not slow'"
    )


def test_package_json_names_eslint_and_jest(tmp_path: Path) -> None:
    package = {"scripts": {"test": "jest"}, "devDependencies": {"eslint": "9", "jest": "30"}}
    (tmp_path / "package.json").write_text(json.dumps(package))
    local = tmp_path / "node_modules" / ".bin"
    local.mkdir(parents=True)
    for name in ("eslint", "jest"):
        (local / name).write_text("")
    env = programs(tmp_path)
    assert [r.name for r in find_runners(tmp_path, "lint", env=env)] == ["eslint"]
    [jest] = find_runners(tmp_path, "test", env=env)
    assert jest.line(None, "adds") == (
        "node_modules/.bin/jest --json --outputFile={report} -t adds"
    )


def test_go_mod_cargo_toml_and_a_makefile_name_their_runners(tmp_path: Path) -> None:
    env = programs(tmp_path, "go", "cargo", "make")
    (tmp_path / "go.mod").write_text("module example.com/sums\n")
    [go] = find_runners(tmp_path, "test", env=env)
    assert go.line("pkg/add", "TestAdd") == "go test -json -run TestAdd ./pkg/add"
    (tmp_path / "go.mod").unlink()
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    assert [r.name for r in find_runners(tmp_path, "lint", env=env)] == ["cargo clippy"]
    (tmp_path / "Cargo.toml").unlink()
    (tmp_path / "Makefile").write_text("lint:\n\tflake8\ntest: build\n\t./run-tests\n")
    assert [r.line() for r in find_runners(tmp_path, "test", env=env)] == ["make test"]
    assert [r.line() for r in find_runners(tmp_path, "lint", env=env)] == ["make lint"]


def test_settings_commands_come_before_the_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    [runner] = find_runners(tmp_path, "test", ["scripts/test --fast"], env=programs(tmp_path))
    assert runner.line("tests/a") == "scripts/test --fast tests/a"


GO_JSON = "\n".join(
    json.dumps(event)
    for event in [
        {"Action": "run", "Package": "example.com/sums/add", "Test": "TestAdds"},
        {"Action": "pass", "Package": "example.com/sums/add", "Test": "TestAdds"},
        {"Action": "run", "Package": "example.com/sums/add", "Test": "TestBreaks"},
        {"Action": "output", "Package": "example.com/sums/add", "Test": "TestBreaks",
         "Output": "    add_test.go:12: got 4, want 5\n"},
        {"Action": "fail", "Package": "example.com/sums/add", "Test": "TestBreaks"},
        {"Action": "fail", "Package": "example.com/sums/add"},
    ]
)  # fmt: skip


def test_go_test_json_names_the_failing_test_in_its_packages_directory(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/sums\n")
    [go] = find_runners(tmp_path, "test", env=programs(tmp_path, "go"))
    counts, [failed] = parse.go_test_json(GO_JSON, tmp_path, go.rerun) or (None, [])
    assert counts == Counts(passed=1, failed=1)
    assert (failed.name, failed.where) == ("example.com/sums/add.TestBreaks", "add/add_test.go:12")
    assert "got 4, want 5" in failed.message
    assert failed.rerun == "go test -run '^TestBreaks$' ./add"


def test_eslint_json_gives_findings_with_their_rule_and_severity(tmp_path: Path) -> None:
    output = json.dumps([
        {"filePath": str(tmp_path / "src" / "a.js"), "messages": [
            {"ruleId": "no-unused-vars", "severity": 2, "message": "'x' is unused",
             "line": 3, "column": 7},
            {"ruleId": "eqeqeq", "severity": 1, "message": "Expected '==='", "line": 9,
             "column": 5},
        ]},
        {"filePath": str(tmp_path / "src" / "b.js"), "messages": []},
    ])  # fmt: skip
    findings = parse.eslint_json(output, tmp_path) or []
    assert [(f.path, f.line, f.column, f.code, f.severity) for f in findings] == [
        ("src/a.js", 3, 7, "no-unused-vars", "error"),
        ("src/a.js", 9, 5, "eqeqeq", "warning"),
    ]


def test_jest_json_names_the_failing_test_with_its_place(tmp_path: Path) -> None:
    output = json.dumps({
        "numPassedTests": 1, "numFailedTests": 1, "numPendingTests": 0,
        "testResults": [{"name": str(tmp_path / "sum.test.js"), "status": "failed",
                         "assertionResults": [
            {"fullName": "sums adds", "status": "passed", "failureMessages": []},
            {"fullName": "sums breaks", "status": "failed", "failureMessages": [
                f"Error: expect(received).toBe(expected)\n    at Object.<anonymous> "
                f"({tmp_path}/sum.test.js:8:17)\n    at node_modules/jest-circus/x.js:1:1"]},
        ]}],
    })  # fmt: skip
    counts, [failed] = parse.jest_json(output, tmp_path, lambda t: "") or (None, [])
    assert counts == Counts(passed=1, failed=1)
    assert (failed.name, failed.where) == ("sums breaks", "sum.test.js:8")
    assert "node_modules" not in failed.message


def test_pytests_own_summary_is_read_when_moot_did_not_choose_the_flags(tmp_path: Path) -> None:
    output = (
        "tests/test_a.py:4: AssertionError\n"
        "=========================== short test summary info ===========================\n"
        "FAILED tests/test_a.py::test_b - AssertionError: two and two\n"
        "========================= 1 failed, 3 passed in 0.05s =========================\n"
    )
    counts, [failed] = parse.pytest_text(output, tmp_path, lambda t: "") or (None, [])
    assert counts == Counts(passed=3, failed=1)
    assert (failed.name, failed.where) == ("tests/test_a.py::test_b", "tests/test_a.py:4")
    assert failed.message == "AssertionError: two and two"


def test_a_long_run_lists_the_first_failures_and_counts_the_rest() -> None:
    failures = tuple(FailedTest(f"t{i}", "failed", "boom") for i in range(40))
    report = Report("pytest", "pytest", 1, counts=Counts(failed=40), failures=failures)
    text = render("test", [report])
    assert "FAILED t29" in text and "FAILED t30" not in text
    assert "... and 10 more failing tests" in text


async def test_a_call_whose_command_changed_since_it_was_decided_runs_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "Makefile").write_text("test:\n\ttouch ran-make\n")
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=dict(os.environ))
    assert tool.decided_as({}) == ("bash", tool.side_effect, {"command": "make test"})
    (tmp_path / "conftest.py").write_text("")  # now pytest is the project's runner
    result = await tool.invoke({}, OUTSIDE_A_RUN)
    await sandbox.close()
    assert result.is_error and "changed since the call was approved" in result.content
    assert "it was `make test`" in result.content
    assert not (tmp_path / "ran-make").exists()


async def test_a_models_call_with_no_decision_in_this_process_runs_nothing(
    tmp_path: Path,
) -> None:
    """A run resumed after `kill -9` between a call's decision and its run: the decision is
    gone with the old process, and what the files say now was never put to the rules."""
    (tmp_path / "Makefile").write_text("test:\n\ttouch ran-make\n")
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=dict(os.environ))
    in_a_run = ToolContext(
        session_id="ses_1", run_id="run_1", call_id="call_1", agent="moot", tool_call_id="tc_1"
    )
    result = await tool.invoke({}, in_a_run)
    await sandbox.close()
    assert result.is_error and "decided before moot restarted" in result.content
    assert not (tmp_path / "ran-make").exists()


@pytest.mark.parametrize("kind", ["lint", "test"])
def test_a_project_with_nothing_to_run_is_decided_as_a_call_that_only_reads(
    tmp_path: Path, kind: str
) -> None:
    from moot.tools.lint import lint_tool

    make = lint_tool if kind == "lint" else run_tests_tool
    tool = make(HostSandbox(SandboxPolicy(tmp_path)), Workspace(tmp_path), env={"PATH": ""})
    name, side_effect, _ = tool.decided_as({})
    assert (name, side_effect.value) == (kind, "read_only")


async def test_a_path_that_reads_as_an_option_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n")
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=dict(os.environ))
    from moot.tools.base import decided_as

    # decided as itself (a call that runs commands: it asks), never as a command line
    assert decided_as(tool, "test", {"path": "--fix"})[:2] == ("test", tool.side_effect)
    result = await tool.invoke({"path": "--fix"}, OUTSIDE_A_RUN)
    await sandbox.close()
    assert result.is_error and "would be read as an option" in result.content


def test_agents_md_names_the_command_when_no_file_says_one(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(
        "# Working here\n\nRun `scripts/test` before every commit; `scripts/lint --fix` tidies.\n"
        "Never run `rm -rf build` by hand.\n"
    )
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test").write_text("#!/bin/sh\n")
    env = programs(tmp_path)
    [runner] = find_runners(tmp_path, "test", env=env)
    assert (runner.name, runner.line("tests/a")) == ("AGENTS.md", "scripts/test tests/a")
    assert find_runners(tmp_path, "lint", env=env) == []  # scripts/lint is not there


def test_a_bare_bash_deny_takes_lint_and_test_away_with_bash() -> None:
    from moot.permissions.rules import RuleSet, tool_hidden

    denied = RuleSet(deny=["Bash"])
    assert all(tool_hidden(name, denied) for name in ("bash", "lint", "test"))
    assert not tool_hidden("test", RuleSet(deny=["Bash(rm:*)"]))
    assert tool_hidden("test", RuleSet(deny=["test"]))


async def test_a_runner_that_cannot_start_says_it_wrote_no_report(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "pytest").write_text("#!/bin/sh\necho 'pytest: broken install' >&2\nexit 4\n")
    (venv / "pytest").chmod(0o755)
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=dict(os.environ))
    result = await tool.invoke({}, OUTSIDE_A_RUN)
    await sandbox.close()
    assert "pytest: exit 4" in result.content
    assert "pytest: broken install" in result.content
    assert "ended without writing its report" in result.content


async def test_what_runs_is_the_line_checked_not_the_files_read_again(tmp_path: Path) -> None:
    """A command in the sandbox may rewrite the project's files between the check that the
    line is the one decided and the run: the run takes the checked lines."""
    (tmp_path / "Makefile").write_text("test:\n\ttouch ran-make\n")
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=dict(os.environ))
    verifier = tool.verifier  # type: ignore[attr-defined]
    assert tool.decided_as({})[2] == {"command": "make test"}
    assert verifier.refusal({}) == ""
    (tmp_path / "conftest.py").write_text("open('ran-pytest', 'w')\n")  # pytest's now
    await verifier.run({}, 60)
    await sandbox.close()
    assert (tmp_path / "ran-make").exists() and not (tmp_path / "ran-pytest").exists()


async def test_a_filter_that_reads_as_an_option_is_refused(tmp_path: Path) -> None:
    """`cargo test FILTER` takes the filter as a word of its own: `--config=build.rustc=...`
    would be cargo's option, not a test name."""
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    sandbox = HostSandbox(SandboxPolicy(tmp_path))
    tool = run_tests_tool(sandbox, Workspace(tmp_path), env=programs(tmp_path, "cargo"))
    from moot.tools.base import decided_as

    arguments = {"filter": "--config=build.rustc-wrapper='./x.sh'"}
    assert decided_as(tool, "test", arguments)[:2] == ("test", tool.side_effect)
    result = await tool.invoke(arguments, OUTSIDE_A_RUN)
    await sandbox.close()
    assert result.is_error and "would be read as an option" in result.content

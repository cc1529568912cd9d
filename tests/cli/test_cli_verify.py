"""`lint` and `test` in a real session: `moot -p` with a scripted model, real runners (ruff,
pytest, node's test runner, make) in the real sandbox, and the permission gate they pass as
the `bash` command they run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from moot.protocol import events as ev
from trusted import trust_settings

CALC = "import os\n\n\ndef add(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add\n\n\n"
    "def test_adds():\n    assert add(1, 2) == 3\n\n\n"
    'def test_breaks():\n    assert add(2, 2) == 5, "two and two"\n'
)
PYPROJECT = '[tool.ruff]\nline-length = 100\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'


def need(program: str) -> None:
    if shutil.which(program, path=_path()) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{program} is not installed (.ci/run installs it)")
        pytest.skip(f"{program} is not installed")


def _path() -> str:
    return f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


def moot(
    tmp_path: Path, work: Path, calls: list[dict[str, object]], *flags: str
) -> tuple[subprocess.CompletedProcess[str], list[ev.Event]]:
    turns = [{"tool_calls": [call]} for call in calls] + [{"text": "done"}]
    (tmp_path / "s.json").write_text(json.dumps({"turns": turns}))
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | {"PATH": _path()}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "check the project", "--model",
         f"scripted:{tmp_path / 's.json'}", "--output-format", "events", *flags],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    events = [ev.event_from_json(line) for line in done.stdout.splitlines() if line.strip()]
    return done, events


def results(events: list[ev.Event]) -> list[ev.ToolFinished]:
    return [e for e in events if isinstance(e, ev.ToolFinished)]


def python_project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "pyproject.toml").write_text(PYPROJECT)
    (work / "calc.py").write_text(CALC)
    (work / "tests" / "test_calc.py").write_text(TESTS)
    return work


def test_a_test_run_names_the_failing_test_with_its_message_place_and_rerun(
    tmp_path: Path,
) -> None:
    need("pytest")
    work = python_project(tmp_path)
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--allowedTools", "Bash(pytest:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert not result.is_error, result.content
    assert "1 passed, 1 failed" in result.content
    assert "FAILED tests/test_calc.py::test_breaks at tests/test_calc.py:9" in result.content
    assert "AssertionError: two and two" in result.content
    assert "rerun: pytest tests/test_calc.py::test_breaks" in result.content
    assert "test_adds" not in result.content  # only what failed is listed
    [report] = result.display["reports"]
    assert report["counts"] == {"passed": 1, "failed": 1, "errors": 0, "skipped": 0}


def test_a_test_run_is_decided_as_the_command_it_runs(tmp_path: Path) -> None:
    need("pytest")
    work = python_project(tmp_path)
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}])
    assert done.returncode == 3, done.stderr  # refused: nobody to ask in a headless run
    assert not [e for e in events if isinstance(e, ev.ToolFinished) and not e.is_error]
    assert "Bash(pytest:*)" in done.stderr  # the rule that would let it run, as for bash
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--disallowedTools", "Bash(pytest:*)", "--permission-mode",
                        "bypassPermissions")  # fmt: skip
    [refused] = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert not refused.approved and "denied by Bash(pytest:*)" in refused.feedback
    assert not results(events)


def test_a_lint_run_reports_a_ruff_error_where_it_is(tmp_path: Path) -> None:
    need("ruff")
    work = python_project(tmp_path)
    done, events = moot(tmp_path, work, [{"name": "lint", "arguments": {"path": "calc.py"}}],
                        "--allowedTools", "Bash(ruff:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "calc.py:1:8: F401 `os` imported but unused" in result.content
    assert "ruff check --output-format json" in result.content


def test_node_tests_are_read_from_their_junit_report(tmp_path: Path) -> None:
    need("node")
    work = tmp_path / "work"
    (work / "test").mkdir(parents=True)
    (work / "package.json").write_text('{"name": "n", "scripts": {"test": "node --test"}}')
    (work / "test" / "sum.test.js").write_text(
        'const test = require("node:test");\nconst assert = require("node:assert");\n'
        'test("adds", () => { assert.strictEqual(1 + 1, 2); });\n'
        'test("breaks", () => {\n  assert.strictEqual(1 + 1, 3);\n});\n'
    )
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--allowedTools", "Bash(node:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "1 passed, 1 failed" in result.content
    assert "FAILED breaks at test/sum.test.js:5" in result.content
    assert "2 !== 3" in result.content
    assert "node --test --test-name-pattern='^breaks$' test/sum.test.js" in result.content


def test_a_runner_moot_cannot_read_gives_its_raw_output_with_a_note(tmp_path: Path) -> None:
    need("make")
    work = tmp_path / "work"
    work.mkdir()
    (work / "Makefile").write_text(
        "test:\n\t@echo 'checking things'\n\t@echo 'it went wrong'\n\t@exit 2\n"
    )
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--allowedTools", "Bash(make:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "$ make test" in result.content
    assert "exit 2" in result.content
    assert "checking things\nit went wrong" in result.content
    assert "moot could not read this runner's output" in result.content


def test_a_repositorys_verify_command_never_runs_before_the_person_approves_it(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    hostile = {"verify": {"test": ["touch pwned-by-the-repository"]}}
    (work / ".moot" / "settings.json").write_text(json.dumps(hostile))
    calls = [{"name": "test", "arguments": {}}]
    done, events = moot(tmp_path, work, calls, "--permission-mode", "bypassPermissions")
    assert not (work / "pwned-by-the-repository").exists()
    assert "lint and test commands: test: touch pwned-by-the-repository" in done.stderr
    [result] = results(events)
    assert result.is_error and "No test command found" in result.content
    trust_settings(work)  # the person approves the file: now its command is the project's
    done, events = moot(tmp_path, work, calls, "--permission-mode", "bypassPermissions")
    assert (work / "pwned-by-the-repository").exists(), done.stderr
    [result] = results(events)
    assert "$ touch pwned-by-the-repository" in result.content


def test_cargo_tests_are_read_from_cargos_own_output(tmp_path: Path) -> None:
    need("cargo")
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "Cargo.toml").write_text(
        '[package]\nname = "sums"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (work / "src" / "lib.rs").write_text(
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n"
        "    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n"
        '    #[test]\n    fn breaks() {\n        assert_eq!(add(2, 2), 5, "two and two");\n'
        "    }\n}\n"
    )
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--allowedTools", "Bash(cargo:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "1 passed, 1 failed" in result.content, result.content
    assert "FAILED tests::breaks at src/lib.rs:10" in result.content
    assert "two and two" in result.content
    assert "rerun: cargo test tests::breaks -- --exact" in result.content


def node_modules(work: Path, program: str) -> None:
    """Link the node_modules `.ci/run` installed (`MOOT_VERIFY_NPM`) into `work`."""
    modules = os.environ.get("MOOT_VERIFY_NPM", "")
    if not (Path(modules) / ".bin" / program).is_file():
        why = f"MOOT_VERIFY_NPM (a node_modules holding {program}) is not set up (.ci/run)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    work.mkdir()
    (work / "node_modules").symlink_to(modules)


def test_vitest_results_are_read_from_its_json_report(tmp_path: Path) -> None:
    work = tmp_path / "work"
    node_modules(work, "vitest")
    (work / "package.json").write_text(
        '{"name": "v", "type": "module", "scripts": {"test": "vitest run"}}'
    )
    (work / "sum.test.js").write_text(
        'import { test, expect } from "vitest";\n\n'
        'test("adds", () => {\n  expect(1 + 1).toBe(2);\n});\n\n'
        'test("breaks", () => {\n  expect(1 + 1).toBe(3);\n});\n'
    )
    done, events = moot(tmp_path, work, [{"name": "test", "arguments": {}}],
                        "--allowedTools", "Bash(node_modules/.bin/vitest:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "1 passed, 1 failed" in result.content, result.content
    assert "FAILED breaks at sum.test.js:8" in result.content
    assert "expected 2 to be 3" in result.content
    assert "node_modules/vitest" not in result.content  # library frames left out
    assert "rerun: node_modules/.bin/vitest run sum.test.js -t breaks" in result.content


async def test_the_persons_test_runs_in_the_sessions_sandbox_and_a_deny_rule_holds_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.client.local import SessionOptions, open_client
    from moot.commands.answers import run_tool
    from moot.commands.registry import CommandError

    need("make")
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / "Makefile").write_text("test:\n\t@echo 'all good'\n")
    (tmp_path / "s.json").write_text(json.dumps({"turns": [{"text": "hi"}]}))
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    model = f"scripted:{tmp_path / 's.json'}"
    client = open_client(SessionOptions(cwd=work, model=model))  # type: ignore[arg-type]
    ran = await run_tool(client, "test", {"path": None, "filter": None})
    assert "$ make test" in ran.content and "all good" in ran.content
    await client.close()
    (work / ".moot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(make:*)"]}})
    )
    client = open_client(SessionOptions(cwd=work, model=model))  # type: ignore[arg-type]
    with pytest.raises(CommandError, match=r"denied by Bash\(make:\*\)"):
        await run_tool(client, "test", {"path": None, "filter": None})
    await client.close()


def test_eslint_findings_are_read_from_its_json_report(tmp_path: Path) -> None:
    work = tmp_path / "work"
    node_modules(work, "eslint")
    (work / "package.json").write_text('{"name": "e", "type": "module"}')
    (work / "eslint.config.js").write_text(
        'export default [{ rules: { "no-unused-vars": "error", eqeqeq: "warn" } }];\n'
    )
    (work / "same.js").write_text(
        "const unused = 1;\nexport function same(a, b) {\n  return a == b;\n}\n"
    )
    done, events = moot(tmp_path, work, [{"name": "lint", "arguments": {}}],
                        "--allowedTools", "Bash(node_modules/.bin/eslint:*)")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results(events)
    assert "eslint: exit 1; 2 findings" in result.content, result.content
    assert "same.js:1:7: no-unused-vars 'unused' is assigned a value" in result.content
    assert "same.js:3:12: eqeqeq Expected '===' and instead saw '=='. [warning]" in result.content


def test_two_test_calls_of_one_turn_each_run_only_the_command_it_was_decided_as(
    tmp_path: Path,
) -> None:
    """One turn: `test`, `write` a Makefile with a `test` target, `test` again, in acceptEdits
    (commands ask; headless, they are refused). Every call of a turn is decided before any
    runs, so both `test` calls were decided with nothing to run; the write then runs (an edit).
    Before, the two calls' decisions were kept by their arguments alone, the first run took
    that record, and the second, finding none, ran `make test` unasked."""
    need("make")
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    makefile = "test:\n\ttouch ran-unasked\n"
    turn = [
        {"name": "test", "arguments": {}},
        {"name": "write", "arguments": {"path": "Makefile", "content": makefile}},
        {"name": "test", "arguments": {}},
    ]
    (tmp_path / "s.json").write_text(json.dumps({"turns": [{"tool_calls": turn}, {"text": "ok"}]}))
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | {"PATH": _path()}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{tmp_path / 's.json'}",
         "--output-format", "events", "--permission-mode", "acceptEdits"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    events = [ev.event_from_json(line) for line in done.stdout.splitlines() if line.strip()]
    assert (work / "Makefile").read_text() == makefile  # the edit ran
    assert not (work / "ran-unasked").exists()
    first, _, second = results(events)
    assert "No test command found" in first.content
    assert second.is_error and "changed since the call was approved" in second.content

"""Reading runners' structured output into findings and failing tests (`verify_results`).

Each parser takes the runner's output (stdout, or the report the run printed after
`REPORT_MARK`) and the workspace root (paths are shown relative to it), and returns the
findings, or the counts and failing tests, or None when the output is not what it expects;
the caller then keeps the raw output with a note. Formats: ruff and eslint JSON, JUnit XML
(pytest, node's test runner, and any runner that writes it), jest and vitest JSON, `go test
-json`, cargo test's text, and `path:line:col: message` lines (mypy, go vet, tsc, clippy).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moot.tools.verify_results import Counts, FailedTest, Finding

Rerun = Callable[[FailedTest], str]
"""The command line that runs one failing test alone (per runner)."""
TestsRead = tuple[Counts, list[FailedTest]]

_LOCATION = re.compile(r"(?P<path>[\w./@+-][^\s:()'\"]*\.\w+):(?P<line>\d+)(?::(?P<col>\d+))?")
_LINE_FINDING = re.compile(
    r"^(?P<path>[^\s:][^:\n]*\.\w+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?:(?P<sev>error|warning|note|info)\s*:?\s*)?(?P<msg>.+)$",
    re.MULTILINE,
)


def relative(path: str, root: Path) -> str:
    """`path` relative to the workspace root when inside it (runners print absolute paths)."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _json(text: str) -> Any:
    """The JSON value in `text`, skipping anything a runner printed before it; None if none."""
    text = text.strip()
    for start in (0, *(m.start() for m in re.finditer(r"^[\[{]", text, re.MULTILINE))):
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    return None


def ruff_json(text: str, root: Path) -> list[Finding] | None:
    """`ruff check --output-format json`."""
    data = _json(text)
    if not isinstance(data, list):
        return None
    findings = []
    for item in data:
        location = item.get("location") or {}
        findings.append(
            Finding(
                relative(str(item.get("filename", "")), root),
                int(location.get("row") or 0),
                int(location.get("column") or 0),
                str(item.get("code") or ""),
                str(item.get("message", "")),
                "error",
            )
        )
    return findings


def eslint_json(text: str, root: Path) -> list[Finding] | None:
    """`eslint -f json`: a list of files, each with its messages."""
    data = _json(text)
    if not isinstance(data, list):
        return None
    findings = []
    for file in data:
        path = relative(str(file.get("filePath", "")), root)
        for message in file.get("messages") or ():
            findings.append(
                Finding(
                    path,
                    int(message.get("line") or 0),
                    int(message.get("column") or 0),
                    str(message.get("ruleId") or ""),
                    str(message.get("message", "")),
                    "error" if message.get("severity") == 2 else "warning",
                )
            )
    return findings


def line_findings(text: str, root: Path) -> list[Finding] | None:
    """`path:line[:col]: [severity:] message` lines (mypy, go vet, tsc, gcc, clippy short)."""
    findings = [
        Finding(
            relative(m["path"], root),
            int(m["line"]),
            int(m["col"] or 0),
            "",
            m["msg"].strip(),
            m["sev"] or "error",
        )
        for m in _LINE_FINDING.finditer(text)
        if m["sev"] != "note"
    ]
    return findings or None


def junit_xml(text: str, root: Path, rerun: Rerun) -> TestsRead | None:
    """JUnit XML (pytest `--junitxml`, `node --test --test-reporter=junit`, jest-junit)."""
    import xml.etree.ElementTree as ET

    start = text.find("<?xml")
    start = start if start >= 0 else text.find("<testsuite")
    if start < 0:
        return None
    try:
        tree = ET.fromstring(text[start:].strip())
    except ET.ParseError:
        return None
    counts, failures = Counts(), []
    for case in tree.iter("testcase"):
        failed = case.find("failure")
        errored = case.find("error")
        if case.find("skipped") is not None:
            counts += Counts(skipped=1)
        elif failed is None and errored is None:
            counts += Counts(passed=1)
        else:
            problem = failed if failed is not None else errored
            assert problem is not None
            outcome = "failed" if failed is not None else "error"
            counts += Counts(failed=1) if failed is not None else Counts(errors=1)
            failures.append(_junit_failure(case, problem, outcome, root, rerun))
    return counts, failures


def _junit_failure(case: Any, problem: Any, outcome: str, root: Path, rerun: Rerun) -> FailedTest:
    name, file = case.get("name", ""), case.get("file", "")
    classname = case.get("classname", "")
    if file and classname:  # pytest (xunit1): `tests.test_x.TestY` + `test_a` → a node id
        module = file.removesuffix(".py").replace("/", ".")
        inner = classname.removeprefix(module).strip(".")
        name = "::".join(part for part in (file, inner.replace(".", "::"), name) if part)
    message = (problem.get("message") or "").strip()
    detail = (problem.text or "").strip()
    path, line = _where(detail, relative(file, root) if file else "", root)
    if not path and file:
        path, line = relative(file, root), int(case.get("line") or -1) + 1
    text = message if message and len(detail) > 2 * len(message) + 400 else detail or message
    test = FailedTest(name, outcome, _trimmed(text or message), path, line)
    return _with_rerun(test, rerun)


def _where(detail: str, prefer: str, root: Path) -> tuple[str, int]:
    """The `path:line` a failure's text points at: the last location in the test's own file
    (`prefer`), else the last one in the workspace (not a library's, not node's own)."""
    found = ("", 0)
    for m in _LOCATION.finditer(detail):
        path = relative(m["path"], root)
        if path.startswith(("node:", "/")) or "site-packages" in path or "node_modules" in path:
            continue
        if prefer and path == prefer:
            return _last_in(detail, prefer, root)
        found = (path, int(m["line"]))
    return found


def _last_in(detail: str, path: str, root: Path) -> tuple[str, int]:
    lines = [
        int(m["line"]) for m in _LOCATION.finditer(detail) if relative(m["path"], root) == path
    ]
    return path, lines[-1]


_LIBRARY_FRAME = re.compile(r"^\s+at .*(?:node_modules/|node:|<anonymous>)")
"""A JavaScript stack frame of a library or of node itself: noise in a failure's message."""


def _trimmed(text: str) -> str:
    lines = text.strip().splitlines()
    return "\n".join(
        line.rstrip() for line in lines if line.strip() and not _LIBRARY_FRAME.match(line)
    )


def _with_rerun(test: FailedTest, rerun: Rerun) -> FailedTest:
    import msgspec

    return msgspec.structs.replace(test, rerun=rerun(test))


def jest_json(text: str, root: Path, rerun: Rerun) -> TestsRead | None:
    """jest `--json` and vitest `--reporter=json` (the same shape)."""
    data = _json(text)
    if not isinstance(data, dict) or "testResults" not in data:
        return None
    counts = Counts(
        passed=int(data.get("numPassedTests") or 0),
        failed=int(data.get("numFailedTests") or 0),
        skipped=int(data.get("numPendingTests") or 0) + int(data.get("numTodoTests") or 0),
    )
    failures = []
    for suite in data.get("testResults") or ():
        path = relative(str(suite.get("name") or suite.get("testFilePath") or ""), root)
        for case in suite.get("assertionResults") or ():
            if case.get("status") != "failed":
                continue
            message = "\n".join(case.get("failureMessages") or ())
            where = case.get("location") or {}
            line = int(where.get("line") or 0) or _where(message, path, root)[1]
            name = str(case.get("fullName") or case.get("title") or "")
            failures.append(
                _with_rerun(FailedTest(name, "failed", _trimmed(message), path, line), rerun)
            )
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            message = _trimmed(str(suite.get("message") or suite.get("failureMessage") or ""))
            failures.append(FailedTest(path, "error", message, path))
            counts += Counts(errors=1)
    return counts, failures


def go_test_json(text: str, root: Path, rerun: Rerun) -> TestsRead | None:
    """`go test -json`: one event per line; a test's output lines are its message."""
    output: dict[tuple[str, str], list[str]] = {}
    counts, failures, seen = Counts(), [], False
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        seen = True
        package, test, action = event.get("Package", ""), event.get("Test"), event.get("Action")
        if not test:
            continue
        key = (package, test)
        if action == "output":
            output.setdefault(key, []).append(event.get("Output", ""))
        elif action == "pass":
            counts += Counts(passed=1)
        elif action == "skip":
            counts += Counts(skipped=1)
        elif action == "fail":
            counts += Counts(failed=1)
            text_out = "".join(output.get(key, ())).strip()
            path, number = _where(text_out, "", root)
            directory = _go_dir(package, root)
            case = FailedTest(f"{package}.{test}", "failed", _trimmed(text_out), path, number)
            failures.append(_with_rerun(msgspec_replace(case, directory), rerun))
    return (counts, failures) if seen else None


def msgspec_replace(case: FailedTest, directory: str) -> FailedTest:
    """A go test's path joined to its package's directory (go prints the file's base name)."""
    import msgspec

    if case.path and "/" not in case.path and directory:
        return msgspec.structs.replace(case, path=f"{directory}/{case.path}")
    return case


def _go_dir(package: str, root: Path) -> str:
    """The package's directory in the workspace, from `go.mod`'s module path."""
    try:
        first = (root / "go.mod").read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return ""
    module = first.removeprefix("module").strip()
    return package.removeprefix(module).strip("/") if package.startswith(module) else ""


_CARGO_RESULT = re.compile(r"^test (?P<name>\S+) \.\.\. (?P<result>ok|FAILED|ignored)", re.M)
_CARGO_SUMMARY = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)
_CARGO_OUTPUT = re.compile(
    r"^---- (?P<name>\S+) stdout ----\n(?P<text>.*?)(?=^---- |^\s*$\n^failures:|\Z)", re.M | re.S
)


_PANICKED = re.compile(r"panicked at (?P<path>[^\s:]+):(?P<line>\d+)")


def cargo_text(text: str, root: Path, rerun: Rerun) -> TestsRead | None:
    """`cargo test`'s text: `test x ... FAILED` lines, then each failure's stdout."""
    summaries = _CARGO_SUMMARY.findall(text)
    if not summaries:
        return None
    counts = Counts()
    for passed, failed, ignored in summaries:
        counts += Counts(passed=int(passed), failed=int(failed), skipped=int(ignored))
    messages = {m["name"]: m["text"].strip() for m in _CARGO_OUTPUT.finditer(text)}
    failures = []
    for m in _CARGO_RESULT.finditer(text):
        if m["result"] == "FAILED":
            message = messages.get(m["name"], "")
            panicked = _PANICKED.search(message)  # where it failed, before any backtrace
            path, line = (
                (relative(panicked["path"], root), int(panicked["line"]))
                if panicked
                else _where(message, "", root)
            )
            message = message.split("\nstack backtrace:", 1)[0]
            case = FailedTest(m["name"], "failed", _trimmed(message), path, line)
            failures.append(_with_rerun(case, rerun))
    return counts, failures


_PYTEST_SHORT = re.compile(r"^(?P<outcome>FAILED|ERROR) (?P<id>\S+?)(?: - (?P<msg>.*))?$", re.M)
_PYTEST_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped)")


def pytest_text(text: str, root: Path, rerun: Rerun) -> TestsRead | None:
    """pytest's own summary (`FAILED tests/x.py::test_a - message`), for a pytest command moot
    did not make (a `verify.test` setting, `make test`) and so could not ask for JUnit."""
    summary = [line for line in text.splitlines() if line.startswith("=") and " in " in line]
    if not summary:
        return None
    numbers = {kind.rstrip("s"): int(n) for n, kind in _PYTEST_COUNTS.findall(summary[-1])}
    counts = Counts(
        numbers.get("passed", 0),
        numbers.get("failed", 0),
        numbers.get("error", 0),
        numbers.get("skipped", 0),
    )
    failures = []
    for m in _PYTEST_SHORT.finditer(text):
        path = m["id"].split("::")[0]
        _, line = _where(text, path, root) if path in text else ("", 0)
        outcome = "failed" if m["outcome"] == "FAILED" else "error"
        case = FailedTest(m["id"], outcome, (m["msg"] or "").strip(), path, line)
        failures.append(_with_rerun(case, rerun))
    return counts, failures

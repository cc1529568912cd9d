"""What a lint or test run found, as data: findings, per-test results, and the text the model
reads (`render`).

The `lint` and `test` tools (`moot.tools.lint`, `moot.tools.test`) run a project's own
linters and test runner; the parsers (`moot.tools.verify_parse`) turn each runner's structured
output into a `Report`. A runner whose output moot cannot read still gives one: its raw output,
capped, with a note saying so (`Report.raw`).
"""

from __future__ import annotations

import msgspec

MAX_LISTED = 30
"""Findings or failing tests listed at most; the counts still count them all."""
MAX_MESSAGE = 1200
"""Characters of one failure's message kept for the model."""
MAX_RAW = 12_000
"""Characters of a runner's raw output kept when moot cannot read it (head and tail)."""


class Finding(msgspec.Struct, frozen=True):
    """One thing a linter reported."""

    path: str
    line: int
    column: int = 0
    code: str = ""
    message: str = ""
    severity: str = "error"


class FailedTest(msgspec.Struct, frozen=True):
    """One test that did not pass (failed or errored)."""

    name: str
    """As the runner names it (`tests/test_x.py::test_a`, `adds two numbers`)."""
    outcome: str
    """`failed` or `error`."""
    message: str = ""
    path: str = ""
    line: int = 0
    rerun: str = ""
    """The command line that runs this test alone."""

    @property
    def where(self) -> str:
        """`path:line`, `path`, or ""."""
        if self.path and self.line:
            return f"{self.path}:{self.line}"
        return self.path


class Counts(msgspec.Struct, frozen=True):
    """How many tests ran, by outcome."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.passed + other.passed,
            self.failed + other.failed,
            self.errors + other.errors,
            self.skipped + other.skipped,
        )

    def __str__(self) -> str:
        parts = [f"{self.passed} passed", f"{self.failed} failed"]
        parts += [f"{self.errors} errors"] if self.errors else []
        parts += [f"{self.skipped} skipped"] if self.skipped else []
        return ", ".join(parts)


class Report(msgspec.Struct, frozen=True):
    """One runner's run, read."""

    runner: str
    """Its name (`ruff`, `pytest`, `node --test`, ...)."""
    command: str
    """The command line that ran."""
    exit_code: int | None
    """None: killed at the timeout."""
    findings: tuple[Finding, ...] = ()
    counts: Counts | None = None
    """For a test run moot could read."""
    failures: tuple[FailedTest, ...] = ()
    raw: str | None = None
    """The output, capped, when moot could not read it (or the runner failed before
    reporting)."""
    note: str = ""

    @property
    def ok(self) -> bool:
        """Whether the runner passed: exit 0 and nothing found."""
        return self.exit_code == 0 and not self.findings and not self.failures


def capped(text: str, limit: int = MAX_RAW) -> str:
    """`text` within `limit` characters: its head and tail, the middle elided."""
    if len(text) <= limit:
        return text
    head = text[: limit // 3]
    tail = text[-(limit - len(head)) :]
    return f"{head}\n[... {len(text) - limit} characters elided ...]\n{tail}"


def render(kind: str, reports: list[Report]) -> str:
    """What the model reads about a `lint` or `test` run (every runner's report)."""
    if not reports:
        return f"No {kind} command found."
    return "\n\n".join(_render_one(report) for report in reports)


def _render_one(report: Report) -> str:
    status = "timed out" if report.exit_code is None else f"exit {report.exit_code}"
    lines = [f"$ {report.command}", f"{report.runner}: {status}"]
    if report.counts is not None:
        lines[-1] += f"; {report.counts}"
    if report.findings or (report.raw is None and report.counts is None):
        lines[-1] += f"; {len(report.findings)} findings"
    for finding in report.findings[:MAX_LISTED]:
        code = f" {finding.code}" if finding.code else ""
        where = f"{finding.path}:{finding.line}" + (f":{finding.column}" if finding.column else "")
        lines.append(f"{where}:{code} {finding.message} [{finding.severity}]")
    if len(report.findings) > MAX_LISTED:
        lines.append(f"... and {len(report.findings) - MAX_LISTED} more findings")
    for case in report.failures[:MAX_LISTED]:
        where = f" at {case.where}" if case.where else ""
        lines.append(f"{case.outcome.upper()} {case.name}{where}")
        if case.message:
            lines.append(_indented(case.message[:MAX_MESSAGE]))
        if case.rerun:
            lines.append(f"  rerun: {case.rerun}")
    if len(report.failures) > MAX_LISTED:
        lines.append(f"... and {len(report.failures) - MAX_LISTED} more failing tests")
    if report.raw is not None:
        lines.append(f"--- output ---\n{report.raw.rstrip()}")
    if report.note:
        lines.append(f"Note: {report.note}")
    return "\n".join(lines)


def _indented(text: str) -> str:
    return "\n".join(f"  | {line}" for line in text.rstrip().splitlines())


def failures_text(kind: str, reports: list[Report]) -> str:
    """What to hand the model when the person sends a run's failures (`/lint`, `/test`):
    only what failed, with how to run it again; "" when nothing did."""
    failing = [r for r in reports if not r.ok]
    if not failing:
        return ""
    return f"The project's {kind} run failed. Please fix it:\n\n" + render(kind, failing)

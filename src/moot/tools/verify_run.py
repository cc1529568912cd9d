"""Running a project's linters or tests in the session's sandbox and reading what they said.

`Verifier` serves the `lint` and `test` tools. For a call's arguments it finds the runners
(`verify_find`), builds their command lines, and:

- `command_line(arguments)`: the line the call is decided as, a `bash` call of it, by the
  permission seam (`Tool.decided_as`): the same deny, ask and allow rules, modes and prompts
  as the model's own `bash` call of that line;
- `run(...)`: runs each line in the sandbox, with a timeout, and reads the output into a
  `Report` (`verify_parse`), or keeps it raw, capped, with a note.

A runner whose report goes to a file (`pytest --junitxml`, `jest --outputFile`) or whose
stdout is its report (`go test -json`) is run inside a small wrapper of moot's own: the report
is written under `/tmp` in the sandbox and printed after a marker line once the runner ends
(`_wrapped`); the wrapper runs nothing the repository chose. The line decided is the runner's.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.tools import verify_parse as parse
from moot.tools.verify_find import REPORT, Kind, Runner, find_runners
from moot.tools.verify_results import Counts, Report, capped

if TYPE_CHECKING:
    from moot.sandbox.base import CommandResult, Sandbox
    from moot.workspace.paths import Workspace

MARK = "::moot-report-follows::"
"""The line after which a wrapped run's report is printed."""
_STDOUT_REPORTS = frozenset({"go test"})
"""Runners whose report is their stdout: the wrapper keeps it apart from their stderr."""
_NOTE_RAW = (
    "moot could not read this runner's output into findings or test results; this is its "
    "output, capped. Set `verify.{kind}` in .moot/settings.json to a command moot reads "
    "(ruff, eslint, pytest, jest, vitest, node --test, go test, cargo test) for structured "
    "results."
)


class Verifier:
    """Finds and runs one kind of the project's checks (`lint` or `test`) for a session.

    Args:
        kind: `lint` or `test`.
        sandbox: Where the commands run; None refuses them (`unavailable` says why).
        workspace: The project; commands start in its root.
        configured: The `verify.<kind>` command lines of the (approved) settings.
        env: The environment commands start from (`os.environ` when None); its `PATH` finds
            the programs.
    """

    def __init__(
        self,
        kind: Kind,
        sandbox: Sandbox | None,
        workspace: Workspace,
        configured: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.kind, self.sandbox, self.workspace = kind, sandbox, workspace
        self.configured, self.env = tuple(configured), env
        self._decided: dict[str, list[str]] = {}
        """What each call was decided as, by its scope and its arguments' JSON (`_key`): a
        run whose command changed since (a file it reads was edited in between) is refused,
        not run. A list: a scope seen twice (a model that reuses a tool call id) is two
        decisions, each taken by one run."""
        self._checked: dict[str, list[tuple[Runner, str]]] = {}
        """The lines `refusal` compared, by the same key: the very lines `run` runs, not the
        files read again (a command in the sandbox may be rewriting them)."""

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def runners(self) -> list[Runner]:
        """The project's runners of this kind, as its files and settings say now."""
        return find_runners(self.workspace.root, self.kind, self.configured, self.environ)

    def lines(self, arguments: Mapping[str, Any]) -> list[tuple[Runner, str]]:
        """Each runner with the command line it runs for these arguments."""
        path, name_filter = arguments.get("path"), arguments.get("filter")
        if isinstance(path, str) and path.startswith("-"):
            raise ValueError(f"path {path!r} would be read as an option: name a file or directory")
        if isinstance(name_filter, str) and name_filter.startswith("-"):
            # `cargo test FILTER` takes it as a word of its own: `--config=...` is an option
            raise ValueError(f"filter {name_filter!r} would be read as an option")
        return [(r, r.line(path, name_filter)) for r in self.runners()]

    def command_line(self, arguments: Mapping[str, Any], scope: str = "") -> str:
        """The command line a call with `arguments` runs, for the permission seam: the
        runners' lines joined by `; ` ("" when the project has none), with the report file
        named where it will be. `scope` names the call (`moot.tools.base.decided_as`)."""
        line = "; ".join(self._filled(line) for _, line in self.lines(arguments))
        key = _key(arguments, scope)
        # Without a scope the caller runs the call at once: only its latest decision counts.
        self._decided[key] = [*self._decided.get(key, ()), line] if scope else [line]
        return line

    def _filled(self, line: str) -> str:
        digest = hashlib.sha256(str(self.workspace.root).encode()).hexdigest()[:10]
        return line.replace(REPORT, f"/tmp/moot-{self.kind}-{digest}.report")

    def refusal(self, arguments: Mapping[str, Any], scope: str = "") -> str:
        """Why a call may not run now: its command line is not the one it was decided as.

        The call's own decision is looked up by its scope; a decision made without one (a
        caller that decides just before it runs) by the arguments alone.

        Raises:
            ValueError: The arguments cannot make a command line (a path that reads as an
                option).
        """
        key = _key(arguments, scope)
        if key not in self._decided:
            key = _key(arguments)
        decided = self._take(key)
        if decided is None and scope.partition("/")[0]:
            # A model's call (an agent call's scope) is always decided before it runs: with no
            # decision here, moot was restarted in between (a run resumed after `kill -9`), and
            # what the project's files say now was never put to the rules.
            return (
                f"The {self.kind} call was decided before moot restarted, and is not run on "
                f"that decision: nothing ran. Call {self.kind} again."
            )
        lines = self.lines(arguments)
        now = "; ".join(self._filled(line) for _, line in lines)
        if decided is None or now == decided:
            self._checked[_key(arguments, scope)] = lines
            return ""
        return (
            f"The {self.kind} command changed since the call was approved (it was `{decided}`,"
            f" it is now `{now}`): nothing ran. Call {self.kind} again."
        )

    def _take(self, key: str) -> str | None:
        """The first decision kept under `key`, taken (None: there is none)."""
        waiting = self._decided.get(key)
        if not waiting:
            return None
        decided = waiting.pop(0)
        if not waiting:
            del self._decided[key]
        return decided

    async def run(
        self,
        arguments: Mapping[str, Any],
        timeout: float,
        on_output: Callable[[str], None] | None = None,
        scope: str = "",
    ) -> list[Report]:
        """Run every runner in turn and read each one's output: the lines `refusal` checked
        for these arguments when it was asked (the lines found now otherwise).

        Raises:
            OSError: The sandbox could not run a command.
        """
        assert self.sandbox is not None
        reports = []
        checked = self._checked.pop(_key(arguments, scope), None)
        for runner, line in self.lines(arguments) if checked is None else checked:
            shown = self._filled(line)
            result = await self.sandbox.run(
                _wrapped(runner, shown, self._report_file(line)),
                cwd=self.workspace.root,
                env=self.environ,
                timeout=timeout,
                on_output=on_output,
            )
            reports.append(read_report(runner, shown, result, self.workspace.root))
        return reports

    def _report_file(self, line: str) -> str | None:
        return self._filled(REPORT) if REPORT in line else None


def _key(arguments: Mapping[str, Any], scope: str = "") -> str:
    listed = json.dumps(
        {k: arguments.get(k) for k in ("path", "filter")}, sort_keys=True, default=str
    )
    return f"{scope}\n{listed}"


def _wrapped(runner: Runner, line: str, report: str | None) -> str:
    """The shell line that runs `line` and prints its report after `MARK`."""
    if runner.name in _STDOUT_REPORTS and report is None:
        report = f"/tmp/moot-{runner.kind}-{os.getpid()}-stdout.report"
        line = f"{{ {line}; }} > {report}"
    if report is None:
        return line
    return (
        f"{line}; __moot_status=$?; printf '\\n%s\\n' '{MARK}'; cat {report} 2>/dev/null;"
        f" rm -f {report}; exit $__moot_status"
    )


def read_report(runner: Runner, line: str, result: CommandResult, root: Path) -> Report:
    """What a run of `runner` said, read; its raw output with a note when moot cannot read it."""
    console, report = _output(result)
    read = _parsed(runner, report or console, root)
    if read is None and runner.format == "sniff":
        read = _sniffed(runner, console, root)
    base = Report(runner.name, line, result.exit_code)
    if read is None:
        note = _NOTE_RAW.format(kind=runner.kind)
        if not report.strip() and _reports_apart(runner):
            note = "it ended without writing its report (is it installed?); its output is below"
        if result.timed_out:
            note = "it was killed at the timeout. " + note
        return _replace(base, raw=capped(console), note=note)
    note = (
        "it was killed at the timeout; what it reported before is below" if result.timed_out else ""
    )
    if isinstance(read, list):
        return _replace(
            base, findings=tuple(read), note=note, raw=_raw_if_silent(read, result, console)
        )
    counts, failures = read
    if not failures and result.exit_code not in (0, None) and counts.failed + counts.errors == 0:
        # the runner failed without a failing test (a collection error, a config error)
        return _replace(
            base,
            counts=counts,
            raw=capped(console),
            note="it failed before or besides running the tests",
        )
    return _replace(base, counts=counts, failures=tuple(failures), note=note)


def _reports_apart(runner: Runner) -> bool:
    """Whether the runner's report comes after `MARK` (a file, or its stdout kept apart)."""
    return runner.writes_report or runner.name in _STDOUT_REPORTS


def _raw_if_silent(findings: list[Any], result: CommandResult, console: str) -> str | None:
    # A linter that failed without a finding failed to run: its output says why.
    return capped(console) if not findings and result.exit_code not in (0, None) else None


def _replace(report: Report, **changes: Any) -> Report:
    import msgspec

    return msgspec.structs.replace(report, **changes)


def _output(result: CommandResult) -> tuple[str, str]:
    """What the runner printed, and the report printed after `MARK` ("" when none).

    The report is printed once the runner has ended, so in a long output's file (stdout and
    stderr as they came) all after the mark is the report; otherwise it is in stdout alone.
    """
    mark = f"\n{MARK}\n"
    if result.output_file is not None:
        try:
            text = Path(result.output_file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
        else:
            console, found, report = text.rpartition(mark)
            return (console, report) if found else (text, "")
    console, found, report = result.stdout.rpartition(mark)
    if not found:
        console, report = result.stdout, ""
    return console + ("\n" + result.stderr if result.stderr else ""), report


Parsed = list[Any] | tuple[Counts, list[Any]] | None


def _parsed(runner: Runner, text: str, root: Path) -> Parsed:
    fmt = runner.format
    if fmt in ("ruff_json", "eslint_json", "line_findings"):
        found: Parsed = getattr(parse, fmt)(text, root)
        return found
    if fmt in ("junit", "jest_json", "go_test_json", "cargo_text"):
        parser = {"junit": parse.junit_xml}.get(fmt) or getattr(parse, fmt)
        read: Parsed = parser(text, root, runner.rerun)
        return read
    return None


def _sniffed(runner: Runner, text: str, root: Path) -> Parsed:
    """A configured command's output, read by whichever parser recognises it."""
    if runner.kind == "lint":
        for finder in (parse.ruff_json, parse.eslint_json, parse.line_findings):
            if (findings := finder(text, root)) is not None:
                return findings
        return None
    for reader in (parse.junit_xml, parse.jest_json, parse.go_test_json, parse.cargo_text):
        if (read := reader(text, root, lambda test: "")) is not None:
            return read
    return parse.pytest_text(
        text, root, lambda test: f"pytest {test.name}" if "::" in test.name else ""
    )

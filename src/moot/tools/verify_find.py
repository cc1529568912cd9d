"""Finding a project's linters and test runner from its files, or from its settings.

`find_runners(root, kind, configured)` answers with the runners to run, each a `Runner`
that builds its command line (with a path and a name filter) and says how its output is read.

What decides, first match wins:

- the `verify.lint` / `verify.test` settings (`configured`): those commands, as written (a
  repository's own are held until the person approves its settings file:
  `moot.settings.review`);
- lint: ruff (`[tool.ruff]` in `pyproject.toml`, `ruff.toml`), eslint (`eslint` in
  `package.json`'s dependencies or an eslint config file), `go vet` (`go.mod`), `cargo clippy`
  (`Cargo.toml`), else a `Makefile`'s `lint` target; ruff and eslint both run in a mixed repo;
- test: pytest (`[tool.pytest...]`, `pytest.ini`, `conftest.py`, `test_*.py` files), vitest,
  jest or `node --test` (`package.json`: the `test` script, else the dependencies), `go test`
  (`go.mod`), `cargo test` (`Cargo.toml`), else a command AGENTS.md quotes for it
  (`scripts/test`), else a `Makefile`'s `test` target, else an `npm test` script; lint
  likewise falls back to AGENTS.md, then the `Makefile`.

Programs are looked for in the workspace first (`.venv/bin`, `node_modules/.bin`), then on
`PATH`, then beside moot's own Python; a command line names a program on `PATH` by its bare
name, so that permission rules (`Bash(pytest:*)`) read it as the person would write it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from moot.tools.verify_results import FailedTest

Kind = Literal["lint", "test"]
REPORT = "{report}"
"""Where a command line names the report file the run writes (filled in when it runs)."""
_TEST_FILE = re.compile(r"(?:^test_.*|.*_test)\.py$")


class Runner(msgspec.Struct, frozen=True):
    """One linter or test runner of the project, and how to run and read it."""

    name: str
    """What the person and the model read (`ruff`, `pytest`, `node --test`, `verify.test`)."""
    kind: Kind
    program: str
    """How the command line names the program (`pytest`, `.venv/bin/pytest`, `npm`)."""
    format: str
    """How its output is read: a parser of `moot.tools.verify_parse`, or `sniff`."""
    base: str = ""
    """A configured command line, as written (only for `verify.*` and `make`/`npm`)."""

    def line(self, path: str | None = None, name_filter: str | None = None) -> str:
        """The command line that runs it, on `path` (a file, a directory or a test id) and
        only the tests whose names match `name_filter`, when given."""
        return _LINES[self.name](self, path, name_filter)

    def rerun(self, test: FailedTest) -> str:
        """The command line that runs one failing test alone ("" when there is no such)."""
        make = _RERUNS.get(self.name)
        return make(self, test) if make is not None else ""

    @property
    def writes_report(self) -> bool:
        """Whether the command writes its report to a file (`REPORT`) rather than stdout."""
        return REPORT in self.line()


def _q(text: str) -> str:
    return shlex.quote(text)


def _opt(prefix: str, value: str | None) -> str:
    return f" {prefix}{_q(value)}" if value else ""


def _path(value: str | None, default: str = "") -> str:
    return f" {_q(value)}" if value else (f" {default}" if default else "")


_LINES: dict[str, Any] = {
    "ruff": lambda r, p, f: (
        f"{r.program} check --output-format json --output-file {REPORT}{_path(p, '.')}"
    ),
    "eslint": lambda r, p, f: f"{r.program} -f json -o {REPORT}{_path(p, '.')}",
    "go vet": lambda r, p, f: f"go vet {_go_packages(p)}",
    "cargo clippy": lambda r, p, f: "cargo clippy --message-format short",
    "pytest": lambda r, p, f: (
        f"{r.program} -q -o junit_family=xunit1 --junitxml={REPORT}{_path(p)}{_opt('-k ', f)}"
    ),
    "vitest": lambda r, p, f: (
        f"{r.program} run --reporter=json --outputFile={REPORT}{_path(p)}{_opt('-t ', f)}"
    ),
    "jest": lambda r, p, f: f"{r.program} --json --outputFile={REPORT}{_path(p)}{_opt('-t ', f)}",
    "node --test": lambda r, p, f: (
        f"node --test --test-reporter=junit{_opt('--test-name-pattern=', f)}{_path(p)}"
    ),
    "go test": lambda r, p, f: f"go test -json{_opt('-run ', f)} {_go_packages(p)}",
    "cargo test": lambda r, p, f: f"cargo test{_path(f)}",
}


def _configured_line(runner: Runner, path: str | None, name_filter: str | None) -> str:
    return runner.base + _path(path)


def _go_packages(path: str | None) -> str:
    if not path:
        return "./..."
    return _q(path if path.startswith((".", "/")) else f"./{path}")


_RERUNS: dict[str, Any] = {
    "pytest": lambda r, t: f"{r.program} {_q(t.name)}",
    "vitest": lambda r, t: f"{r.program} run {_q(t.path)} -t {_q(t.name)}",
    "jest": lambda r, t: f"{r.program} {_q(t.path)} -t {_q(t.name)}",
    "node --test": lambda r, t: (
        f"node --test --test-name-pattern={_q('^' + re.escape(t.name) + '$')} {_q(t.path)}"
    ),
    "go test": lambda r, t: (
        f"go test -run {_q('^' + t.name.rsplit('.', 1)[-1] + '$')} ./{t.path.rpartition('/')[0]}"
        if "/" in t.path
        else f"go test -run {_q('^' + t.name.rsplit('.', 1)[-1] + '$')} ./..."
    ),
    "cargo test": lambda r, t: f"cargo test {_q(t.name)} -- --exact",
}


def find_runners(
    root: Path,
    kind: Kind,
    configured: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> list[Runner]:
    """The project's linters (`kind="lint"`) or its test runner (`"test"`), in order.

    Args:
        root: The workspace root.
        kind: Which to find.
        configured: The `verify.lint` / `verify.test` command lines (approved settings only).
        env: Where `PATH` is read from (`os.environ` when None).
    """
    if configured:
        name = f"verify.{kind}"
        return [Runner(name, kind, "", "sniff", base=line) for line in configured]
    project = _Project(root, os.environ if env is None else env)
    found = project.linters() if kind == "lint" else project.test_runners()
    return found


class _Project:
    """What a workspace's files say, read once each."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root, self.env = root, env
        self.pyproject = _toml(root / "pyproject.toml")
        self.package = _package(root / "package.json")

    def program(self, name: str, *local: str) -> str | None:
        """How to name `name` on a command line, or None when it is nowhere."""
        for directory in local:
            if (self.root / directory / name).is_file():
                return f"{directory}/{name}"
        if shutil.which(name, path=self.env.get("PATH")):
            return name
        beside = Path(sys.executable).parent / name
        return str(beside) if beside.is_file() else None

    def has(self, *names: str) -> bool:
        return any((self.root / name).exists() for name in names)

    def linters(self) -> list[Runner]:
        found = []
        tool = self.pyproject.get("tool", {})
        ruff = "ruff" in tool or self.has("ruff.toml", ".ruff.toml")
        if ruff and (program := self.program("ruff", ".venv/bin")):
            found.append(Runner("ruff", "lint", program, "ruff_json"))
        eslint_config = any(self.root.glob("eslint.config.*")) or any(self.root.glob(".eslintrc*"))
        eslint = "eslint" in self.package["deps"] or eslint_config
        if eslint and (program := self.program("eslint", "node_modules/.bin")):
            found.append(Runner("eslint", "lint", program, "eslint_json"))
        if not found and self.has("go.mod") and self.program("go"):
            found.append(Runner("go vet", "lint", "go", "line_findings"))
        if not found and self.has("Cargo.toml") and self.program("cargo"):
            found.append(Runner("cargo clippy", "lint", "cargo", "line_findings"))
        return found or self.from_agents_md("lint") or self.make_target("lint", "line_findings")

    def test_runners(self) -> list[Runner]:
        found = self.python_tests() + self.node_tests()
        if not found and self.has("go.mod") and self.program("go"):
            found.append(Runner("go test", "test", "go", "go_test_json"))
        if not found and self.has("Cargo.toml") and self.program("cargo"):
            found.append(Runner("cargo test", "test", "cargo", "cargo_text"))
        if not found:
            found = self.from_agents_md("test") or self.make_target("test", "sniff")
        if not found and self.package["scripts"].get("test") and self.program("npm"):
            found.append(Runner("npm test", "test", "npm", "sniff", base="npm test --"))
        return found

    def python_tests(self) -> list[Runner]:
        tool = self.pyproject.get("tool", {})
        configured = "pytest" in tool or self.has("pytest.ini", "conftest.py")
        configured = configured or _section(self.root / "setup.cfg", "[tool:pytest]")
        configured = configured or _section(self.root / "tox.ini", "[pytest]")
        if not configured and not self._has_test_files():
            return []
        program = self.program("pytest", ".venv/bin")
        return [Runner("pytest", "test", program, "junit")] if program else []

    def _has_test_files(self) -> bool:
        for directory in (self.root, self.root / "tests", self.root / "test"):
            try:
                if any(_TEST_FILE.match(entry.name) for entry in os.scandir(directory)):
                    return True
            except OSError:
                continue
        return False

    def node_tests(self) -> list[Runner]:
        script = self.package["scripts"].get("test", "")
        deps = self.package["deps"]
        for name, fmt in (("vitest", "jest_json"), ("jest", "jest_json")):
            named = name in script or (name in deps and not script.startswith("node"))
            if named and (program := self.program(name, "node_modules/.bin")):
                return [Runner(name, "test", program, fmt)]
        if "node --test" in script or "node:test" in script:
            return [Runner("node --test", "test", "node", "junit")]
        return []

    def from_agents_md(self, kind: Kind) -> list[Runner]:
        """The first command AGENTS.md quotes (in backticks) for `kind`: one that starts with a
        known tool or a script of the workspace and names the kind (`scripts/test`, `tox -e
        lint`, `npm run lint`)."""
        try:
            text = (self.root / "AGENTS.md").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        words = _KIND_WORDS[kind]
        for quoted in re.findall(r"`([^`\n]{2,200})`", text):
            first = quoted.split()[0]
            if not words.search(quoted) or first.startswith("-"):
                continue
            local = "/" in first and (self.root / first.removeprefix("./")).is_file()
            if local or (first in _AGENTS_PROGRAMS and self.program(first)):
                return [Runner("AGENTS.md", kind, first, "sniff", base=quoted)]
        return []

    def make_target(self, target: str, fmt: str) -> list[Runner]:
        try:
            text = (self.root / "Makefile").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        if not re.search(rf"^{target}\s*:", text, re.MULTILINE) or not self.program("make"):
            return []
        return [Runner(f"make {target}", target, "make", fmt, base=f"make {target}")]  # type: ignore[arg-type]


_KIND_WORDS = {
    "lint": re.compile(r"\b(?:lint|ruff|eslint|flake8|clippy|vet|mypy)\b"),
    "test": re.compile(r"\b(?:test|tests|pytest|jest|vitest)\b"),
}
_AGENTS_PROGRAMS = frozenset(
    {"pytest", "tox", "nox", "npm", "pnpm", "yarn", "make", "just", "go", "cargo", "ruff"}
    | {"uv", "hatch", "poetry", "eslint", "mypy", "bun", "deno"}
)
"""Programs a command quoted in AGENTS.md may start with (else a script in the workspace)."""

for _configured in (
    "verify.lint",
    "verify.test",
    "make lint",
    "make test",
    "npm test",
    "AGENTS.md",
):
    _LINES[_configured] = _configured_line


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except (OSError, ValueError):
        return {}


def _package(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    deps: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        if isinstance(data.get(key), dict):
            deps |= set(data[key])
    scripts = data.get("scripts")
    scripts = scripts if isinstance(scripts, dict) else {}
    return {"deps": deps, "scripts": {k: v for k, v in scripts.items() if isinstance(v, str)}}


def _section(path: Path, header: str) -> bool:
    try:
        return header in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False

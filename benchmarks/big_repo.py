"""A generated monorepo of 100,000 files, made once and kept in a cache directory.

`repository(files)` returns the root of a git work tree (nothing committed) holding `files`
files that no ignore rule hides, plus about 9% more that `.gitignore` files hide
(`node_modules/`, `build/`, `*.log`, each service's `*.tmp`, the web app's `coverage/`).
What it holds, as a big monorepo does:

- 60% source in the languages the repository map reads: Python (30%), TypeScript (10%),
  TSX (4%), JavaScript (4%), Go (8%), Rust (4%); each file defines two to five names of its
  own (unique, so no two files share content) and uses names from up to four others, the
  low-numbered ones far more often, as real code has its `core` modules;
- 40% other files: Markdown, JSON, YAML, text, CSS, HTML, SQL and small binary images;
- a few big files: JSON fixtures of 4 MB, a 3 MB minified JavaScript bundle, a 2 MB
  generated Python module (past the map's 512 KB limit), an 8 MB binary, and ignored 5 MB
  logs;
- about 20 files per directory, four to six levels deep, a `.gitignore` at the root and
  nested ones.

The tree is written under `$MOOT_BENCH_CACHE` (else `~/.cache/moot-bench`), named by its size
and `VERSION`, once: a later call (in this or any benchmark run) finds it by a marker written
when it was complete. Writing 100,000 files takes 20-40 s. Nothing in a benchmark may change
it; a benchmark that writes copies it first (`scratch_copy`).

Run as a script to make it now: `python benchmarks/big_repo.py [FILES]`.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

VERSION = 1
"""Bump when the tree changes: trees of another version are made again beside the old."""
PER_DIRECTORY = 20
LANGUAGE_SHARES: tuple[tuple[str, float], ...] = (
    ("py", 0.30),
    ("ts", 0.10),
    ("tsx", 0.04),
    ("js", 0.04),
    ("go", 0.08),
    ("rs", 0.04),
    ("md", 0.08),
    ("json", 0.10),
    ("yaml", 0.06),
    ("txt", 0.05),
    ("css", 0.04),
    ("html", 0.03),
    ("sql", 0.02),
    ("png", 0.02),
)
"""File kinds and their share of the files no rule hides; the first six are mapped."""
SOURCE_KINDS = frozenset({"py", "ts", "tsx", "js", "go", "rs"})
_TOP = {"py": "services", "ts": "web", "tsx": "web", "js": "web", "go": "go", "rs": "crates"}
_ROOT_GITIGNORE = "node_modules/\nbuild/\n*.log\n__pycache__/\n*.pyc\n.venv/\n"


def cache_root() -> Path:
    """Where generated trees are kept."""
    configured = os.environ.get("MOOT_BENCH_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "moot-bench"


def repository(files: int = 100_000) -> Path:
    """The root of the generated tree of `files` files (made now if it is not there yet)."""
    root = cache_root() / f"bigrepo-v{VERSION}-{files}"
    marker = root.with_name(root.name + ".done")
    if marker.exists() and root.is_dir():
        return root
    if root.exists():
        shutil.rmtree(root)  # left half-made by an interrupted run
    root.mkdir(parents=True)
    generate(root, files)
    marker.write_text("complete\n")
    return root


def scratch_copy(source: Path, target: Path) -> Path:
    """A copy of a generated tree to change (hard links would share the files' content)."""
    shutil.copytree(source, target, symlinks=True)
    return target


def generate(root: Path, files: int, seed: int = 31) -> None:
    """Write the tree (see the module docstring) under the empty directory `root`."""
    rng = random.Random(seed)
    kinds = _kinds(files)
    totals = Counter(kinds)
    counters: dict[str, int] = {}
    directories: set[Path] = set()
    (root / ".gitignore").write_text(_ROOT_GITIGNORE)
    for kind in kinds:
        number = counters.get(kind, 0)
        counters[kind] = number + 1
        path = root / _path(kind, number)
        if path.parent not in directories:
            path.parent.mkdir(parents=True, exist_ok=True)
            directories.add(path.parent)
        content = _CONTENT[kind](number, rng, totals[kind])
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    _nested_ignores(root)
    _big_files(root)
    _ignored(root, files)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def _kinds(files: int) -> list[str]:
    """Each file's kind, `files` in all, in the shares of `LANGUAGE_SHARES`."""
    out: list[str] = []
    for kind, share in LANGUAGE_SHARES:
        out += [kind] * int(files * share)
    wanted = files - len(_BIG_TRACKED)
    out += ["txt"] * max(0, wanted - len(out))  # shares rounded down
    return out[:wanted]


def _path(kind: str, number: int) -> str:
    """Where file `number` of `kind` goes: about `PER_DIRECTORY` to a directory."""
    leaf = number // PER_DIRECTORY
    top = _TOP.get(kind, "docs" if kind in ("md", "txt") else "assets")
    group, area, part = leaf // 100, (leaf // 10) % 10, leaf % 10
    if top == "services":
        middle = f"svc{group:03}/src/area{area}/pkg{part}"
    elif top == "web":
        middle = f"app{group:03}/src/{kind}/feature{area}/part{part}"
    elif top == "go":
        middle = f"pkg{group:03}/internal/mod{area}/unit{part}"
    elif top == "crates":
        middle = f"crate{group:03}/src/m{area}/n{part}"
    else:
        middle = f"{kind}/set{group:03}/block{area}/page{part}"
    return f"{top}/{middle}/{_STEM[kind]}{number:06}.{kind}"


_STEM = {
    "py": "mod_", "ts": "svc_", "tsx": "View", "js": "util_", "go": "unit_", "rs": "part_",
    "md": "note_", "json": "data_", "yaml": "conf_", "txt": "text_", "css": "style_",
    "html": "page_", "sql": "query_", "png": "image_",
}  # fmt: skip


def _targets(number: int, rng: random.Random, total: int) -> list[int]:
    """Files this one uses: skewed toward low numbers, never itself."""
    found = {min(int(rng.paretovariate(1.1)) - 1, total - 1) for _ in range(rng.randint(1, 4))}
    found.discard(number)
    return sorted(found)


def _python(number: int, rng: random.Random, total: int) -> str:
    lines = [f'"""Module {number}: records and their handling."""', "", "import json", ""]
    uses = _targets(number, rng, total)
    for target in uses:
        module = _path("py", target)[:-3].replace("/", ".")
        lines.append(f"from {module} import Record{target}, load_{target}")
    lines += ["", f"LIMIT_{number} = {rng.randint(1, 500)}", "", ""]
    lines += [
        f"class Record{number}:",
        f'    """One record of kind {number}."""',
        "",
        "    def __init__(self, items: list[str]) -> None:",
        "        self.items = items",
        "",
        "    def total(self) -> int:",
        "        return sum(len(item) for item in self.items)",
        "",
        "    def render(self, prefix: str = '') -> str:",
        "        return prefix + json.dumps(self.items)",
        "",
        "",
        f"def load_{number}(text: str) -> Record{number}:",
        f'    """Read a Record{number} back."""',
        f"    return Record{number}(json.loads(text))",
        "",
    ]
    for n in range(rng.randint(0, 3)):
        call = f"load_{uses[n % len(uses)]}" if uses else "str"
        lines += [
            "",
            f"def step_{number}_{n}(value: str, retries: int = {n + 1}) -> str:",
            "    for attempt in range(retries):",
            "        try:",
            f"            return {call}(value).render()",
            "        except ValueError:",
            "            continue",
            '    return ""',
            "",
        ]
    return "\n".join(lines)


def _ecma(kind: str) -> Callable[[int, random.Random, int], str]:
    typed = kind in ("ts", "tsx")

    def make(number: int, rng: random.Random, total: int) -> str:
        lines = [f"// {kind} module {number}"]
        uses = _targets(number, rng, total)
        for target in uses:
            module = _path(kind, target).rsplit(".", 1)[0]
            lines.append(f'import {{ Store{target}, make{target} }} from "/{module}";')
        annotation = ": string" if typed else ""
        lines += [
            "",
            f"export class Store{number} {{",
            f"  private items{': string[]' if typed else ''} = [];",
            f"  add(item{annotation}){': void' if typed else ''} {{",
            "    this.items.push(item);",
            "  }",
            f"  size(){': number' if typed else ''} {{",
            "    return this.items.length;",
            "  }",
            "}",
            "",
            f"export function make{number}(seed{annotation}) {{",
            f"  const store = new Store{number}();",
            "  store.add(seed);",
            "  return store;",
            "}",
        ]
        if typed:
            lines += ["", f"export interface Options{number} {{", "  name: string;", "}"]
        if kind == "tsx":
            lines += [
                "",
                f"export const Panel{number} = (props: Options{number}) => (",
                '  <div className="panel">{props.name}</div>',
                ");",
            ]
        for target in uses:
            lines += ["", f'export const use{number}_{target} = () => make{target}("x");']
        return "\n".join(lines) + "\n"

    return make


def _go(number: int, rng: random.Random, total: int) -> str:
    uses = _targets(number, rng, total)
    lines = [f"package unit{number % 10}", "", 'import "fmt"', ""]
    lines += [
        f"type Server{number} struct {{",
        "\tName  string",
        "\tPort  int",
        "}",
        "",
        f"func (s *Server{number}) Address() string {{",
        '\treturn fmt.Sprintf("%s:%d", s.Name, s.Port)',
        "}",
        "",
        f"func NewServer{number}(name string) *Server{number} {{",
        f"\treturn &Server{number}{{Name: name, Port: {8000 + number % 1000}}}",
        "}",
    ]
    for target in uses:
        lines += ["", f"func Link{number}_{target}() string {{",
                  f'\treturn NewServer{target}("x").Address()', "}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _rust(number: int, rng: random.Random, total: int) -> str:
    uses = _targets(number, rng, total)
    lines = [f"//! Part {number}.", ""]
    for target in uses:
        lines.append(f"use crate::part{target}::{{Part{target}, build_{target}}};")
    lines += [
        "",
        f"pub struct Part{number} {{",
        "    pub name: String,",
        "    pub size: usize,",
        "}",
        "",
        f"impl Part{number} {{",
        "    pub fn weight(&self) -> usize {",
        "        self.size * 2",
        "    }",
        "}",
        "",
        f"pub fn build_{number}(name: &str) -> Part{number} {{",
        f"    Part{number} {{ name: name.to_string(), size: {number % 97} }}",
        "}",
    ]
    for target in uses:
        lines += ["", f"pub fn link_{number}_{target}() -> usize {{",
                  f'    build_{target}("x").weight()', "}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _prose(kind: str) -> Callable[[int, random.Random, int], str | bytes]:
    def make(number: int, rng: random.Random, total: int) -> str | bytes:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 120)))
        if kind == "md":
            return f"# Note {number}\n\n{words}\n\n- item {number}\n- see note {number // 2}\n"
        if kind == "json":
            return f'{{"id": {number}, "name": "data {number}", "tags": ["{words[:40]}"]}}\n'
        if kind == "yaml":
            return f"id: {number}\nname: conf {number}\nreplicas: {number % 5 + 1}\n"
        if kind == "css":
            return f".panel-{number} {{ margin: {number % 16}px; color: #{number % 4096:03x}; }}\n"
        if kind == "html":
            return f"<html><body><h1>Page {number}</h1><p>{words}</p></body></html>\n"
        if kind == "sql":
            return f"SELECT id, name FROM table_{number % 50} WHERE id = {number};\n"
        if kind == "png":
            return b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(200, 2000))
        return f"{words}\n"

    return make


_WORDS = (  # noqa: SIM905
    "order invoice customer session cache router parser report account ledger payment token "
    "schedule catalog shipment profile document channel message queue policy record bundle"
).split()

_CONTENT: dict[str, Callable[[int, random.Random, int], str | bytes]] = {
    "py": _python,
    "ts": _ecma("ts"),
    "tsx": _ecma("tsx"),
    "js": _ecma("js"),
    "go": _go,
    "rs": _rust,
    **{kind: _prose(kind) for kind in ("md", "json", "yaml", "txt", "css", "html", "sql", "png")},
}

_BIG_TRACKED = (
    ("data/fixtures/orders.json", 4 << 20),
    ("data/fixtures/customers.json", 4 << 20),
    ("data/fixtures/ledger.json", 4 << 20),
    ("web/vendor/bundle.min.js", 3 << 20),
    ("services/svc000/src/generated/tables_pb2.py", 2 << 20),
    ("data/blobs/model.bin", 8 << 20),
)
"""Big files no rule hides (they count among the tree's files)."""


def _big_files(root: Path) -> None:
    rng = random.Random(7)
    for rel, size in _BIG_TRACKED:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".bin"):
            path.write_bytes(rng.randbytes(size))
        elif rel.endswith(".py"):
            row = "    ({0}, 'field_{0}', {1}),\n"
            rows = (row.format(n, n * 7 % 1000) for n in range(size // 30))
            path.write_text("TABLE = [\n" + "".join(rows) + "]\n")
        elif rel.endswith(".js"):
            parts = (f"function f{n}(a){{return a*{n}+g{n % 97}(a)}};" for n in range(size // 36))
            path.write_text("".join(parts))
        else:
            item = '{{"id":{0},"name":"item {0}","price":{1}}},'
            path.write_text("[" + "".join(item.format(n, n % 997) for n in range(size // 40)) + "]")


def _nested_ignores(root: Path) -> None:
    """`.gitignore` files below the root, and a file each hides."""
    (root / "web" / ".gitignore").write_text("coverage/\n*.snap\n")
    for service in sorted((root / "services").iterdir())[:20]:
        (service / ".gitignore").write_text("*.tmp\nlocal_settings.py\n")
        (service / "scratch.tmp").write_text("temporary\n")
        (service / "local_settings.py").write_text("SECRET = 'local'\n")


def _ignored(root: Path, files: int) -> None:
    """What `.gitignore` hides: about 9% more files, and two 5 MB logs."""
    count = files * 9 // 100
    modules = root / "node_modules"
    for number in range(count * 6 // 10):
        path = modules / f"lib{number // 50:04}" / f"index{number % 50:02}.js"
        if number % 50 == 0:
            path.parent.mkdir(parents=True)
        path.write_text(f"module.exports = function lib{number}() {{ return {number}; }};\n")
    build = root / "build"
    for number in range(count * 3 // 10):
        path = build / f"out{number // 100:03}" / f"gen_{number:06}.py"
        if number % 100 == 0:
            path.parent.mkdir(parents=True)
        path.write_text(f"GENERATED_{number} = {number}\n")
    for number, path in enumerate(_some_directories(root, count // 10)):
        (path / f"run{number:05}.log").write_text(f"log line {number}\n")
    coverage = root / "web" / "coverage"
    coverage.mkdir()
    for number in range(200):
        (coverage / f"cov{number:03}.json").write_text("{}\n")
    line = "2026-01-01T00:00:00 INFO request served in 12 ms\n"
    for name in ("server.log", "worker.log"):
        (root / name).write_text(line * ((5 << 20) // len(line)))


def _some_directories(root: Path, count: int) -> Iterator[Path]:
    tops = [root / top for top in ("services", "web", "go", "crates") if (root / top).is_dir()]
    made = 0
    while made < count:
        for top in tops:
            for directory in sorted(top.iterdir()):
                if made >= count:
                    return
                if directory.is_dir():
                    yield directory
                    made += 1


def main() -> int:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(repository(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())

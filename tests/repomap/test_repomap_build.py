"""The repository map: tags per language, ranking, focus, the token budget, the cache, skips.

The sample repository has a known shape: `pkg/core.py` defines what three other modules use,
`pkg/leaf.py` defines something nobody uses, and a JavaScript, TypeScript, TSX, Go and Rust
corner each has one file defining a name and another referencing it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from moot.repomap import build_repo_map, index_workspace, languages
from moot.repomap.cache import cache_path
from moot.repomap.languages import GrammarMissing
from moot.repomap.rank import pagerank, rank_files
from moot.repomap.render import estimate_tokens

SAMPLE = {
    ".gitignore": "build/\n",
    "pkg/__init__.py": "",
    "pkg/core.py": '''"""Core types everyone uses."""

DEFAULT_TIMEOUT = 30


class Config:
    """Settings."""

    def __init__(self, path: str) -> None:
        self.path = path

    def load(
        self,
        strict: bool = False,
    ) -> dict:
        return {}


def make_config(path: str) -> Config:
    return Config(path)


def shared_helper(value):
    return value
''',
    "pkg/cli.py": """from pkg.core import Config, make_config


def main() -> Config:
    return make_config("cli.toml")
""",
    "pkg/server.py": """from pkg.core import Config, shared_helper


class Server:
    def __init__(self, config: Config) -> None:
        self.config = config

    def start(self):
        return shared_helper(self.config)
""",
    "pkg/worker.py": """from pkg.core import make_config, shared_helper


def run_worker():
    return shared_helper(make_config("worker.toml"))
""",
    "pkg/leaf.py": """def orphan_function():
    return 1
""",
    "web/api.js": """export const BASE_URL = "/api";

export function apiCall(path) {
  return fetch(BASE_URL + path);
}
""",
    "web/app.js": """import { apiCall } from "./api.js";

export function renderPage() {
  return apiCall("/");
}
""",
    "web/types.ts": """export interface User {
  id: string;
}

export function loadUser(id: string): User {
  return { id };
}
""",
    "web/view.tsx": """import { loadUser, User } from "./types";

export function UserView(props: { user: User }) {
  return <div>{loadUser(props.user.id).id}</div>;
}
""",
    "svc/server.go": """package main

type Server struct {
	port int
}

func Serve(port int) *Server {
	return &Server{port: port}
}

func (s *Server) Stop() {}
""",
    "svc/main.go": """package main

func main() {
	Serve(8080).Stop()
}
""",
    "engine/lib.rs": """pub struct Engine {
    speed: u32,
}

impl Engine {
    pub fn new() -> Self {
        Engine { speed: 1 }
    }
}

pub fn start_engine() -> Engine {
    Engine::new()
}
""",
    "engine/main.rs": """fn main() {
    let _engine = start_engine();
}
""",
    "build/generated.py": "def generated_thing():\n    return 2\n",
    "node_modules/dep/index.js": "export function vendored() {}\n",
    ".venv/lib/site.py": "def installed():\n    pass\n",
    "notes.txt": "not code\n",
}


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make(root, SAMPLE)
    (root / "pkg" / "blob.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)
    (root / "broken.py").write_bytes(
        b"def ((( :\n  class\n\xff\xfe ]]]\ndef ok_after_all():\n  pass\n"
    )
    return root


def names(root: Path, rel: str) -> set[str]:
    return {d.name for d in index_workspace(root).files[rel].definitions}


# ---- tags per language ---------------------------------------------------------------------


def test_each_language_finds_its_definitions(repo: Path) -> None:
    assert names(repo, "pkg/core.py") == {
        "DEFAULT_TIMEOUT",
        "Config",
        "__init__",
        "load",
        "make_config",
        "shared_helper",
    }
    assert names(repo, "web/api.js") == {"BASE_URL", "apiCall"}
    assert names(repo, "web/types.ts") == {"User", "loadUser"}
    assert names(repo, "web/view.tsx") == {"UserView"}
    assert names(repo, "svc/server.go") == {"Server", "Serve", "Stop"}
    assert names(repo, "engine/lib.rs") == {"Engine", "new", "start_engine"}


def test_each_language_finds_its_references(repo: Path) -> None:
    files = index_workspace(repo).files

    assert {"Config", "make_config"} <= files["pkg/cli.py"].references.keys()
    assert {"Config", "shared_helper"} <= files["pkg/server.py"].references.keys()
    assert "apiCall" in files["web/app.js"].references
    assert {"loadUser", "User"} <= files["web/view.tsx"].references.keys()
    assert {"Serve", "Stop"} <= files["svc/main.go"].references.keys()
    assert "start_engine" in files["engine/main.rs"].references


def test_definitions_keep_their_declaration_line_and_scope(repo: Path) -> None:
    core = index_workspace(repo).files["pkg/core.py"]
    by_name = {d.name: d for d in core.definitions}

    assert (by_name["Config"].line, by_name["Config"].signature) == (6, "class Config:")
    load = by_name["load"]
    # A signature spread over lines is joined, indented as the method is.
    assert load.signature == "    def load(self, strict: bool = False) -> dict:"
    assert core.definitions[load.parent].name == "Config"
    assert by_name["make_config"].parent == -1
    assert core.lines == 24


# ---- what is read ----------------------------------------------------------------------


def test_ignored_hidden_vendored_binary_and_other_files_are_left_out(repo: Path) -> None:
    result = build_repo_map(repo)

    for left_out in (
        "build/generated.py",
        "node_modules/dep/index.js",
        ".venv/lib/site.py",
        "pkg/blob.py",
        "notes.txt",
    ):
        assert left_out not in result.ranked
    assert "pkg/core.py" in result.ranked


def test_a_file_that_does_not_parse_is_mapped_as_far_as_it_goes(repo: Path) -> None:
    result = build_repo_map(repo)

    assert "broken.py" in result.ranked  # no exception; tree-sitter recovers what it can


def test_a_missing_grammar_leaves_its_files_out_with_a_note(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = languages._import

    def without_go(module: str) -> ModuleType:
        if module == "tree_sitter_go":
            raise GrammarMissing("tree-sitter-go is not installed")
        return real_import(module)

    monkeypatch.setattr(languages, "_import", without_go)
    result = build_repo_map(repo)
    monkeypatch.undo()

    assert "svc/main.go" not in result.ranked
    assert result.notes == (
        "2 file(s) left out: tree-sitter-go is not installed",
        "1 binary file(s) left out: pkg/blob.py",
    )
    assert "svc/main.go" in build_repo_map(repo).ranked  # not cached as left out


# ---- ranking and focus -----------------------------------------------------------------


def test_the_most_referenced_file_ranks_first(repo: Path) -> None:
    ranked = build_repo_map(repo).ranked

    assert ranked[0] == "pkg/core.py"
    assert ranked.index("pkg/core.py") < ranked.index("pkg/leaf.py")


@pytest.mark.parametrize("focus", [["pkg/leaf.py"], ["leaf.py"], ["leaf"], ["orphan_function"]])
def test_focus_moves_a_file_up(repo: Path, focus: list[str]) -> None:
    before = build_repo_map(repo).ranked.index("pkg/leaf.py")

    after = build_repo_map(repo, focus=focus).ranked.index("pkg/leaf.py")

    assert after < before
    assert after == 0


def test_an_absolute_focus_path_inside_the_workspace_counts(repo: Path) -> None:
    focus = [str(repo / "engine" / "main.rs")]

    assert build_repo_map(repo, focus=focus).ranked[0] == "engine/main.rs"


def test_names_link_files_within_a_language_family_only(repo: Path) -> None:
    definitions = rank_files(index_workspace(repo).files).definitions

    assert ("web/types.ts", "User") in definitions  # used by web/view.tsx: TSX and TS mix
    # svc/server.go references its own Go `Server`, which is not pkg/server.py's class.
    assert ("pkg/server.py", "Server") not in definitions


def test_pagerank_matches_the_closed_form_on_a_small_graph() -> None:
    # 0 -> 2 and 1 -> 2; node 2 has no edges out, so its rank jumps uniformly.
    ranks = pagerank([{2: 1.0}, {2: 1.0}, {}], [1 / 3] * 3)

    assert ranks == pytest.approx([0.212766, 0.212766, 0.574468], abs=1e-5)
    assert sum(ranks) == pytest.approx(1.0)


# ---- rendering -------------------------------------------------------------------------


@pytest.mark.parametrize("tokens", [16, 40, 64, 128, 256, 1024])
def test_the_map_stays_within_the_budget(repo: Path, tokens: int) -> None:
    result = build_repo_map(repo, tokens=tokens)

    assert estimate_tokens(result.text) <= tokens
    if tokens >= 64:
        assert result.text.startswith("pkg/core.py:\n")


def test_a_larger_budget_shows_more(repo: Path) -> None:
    shown = [build_repo_map(repo, tokens=tokens).shown for tokens in (64, 256, 4096)]

    assert shown[0] < shown[1] < shown[2]
    assert shown[2] == len(build_repo_map(repo).ranked)  # everything fits in 4096


def section(text: str, path: str) -> list[str]:
    """The lines under `path`'s header in a rendered map."""
    lines = text.split(f"{path}:\n", 1)[1].splitlines()
    end = next((i for i, line in enumerate(lines) if line[:1] not in ("│", "⋮")), len(lines))
    return lines[:end]


def test_the_map_shows_declarations_with_their_scope_and_elisions(repo: Path) -> None:
    text = build_repo_map(repo, tokens=4096).text

    assert section(text, "pkg/core.py") == [
        "⋮",
        "│DEFAULT_TIMEOUT = 30",
        "⋮",
        "│class Config:",
        "⋮",
        "│    def __init__(self, path: str) -> None:",
        "⋮",
        "│    def load(self, strict: bool = False) -> dict:",
        "⋮",
        "│def make_config(path: str) -> Config:",
        "⋮",
        "│def shared_helper(value):",
        "⋮",
    ]
    assert section(text, "engine/lib.rs") == [
        "│pub struct Engine",
        "⋮",
        "│    pub fn new() -> Self",
        "⋮",
        "│pub fn start_engine() -> Engine",
        "⋮",
    ]


def test_a_small_budget_shows_the_most_referenced_definitions_first(repo: Path) -> None:
    text = build_repo_map(repo, tokens=40).text

    assert text.startswith("pkg/core.py:\n")
    assert "│class Config:" in section(text, "pkg/core.py")
    assert "orphan_function" not in text


# ---- the cache -------------------------------------------------------------------------


def test_a_second_build_parses_nothing_and_a_touched_file_is_parsed_again(repo: Path) -> None:
    first = build_repo_map(repo)
    assert "pkg/core.py" in first.parsed
    assert len(first.parsed) == len(first.ranked)

    second = build_repo_map(repo)
    assert second.parsed == ()
    assert (second.ranked, second.text) == (first.ranked, first.text)

    core = repo / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n\ndef added_later():\n    pass\n")
    stat = core.stat()
    os.utime(core, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    third = build_repo_map(repo)
    assert third.parsed == ("pkg/core.py",)
    assert "added_later" in names(repo, "pkg/core.py")


def test_the_cache_lives_in_the_user_cache_dir_and_forgets_deleted_files(
    repo: Path, private_moot_home: Path
) -> None:
    build_repo_map(repo)
    database = cache_path(repo)
    assert database.is_relative_to(private_moot_home / "cache" / "repomap")
    assert database.exists()

    (repo / "pkg" / "leaf.py").unlink()
    result = build_repo_map(repo)

    assert result.parsed == ()
    assert "pkg/leaf.py" not in result.ranked


def test_a_warm_build_does_not_import_tree_sitter(repo: Path, private_moot_home: Path) -> None:
    build_repo_map(repo)
    probe = (
        "import json, sys; from pathlib import Path; from moot.repomap import build_repo_map\n"
        "import moot.tools.repo_map, moot.tools.symbols\n"
        f"result = build_repo_map(Path({str(repo)!r}))\n"
        "print(json.dumps([len(result.parsed), 'tree_sitter' in sys.modules]))"
    )
    env = {**os.environ, "MOOT_HOME": str(private_moot_home)}

    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )

    assert json.loads(out.stdout) == [0, False]


def test_a_damaged_cache_is_rebuilt(repo: Path) -> None:
    first = build_repo_map(repo)
    database = cache_path(repo)
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    database.write_bytes(b"this is not a database" * 100)

    again = build_repo_map(repo)

    assert again.ranked == first.ranked
    assert len(again.parsed) == len(first.parsed)
    assert build_repo_map(repo).parsed == ()


def test_an_unwritable_cache_dir_still_maps(repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")

    result = build_repo_map(repo, cache_file=blocker / "cache.sqlite3")

    assert result.ranked[0] == "pkg/core.py"

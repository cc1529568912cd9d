"""The parts of `moot.lsp` that need no server: which binary runs, what a repository's settings
may choose, and which errors count as an edit's."""

from __future__ import annotations

import json
import os
from pathlib import Path

from moot.lsp.report import Diagnostic, new_errors, parse, render_new
from moot.lsp.servers import BY_SUFFIX, ServerSpec, Unavailable, find_server, outside_path
from moot.settings import approve_held, load_settings
from moot.settings.schema import LanguageServerSetting


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_path_entries_inside_the_workspace_or_relative_are_left_out(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    path = os.pathsep.join(
        ["node_modules/.bin", "", ".", str(root / "node_modules" / ".bin"), str(tmp_path / "tools")]
    )
    assert outside_path(path, root) == str(tmp_path / "tools")


def test_a_default_server_only_in_the_workspace_is_unavailable(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    executable(root / ".venv" / "bin" / "basedpyright-langserver")
    environ = {"PATH": str(root / ".venv" / "bin")}

    found = find_server(BY_SUFFIX[".py"], None, root, environ)

    assert isinstance(found, Unavailable), found
    assert "no basedpyright-langserver or pyright-langserver on PATH" in found.reason


def test_settings_choose_the_program_and_its_arguments_or_turn_it_off(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    program = executable(tmp_path / "bin" / "pyright-langserver")
    environ = {"PATH": str(program.parent)}
    python = BY_SUFFIX[".py"]

    default = find_server(python, None, root, environ)
    chosen = find_server(python, LanguageServerSetting(args=["--stdio", "-v"]), root, environ)
    off = find_server(python, LanguageServerSetting(off=True), root, environ)

    assert isinstance(default, ServerSpec) and default.argv == (str(program), "--stdio")
    assert isinstance(chosen, ServerSpec) and chosen.argv == (str(program), "--stdio", "-v")
    assert isinstance(off, Unavailable) and "off in settings" in off.reason


def test_typescript_runs_its_own_tsserver_never_the_repositorys(tmp_path: Path) -> None:
    """typescript-language-server would load the workspace's node_modules/typescript."""
    root = tmp_path / "repo"
    executable(root / "node_modules" / "typescript" / "lib" / "tsserver.js")
    prefix = tmp_path / "npm" / "node_modules"
    server = executable(prefix / "typescript-language-server" / "lib" / "cli.mjs")
    own = executable(prefix / "typescript" / "lib" / "tsserver.js")
    (prefix / ".bin").mkdir()
    (prefix / ".bin" / "typescript-language-server").symlink_to(server)

    found = find_server(BY_SUFFIX[".ts"], None, root, {"PATH": str(prefix / ".bin")})
    os.unlink(own)
    missing = find_server(BY_SUFFIX[".ts"], None, root, {"PATH": str(prefix / ".bin")})

    assert isinstance(found, ServerSpec) and found.init_options is not None
    assert found.init_options["tsserver"] == {"path": str(own)}
    assert isinstance(missing, Unavailable) and "tsserver.js" in missing.reason


def test_a_repositorys_server_command_waits_for_the_persons_approval(tmp_path: Path) -> None:
    settings = tmp_path / ".moot" / "settings.json"
    settings.parent.mkdir()
    chosen = {"python": {"command": "./evil", "args": ["--stdio"]}, "go": {"off": True}}
    settings.write_text(json.dumps({"lsp": chosen}))

    held = load_settings(tmp_path)
    approve_held(tmp_path)
    trusted = load_settings(tmp_path)

    assert held.lsp == {}
    assert "the python language server runs as: ./evil --stdio" in str(held.held[0])
    assert trusted.lsp["python"].command == "./evil" and trusted.lsp["go"].off


def test_an_error_that_only_moved_is_not_the_edits() -> None:
    old = "import nosuch\n\nx = 1\n"
    new = "# a comment\nimport nosuch\n\nx: int = 'a'\n"
    missing = 'Import "nosuch" could not be resolved'
    wrong = "Type mismatch"

    def item(line: int, message: str, severity: int = 1) -> dict[str, object]:
        start = {"line": line, "character": 0}
        return {"range": {"start": start, "end": start}, "message": message, "severity": severity}

    before = parse([item(0, missing)], old)
    after = parse([item(1, missing), item(3, wrong), item(3, "unused", 2)], new)

    found = new_errors(before, after)

    assert found == [Diagnostic(3, 0, 1, wrong, line_text="x: int = 'a'")]
    assert render_new("a.py", "srv", found) == (
        "[srv: 1 new error in a.py after this change]\na.py:4:1: error: Type mismatch"
    )
    assert render_new("a.py", "srv", []) == "[srv: no new errors in a.py]"


def test_a_misspelt_language_in_settings_is_named() -> None:
    from moot.lsp.session import LanguageServers

    setting = LanguageServerSetting(off=True)
    found = LanguageServers(Path("/nowhere"), {"pyhton": setting}, {"PATH": ""}, None)

    assert found.language_of(Path("a.py")) is None  # no sandbox: nothing runs
    assert found.unavailable() == [
        "python: language servers run in bubblewrap, Landlock or on the host, and this "
        "session's sandbox is none",
        "lsp.pyhton in settings: no such language (c, go, python, rust, typescript)",
    ]


def test_with_no_sandbox_rust_analyzer_is_not_started_for_a_repository_to_choose_its_rustc(
    tmp_path: Path,
) -> None:
    """On the host, the rustup proxy would run the toolchain the repository's
    rust-toolchain.toml names (`path = ...`), and cargo the rustc-wrapper its
    .cargo/config.toml names: unapproved. Only a setting the person gave starts it there."""
    from moot.lsp.session import LanguageServers
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.host import HostSandbox

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "rust-analyzer").write_text("#!/bin/sh\n")
    (tools / "rust-analyzer").chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    host = HostSandbox(SandboxPolicy(repo))
    found = LanguageServers(repo, {}, {"PATH": str(tools)}, host)

    assert found.language_of(repo / "main.rs") is None
    assert found.unavailable()[0].startswith("rust: not started with no sandbox")
    setting = LanguageServerSetting(command=str(tools / "rust-analyzer"))
    chosen = LanguageServers(repo, {"rust": setting}, {"PATH": str(tools)}, host)
    assert chosen.language_of(repo / "main.rs") is not None

"""Which language server serves a file, and which binary runs it.

A server's binary is found on PATH with every entry inside the workspace left out (a relative
entry, `node_modules/.bin`, a `.venv` in the repository): a hostile repository must not get
moot to run a program it ships. The only other source is the `lsp.<language>` setting
(`command`, `args`, `off`), which a repository's own settings file can set only once the
person approves it (`moot.settings.review`). What each default server is told keeps it off
the repository's code too where it would run some (pyright asks a Python outside the
workspace for its search paths, not the repository's `.venv/bin/python`; TypeScript's own
`tsserver`, not the repository's; rust-analyzer without build scripts or proc macros; Go
never downloads a toolchain a `go.mod` names), and a server's own PATH leaves the workspace
out as well (`session._server_env`); the sandbox contains the rest.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from moot.paths import host_search_path
from moot.settings.schema import LanguageServerSetting as LanguageSetting


class Language(msgspec.Struct, frozen=True):
    """A language moot knows a server for."""

    name: str
    """Its settings key (`lsp.<name>`)."""
    suffixes: Mapping[str, str]
    """File suffix -> LSP language id."""
    defaults: tuple[tuple[str, ...], ...]
    """Candidate servers, first found wins: program and arguments."""


LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        {".py": "python", ".pyi": "python"},
        (("basedpyright-langserver", "--stdio"), ("pyright-langserver", "--stdio")),
    ),
    Language(
        "typescript",
        {
            ".ts": "typescript",
            ".mts": "typescript",
            ".cts": "typescript",
            ".tsx": "typescriptreact",
            ".js": "javascript",
            ".mjs": "javascript",
            ".cjs": "javascript",
            ".jsx": "javascriptreact",
        },
        (("typescript-language-server", "--stdio"),),
    ),
    Language("go", {".go": "go"}, (("gopls",),)),
    Language("rust", {".rs": "rust"}, (("rust-analyzer",),)),
    Language(
        "c",
        {
            ".c": "c",
            ".h": "c",
            ".cc": "cpp",
            ".cpp": "cpp",
            ".cxx": "cpp",
            ".hpp": "cpp",
            ".hh": "cpp",
        },
        (("clangd",),),
    ),
)
BY_SUFFIX: dict[str, Language] = {s: lang for lang in LANGUAGES for s in lang.suffixes}


class ServerSpec(msgspec.Struct, frozen=True):
    """How to start one language's server."""

    language: str
    argv: tuple[str, ...]
    """An absolute program path, then its arguments."""
    init_options: dict[str, Any] | None = None
    """`initializationOptions` of its `initialize` request."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Variables set for it besides the sandbox's."""
    configuration: dict[str, Any] = msgspec.field(default_factory=dict)
    """What it is told when it asks for a configuration section (`workspace/configuration`),
    by section; nothing for the others."""

    @property
    def label(self) -> str:
        """Its program's name, for notes ("basedpyright-langserver")."""
        return Path(self.argv[0]).name


class Unavailable(msgspec.Struct, frozen=True):
    """Why a language has no server here, said once to the model."""

    language: str
    reason: str


def outside_path(path_variable: str, workspace: Path) -> str:
    """`path_variable` (a PATH) without its relative entries and those inside `workspace`."""
    return host_search_path((workspace,), path_variable)


def find_server(
    language: Language,
    setting: LanguageSetting | None,
    workspace: Path,
    environ: Mapping[str, str],
) -> ServerSpec | Unavailable:
    """The server for `language`, from its setting or the first default found."""
    if setting is not None and setting.off:
        return Unavailable(language.name, f'off in settings ("lsp.{language.name}.off")')
    search = outside_path(environ.get("PATH", os.defpath), workspace)
    if setting is not None and setting.command:
        program = _program(setting.command, workspace, search)
        if program is None:
            return Unavailable(language.name, f"{setting.command} (lsp.{language.name}) not found")
        default_args = next(
            (d[1:] for d in language.defaults if d[0] == Path(setting.command).name), ()
        )
        args = tuple(setting.args) if setting.args is not None else default_args
        return _shaped(language.name, (program, *args), search)
    for name, *default in language.defaults:
        found = shutil.which(name, path=search)
        if found is not None and _outside(found, workspace):
            given = setting.args if setting is not None else None
            return _shaped(language.name, (found, *(default if given is None else given)), search)
    names = " or ".join(d[0] for d in language.defaults)
    return Unavailable(language.name, f"no {names} on PATH")


def _program(command: str, workspace: Path, search: str) -> str | None:
    """A setting's program: a path as written (relative to the workspace: the person approved
    it), or a name looked up on PATH outside the workspace."""
    if os.sep in command:
        path = Path(command).expanduser()
        path = path if path.is_absolute() else workspace / path
        return str(path) if os.access(path, os.X_OK) else None
    return shutil.which(command, path=search)


def _outside(program: str, workspace: Path) -> bool:
    root = os.path.realpath(workspace)
    real = os.path.realpath(program)
    return not (real == root or real.startswith(root + os.sep))


def _shaped(language: str, argv: Sequence[str], search: str) -> ServerSpec | Unavailable:
    """What a default server is told so that it runs none of the repository's code."""
    argv = tuple(argv)
    if language == "typescript":
        tsserver = _tsserver(argv[0], search)
        if tsserver is None:
            # Without a path, typescript-language-server runs the workspace's own
            # node_modules/typescript: code the repository ships.
            return Unavailable(language, "no typescript (tsserver.js) beside the server")
        options = {
            "tsserver": {"path": tsserver},
            "disableAutomaticTypingAcquisition": True,
            "plugins": [],
        }
        return ServerSpec(language, argv, options)
    if language == "rust":
        options = {
            "cargo": {"buildScripts": {"enable": False}},
            "procMacro": {"enable": False},
            "checkOnSave": False,
        }
        return ServerSpec(language, argv, options)
    if language == "go":  # a go.mod's `toolchain` line must not download and run a Go
        return ServerSpec(language, argv, env={"GOTOOLCHAIN": "local"})
    if language == "python":
        return ServerSpec(language, argv, configuration=_pyright_configuration(search))
    return ServerSpec(language, argv)


def _pyright_configuration(search: str) -> dict[str, Any]:
    """pyright's checks as pyright itself sets them (`standard`: basedpyright's own default
    adds checks, import cycles among them, that a project without its configuration never
    asked for), and a Python outside the workspace to ask for its search paths: without one,
    basedpyright runs the workspace's own `.venv/bin/python`. A project's `pyrightconfig.json`
    or `[tool.pyright]` wins over both."""
    analysis = {"analysis": {"typeCheckingMode": "standard"}}
    python = shutil.which("python3", path=search) or shutil.which("python", path=search)
    given = {"pythonPath": python} if python else {}
    return {"python": {**given, **analysis}, "basedpyright": analysis}


def _tsserver(server: str, search: str) -> str | None:
    """TypeScript's `tsserver.js` installed beside typescript-language-server (an npm prefix
    holding both) or with the `tsc` on PATH."""
    candidates = []
    real = Path(os.path.realpath(server))
    for parent in real.parents:
        if parent.name == "node_modules":
            candidates.append(parent / "typescript" / "lib" / "tsserver.js")
            break
    tsc = shutil.which("tsc", path=search)
    if tsc is not None:
        candidates.append(Path(os.path.realpath(tsc)).parent.parent / "lib" / "tsserver.js")
    return next((str(c) for c in candidates if c.is_file()), None)

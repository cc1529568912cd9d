"""Start-up cost and package boundaries (STYLE.md, "Imports and start-up").

`import moot` and `moot --version` stay cheap; textual lives only in `moot.tui` and
prompt_toolkit only in `moot.repl`. Imports are measured in a fresh interpreter, since this
test process has long since imported everything.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot._version import __version__

SOURCE = Path(__file__).parents[2] / "src" / "moot"

HEAVY = (
    "pydantic",
    "textual",
    "httpx",
    "prompt_toolkit",
    "docker",
    "yaml",
    "mcp",
    "acp",
    "mcp_types",
    "tree_sitter",
    "git",
)


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`; it must print nothing."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    return set(json.loads(result.stdout))


def headless_run(cwd: Path, script: Path, *, home: Path | None = None) -> str:
    """The code of `moot -p hi` in `cwd` on the scripted model `script`, answering "done" (with
    `home` as `MOOT_HOME`), for `modules_after`."""
    return (
        "import contextlib, io, os, moot.cli\n"
        + (f"os.environ['MOOT_HOME'] = {str(home)!r}\n" if home is not None else "")
        + f"os.chdir({str(cwd)!r})\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = moot.cli.main(['-p', 'hi', '--model', 'scripted:{script}'])\n"
        "assert (code, out.getvalue()) == (0, 'done\\n'), (code, out.getvalue())"
    )


def top_level(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_import_moot_imports_nothing_heavy() -> None:
    loaded = top_level(modules_after("import moot"))

    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_version_imports_nothing_but_the_cli_module() -> None:
    code = (
        "import contextlib, io, moot.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = moot.cli.main(['--version'])\n"
        f"assert (code, out.getvalue()) == (0, 'moot {__version__}\\n'), (code, out.getvalue())"
    )

    loaded = modules_after(code)

    assert {m for m in loaded if m.startswith("moot")} == {"moot", "moot._version", "moot.cli"}
    unwanted = {*HEAVY, "argparse", "asyncio", "sqlite3", "platformdirs"}
    assert top_level(loaded).isdisjoint(unwanted), sorted(top_level(loaded) & unwanted)


def test_the_version_command_imports_nothing_heavy() -> None:
    """The real command line, `python -m moot.cli --version`, measured with `-X importtime`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "moot.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert (result.returncode, result.stdout) == (0, f"moot {__version__}\n")
    # Lines look like `import time:       123 |        456 |   package.module`.
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    loaded = {line.rpartition("|")[2].strip() for line in lines[1:]}
    assert {"moot", "moot._version"} <= loaded  # the output parsed; `-m` runs moot.cli itself
    assert top_level(loaded).isdisjoint({*HEAVY, "argparse"})


def test_headless_start_up_leaves_the_tools_and_heavy_libraries_unloaded() -> None:
    """`moot -p` sends its first request before any tool runs: each tool's module, pydantic
    (for their argument models), gitpython, tree-sitter and docker are imported at first use
    (start-up is a benchmark)."""
    loaded = modules_after("import moot.cli.headless")

    tool_modules = {m for m in loaded if m.startswith("moot.tools.")}
    assert tool_modules <= {
        "moot.tools.base",
        "moot.tools.builtin",
        "moot.tools.builtin_specs",
        "moot.tools.context",
        "moot.tools.exit_plan_mode",  # its spec only; the tool loads at its first call
        "moot.tools.lazy",
        "moot.tools.redirects",  # web_fetch's redirect check, no tool: the policy seam only
    }
    unused = {
        "pydantic",
        "git",
        "tree_sitter",
        "docker",
        "yaml",
        "textual",
        "prompt_toolkit",
        "mcp",
        "acp",
    }
    assert top_level(loaded).isdisjoint(unused), sorted(top_level(loaded) & unused)


def test_the_app_loads_no_session_built_in_command_or_other_screen_before_its_first_paint() -> None:
    """`moot` paints its prompt before its session opens (in a thread, after the first paint):
    the client, the runtime, the store, the tools, the built-in slash commands and the app's
    other screens load after it (start-up is a benchmark: `scripts/bench --only app`)."""
    loaded = modules_after("import moot.tui, moot.tui.app")

    later = ("moot.client", "moot.core", "moot.store", "moot.tools", "moot.tui.screens.")
    too_soon = {m for m in loaded if m.startswith(later)}
    too_soon |= loaded & {"moot.commands.builtin", "moot.commands.cost", "moot.commands.session"}
    assert not too_soon, sorted(too_soon)


def test_listing_sessions_loads_only_what_a_listing_needs(tmp_path: Path) -> None:
    """`moot sessions list` is a start-up benchmark (<= 100 ms over 1,000 sessions): it fills
    in only its own command's options, and loads no transcript writer, no session assembly,
    no event class or log rule, and none of what blobs, checkpoints or argparse's terminal width
    would bring (hashlib with OpenSSL, json, shutil with bz2 and lzma)."""
    from moot.store.sqlite import SQLiteStore

    with SQLiteStore(tmp_path / "data" / "sessions.db") as store:
        sid = store.create_session(title="listed here", workspace="/elsewhere").id
    code = (
        "import contextlib, io, sys, moot.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = moot.cli.main(['sessions', 'list', '--all'])\n"
        "loaded = sorted(sys.modules)\n"
        "import json\n"
        "print(json.dumps([code, out.getvalue(), loaded]))"
    )
    env = {**os.environ, "MOOT_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env
    )
    assert result.returncode == 0, result.stderr

    code_, listing, loaded = json.loads(result.stdout)

    assert code_ == 0 and listing.startswith(sid)
    assert listing.rstrip().endswith("listed here  in /elsewhere")
    unwanted = {
        *HEAVY,
        "json",
        "hashlib",
        "shutil",
        "moot.frontend.transcript",
        "moot.client.local",
    }
    unwanted |= {"moot.protocol.events", "moot.protocol.ops", "moot.store.invariants"}
    assert unwanted.isdisjoint(loaded), sorted(unwanted.intersection(loaded))
    assert not [m for m in loaded if m.startswith(("moot.core", "moot.providers", "moot.tools"))]


def test_loading_settings_imports_no_pydantic(tmp_path: Path) -> None:
    """`moot -p` reads the settings files first; checking them must not cost pydantic."""
    (tmp_path / ".moot").mkdir()
    (tmp_path / ".moot" / "settings.json").write_text(
        '{"sandbox": "none", "permissions": {"allow": ["Bash(ls)"]}}', encoding="utf-8"
    )
    code = (
        "import pathlib, moot.settings\n"
        f"settings = moot.settings.load_settings(pathlib.Path({str(tmp_path)!r}))\n"
        "assert settings.held and settings.permissions.allow == [], settings"
    )

    assert "pydantic" not in top_level(modules_after(code))


ONLY_WHEN_NEEDED = {
    "pathspec",  # path rules and .gitignore walks
    "moot.hooks",  # hooks set in settings
    "moot.core.hook_points",
    "moot.permissions.decide",  # the first tool call
    "moot.permissions.rule_match",
    "moot.permissions.suggest",
    "moot.permissions.targets",
    "moot.permissions.preview",
    "difflib",
    "moot.permissions.shell",  # a bash call or a Bash rule
    "moot.permissions.shell_parser",
    "moot.permissions.shell_lexer",
    "moot.permissions.masks",  # a deny rule that names a path
    "moot.permissions.tracked",
    "moot.core.gate",  # a library user's turn gate
    "moot.cli.sandbox",  # `moot sandbox`
    "moot.client.person_tools",  # the person's own tool calls (`RunTool`)
    "moot.client.session_rules",  # `/permissions`
    "moot.client.prompt_files",  # a message with an `@path`
    "moot.client.models",  # a model picker
    "moot.commands",  # slash commands
    "moot.mcp.manager",  # MCP servers configured
    "moot.mcp.approvals",
    "moot.mcp.tools",
    "moot.mcp_server",  # `moot mcp serve`
    "moot.acp",  # `moot acp`
    "moot.lsp",  # language servers: the first edit of a file of a language with one
    "moot.lsp.session",
    "moot.tools.diagnosed",
}


def test_a_headless_run_without_hooks_rules_or_tool_calls_loads_none_of_their_code(
    tmp_path: Path,
) -> None:
    """`moot -p` start-up is a benchmark: what only hooks, permission rules, a tool call or a
    walk of the workspace need is imported when first needed, not at start."""
    script = tmp_path / "turns.yaml"
    script.write_text("- text: done\n", encoding="utf-8")
    loaded = modules_after(headless_run(tmp_path, script))

    assert "moot.cli.headless" in loaded
    assert loaded.isdisjoint(ONLY_WHEN_NEEDED), sorted(loaded & ONLY_WHEN_NEEDED)


def test_a_headless_run_whose_calls_are_allowed_loads_no_approval_or_result_code(
    tmp_path: Path,
) -> None:
    """`moot -p` with text output, a tool call the mode allows and an answer: what only a call
    that asks needs (its diff preview, the rules that would allow it) and what only json and
    stream-json output need (Claude Code's message and result shapes) stays unloaded: the
    first tool decision and start-up are on a benchmark's path (`scripts/bench --only agent`)."""
    (tmp_path / "notes.txt").write_text("a note\n", encoding="utf-8")
    script = tmp_path / "turns.json"
    read = {"name": "read", "arguments": {"path": "notes.txt"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [read]}, {"text": "done"}]}))
    loaded = modules_after(headless_run(tmp_path, script))

    assert {"moot.permissions.decide", "moot.tools.read"} <= loaded  # the call was decided, ran
    later = {
        "moot.permissions.preview",
        "moot.permissions.suggest",
        "moot.cli.claude_stream.messages",
        "moot.cli.claude_stream.result",
    }
    assert loaded.isdisjoint(later), sorted(loaded & later)


def test_a_headless_run_with_mcp_servers_never_imports_the_sdks_in_moot(
    tmp_path: Path,
) -> None:
    """MCP servers start in the background, in a host process: `moot -p` with three of them
    configured imports neither SDK (nor pydantic) before, during or after its turn."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (home / "config").mkdir(parents=True)
    servers = {
        name: {"command": sys.executable, "args": ["-c", "import time; time.sleep(30)"]}
        for name in ("one", "two", "three")
    }
    # They never answer: the run waits a second for them before its request, then goes on.
    settings = {"mcpServers": servers, "mcpStartupWait": 1}
    (home / "config" / "settings.json").write_text(json.dumps(settings))
    script = tmp_path / "turns.yaml"
    script.write_text("- text: done\n")
    loaded = modules_after(headless_run(work, script, home=home))

    assert "moot.mcp.manager" in loaded  # the servers were there
    assert top_level(loaded).isdisjoint({"mcp", "acp", "mcp_types", "pydantic", "httpx2"})


# ---- which package may import what --------------------------------------------------------


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every absolute import in a file, at any depth (functions too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def offenders(library: str, allowed: str) -> list[str]:
    """Files outside `src/moot/<allowed>/` that import `library`."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        if relative.parts[0] == allowed:
            continue
        for line, module in imports(path):
            if module.partition(".")[0] == library:
                found.append(f"src/moot/{relative}:{line} imports {module}")
    return found


@pytest.mark.parametrize(
    ("library", "allowed"),
    [
        ("textual", "tui"),
        ("prompt_toolkit", "repl"),
        ("tree_sitter", "repomap"),
        ("docker", "sandbox"),
        ("acp", "acp"),
    ],
)
def test_heavy_libraries_stay_in_their_package(library: str, allowed: str) -> None:
    assert offenders(library, allowed) == []


def test_the_mcp_sdk_is_imported_only_by_the_host_process_and_moot_mcp_serve() -> None:
    """The SDK costs about a second of CPU: in moot it would hold the interpreter lock while the
    app starts or the first request goes out, so only the host process (`moot.mcp.host`, via
    `connection`, `transport` and `oauth`) and `moot mcp serve` import it."""
    found = offenders("mcp", "mcp_server") + offenders("mcp_types", "mcp_server")
    allowed = ("src/moot/mcp/connection.py", "src/moot/mcp/transport.py", "src/moot/mcp/oauth.py")
    assert [f for f in found if not f.startswith(allowed)] == []


def test_the_checks_see_every_import(tmp_path: Path) -> None:
    """The walker finds imports inside functions and `from` imports, not relative ones."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, textual.app\n"
        "from . import sibling\n"
        "def f():\n"
        "    from prompt_toolkit import prompt\n",
        encoding="utf-8",
    )

    assert sorted(imports(sample)) == [(1, "os"), (1, "textual.app"), (4, "prompt_toolkit")]


def test_protocol_imports_nothing_else_of_moot() -> None:
    """DESIGN.md: `protocol/` is the contract and imports nothing else of moot."""
    found = [
        f"src/moot/protocol/{path.name}:{line} imports {module}"
        for path in sorted((SOURCE / "protocol").rglob("*.py"))
        for line, module in imports(path)
        if module.partition(".")[0] == "moot" and not module.startswith("moot.protocol")
    ]

    assert found == []


def test_the_permission_layer_imports_no_tool_so_tools_and_permissions_form_no_cycle() -> None:
    """`tools` reads the permission layer (`bash`: the files a command writes, from its shell
    parser); the permission layer never reads a tool, at any depth, functions included. The
    mode both share is the protocol's (`protocol/modes.py::PermissionMode`), and the redirect
    check `web_fetch` asks is a tool's (`tools/redirects.py`). Failed while
    `permissions/redirects.py` imported `moot.tools.base` and `tools/exit_plan_mode_tool.py`
    imported `moot.permissions.modes`: the two packages imported each other."""
    found = [
        f"src/moot/permissions/{path.name}:{line} imports {module}"
        for path in sorted((SOURCE / "permissions").rglob("*.py"))
        for line, module in imports(path)
        if module == "moot.tools" or module.startswith("moot.tools.")
    ]

    assert found == []


def test_httpx_loads_without_its_command_line_and_its_main_still_runs() -> None:
    """click, rich and pygments come with the app's and the SDKs' dependencies; httpx would
    load all three for its own console script (`moot.cli.lean_httpx`)."""
    code = (
        "from moot.cli.lean_httpx import keep_httpx_cli_unloaded\n"
        "keep_httpx_cli_unloaded()\n"
        "import httpx\n"
        "assert callable(httpx.main)"
    )
    loaded = modules_after(code)
    assert "httpx" in loaded
    assert top_level(loaded).isdisjoint({"click", "rich", "pygments"})

    ran = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; sys.argv = ['httpx', '--help']; httpx.main()"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0 and "Usage: httpx" in ran.stdout, ran.stderr


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_or_package_imports_itself_back() -> None:
    """No cycle between moot's modules, nor between its packages (`moot.tools` and
    `moot.permissions` imported each other), counting imports inside functions, which hide a
    cycle from the module's top without removing it (issue 30)."""
    import grimp

    graph = grimp.build_graph("moot", include_external_packages=False)
    modules = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}

    # A package's __init__ importing its own modules is the package, not a cycle.
    def outside(m: str, n: str) -> bool:
        return not n.startswith(m + ".") and not m.startswith(n + ".")

    module_edges = {m: {n for n in ns if outside(m, n)} for m, ns in modules.items()}
    assert _cycles(module_edges) == []

    def package(m: str) -> str:
        return ".".join(m.split(".")[:2])

    packages: dict[str, set[str]] = {}
    for m, ns in modules.items():
        packages.setdefault(package(m), set()).update(
            package(n) for n in ns if package(n) != package(m)
        )
    assert _cycles(packages) == []


LOADED_AT_FIRST_USE = {
    "moot.sandbox.net_proxy": "a session whose settings name a network (`sandbox.network`)",
    "moot.sandbox.net_rules": "the same",
    "moot.client.mcp_sampler": "a session with MCP servers",
    "moot.providers.images": "a message or a result carrying an image or a PDF",
    "moot.store.attachment_blobs": "the first event appended or read",
    "moot.sandbox.bubblewrap": "the session's first command (`DeferredSandbox`)",
    "moot.sandbox.landlock": "the same",
    "moot.sandbox.env": "the same: what a command's environment keeps",
}


def test_opening_a_session_loads_nothing_only_a_first_use_needs(tmp_path: Path) -> None:
    """Opening a session (`open_client`, what the app, the REPL, an editor and `moot -p` share)
    is on the start-up benchmarks' path (`scripts/bench --only app --only repl`): the network
    proxy, the MCP sampler, the image code, the attachments' blobs and the sandbox's backend
    load at their first use, not as the session opens."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "turns.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    code = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from moot.client.local import SessionOptions, open_client\n"
        f"options = SessionOptions(cwd=Path({str(repo)!r}), model='scripted:{script}',\n"
        "    asks_about_network=True, asks_mcp_questions=True)\n"
        "client = open_client(options)\n"
        "status = client.status()\n"
        "loaded = sorted(sys.modules)\n"
        "asyncio.run(client.close())\n"
        "print(json.dumps([status.sandbox.backend, loaded]))"
    )
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=repo
    )
    assert result.returncode == 0, result.stderr

    backend, loaded = json.loads(result.stdout)

    assert backend in ("bubblewrap", "landlock", "docker", "none")  # chosen as it opens
    assert "moot.core.runtime" in loaded  # the session opened in that interpreter
    too_soon = set(LOADED_AT_FIRST_USE).intersection(loaded)
    assert not too_soon, {name: LOADED_AT_FIRST_USE[name] for name in sorted(too_soon)}

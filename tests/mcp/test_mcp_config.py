"""MCP configuration: the files and their origins, `${VAR}` expansion, approvals by definition,
tool names, deferral past the budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_helpers import user_servers, write_json
from moot.mcp.approvals import Approvals
from moot.mcp.config import expand, load_servers, parse_server
from moot.mcp.names import MAX_NAME, qualified, valid_server_name
from moot.mcp.tools import McpTool, ToolSearch, plan_deferral
from moot.mcp.wire import ToolDef
from moot.tools.context import ToolContext


def test_variables_expand_with_defaults_and_an_unset_one_is_the_servers_problem() -> None:
    env = {"TOKEN": "s3cret", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer s3cret"
    assert expand("${MISSING:-fallback}/${EMPTY:-x}", env) == "fallback/x"
    assert expand("$TOKEN stays", env) == "$TOKEN stays"  # only the braced form, as others do

    server = parse_server(
        "gh",
        {"command": "npx", "args": ["-y", "srv"], "env": {"GITHUB_TOKEN": "${GH_TOKEN}"}},
        origin="project",
        source=".mcp.json",
        environ=env,
    )
    assert server.problem == "${GH_TOKEN} is not set"
    ok = parse_server(
        "docs",
        {"type": "http", "url": "https://x.test/mcp", "headers": {"A": "${TOKEN}"}},
        origin="user",
        source="settings.json",
        environ=env,
    )
    assert (ok.transport, ok.headers, ok.problem) == ("http", {"A": "s3cret"}, "")


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("a__b", {"command": "x"}, "no '__'"),
        ("x", ["not", "an", "object"], "an object with a `command` or a `url`"),
        ("x", {"type": "websocket", "url": "ws://x"}, "unknown type"),
        ("x", {"type": "http"}, "needs a `url`"),
        ("x", {"url": "file:///etc/passwd"}, "must start with http"),
        ("x", {"command": "x", "args": "one string"}, "`args` must be a list"),
        ("x", {"command": "x", "timeout": -1}, "`timeout` must be a positive number"),
    ],
)
def test_a_definition_that_cannot_start_names_its_problem(
    name: str, raw: object, problem: str
) -> None:
    server = parse_server(name, raw, origin="project", source=".mcp.json", environ={})
    assert problem in server.problem


def test_files_are_read_lowest_precedence_first_with_their_origin(
    tmp_path: Path, private_moot_home: Path
) -> None:
    root = tmp_path / "work"
    user_servers(
        private_moot_home,
        {"mine": {"command": "mine"}, "shared": {"command": "from-user"}},
        enableAllProjectMcpServers=False,
        enabledMcpjsonServers=["repo"],
        mcpSamplingAllowed=["mine"],
    )
    write_json(root / ".mcp.json", {"mcpServers": {"repo": {"command": "repo"}}})
    write_json(
        root / ".moot" / "settings.json",
        {
            "mcpServers": {"shared": {"command": "from-repo"}},
            "enableAllProjectMcpServers": True,  # a repository cannot approve its own servers
            "disabledMcpjsonServers": ["mine"],
            "mcpSamplingAllowed": ["repo"],  # nor let its servers spend on the model unasked
        },
    )
    write_json(
        root / ".moot" / "settings.local.json",
        {"mcpServers": {"local": {"command": "l"}}, "mcpSamplingAllowed": ["local"]},
    )

    loaded = load_servers(root, dict(os.environ))

    origins = {name: (s.origin, s.command) for name, s in loaded.servers.items()}
    assert origins == {
        "mine": ("user", "mine"),
        "shared": ("project", "from-repo"),
        "repo": ("project", "repo"),
        "local": ("local", "l"),
    }
    assert not loaded.enable_all_project
    assert loaded.enabled == {"repo"} and loaded.disabled == {"mine"}
    assert loaded.sampling_allowed == {"mine"}
    assert [s.trusted for s in loaded.servers.values()] == [True, False, False, False]


def test_a_file_that_cannot_be_read_is_a_problem_not_a_failure(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / ".mcp.json").write_text("{not json")
    os.mkfifo(root / ".moot-fifo")
    write_json(root / ".moot" / "settings.json", {"mcpServers": ["a", "list"]})
    loaded = load_servers(root, {})
    assert loaded.servers == {}
    assert "not valid JSON" in loaded.problems[0]
    assert "mcpServers must be an object" in loaded.problems[1]

    os.replace(root / ".moot-fifo", root / ".mcp.json")  # a FIFO would block a plain read
    assert "not a regular file" in load_servers(root, {}).problems[0]


def test_an_approval_is_for_the_definition_as_written_and_kept_out_of_the_repository(
    tmp_path: Path, private_moot_home: Path
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    first = parse_server("s", {"command": "a"}, origin="project", source="x", environ={})
    changed = parse_server("s", {"command": "b"}, origin="project", source="x", environ={})
    approvals = Approvals(root)
    assert not approvals.approved(first)
    approvals.approve(first)
    assert Approvals(root).approved(first)
    assert not Approvals(root).approved(changed)
    assert not Approvals(tmp_path / "elsewhere").approved(first)
    assert Approvals(root, allowed=["s"]).approved(changed)
    assert Approvals(root, allowed=["*"]).approved(changed)
    stored = private_moot_home / "data" / "mcp-approvals.json"
    assert stored.stat().st_mode & 0o777 == 0o600
    assert not list(root.iterdir())  # nothing written into the project
    Approvals(root).forget("s")
    assert not Approvals(root).approved(first)


def test_tool_names_fit_what_providers_accept() -> None:
    assert qualified("github", "create_issue") == "mcp__github__create_issue"
    assert qualified("my.server", "do it!") == "mcp__my_server__do_it_"
    long = qualified("s", "x" * 100)
    assert len(long) == MAX_NAME and long != qualified("s", "x" * 99)
    assert valid_server_name("gh-1") and not valid_server_name("a.b")


def tool(server: str, index: int, size: int) -> McpTool:
    definition = ToolDef(f"t{index}", "d" * size, {"type": "object", "properties": {}})

    async def invoke(tool: McpTool, arguments: dict[str, object], progress: object) -> object:
        return None

    return McpTool(qualified(server, f"t{index}"), server, definition, invoke)


def test_servers_past_the_budget_are_deferred_in_name_order() -> None:
    servers = {
        "big": [tool("big", i, 500) for i in range(10)],
        "a": [tool("a", 0, 50)],
        "z": [tool("z", 0, 50)],
    }
    assert plan_deferral(servers, "auto", budget=2_000) == {"big"}
    assert plan_deferral(servers, "never", budget=10) == set()
    assert plan_deferral(servers, "always") == {"a", "big", "z"}


async def test_the_search_tool_lists_deferred_tools_in_one_line_and_loads_what_it_finds() -> None:
    tools = [tool("big", i, 300) for i in range(3)]
    for t in tools:
        t.deferred = True
    loaded: list[str] = []
    search = ToolSearch(tools, on_load=loaded.extend)
    assert "mcp__big__t1: ddd" in search.description and len(search.description) < 600
    ctx = ToolContext(session_id="s", run_id="r", call_id="c", agent="a", tool_call_id="t")
    result = await search.invoke({"query": "select:mcp__big__t1"}, ctx)
    assert '"input_schema"' in result.content and "mcp__big__t1" in result.content
    assert [t.deferred for t in tools] == [True, False, True]
    assert loaded == ["mcp__big__t1"]
    missing = await search.invoke({"query": "nothing like it"}, ctx)
    assert missing.is_error and "mcp__big__t0" in missing.content


def test_an_approval_covers_the_repository_script_a_server_runs(tmp_path: Path) -> None:
    """A server that runs a script of the repository is approved for the script as it is: a
    change to it (a commit, or the model editing it) asks again before it runs on the host."""
    root = tmp_path / "work"
    (root / "tools").mkdir(parents=True)
    script = root / "tools" / "mcp.py"
    script.write_text("print('v1')\n")
    definition = {"command": "python3", "args": ["tools/mcp.py", "--flag"]}

    def parse() -> object:
        return parse_server(
            "s", definition, origin="project", source=".mcp.json", environ={}, project=root
        )

    approvals = Approvals(root)
    approvals.approve(parse())  # type: ignore[arg-type]
    assert approvals.approved(parse())  # type: ignore[arg-type]
    script.write_text("print('v2: something else')\n")
    assert not approvals.approved(parse())  # type: ignore[arg-type]


async def test_the_sign_in_redirect_lands_on_a_one_shot_listener_and_tokens_are_private(
    tmp_path: Path,
) -> None:
    """The SDK runs the OAuth flow; moot keeps tokens (0600, per server URL) and listens on
    127.0.0.1 for the authorization server's redirect, passing code, state and iss on."""
    import asyncio

    from mcp.shared.auth import OAuthToken

    from moot.mcp.oauth import FileTokenStorage, wait_for_redirect

    storage = FileTokenStorage(tmp_path / "auth.json", "https://docs.test/mcp")
    port = storage.port()
    assert port == FileTokenStorage(tmp_path / "auth.json", "https://docs.test/mcp").port()
    await storage.set_tokens(OAuthToken(access_token="a-token", token_type="Bearer"))
    assert (await storage.get_tokens()).access_token == "a-token"  # type: ignore[union-attr]
    assert (tmp_path / "auth.json").stat().st_mode & 0o777 == 0o600
    other = FileTokenStorage(tmp_path / "auth.json", "https://other.test/mcp")
    assert await other.get_tokens() is None

    waiting = asyncio.create_task(wait_for_redirect(port, timeout=30))
    for _ in range(100):  # the listener binds (bounded polling)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            break
        except OSError:
            await asyncio.sleep(0.02)
    writer.write(b"GET /callback?code=c0de&state=s7&iss=https%3A%2F%2Fauth.test HTTP/1.1\r\n\r\n")
    await writer.drain()
    page = await reader.read()
    writer.close()
    result = await waiting
    assert (result.code, result.state, result.iss) == ("c0de", "s7", "https://auth.test")
    assert b"signed in" in page


def test_an_approvals_file_someone_else_could_have_written_approves_no_server(
    tmp_path: Path,
) -> None:
    """Second attack on issue 28: the MCP approvals were read from whatever file lay there,
    so whoever could write the data directory approved a repository's server (a command run
    on the host) for the person."""
    from moot.protocol.mcp import McpServerConfig

    path = tmp_path / "data" / "mcp-approvals.json"
    proj = McpServerConfig(
        name="proj", transport="stdio", command="x", origin="project", fingerprint="f1"
    )
    Approvals(tmp_path, path).approve(proj)
    assert Approvals(tmp_path, path).approved(proj)
    path.chmod(0o666)
    assert not Approvals(tmp_path, path).approved(proj)
    planted = tmp_path / "planted.json"
    planted.write_bytes(path.read_bytes())
    planted.chmod(0o600)
    path.unlink()
    path.symlink_to(planted)
    assert not Approvals(tmp_path, path).approved(proj)

"""How every front end names a tool call: paths inside the workspace relative to it (issue 29,
item 6: approvals showed `--- a//home/.../hello.py` and tool lines absolute paths, which cut
their summaries)."""

from __future__ import annotations

from pathlib import Path

from moot.frontend.display import key_argument, shown_path
from moot.permissions.preview import diff_preview
from moot.testing import FakeClient
from tui_apps import app_for
from tui_scripts import Run


def test_paths_inside_the_workspace_are_shown_relative_to_it() -> None:
    assert shown_path("/ws/src/a.py", "/ws") == "src/a.py"
    assert shown_path("/ws/src/../a.py", "/ws/") == "a.py"
    assert shown_path("/ws", "/ws") == "."
    assert shown_path("/wsx/a.py", "/ws") == "/wsx/a.py"  # another directory
    assert shown_path("/etc/passwd", "/ws") == "/etc/passwd"
    assert shown_path("src/a.py", "/ws") == "src/a.py"
    assert shown_path("/ws/a.py", "") == "/ws/a.py"
    assert key_argument({"path": "/ws/a.py", "content": "x"}, "/ws") == "a.py"
    assert key_argument({"command": "cat /ws/a.py"}, "/ws") == "cat /ws/a.py"  # a command as is


def test_an_approvals_diff_names_the_file_relative_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text('print("hi")\n')
    for given in (str(tmp_path / "hello.py"), "hello.py", "./hello.py"):
        diff = diff_preview(tmp_path, "edit", {"path": given, "old": "hi", "new": "hello"})
        assert diff is not None
        assert diff.splitlines()[:2] == ["--- a/hello.py", "+++ b/hello.py"], given


async def test_the_app_and_the_repl_show_a_tool_calls_path_relative() -> None:
    from moot.tui.widgets.tool_block import ToolBlock
    from moot.tui.widgets.tools_pane import ToolsPane
    from repl_harness import running_repl

    client = FakeClient(autoplay=False)
    workspace = client.status().workspace
    run = Run().start("read it")
    run.tool("t1", "read", {"path": f"{workspace}/src/hello.py"}, "1 print('hi')").finish("ok")
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.emit(*run.events)
        for _ in range(50):
            if app.query(ToolBlock):
                break
            await pilot.pause()
        (block,) = app.query(ToolBlock)
        assert "read src/hello.py" in str(block._line.render())
        assert workspace not in str(block._line.render())
        await pilot.pause()
        assert app.query_one(ToolsPane)._call_label(run.events[1]) == "read src/hello.py"  # type: ignore[arg-type]

    repl_client = FakeClient(run.events, autoplay=False)
    async with running_repl(repl_client) as repl:
        await repl.prompt_ready()
        repl_client.play()
        await repl.printed("src/hello.py")
        assert f"{workspace}/src" not in repl.text

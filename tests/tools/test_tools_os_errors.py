"""Every file tool answers every OS error with a tool error result that says what happened,
and the decision before it never fails (issue 11, item 7): `/proc` and `/sys`, links the
kernel will not read (`/proc/1/cwd`), link loops, FIFOs, devices, sockets, unreadable files
and directories, fed as paths and met while walking.

Root passes most permission checks, so what denies root here is what the kernel refuses
anyone (`/proc/1/cwd` where pid 1 is not ours, a link loop, a device that cannot be read); the
same tests then run again as an unprivileged user (`nobody`, through `setpriv`), for whom
`chmod 000` denies too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moot.core.approval import ApprovalRequest
from moot.permissions.decide import decide
from moot.permissions.headless import NoAsking
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet, read_denied
from moot.protocol import events as ev
from moot.protocol.modes import PermissionMode
from moot.sandbox.background import BackgroundShells
from moot.tools.base import Tool, ToolContext
from moot.tools.bash import bash_tool
from moot.tools.files import file_tools
from moot.tools.grep import grep_tool
from moot.tools.repo_map import repo_map_tool
from moot.tools.symbols import symbols_tool
from moot.workspace.paths import Workspace
from runtime_helpers import agent, call, make_runtime, of, run_turn

CTX = ToolContext("s", "r", "c", "a", "t")
UNPRIVILEGED = "MOOT_TEST_UNPRIVILEGED"
LINKS = {
    "proc_cwd": "/proc/1/cwd",
    "proc_root": "/proc/1/root",
    "proc": "/proc",
    "sys": "/sys",
    "self_fd": "/proc/self/fd",
    "self_mem": "/proc/self/mem",
    "loop": "loop",
    "loop_a": "loop_b",
    "loop_b": "loop_a",
    "dangling": "/nonexistent/x",
}


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace full of things that make system calls fail."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    for name, target in LINKS.items():
        (root / name).symlink_to(target)
    (root / "inner").mkdir()
    (root / "inner" / "proc_cwd").symlink_to("/proc/1/cwd")
    os.mkfifo(root / "fifo")
    with contextlib.suppress(PermissionError):  # only root makes devices
        os.mknod(root / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # reads as /dev/zero
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))
    for name, mode in (("locked", 0), ("unsearchable", 0o600), ("unlistable", 0o300)):
        (root / name).mkdir()
        (root / name / "f.py").write_text("x = 1\n")
        (root / name).chmod(mode)
    (root / "unreadable.py").write_text("y = 2\n")
    (root / "unreadable.py").chmod(0)
    yield Workspace(root)
    for name in ("locked", "unsearchable", "unlistable"):
        (root / name).chmod(0o700)


SEGMENTS = st.sampled_from(
    [
        *LINKS,
        *("inner", "fifo", "zero", "sock", "locked", "unsearchable", "unlistable"),
        *("unreadable.py", "a.py", "f.py", "..", ".", "etc", "passwd", "1", "cwd", "fd", "0"),
    ]
)
PREFIXES = st.sampled_from(["", "./", "{root}/", "/proc/1/cwd/", "/proc/self/", "/sys/", "/"])


@st.composite
def paths(draw: st.DrawFn, root: str) -> str:
    body = "/".join(draw(st.lists(SEGMENTS, min_size=1, max_size=4)))
    return draw(PREFIXES).format(root=root) + body


def calls_for(path: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("read", {"path": path}),
        ("write", {"path": path, "content": "x\n"}),
        ("edit", {"path": path, "old": "x", "new": "y"}),
        ("multi_edit", {"path": path, "edits": [{"old": "x", "new": "y"}]}),
        ("glob", {"pattern": "**/*", "path": path}),
        ("grep", {"pattern": "x", "path": path}),
        ("grep_python", {"pattern": "x", "path": path}),
        ("ls", {"path": path, "depth": 3}),
    ]


def tools_of(ws: Workspace) -> dict[str, Tool]:
    tools: dict[str, Tool] = {t.name: t for t in file_tools(ws)}
    tools["grep_python"] = grep_tool(ws, use_ripgrep=False)
    tools["repo_map"] = repo_map_tool(ws)
    tools["symbols"] = symbols_tool(ws)
    return tools


def check_answer(name: str, result_content: str) -> None:
    """An error result the tool wrote itself, not the catch-all that names an exception."""
    assert not result_content.startswith(f"Tool {name.split('_python')[0]} failed"), (
        name,
        result_content,
    )


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_file_tool_answers_every_os_error(hostile: Workspace, data: st.DataObject) -> None:
    ws = hostile
    path = data.draw(paths(str(ws.root)))
    tools = tools_of(ws)
    rules = RuleSet(deny=["Read(./secret/**)"])
    ws.hidden = read_denied(rules, ws.root)

    async def each() -> None:
        for name, arguments in calls_for(path):
            tool = name.removesuffix("_python")
            request = ApprovalRequest("s", "a", "c", "t", tool, tools[name].side_effect, arguments)
            for mode in (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS):
                decide(request, mode, rules, ws.root)  # never raises
            result = await asyncio.wait_for(tools[name].invoke(arguments, CTX), 30)
            check_answer(name, result.content)
        command = f"cd {path} && cat {path} > {path}"
        decide(ApprovalRequest("s", "a", "c", "t", "bash", "runs_commands", {"command": command}),
               PermissionMode.DEFAULT, rules, ws.root)  # fmt: skip

    asyncio.run(each())


async def test_the_walking_tools_answer_in_a_workspace_full_of_failures(
    hostile: Workspace,
) -> None:
    tools = tools_of(hostile)
    for name, arguments in [
        ("glob", {"pattern": "**/*"}),
        ("grep", {"pattern": "x"}),
        ("grep_python", {"pattern": "x"}),
        ("ls", {"depth": 5}),
        ("repo_map", {}),
        ("symbols", {"name": "f"}),
    ]:
        result = await asyncio.wait_for(tools[name].invoke(arguments, CTX), 30)
        check_answer(name, result.content)
        assert not result.is_error, (name, result.content)
    listed = (await tools["glob"].invoke({"pattern": "**/*"}, CTX)).content
    assert "a.py" in listed
    with_rg, without = [
        (await tools[name].invoke({"pattern": "[a-z]", "output": "count"}, CTX)).content
        for name in ("grep", "grep_python")
    ]
    assert with_rg == without  # unreadable files are skipped by both alike


@pytest.mark.parametrize("explicit", ["fifo", "zero", "sock"])
async def test_grep_of_a_special_file_answers_at_once(hostile: Workspace, explicit: str) -> None:
    """ripgrep would wait on a FIFO forever and read a device without end."""
    if not (hostile.root / explicit).exists():
        pytest.skip("devices are made only as root")
    for name in ("grep", "grep_python"):
        result = await asyncio.wait_for(
            tools_of(hostile)[name].invoke({"pattern": "x", "path": explicit}, CTX), 10
        )
        assert result.is_error and "not a regular file" in result.content, result.content


async def test_a_path_under_proc_1_cwd_never_crashes_a_run(hostile: Workspace) -> None:
    """The run the issue found failing with internal_error: decide() resolved the path."""
    ws = hostile
    probes = [
        call("read", path="proc_cwd/etc/passwd"),
        call("read", path="/proc/1/cwd/etc/passwd"),
        call("glob", pattern="*", path="proc_cwd"),
        call("ls", path="inner/proc_cwd"),
        call("grep", pattern="root", path="proc_cwd/etc"),
        call("edit", path="proc_cwd/x", old="a", new="b"),
        call("write", path="inner/proc_cwd/x", content="x"),
        call("bash", command="cd proc_cwd && ls"),
        call("bash", command="cat /proc/1/cwd/etc/passwd > proc_cwd/x"),
    ]
    policy = RulesPolicy(RuleSet(), ws.root, mode=PermissionMode.ACCEPT_EDITS)
    tools = [*file_tools(ws), bash_tool(None, ws, BackgroundShells())]
    model = agent("main", {"tool_calls": probes}, "done")
    runtime = make_runtime(model, tools=tools, approval=NoAsking(policy, ws.root))

    finished, events = await run_turn(runtime)

    assert (finished.state, finished.stop_reason) == ("completed", "completed")
    assert not of(events, ev.Error)
    results = of(events, ev.ToolFinished)
    refused = [d for d in of(events, ev.ApprovalDecided) if not d.approved]
    assert len(results) + len(refused) == len(probes)  # each ran or was refused, none crashed
    for result in results:
        check_answer(result.tool, result.content)


def test_the_same_as_an_unprivileged_user() -> None:
    """Run this module again as `nobody`, for whom `chmod 000` and `/proc/1/cwd` deny."""
    if os.environ.get(UNPRIVILEGED):
        pytest.skip("already running unprivileged")
    if os.geteuid() != 0:
        pytest.skip("not root: the tests above already ran unprivileged")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        if os.environ.get("CI"):
            pytest.fail("setpriv (util-linux) is needed to run these tests unprivileged")
        pytest.skip("setpriv (util-linux) is not installed")
    # Not under tmp_path: pytest keeps that below a directory only root may enter.
    scratch = Path(tempfile.mkdtemp(prefix="moot-unprivileged-"))
    os.chown(scratch, 65534, 65534)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "PYTHONDONTWRITEBYTECODE": "1",
        UNPRIVILEGED: "1",
    }
    if "PYTHONPATH" in os.environ:  # the tree under test, not the one moot is installed from
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    try:
        done = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
             "--bounding-set=-all", sys.executable, "-m", "pytest", "-q", "-p",
             "no:cacheprovider", f"--basetemp={scratch / 'base'}", __file__],
            cwd=Path(__file__).parents[2], env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout

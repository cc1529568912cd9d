"""The git tools against real repositories made in a temporary directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from moot.tools.base import FunctionTool, SideEffect, Tool, ToolContext, ToolResult
from moot.tools.git_tools import git_tools
from moot.workspace import Workspace
from moot.workspace.agent_commits import TRAILER_KEY
from moot.workspace.git import MAX_OUTPUT_BYTES

CTX = ToolContext("ses_test", "run", "call", "main", "tool")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def init_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test Person")
    git(root, "config", "user.email", "test@example.com")
    if files:
        write(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "first commit")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "src/app.py": "x = 1\n"})


def tools_for(root: Path, changed: list[Path] | None = None) -> dict[str, FunctionTool]:
    changed_files = None if changed is None else (lambda: changed)
    tools = git_tools(Workspace(root), changed_files)
    assert all(isinstance(t, FunctionTool) for t in tools)
    return {t.name: t for t in tools if isinstance(t, FunctionTool)}


async def call(tool: Tool, **arguments: object) -> ToolResult:
    return await tool.invoke(dict(arguments), CTX)


def staged(root: Path) -> list[str]:
    return git(root, "diff", "--cached", "--name-only").split()


def test_the_tools_their_names_and_side_effects(repo: Path) -> None:
    effects = {name: t.side_effect for name, t in tools_for(repo).items()}

    assert effects == {
        "git_status": SideEffect.READ_ONLY,
        "git_diff": SideEffect.READ_ONLY,
        "git_log": SideEffect.READ_ONLY,
        "git_show": SideEffect.READ_ONLY,
        "git_commit": SideEffect.WRITES_WORKSPACE,
        "git_branch": SideEffect.WRITES_WORKSPACE,
    }


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("git_status", {}),
        ("git_diff", {}),
        ("git_log", {}),
        ("git_show", {}),
        ("git_commit", {"message": "m", "paths": ["a.txt"]}),
        ("git_branch", {}),
    ],
)
async def test_every_tool_says_clearly_when_there_is_no_repository(
    tmp_path: Path, name: str, arguments: dict[str, object]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    write(plain, {"a.txt": "a\n"})

    result = await call(tools_for(plain)[name], **arguments)

    assert result.is_error
    assert result.content.startswith("not a git repository:")


# git_status


async def test_status_of_a_clean_repository(repo: Path) -> None:
    result = await call(tools_for(repo)["git_status"])

    assert result.content == "on main\nclean"


async def test_status_lists_staged_unstaged_and_untracked_files(repo: Path) -> None:
    write(repo, {"a.txt": "a2\n", "b.txt": "b2\n", "new.txt": "n\n", "build/out.o": "x"})
    git(repo, "add", "b.txt")
    (repo / "src" / "app.py").unlink()

    result = await call(tools_for(repo)["git_status"])

    assert result.content.splitlines() == [
        "on main",
        "staged: M b.txt",
        "unstaged: M a.txt, D src/app.py",
        "untracked: build/, new.txt",
    ]
    assert result.display["staged"] == ["M b.txt"]


async def test_status_shows_renames_and_how_far_the_branch_is_from_its_upstream(
    repo: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    git(repo, "clone", "-q", str(repo), str(clone))
    git(clone, "config", "user.name", "Test Person")
    git(clone, "config", "user.email", "test@example.com")
    write(clone, {"c.txt": "c\n"})
    git(clone, "add", "c.txt")
    git(clone, "commit", "-q", "-m", "ahead")
    git(clone, "mv", "a.txt", "renamed.txt")

    result = await call(tools_for(clone)["git_status"])

    assert result.content.splitlines() == [
        "on main, ahead 1 of origin/main",
        "staged: R a.txt -> renamed.txt",
    ]
    assert (result.display["ahead"], result.display["behind"]) == (1, 0)


async def test_status_before_the_first_commit_and_on_a_detached_head(
    tmp_path: Path, repo: Path
) -> None:
    empty = init_repo(tmp_path / "empty")
    write(empty, {"x.txt": "x\n"})
    assert (await call(tools_for(empty)["git_status"])).content == (
        "on main (no commits yet)\nuntracked: x.txt"
    )

    git(repo, "checkout", "-q", "--detach")
    head = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    assert (await call(tools_for(repo)["git_status"])).content == (
        f"HEAD detached at {head}\nclean"
    )


async def test_a_workspace_below_the_top_sees_only_its_own_files_by_its_own_paths(
    repo: Path,
) -> None:
    write(repo, {"a.txt": "changed\n", "src/app.py": "x = 2\n", "src/new.py": "y\n"})

    tools = tools_for(repo / "src")
    status = await call(tools["git_status"])
    diff = await call(tools["git_diff"])

    assert status.content.splitlines() == ["on main", "unstaged: M app.py", "untracked: new.py"]
    assert "a/app.py" in diff.content
    assert "a.txt" not in diff.content


# git_diff


async def test_diff_of_the_work_tree_of_staged_changes_and_of_one_path(repo: Path) -> None:
    write(repo, {"a.txt": "a changed\n", "b.txt": "b changed\n"})
    git(repo, "add", "b.txt")
    tools = tools_for(repo)

    work_tree = await call(tools["git_diff"])
    in_index = await call(tools["git_diff"], staged=True)
    one_path = await call(tools["git_diff"], path="b.txt")

    assert "+a changed" in work_tree.content
    assert "b changed" not in work_tree.content
    assert "+b changed" in in_index.content
    assert "a changed" not in in_index.content
    assert one_path.content == "No unstaged changes in b.txt (staged=true shows staged ones)."


async def test_a_diff_with_no_changes_says_so(repo: Path) -> None:
    tools = tools_for(repo)

    assert (await call(tools["git_diff"])).content.startswith("No unstaged changes")
    assert (await call(tools["git_diff"], staged=True)).content == "No staged changes."


async def test_a_huge_diff_is_capped_with_a_note(repo: Path) -> None:
    write(repo, {"big.txt": "".join(f"line {i}\n" for i in range(20_000))})
    git(repo, "add", "big.txt")

    result = await call(tools_for(repo)["git_diff"], staged=True)

    body, _, note = result.content.rpartition("\n")
    assert len(body.encode()) <= MAX_OUTPUT_BYTES
    assert body.endswith(tuple(f"+line {i}" for i in range(20_000)))
    assert note.startswith("[output capped at 40 KB:")
    assert "more lines not shown; name a path to see one file]" in note
    shown = body.count("\n+line ")
    more = int(note.split(": ")[1].split(" more")[0].replace(",", ""))
    assert shown + more == 20_000


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a\x00b", " "])
async def test_paths_outside_the_workspace_or_malformed_are_refused(repo: Path, path: str) -> None:
    tools = tools_for(repo)

    for name, arguments in [
        ("git_diff", {"path": path}),
        ("git_log", {"path": path}),
        ("git_commit", {"message": "m", "paths": [path]}),
    ]:
        result = await call(tools[name], **arguments)
        assert result.is_error, name
        assert result.content.startswith("Path refused"), (name, result.content)


async def test_a_symlink_leading_out_of_the_workspace_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("s\n")
    (repo / "link").symlink_to(tmp_path / "secret.txt")

    result = await call(tools_for(repo)["git_diff"], path="link")

    assert result.is_error and "outside-workspace" in result.content


# git_log and git_show


async def test_log_shows_hash_date_author_and_subject(repo: Path) -> None:
    write(repo, {"a.txt": "a2\n"})
    git(repo, "commit", "-q", "-am", "second: change a")
    write(repo, {"b.txt": "b2\n"})
    git(repo, "commit", "-q", "-am", "third")
    tools = tools_for(repo)

    everything = (await call(tools["git_log"])).content.splitlines()
    latest = (await call(tools["git_log"], limit=1)).content.splitlines()
    of_a = (await call(tools["git_log"], path="a.txt")).content.splitlines()

    assert len(everything) == 3
    sha, date, rest = everything[0].split(" ", 2)
    assert sha == git(repo, "rev-parse", "--short", "HEAD").strip()
    assert len(date) == 10 and date[4] == "-"
    assert rest == "Test Person: third"
    assert latest == everything[:1]
    assert [line.split(": ", 1)[1] for line in of_a] == ["second: change a", "first commit"]


async def test_log_errors_are_clear(repo: Path, tmp_path: Path) -> None:
    empty = init_repo(tmp_path / "empty")

    no_commits = await call(tools_for(empty)["git_log"])
    bad_limit = await call(tools_for(repo)["git_log"], limit=0)

    assert no_commits.is_error and no_commits.content == "no commits yet"
    assert bad_limit.is_error and "limit" in bad_limit.content


async def test_show_gives_the_commit_header_message_and_diff(repo: Path) -> None:
    write(repo, {"a.txt": "a2\n"})
    git(repo, "commit", "-q", "-am", "change a")
    first = git(repo, "rev-parse", "--short", "HEAD~1").strip()
    tools = tools_for(repo)

    head = await call(tools["git_show"])
    older = await call(tools["git_show"], rev=first)

    assert head.content.startswith("commit ")
    assert "Author: Test Person <test@example.com>" in head.content
    assert "    change a" in head.content
    assert "-a\n+a2" in head.content
    assert "first commit" in older.content and "+x = 1" in older.content


@pytest.mark.parametrize(
    ("rev", "message"),
    [
        ("nonexistent", "unknown revision 'nonexistent'"),
        ("HEAD~5", "unknown revision 'HEAD~5'"),
        ("HEAD:a.txt", "unknown revision 'HEAD:a.txt'"),  # a file's content, not a commit
        ("--output=pwned.txt", "not a revision: '--output=pwned.txt'"),
        ("", "not a revision: ''"),
    ],
)
async def test_show_refuses_what_is_not_a_commit(repo: Path, rev: str, message: str) -> None:
    result = await call(tools_for(repo)["git_show"], rev=rev)

    assert result.is_error
    assert result.content.startswith(message)
    assert not (repo / "pwned.txt").exists()


# git_commit


async def test_commit_takes_only_the_named_paths(repo: Path) -> None:
    write(repo, {"a.txt": "a2\n", "b.txt": "b2\n", "new.txt": "n\n", "other.txt": "o\n"})
    git(repo, "add", "b.txt")  # the person's own staged work
    (repo / "src" / "app.py").unlink()

    result = await call(
        tools_for(repo)["git_commit"], message="Agent change", paths=["a.txt", "new.txt", "src"]
    )

    assert not result.is_error, result.content
    sha = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    assert result.content == (
        f"Committed {sha} on main: Agent change (3 files: a.txt, new.txt, src/app.py)"
    )
    committed = git(repo, "show", "--name-status", "--format=", "HEAD").splitlines()
    assert committed == ["M\ta.txt", "A\tnew.txt", "D\tsrc/app.py"]
    assert staged(repo) == ["b.txt"]  # still staged, not committed
    assert git(repo, "status", "--porcelain", "--", "other.txt") == "?? other.txt\n"
    message = git(repo, "log", "-1", "--format=%B")
    assert message == f"Agent change\n\n{TRAILER_KEY}: ses_test\n\n"


async def test_commit_without_paths_takes_the_files_the_agent_changed(repo: Path) -> None:
    write(repo, {"a.txt": "agent\n", "b.txt": "person\n", "made.txt": "agent\n"})
    changed = [repo / "a.txt", Path("made.txt"), repo / "src" / "app.py"]  # app.py unchanged

    result = await call(tools_for(repo, changed)["git_commit"], message="work")

    assert not result.is_error, result.content
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == ["a.txt", "made.txt"]
    assert git(repo, "status", "--porcelain") == " M b.txt\n"


async def test_commit_names_literal_paths_never_patterns(repo: Path) -> None:
    write(repo, {"*.txt": "star\n", "a.txt": "a2\n"})

    result = await call(tools_for(repo)["git_commit"], message="star", paths=["*.txt"])

    assert not result.is_error, result.content
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["*.txt"]
    assert git(repo, "status", "--porcelain") == " M a.txt\n"


@pytest.mark.parametrize(
    ("arguments", "changed", "message"),
    [
        ({"message": "m", "paths": ["a.txt"]}, None, "nothing to commit: those files have no"),
        ({"message": "m"}, None, "name the paths to commit"),
        ({"message": "m"}, [], "nothing to commit: you have changed no files"),
        ({"message": "  ", "paths": ["a.txt"]}, None, "give a commit message"),
        ({"message": "m", "paths": []}, None, "paths is empty"),
        ({"paths": ["a.txt"]}, None, "Invalid arguments for git_commit: 'message': Field"),
    ],
)
async def test_commit_errors_are_clear(
    repo: Path, arguments: dict[str, object], changed: list[Path] | None, message: str
) -> None:
    before = git(repo, "rev-parse", "HEAD")

    result = await call(tools_for(repo, changed)["git_commit"], **arguments)

    assert result.is_error
    assert result.content.startswith(message), result.content
    assert git(repo, "rev-parse", "HEAD") == before


async def test_a_workspace_below_the_top_commits_only_inside_itself(repo: Path) -> None:
    write(repo, {"a.txt": "outside the workspace\n", "src/app.py": "x = 2\n", "src/n.py": "n\n"})
    tools = tools_for(repo / "src")

    result = await call(tools["git_commit"], message="all of src", paths=["."])

    assert result.content.endswith("(2 files: app.py, n.py)"), result.content
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "src/app.py",
        "src/n.py",
    ]
    assert git(repo, "status", "--porcelain") == " M a.txt\n"


def test_git_commit_describes_its_default_only_when_it_has_one(repo: Path) -> None:
    assert "default" not in tools_for(repo)["git_commit"].description
    assert "default" in tools_for(repo, [])["git_commit"].description


# git_branch


async def test_branch_lists_creates_and_switches(repo: Path) -> None:
    tools = tools_for(repo)

    assert (await call(tools["git_branch"])).content == "* main"
    created = await call(tools["git_branch"], name="feature/x", create=True)
    listed = await call(tools["git_branch"])
    back = await call(tools["git_branch"], name="main")

    assert created.content == "Created and switched to branch feature/x."
    assert listed.content == "* feature/x\n  main"
    assert back.content == "Switched to branch main."
    assert git(repo, "branch", "--show-current").strip() == "main"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "missing"}, "no branch named 'missing'; pass create=true"),
        ({"name": "main", "create": True}, "fatal: a branch named 'main' already exists"),
        ({"name": "two words", "create": True}, "not a valid branch name: 'two words'"),
        ({"name": "-D", "create": True}, "not a valid branch name: '-D'"),
        ({"name": "a..b", "create": True}, "not a valid branch name: 'a..b'"),
        ({"create": True}, "give the name of the branch to create"),
    ],
)
async def test_branch_errors_are_clear(
    repo: Path, arguments: dict[str, object], message: str
) -> None:
    result = await call(tools_for(repo)["git_branch"], **arguments)

    assert result.is_error
    assert result.content.startswith(message), result.content
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]


async def test_switching_never_restores_a_file_of_that_name(repo: Path) -> None:
    write(repo, {"a.txt": "unsaved work\n"})

    result = await call(tools_for(repo)["git_branch"], name="a.txt")

    assert result.is_error
    assert (repo / "a.txt").read_text() == "unsaved work\n"


# child processes


def child_processes() -> list[str]:
    """This process's children (zombies too), from /proc: `state pid (command)` each."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    me = str(os.getpid())
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        name_end = text.rindex(")")
        state, ppid = text[name_end + 2 :].split()[:2]
        if ppid == me:
            children.append(f"{state} {text[: name_end + 1]}")
    return children


def test_the_child_process_probe_sees_what_gitpython_leaves_open(repo: Path) -> None:
    import git as gitpython  # here, not at the top: only this test uses gitpython directly

    before = set(child_processes())
    leaky = gitpython.Repo(repo)
    assert leaky.head.commit.message  # starts a persistent `git cat-file --batch`
    assert set(child_processes()) - before
    leaky.close()
    assert not set(child_processes()) - before


async def test_many_calls_leave_no_git_processes_behind(repo: Path) -> None:
    write(repo, {"a.txt": "a2\n"})
    tools = tools_for(repo)
    before = set(child_processes())

    for i in range(40):
        write(repo, {"counter.txt": f"{i}\n"})
        for name, arguments in [
            ("git_status", {}),
            ("git_diff", {}),
            ("git_log", {"limit": 3}),
            ("git_show", {}),
            ("git_branch", {}),
            ("git_commit", {"message": f"commit {i}", "paths": ["counter.txt"]}),
        ]:
            result = await call(tools[name], **arguments)
            assert not result.is_error, (name, result.content)

    assert not set(child_processes()) - before


async def test_a_repository_made_during_the_session_is_refused(tmp_path: Path) -> None:
    """A sandboxed command may have written that `.git` (hooks, `core.fsmonitor`), and the git
    tools run on the host: they refuse it rather than run what it says."""
    root = tmp_path / "project"
    root.mkdir()
    tools = tools_for(root)  # the session begins: no repository
    init_repo(root, {"a.txt": "a\n"})
    marker = tmp_path / "fsmonitor-ran"
    git(root, "config", "core.fsmonitor", f"touch {marker}; false")
    for name in ("git_status", "git_diff", "git_log", "git_commit"):
        arguments = {"message": "x"} if name == "git_commit" else {}
        result = await call(tools[name], **arguments)
        assert result.is_error and "created during this session" in result.content, name
    assert not marker.exists()
    later = tools_for(root)  # a session that begins with the repository uses it
    assert not (await call(later["git_status"])).is_error


async def test_the_git_tools_never_run_a_repositorys_fsmonitor(repo: Path, tmp_path: Path) -> None:
    """A submodule's config (writable from the sandbox when it is not checked out) could name
    a monitor; moot's git runs on the host, so it turns monitors off for every repository."""
    marker = tmp_path / "fsmonitor-ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    tools = tools_for(repo)
    write(repo, {"README.md": "changed\n"})
    for name in ("git_status", "git_diff"):
        assert not (await call(tools[name])).is_error
    assert not marker.exists()


async def test_a_submodule_made_into_a_repository_by_a_command_runs_nothing_here(
    tmp_path: Path,
) -> None:
    """A submodule that is not checked out is an empty, writable directory: a sandboxed command
    can make it a repository whose config runs programs (a clean filter, a monitor) whenever
    git looks inside it. moot's git runs on the host, so it never looks inside submodules."""
    library = init_repo(tmp_path / "library", {"lib.txt": "x\n"})
    root = init_repo(tmp_path / "project", {"a.txt": "a\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(root, "commit", "-q", "-m", "sub")
    git(root, "submodule", "deinit", "-q", "-f", "sub")
    tools = tools_for(root)  # the session begins; then a command plants a repository in sub/
    marker = tmp_path / "ran"
    sub = root / "sub"
    git(sub, "init", "-q")
    (sub / "lib.txt").write_text("y\n")
    git(sub, "add", "-A")
    git(sub, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(sub, "config", "core.fsmonitor", f"touch {marker}; false")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    (sub / "lib.txt").write_text("z\n")
    write(root, {"a.txt": "b\n"})
    assert not marker.exists()
    for name in ("git_status", "git_diff"):
        result = await call(tools[name])
        assert not result.is_error and "a.txt" in result.content, name
    assert not marker.exists()

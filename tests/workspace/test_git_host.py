"""moot's git runs on the host: nothing a repository or a session planted may run through it.

Each vector of `hostile_git` is planted in a real repository (the person's config before the
session begins, the session's writes after) and every git operation moot has is run: the git
tools, a turn's auto-commit and `moot undo`'s undo. No planted command may run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hostile_git import VECTORS, Vector, attributes, command_for, config, git, hook_scripts, ran
from moot.tools.base import FunctionTool, ToolContext, ToolResult
from moot.tools.git_tools import git_tools
from moot.workspace import Workspace
from moot.workspace.agent_commits import AutoCommit, undo_last_agent_commit
from moot.workspace.git import GitError, workspace_repo
from moot.workspace.host_git import host_git_at_start

CTX = ToolContext("ses_host", "run", "call", "main", "tool")


def init_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    config(root, user__name="Test Person", user__email="test@example.com")
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    git(root, "add", "-A")
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "first commit")
    return root


def person_config(text: str) -> Path:
    """The person's own (global) config: tests/conftest.py gives each test an empty one."""
    path = Path(os.environ["GIT_CONFIG_GLOBAL"])
    path.write_text(text)
    return path


class Session:
    """A workspace as a session has it: what git may trust is taken when it begins."""

    def __init__(self, root: Path, *, allow_hooks: bool = False) -> None:
        self.root = root
        self.workspace = Workspace(root)
        self.workspace.host_git = host_git_at_start(root, allow_hooks=allow_hooks)
        self.changed: list[Path] = []
        tools = git_tools(self.workspace, lambda: list(self.changed))
        self.tools = {t.name: t for t in tools if isinstance(t, FunctionTool)}

    def write(self, rel: str, content: str) -> None:
        """The agent writes a file (as the write tool would)."""
        (self.root / rel).write_text(content)
        self.changed.append(self.root / rel)

    async def call(self, tool: str, **arguments: object) -> ToolResult:
        return await self.tools[tool].invoke(dict(arguments), CTX)


async def every_operation(session: Session) -> list[str]:
    """Run every git operation moot has, as a session would; what each said, for messages."""
    said: list[str] = []

    async def call(tool: str, **arguments: object) -> None:
        result = await session.call(tool, **arguments)
        said.append(f"{tool}{arguments}: {result.content[:300]}")

    session.write("a.txt", "a, changed by the agent\n")
    await call("git_status")
    await call("git_diff")
    await call("git_log", path="a.txt")
    await call("git_show")
    await call("git_commit", message="agent change", paths=["a.txt"])
    await call("git_show")
    await call("git_diff", staged=True)
    await call("git_branch")
    await call("git_branch", name="side", create=True)
    session.write("c.txt", "c on side\n")
    await call("git_commit", message="on side", paths=["c.txt"])
    await call("git_branch", name="main")
    await call("git_branch", name="side")  # checks c.txt out again
    session.write("a.txt", "a, changed in a turn\n")
    try:
        made = AutoCommit(session.workspace, "ses_host", lambda: session.changed).commit_turn("go")
        said.append(f"auto-commit: {made}")
        undone = undo_last_agent_commit(session.root)  # restores a.txt: a checkout
        said.append(f"undo: {undone}")
    except GitError as exc:
        said.append(f"refused: {exc}")
    return said


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
async def test_no_planted_command_runs_through_any_git_operation(
    tmp_path: Path, vector: Vector
) -> None:
    """Fails on the code before `host_git` for every vector but fsmonitor, diff_command,
    diff_external, merge_driver, pager, editor, aliases and transports_unreached (which git,
    or the flags moot already passed, never reached)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    command = command_for(vector, markers)
    vector.before(root, command)
    session = Session(root)  # the session begins
    vector.after(root, command)

    said = await every_operation(session)

    assert ran(markers) == [], "\n".join(said)


async def test_the_operations_work_in_a_repository_with_nothing_planted(tmp_path: Path) -> None:
    """The harness above does reach every operation: here each one succeeds."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    said = await every_operation(Session(root))
    assert not [line for line in said if "rror" in line or "refused" in line], said
    assert said[-1].startswith("undo: AgentCommit(")


async def test_a_config_file_in_the_workspace_is_read_as_it_was_when_the_session_began(
    tmp_path: Path,
) -> None:
    """An include that resolves into the workspace is pinned: git reads it (its user name
    signs the commit) while it is unchanged, and moot's git stops once a command changed it."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (root / ".gitconfig").write_text("[user]\n\tname = From The Include\n")
    config(root, **{"include.path": "../.gitconfig"})
    session = Session(root)
    session.write("a.txt", "a2\n")
    assert not (await session.call("git_commit", message="m", paths=["a.txt"])).is_error
    assert git(root, "log", "-1", "--format=%an").strip() == "From The Include"

    (root / ".gitconfig").write_text("[user]\n\tname = Someone Else\n")
    result = await session.call("git_status")

    assert result.is_error
    assert ".gitconfig, a git config file in the workspace (git config includes it" in (
        result.content
    )
    assert "changed during this session" in result.content


async def test_an_include_in_the_persons_global_config_is_pinned_too(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (root / ".gitconfig").write_text("[user]\n\tname = From The Include\n")
    global_config = person_config(f"[include]\n\tpath = {root / '.gitconfig'}\n")
    session = Session(root)
    assert not (await session.call("git_status")).is_error

    (root / ".gitconfig").write_text("[core]\n\tfsmonitor = true\n")

    result = await session.call("git_status")
    assert result.is_error and f"includes it, in {global_config}" in result.content


async def test_a_git_directory_in_the_workspace_under_another_nameis_protected(
    tmp_path: Path,
) -> None:
    """`git init --separate-git-dir=gitdata`: the sandbox keeps only `.git` read-only, so the
    repository's own config is a workspace file like any other."""
    markers = tmp_path / "markers"
    markers.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", f"--separate-git-dir={root / 'gitdata'}")
    config(root, user__name="Test Person", user__email="test@example.com")
    session = Session(root)
    assert session.workspace.host_git.protected() == ("gitdata",)
    hook_scripts(root / "gitdata" / "hooks", f"touch {markers}/hook")  # a command's doing
    config(root, **{"filter.evil.clean": f"touch {markers}/clean; cat"})
    attributes(root, "* filter=evil")
    session.write("a.txt", "a\n")

    status = await session.call("git_status")
    commit = await session.call("git_commit", message="m", paths=["a.txt"])

    assert status.is_error and "gitdata/config, a git config file in the workspace" in (
        status.content
    )
    assert commit.is_error
    assert ran(markers) == []


async def test_a_global_config_in_the_workspace_is_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moot started in the home directory: `~/.gitconfig` is a workspace file."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(root / ".gitconfig"))
    (root / ".gitconfig").write_text("[user]\n\tname = Home\n")
    session = Session(root)
    assert session.workspace.host_git.protected() == (".gitconfig",)
    assert not (await session.call("git_status")).is_error
    (root / ".gitconfig").write_text("[core]\n\tfsmonitor = true\n")
    assert (await session.call("git_status")).is_error


async def test_an_include_of_a_workspace_file_that_was_missing_stops_moots_git(
    tmp_path: Path,
) -> None:
    """A command could write the file between moot's check and git's read of it."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config(root, **{"includeIf.onbranch:other.path": "../.later"})
    session = Session(root)
    result = await session.call("git_status")
    assert (
        result.is_error and ".later" in result.content and "was not a plain file" in result.content
    )


async def test_hooks_do_not_run_by_default_and_the_commit_says_so(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    hook_scripts(root / ".git" / "hooks", f"touch {markers}/hook", ("pre-commit", "commit-msg"))
    session = Session(root)
    session.write("a.txt", "a2\n")

    result = await session.call("git_commit", message="m", paths=["a.txt"])

    assert not result.is_error, result.content
    assert ran(markers) == []
    assert "git hooks (pre-commit, commit-msg) did not run" in result.content
    assert "allowGitHooks" in result.content


async def test_allowed_hooks_run_while_they_are_as_the_session_began(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    hook_scripts(
        root / ".git" / "hooks", "echo 'lint failed: fix a.txt' >&2; exit 1", ("pre-commit",)
    )
    session = Session(root, allow_hooks=True)
    session.write("a.txt", "a2\n")

    result = await session.call("git_commit", message="m", paths=["a.txt"])

    assert result.is_error
    assert "lint failed: fix a.txt" in result.content


@pytest.mark.parametrize("layout", ["husky", "husky9"])
async def test_allowed_hooks_the_session_changed_or_added_do_not_run(
    tmp_path: Path, layout: str
) -> None:
    """husky 9's hooks (`.husky/_/*`) run the scripts one level up: those count too."""
    markers = tmp_path / "markers"
    markers.mkdir()
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    if layout == "husky":
        config(root, core__hooksPath=".husky")
        hook_scripts(root / ".husky", "exit 0", ("pre-commit",))
    else:
        config(root, core__hooksPath=".husky/_")
        hook_scripts(root / ".husky" / "_", 'sh "$(dirname "$0")/../$(basename "$0")"')
        hook_scripts(root / ".husky", "exit 0", ("pre-commit",))
    session = Session(root, allow_hooks=True)
    hook_scripts(root / ".husky", f"touch {markers}/changed", ("pre-commit",))
    hook_scripts(root / ".husky", f"touch {markers}/added", ("commit-msg", "post-commit"))
    session.write("a.txt", "a2\n")

    result = await session.call("git_commit", message="m", paths=["a.txt"])

    assert not result.is_error, result.content
    assert ran(markers) == []
    if layout == "husky":
        assert "they changed since the session began" in result.content


def test_the_hooks_directory_and_config_files_in_the_workspace_are_protected(
    tmp_path: Path,
) -> None:
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config(root, core__hooksPath=".husky/_", **{"include.path": "../.gitconfig"})
    (root / ".gitconfig").write_text("")
    hook_scripts(root / ".husky" / "_", "exit 0", ("h", "pre-commit"))
    hook_scripts(root / ".husky", "exit 0", ("pre-commit",))
    (root / ".husky" / "lib.sh").write_text("")

    host = host_git_at_start(root)

    assert host.protected() == (".husky", ".gitconfig")
    files = set(host.protected_files())
    assert {".gitconfig", ".husky/lib.sh", ".husky/_/h", ".husky/commit-msg"} <= files
    assert {".husky/_/post-checkout", ".husky/pre-commit"} <= files
    assert not [f for f in files if f.startswith(".git/")]


def test_hooks_outside_the_workspace_are_not_the_sandboxes_to_protect(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo", {"src/a.txt": "a\n"})
    config(root, core__hooksPath=".husky")
    hook_scripts(root / ".husky", "exit 0", ("pre-commit",))
    assert host_git_at_start(root / "src").protected() == ()  # .husky is above the workspace
    assert host_git_at_start(root).protected() == (".husky",)


async def test_a_file_that_goes_through_a_filter_is_neither_committed_nor_checked_out(
    tmp_path: Path,
) -> None:
    """moot's git runs no filter: committing a git-lfs file without its filter would store the
    whole file in git, and checking one out would write a pointer in its place."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n", "big.bin": "pointer\n"})
    config(root, **{"filter.lfs.clean": "git-lfs clean -- %f", "filter.lfs.required": "true"})
    attributes(root, "*.bin filter=lfs")

    def by_hand(*args: str) -> None:  # the person's git, with a filter that works
        git(root, "-c", "filter.lfs.clean=cat", "-c", "filter.lfs.smudge=cat", *args)

    by_hand("add", ".gitattributes")
    by_hand("commit", "-q", "-m", "attributes")
    by_hand("branch", "other")
    (root / "big.bin").write_text("pointer 2\n")
    by_hand("commit", "-q", "-am", "big")
    session = Session(root)
    session.write("big.bin", "a large file\n")
    session.write("a.txt", "a2\n")

    refused = await session.call("git_commit", message="m", paths=["big.bin"])
    made = await session.call("git_commit", message="m", paths=["a.txt"])
    by_hand("checkout", "-q", "big.bin")
    switched = await session.call("git_branch", name="other")

    assert refused.is_error and "big.bin goes through the git filter 'lfs'" in refused.content
    assert not made.is_error, made.content
    assert switched.is_error and "big.bin goes through" in switched.content
    assert git(root, "branch", "--show-current").strip() == "main"


@pytest.mark.parametrize(
    "path", [".moot/settings.json", ".husky/pre-commit", ".gitconfig", "check.sh", "ok.txt"]
)
async def test_a_switch_never_writes_what_decides_what_runs_on_the_host(
    tmp_path: Path, path: str
) -> None:
    """A branch of a hostile repository may hold other hooks, moot settings or git config:
    moot's git writes on the host, where the sandbox's read-only paths do not hold. Fails on
    the old code: the switch wrote them."""
    files = {"a.txt": "a\n", ".gitconfig": "", path: "# as it was\n"}
    root = init_repo(tmp_path / "repo", files)
    config(root, core__hooksPath=".husky", **{"include.path": "../.gitconfig"})
    git(root, "switch", "-q", "-c", "evil")
    (root / path).write_text("# changed on the branch\n")
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "evil")
    git(root, "switch", "-q", "main")
    workspace = Workspace(root)
    workspace.host_git = host_git_at_start(root, also_protected=("check.sh",))
    tool = {t.name: t for t in git_tools(workspace)}["git_branch"]

    result = await tool.invoke({"name": "evil"}, CTX)

    if path == "ok.txt":
        assert not result.is_error, result.content
        return
    assert result.is_error and f"switching would change {path}, which moot protects" in (
        result.content
    )
    assert (root / path).read_text() == "# as it was\n"
    assert git(root, "branch", "--show-current").strip() == "main"


async def test_a_driver_the_person_adds_during_the_session_is_turned_off_too(
    tmp_path: Path,
) -> None:
    """The config is read again when a file it came from changes."""
    markers = tmp_path / "markers"
    markers.mkdir()
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    session = Session(root)
    assert not (await session.call("git_status")).is_error
    config(root, **{"filter.late.clean": f"touch {markers}/late; cat"})
    attributes(root, "* filter=late")
    (root / "a.txt").write_text("a2\n")
    os.utime(root / "a.txt", (1, 1))  # stat-dirty: git must look at the content

    for name in ("git_status", "git_diff"):
        assert not (await session.call(name)).is_error
    assert ran(markers) == []


async def test_a_blobless_clone_never_fetches_from_the_host(tmp_path: Path) -> None:
    """A missing object would be fetched from the promisor remote, through `uploadpack`,
    `core.sshCommand`, credential helpers...: moot's git allows no transport."""
    markers = tmp_path / "markers"
    markers.mkdir()
    source = init_repo(tmp_path / "source", {"f.txt": "one\n"})
    (source / "f.txt").write_text("two\n")
    git(source, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "two")
    config(source, uploadpack__allowFilter="true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{source}", str(clone))
    config(clone, **{"remote.origin.uploadpack": f"touch {markers}/uploadpack; git-upload-pack"})
    session = Session(clone)

    shown = await session.call("git_show", rev="HEAD~1")

    assert ran(markers) == []
    assert shown.is_error and "not allowed" in shown.content


async def test_a_submodule_made_a_repository_runs_nothing_on_show_or_switch(
    tmp_path: Path,
) -> None:
    """With `submodule.recurse` and `diff.submodule=diff`, a switch or a show runs git inside a
    submodule's work tree, with that repository's own filters and diff drivers; one that was
    not checked out is an empty directory a command can make a repository (objects and all)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    library = init_repo(tmp_path / "library", {"lib.txt": "1\n"})
    (library / "lib.txt").write_text("2\n")
    git(library, "commit", "-q", "-am", "2")
    root = init_repo(tmp_path / "project", {"a.txt": "a\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(root, "commit", "-q", "-m", "sub at 2")
    git(root, "switch", "-q", "-c", "other")
    git(root / "sub", "checkout", "-q", "HEAD~1")
    git(root, "commit", "-q", "-am", "sub at 1")
    git(root, "switch", "-q", "main")
    git(root, "submodule", "deinit", "-q", "-f", "sub")
    git(root, "submodule", "init", "-q", "sub")  # active, but not checked out
    config(root, submodule__recurse="true", diff__submodule="diff")
    session = Session(root)
    sub = root / "sub"  # a command makes the empty directory a repository with the objects
    git(sub, "init", "-q")
    git(sub, "fetch", "-q", str(library), "main")
    git(sub, "reset", "-q", "--hard", "FETCH_HEAD")
    config(sub, **{"filter.evil.smudge": f"touch {markers}/smudge; cat"})
    config(sub, **{"diff.evil.textconv": f"touch {markers}/textconv; cat"})
    (sub / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n")

    for tool, arguments in [
        ("git_show", {"rev": "other"}),
        ("git_status", {}),
        ("git_diff", {}),
        ("git_branch", {"name": "other"}),
        ("git_branch", {"name": "main"}),
    ]:
        await session.call(tool, **arguments)

    assert ran(markers) == []


async def test_a_work_tree_elsewhere_is_refused(tmp_path: Path) -> None:
    """`core.worktree` naming another directory would have git write outside the workspace."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (tmp_path / "elsewhere").mkdir()
    config(root, core__worktree=str(tmp_path / "elsewhere"))
    with (
        pytest.raises(GitError, match=r"core\.worktree to .*elsewhere"),
        workspace_repo(Workspace(root)),
    ):
        pass


@pytest.mark.parametrize(
    ("hooks_path", "absent", "protected"),
    [
        (".husky", ".husky", (".husky",)),
        (".husky/_", ".husky", (".husky",)),  # husky 9: its hooks run `.husky/<hook>`
        ("tools/git/hooks", "tools/git", ("tools/git/hooks",)),  # `tools` exists
        ("{root}/abs/hooks", "abs", ("abs/hooks",)),
        ("~/repo/.hooks", ".hooks", (".hooks",)),
    ],
)
def test_a_hooks_directory_the_config_names_is_protected_whether_or_not_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hooks_path: str, absent: str,
    protected: tuple[str, ...],
) -> None:  # fmt: skip
    """With no `.husky` yet, a command could make `.husky/pre-commit`, which the person's own
    `git commit` runs (issue 28, item 8)."""
    monkeypatch.setenv("HOME", str(tmp_path))  # git expands `~` with it
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n", "tools/x.txt": "x\n"})
    config(root, core__hooksPath=hooks_path.format(root=root))

    host = host_git_at_start(root)

    assert host.absent == (absent,)
    assert host.protected() == protected
    files = host.protected_files()
    assert absent in files and protected[0] in files


def test_a_missing_include_and_a_missing_global_config_in_the_workspace_are_kept_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config file a command made would be read by the person's own git: it could set
    `core.hooksPath` or `core.fsmonitor`."""
    root = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config(root, **{"include.path": "../.gitlocal", "includeIf.onbranch:x.path": "../cfg/x"})
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(root / ".gitconfig-global"))

    host = host_git_at_start(root)

    assert set(host.absent) == {".gitlocal", "cfg", ".gitconfig-global"}
    assert set(host.absent) <= set(host.protected_files())


def test_a_linked_worktrees_relative_hooks_path_is_its_own(tmp_path: Path) -> None:
    """In a linked worktree (a `.git` file, `commondir`) a relative `core.hooksPath` starts at
    the worktree's top, which is the workspace."""
    main = init_repo(tmp_path / "main", {"a.txt": "a\n"})
    config(main, core__hooksPath=".husky")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")

    host = host_git_at_start(tmp_path / "linked")

    assert host.absent == (".husky",) and host.protected() == (".husky",)

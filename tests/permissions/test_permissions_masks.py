"""`sandbox_masks`: which existing workspace paths the deny rules make the sandbox hide or lock.

The sandbox backends apply these for real in `test_sandbox_contract.py`; here, which paths,
and that a session's cached source (`CachedMaskSource`) always finds what a fresh walk finds.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from moot.permissions import git_history, tracked
from moot.permissions import masks as masks_module
from moot.permissions.masks import (
    RACY_NS,
    CachedMaskSource,
    _Matcher,
    mask_source,
    sandbox_masks,
)
from moot.permissions.rules import RuleSet
from moot.sandbox.base import SandboxMasks


def an_hour_on() -> int:
    """A clock an hour ahead: every directory seems to have been still for an hour, so every
    listing is kept (the racy rule never applies)."""
    return time.time_ns() + 3600 * 10**9


TREE = [
    ".env",
    ".gitignore",
    "config/.env",
    "config/app.toml",
    "deep/a/b/c/.env",
    "deep/a/b/c/server.pem",
    "keys/client.pem",
    "keys/readme.md",
    "secrets/token",
    "secrets/nested/key.pem",
    "src/secrets",  # a file named like the directory
    "src/main.py",
    "locked/a.txt",
    "locked/.env",
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The tree in a git repository that tracks none of it (so `.git` is never hidden)."""
    root = tmp_path / "ws"
    git(tmp_path, "init", "-q", "ws")
    for rel in TREE:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / ".gitignore").write_text(".env\n*.pem\nsecrets/\n")  # ignored files count too
    return root


def masks(root: Path, *deny: str) -> SandboxMasks:
    return sandbox_masks(RuleSet(deny=deny), root)


def git(where: Path, *args: str) -> None:
    identity = ["-c", "user.name=moot", "-c", "user.email=moot@example.invalid"]
    subprocess.run(["git", *identity, "-C", str(where), *args], check=True, capture_output=True)


@pytest.mark.parametrize(
    ("rule", "files", "dirs"),
    [
        ("Read(./.env)", [".env"], []),
        ("Read(.env)", [".env", "config/.env", "deep/a/b/c/.env", "locked/.env"], []),
        ("Read(**/.env)", [".env", "config/.env", "deep/a/b/c/.env", "locked/.env"], []),
        ("Read(config/.env)", ["config/.env"], []),
        ("Read(*.pem)", ["deep/a/b/c/server.pem", "keys/client.pem", "secrets/nested/key.pem"], []),
        ("Read(secrets/**)", [], ["secrets"]),
        ("Read(secrets/)", [], ["secrets"]),  # the directory only: not the file src/secrets
        ("Read(secrets)", ["src/secrets"], ["secrets"]),
        ("Read(./deep)", [], ["deep"]),
        ("Read(deep/a/b/**)", [], ["deep/a/b"]),
        ("Read(keys/*)", ["keys/client.pem", "keys/readme.md"], []),
    ],
)
def test_read_rules_hide_what_they_cover(
    ws: Path, rule: str, files: list[str], dirs: list[str]
) -> None:
    assert masks(ws, rule) == SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)))


def test_a_hidden_directory_is_hidden_whole_and_nothing_below_it_is_listed(ws: Path) -> None:
    found = masks(ws, "Read(secrets/**)", "Read(*.pem)", "Edit(secrets/token)")

    assert found.hidden_dirs == ("secrets",)
    assert "secrets/nested/key.pem" not in found.hidden_files
    assert found.read_only == ()


def test_edit_and_write_rules_make_paths_read_only(ws: Path) -> None:
    assert masks(ws, "Edit(locked/**)") == SandboxMasks(read_only=("locked",))
    assert masks(ws, "Write(*.toml)") == SandboxMasks(read_only=("config/app.toml",))
    assert masks(ws, "Edit(./.env)", "Read(./.env)") == SandboxMasks(hidden_files=(".env",))


def test_below_a_read_only_directory_files_are_still_hidden(ws: Path) -> None:
    found = masks(ws, "Edit(locked/)", "Read(.env)")

    assert found.read_only == ("locked",)
    assert "locked/.env" in found.hidden_files


def test_other_rules_mask_nothing(ws: Path) -> None:
    found = masks(ws, "Grep(.env)", "Glob(*.pem)", "LS(secrets)", "Bash(cat:*)", "Read", "Edit")

    assert not found


def test_paths_that_do_not_exist_and_rules_outside_the_workspace_mask_nothing(ws: Path) -> None:
    assert not masks(ws, "Read(./missing.txt)", "Read(//etc/**)", "Read(~/.ssh/**)")
    assert not masks(ws, "Read(./src/main.py/x)")


def test_an_absolute_rule_for_a_workspace_path_is_applied(ws: Path) -> None:
    real = os.path.realpath(ws)

    assert masks(ws, f"Read(/{real}/config/.env)").hidden_files == ("config/.env",)
    assert masks(ws, f"Read(/{real}/**/*.toml)").hidden_files == ("config/app.toml",)


def test_symlinks_are_not_followed(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / ".env").write_text("outside")
    os.symlink(outside, ws / "linked")
    os.symlink(ws / "config", ws / "loop")  # into the workspace: matched where it lies

    found = masks(ws, "Read(.env)")

    assert all(not path.startswith(("linked", "loop", "/")) for path in found.hidden_files)
    assert "config/.env" in found.hidden_files


def test_a_link_to_a_denied_file_needs_no_mask_of_its_own(ws: Path) -> None:
    os.symlink(".env", ws / "innocent")

    assert masks(ws, "Read(./.env)").hidden_files == (".env",)


def test_a_denied_link_masks_its_target(ws: Path, tmp_path: Path) -> None:
    """The file tools refuse the link by its name; inside the sandbox a mount over the link
    lands on its target, so the target is masked (even where the rules allow it by name)."""
    (ws / "real").mkdir()
    (ws / "real" / "values").write_text("x")
    os.symlink("real/values", ws / "app.pem")
    os.symlink("keys", ws / "certs.pem")  # a directory
    outside = tmp_path / "prod.env"
    outside.write_text("x")
    os.symlink(outside, ws / "deploy.pem")
    os.symlink(".", ws / "self.pem")  # the workspace itself: never masked
    os.symlink("missing", ws / "dangling.pem")

    found = masks(ws, "Read(./*.pem)")

    assert found.hidden_files == (os.path.realpath(outside), "real/values")
    assert found.hidden_dirs == ("keys",)
    assert masks(ws, "Edit(./app.pem)").read_only == ("real/values",)


def test_no_path_rule_means_no_walk(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walked = _count_scandir(monkeypatch)

    assert mask_source(RuleSet(deny=["Bash(rm:*)", "WebFetch"]), ws) is None
    assert not masks(ws, "Bash(rm:*)")
    assert walked() == 0


def test_literal_rules_look_only_below_their_names(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked = _count_scandir(monkeypatch)

    found = masks(ws, "Read(./.env)", "Read(secrets/**)", "Read(./deep/a/b/c/*.pem)")
    only_below = walked()
    masks(ws, "Read(.env)")

    assert found.hidden_files == (".env", "deep/a/b/c/server.pem")
    # deep/a/b/c alone, and the hidden secrets/ (whose files' link counts are looked at: a
    # hard link elsewhere would show them, `moot.permissions.links`); .env is looked up.
    secrets = sum(1 for _ in os.walk(ws / "secrets"))
    assert only_below == 1 + secrets
    assert walked() > 8, "a floating pattern walks the whole tree"


def test_the_source_asks_again_each_time(ws: Path) -> None:
    source = mask_source(RuleSet(deny=["Read(.env)"]), ws)
    assert source is not None
    before = source()
    (ws / "src" / ".env").write_text("new")

    assert "src/.env" not in before.hidden_files
    assert "src/.env" in source().hidden_files


# ---- the cached source: what a fresh walk finds, listing only what changed -----------------

_MTIMES = itertools.count(10**18, 1_000)


def _changed(directory: Path) -> None:
    """Give a directory an mtime no listing has seen, as a file system with fine timestamps
    shows a change. (Coarse ones can leave it as it was: that is the racy rule's case, below.)"""
    os.utime(directory, ns=(time.time_ns(), next(_MTIMES)))


def test_a_source_lists_again_only_the_directories_that_changed(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = RuleSet(deny=["Read(.env)", "Read(*.pem)", "Edit(locked/)"])
    source = CachedMaskSource(rules, ws, clock=an_hour_on)
    walked = _count_scandir(monkeypatch)
    first = source()
    listed = walked()

    assert source() == first
    assert walked() == listed, "nothing changed: one lstat a directory, nothing listed"
    (ws / "deep" / "a" / "b" / "c" / "d").mkdir()
    (ws / "deep" / "a" / "b" / "c" / "d" / "new.pem").write_text("x")
    _changed(ws / "deep" / "a" / "b" / "c")
    _changed(ws / "deep" / "a" / "b" / "c" / "d")
    third = source()

    assert walked() == listed + 2
    assert "deep/a/b/c/d/new.pem" in third.hidden_files
    assert third == sandbox_masks(rules, ws)


def test_a_directory_changed_in_the_tick_it_was_listed_in_is_listed_again(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestamps are coarse: a file made in the tick of a listing can leave its directory's
    mtime and ctime as they were. Simulated by a file system whose directories keep the
    identity they were first seen with: only the racy rule (no listing is kept of a directory
    that changed within `RACY_NS` of the walk) finds the new file."""
    seen: dict[str, tuple[int, int, int, int] | None] = {}
    identity = masks_module._directory_identity
    monkeypatch.setattr(
        masks_module, "_directory_identity", lambda path: seen.setdefault(path, identity(path))
    )
    rules = RuleSet(deny=["Read(.env)"])
    source = CachedMaskSource(rules, ws)  # the real clock: the tree was made just now
    oblivious = CachedMaskSource(rules, ws, clock=an_hour_on)
    assert source() == oblivious() == sandbox_masks(rules, ws)

    (ws / "src" / ".env").write_text("new")

    assert "src/.env" in source().hidden_files
    assert "src/.env" not in oblivious().hidden_files, "what the frozen identity hides"


def test_a_listing_is_kept_only_once_its_directory_has_been_still_long_enough(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    infos = [os.lstat(top) for top, _, _ in os.walk(ws)]
    changed = [max(info.st_mtime_ns, info.st_ctime_ns) for info in infos]
    now = min(changed) + RACY_NS  # every directory changed within RACY_NS of it
    source = CachedMaskSource(RuleSet(deny=["Read(.env)"]), ws, clock=lambda: now)
    walked = _count_scandir(monkeypatch)
    source()
    listed = walked()

    source()
    assert listed == len(infos)
    assert walked() == 2 * listed, "changed within RACY_NS of the walk: listed again"
    now = max(changed) + RACY_NS + 1
    source()
    assert walked() == 3 * listed
    source()
    assert walked() == 3 * listed, "still for RACY_NS before the last walk: kept"


def test_threads_may_share_a_source(ws: Path) -> None:
    rules = RuleSet(deny=["Read(.env)", "Read(*.pem)", "Edit(locked/)"])
    source = CachedMaskSource(rules, ws, clock=an_hour_on)
    together = threading.Barrier(8)

    def call(_: int) -> SandboxMasks:
        together.wait()
        return source()

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(call, range(8))) == [sandbox_masks(rules, ws)] * 8


_NAMES = (".env", "a.pem", "app.toml", "secrets", "locked", "sub", ".git")
_PLACES = st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3).map("/".join)
_TARGETS = ("sub", "a.pem", "../a.pem", ".", "missing", "{outside}", "{outside}/key.pem")
_STEPS = st.one_of(
    st.tuples(st.sampled_from(["file", "mkdir", "remove"]), _PLACES),
    st.tuples(st.just("rename"), _PLACES, _PLACES),
    st.tuples(st.just("link"), _PLACES, st.sampled_from(_TARGETS)),
)
_START = (".env", "sub/a.pem", "sub/secrets/.env", "locked/app.toml", "locked/sub/.env")


@pytest.mark.parametrize(
    "deny",
    [
        ("Read(.env)", "Read(*.pem)", "Edit(locked/)", "Edit(*.toml)"),  # walks everything
        ("Read(./secrets/**)", "Read(./sub/secrets)", "Edit(./locked/)"),  # below literal names
    ],
    ids=["floating", "literal"],
)
@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_STEPS, max_size=20))
@example(steps=[("link", "app.toml", "."), ("rename", "app.toml/app.toml", ".env")])
def test_a_cached_source_finds_what_a_fresh_walk_finds(
    deny: tuple[str, ...], steps: list[tuple[str, ...]]
) -> None:
    """Random creates, removals, renames, new directories and symlinks (into the workspace,
    out of it, dangling); after each, the cached source agrees with `sandbox_masks`."""
    rules = RuleSet(deny=deny)
    with tempfile.TemporaryDirectory(prefix="moot-masks-") as scratch:
        root, outside = Path(scratch).resolve() / "ws", Path(scratch).resolve() / "outside"
        outside.mkdir()
        (outside / "key.pem").write_text("x")
        for rel in _START:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(rel)
        source = CachedMaskSource(rules, root, clock=an_hour_on)
        assert source() == sandbox_masks(rules, root)
        for step in steps:
            for directory in _apply(root, str(outside), step):
                _changed(directory)
            assert source() == sandbox_masks(rules, root), step


def _apply(root: Path, outside: str, step: tuple[str, ...]) -> list[Path]:
    """Take one step when it can be taken; the directories it changed.

    Those are named by their real paths, taken before the step: a path through a symlink
    (`sub` may lead to `.`) can name a directory the step moves or removes (renaming `sub/sub`,
    which is `sub` itself, to `.env`), and the directory that changed is where the link led.
    """
    kind, rel, *rest = step
    path = root / rel
    parent = Path(os.path.realpath(path.parent))
    try:
        if kind == "file":
            path.write_text("x")
        elif kind == "mkdir":
            path.mkdir()
            return [parent, path]
        elif kind == "remove" and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif kind == "remove":
            path.unlink()
        elif kind == "rename":
            target_parent = Path(os.path.realpath((root / rest[0]).parent))
            os.rename(path, root / rest[0])
            return [parent, target_parent]
        else:
            os.symlink(rest[0].format(outside=outside), path)
    except OSError:
        return []
    return [parent]


PATTERNS = [
    ".env",
    "./.env",
    "/.env",
    "**/.env",
    "*.pem",
    "secrets/",
    "secrets",
    "secrets/**",
    "./secrets/**",
    "deep/**/c",
    "deep/*/b",
    "keys/*.md",
    "*/a.txt",
    "[lk]*",
    "../ws/config/*",
    "src/secrets",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_compiled_matcher_agrees_with_the_rules_own(ws: Path, pattern: str) -> None:
    rule = RuleSet(deny=[f"Read({pattern})"]).deny[0]
    assert rule.path is not None
    base = os.path.realpath(ws)
    matcher = _Matcher(rule, base, base)

    for rel, is_dir in _everything(base):
        expected = rule.path.matches(f"{base}/{rel}", base, is_dir=is_dir)
        assert matcher.matches(rel, is_dir) == expected, (pattern, rel)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_short_cuts_find_what_a_full_walk_finds(ws: Path, pattern: str) -> None:
    rules = RuleSet(deny=[f"Read({pattern})"])
    (rule,) = rules.deny
    assert rule.path is not None
    base = os.path.realpath(ws)
    covered = {
        (rel, is_dir)
        for rel, is_dir in _everything(base)
        if rule.path.matches(f"{base}/{rel}", base, is_dir=is_dir)
    }
    outermost = {
        (rel, is_dir)
        for rel, is_dir in covered
        if not any(rel.startswith(other + "/") for other, _ in covered)
    }

    found = sandbox_masks(rules, ws)

    assert set(found.hidden_files) == {rel for rel, is_dir in outermost if not is_dir}
    assert set(found.hidden_dirs) == {rel for rel, is_dir in outermost if is_dir}


def _everything(base: str) -> list[tuple[str, bool]]:
    """Every path below `base`, symlinks not followed: (relative path, is a directory)."""
    paths = []
    for top, dirs, files in os.walk(base):
        rel_top = os.path.relpath(top, base)
        for name in dirs + files:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            paths.append((rel, name in dirs))
    return paths


def _count_scandir(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Counts the directories `sandbox_masks` lists (a spy on `os.scandir` in its module)."""
    calls: list[str] = []
    real = os.scandir

    def counting(path: str) -> os._ScandirIterator[str]:  # type: ignore[name-defined]
        calls.append(path)
        return real(path)

    monkeypatch.setattr(masks_module.os, "scandir", counting)
    return lambda: len(calls)


def test_names_with_newlines_are_matched_like_any_other(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb"
    odd.mkdir()
    (odd / "key.pem").write_text("PEM-SECRET\n")
    (odd / "notes.txt").write_text("fine\n")
    assert masks(tmp_path, "Read(*.pem)").hidden_files == ("a\nb/key.pem",)
    assert masks(tmp_path, "Read(**/key.pem)").hidden_files == ("a\nb/key.pem",)
    assert masks(tmp_path, "Read(a?b/)").hidden_dirs == ("a\nb",)


# ---- `.git`, when its index tracks a hidden file (moot.permissions.tracked) ---------------


def test_git_is_hidden_when_its_index_tracks_a_hidden_file(ws: Path) -> None:
    git(ws, "add", "-f", "config/app.toml", "secrets/token")  # secrets/ is ignored
    (ws / ".git" / "extra").write_text("x")

    assert masks(ws, "Read(./config/app.toml)", "Edit(.git/extra)") == SandboxMasks(
        hidden_files=("config/app.toml",), hidden_dirs=(".git",)
    ), "nothing is masked below the hidden .git"
    assert masks(ws, "Read(secrets/)").hidden_dirs == (".git", "secrets"), "a file below"


def test_git_is_left_alone_when_nothing_hidden_is_tracked(ws: Path) -> None:
    git(ws, "add", "config/app.toml")

    assert masks(ws, "Read(./.env)", "Read(secrets/)", "Edit(config/app.toml)") == SandboxMasks(
        hidden_files=(".env",), hidden_dirs=("secrets",), read_only=("config/app.toml",)
    )


def test_pathspecs_are_literal(ws: Path) -> None:
    """A hidden file named `[lk]*` is no glob for git: tracked `keys/` does not count."""
    git(ws, "add", "keys")
    base = os.path.realpath(ws)

    assert not tracked.git_tracks_any(base, ["[lk]*", "k*"])
    assert tracked.git_tracks_any(base, ["keys/readme.md"])


def test_when_git_cannot_answer_git_is_hidden(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(ws / "nowhere"))
    assert masks(ws, "Read(./.env)").hidden_dirs == (".git",), "no git: fails closed"
    monkeypatch.undo()
    (ws / ".git" / "HEAD").write_text("not a ref\n")
    assert masks(ws, "Read(./.env)").hidden_dirs == (".git",), "a repository git cannot read"


def test_git_is_not_asked_without_a_hidden_path_or_a_git_dir(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    monkeypatch.setattr(tracked, "git_tracks_any", lambda _, paths: asked.append(paths) or True)

    assert ".git" not in masks(ws, "Edit(./.env)").hidden_dirs
    assert ".git" not in masks(ws, "Read(./missing)").hidden_dirs
    os.rename(ws / ".git", ws / "git-elsewhere")
    assert ".git" not in masks(ws, "Read(./.env)").hidden_dirs
    assert asked == []


@pytest.mark.parametrize("rule", ["Read(./.env)", "Read(.env)"])  # looked up; walked
@pytest.mark.parametrize("clock", [time.time_ns, an_hour_on], ids=["now", "an hour on"])
def test_a_source_asks_git_again_only_once_the_index_changed(
    ws: Path, monkeypatch: pytest.MonkeyPatch, rule: str, clock: Callable[[], int]
) -> None:
    asked: list[list[str]] = []
    ask = tracked.git_tracks_any
    monkeypatch.setattr(tracked, "git_tracks_any", lambda b, p: asked.append(p) or ask(b, p))
    source = CachedMaskSource(RuleSet(deny=[rule]), ws, clock=clock)
    git(ws, "add", "src/main.py")

    before = [source(), source()]
    git(ws, "add", "-f", ".env")
    after = source()

    assert [".git" in masks.hidden_dirs for masks in [*before, after]] == [False, False, True]
    assert asked == [list(before[0].hidden_files)] * 2


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", "-C", str(root), *args],
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"},
    )  # fmt: skip


def test_a_nested_repository_above_a_hidden_file_has_its_git_hidden(tmp_path: Path) -> None:
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / ".env").write_text("TOKEN=x\n")
    _git(tmp_path / "vendor", "init", "-q")
    hidden = masks(tmp_path, "Read(.env)")
    assert "vendor/.git" in hidden.hidden_dirs
    assert hidden.hidden_files == ("vendor/lib/.env",)


def test_a_hidden_file_a_submodule_tracks_hides_the_superprojects_git(tmp_path: Path) -> None:
    library = tmp_path / "library"
    library.mkdir()
    _git(library, "init", "-q", "-b", "main")
    (library / ".env").write_text("TOKEN=x\n")
    _git(library, "add", ".env")
    _git(library, "commit", "-q", "-m", "one")
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(work, "submodule", "add", "-q", str(library), "lib")
    hidden = masks(work, "Read(.env)")
    assert ".git" in hidden.hidden_dirs  # its modules/ hold the submodule's objects


@pytest.mark.parametrize("cached", [False, True])
def test_a_directory_nobody_may_list_is_hidden_whole(tmp_path: Path, cached: bool) -> None:
    """Its files still open by name (`chmod 311`): one the rules hide could be among them."""
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / ".env").write_text("SECRET=1\n")
    (tmp_path / "open").mkdir()
    rules = RuleSet(deny=["Read(.env)"])
    source = mask_source(rules, tmp_path)
    assert source is not None
    real_scandir = os.scandir

    def refusing(path: object) -> object:  # as for a user who may not list it (root may)
        if str(path).endswith("/cfg"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "scandir", refusing)
        found = source() if cached else sandbox_masks(rules, tmp_path)
    assert found.hidden_dirs == ("cfg",)
    assert found.hidden_files == ()


# ---- `.git`, when its history holds a hidden file (moot.permissions.git_history) ---------


def _commit(ws: Path, *paths: str, message: str = "c") -> None:
    git(ws, "add", "-f", *paths)
    git(ws, "commit", "-q", "-m", message)


def test_git_is_hidden_when_a_commit_named_a_covered_path_once(ws: Path) -> None:
    _commit(ws, "src/main.py", "secrets/token")
    git(ws, "rm", "-q", "-r", "--cached", "secrets")
    git(ws, "commit", "-q", "-m", "untrack")

    assert ".git" in masks(ws, "Read(secrets/**)").hidden_dirs
    assert ".git" in masks(ws, "Read(./secrets/)").hidden_dirs, "a directory rule"
    assert ".git" in masks(ws, "Read(token)").hidden_dirs, "a floating rule"
    assert ".git" not in masks(ws, "Read(./.env)").hidden_dirs, "nothing of it committed"
    assert ".git" not in masks(ws, "Edit(secrets/**)").hidden_dirs, "edits: history is no matter"


def test_git_is_hidden_when_it_stored_a_hidden_files_content(ws: Path) -> None:
    _commit(ws, "src/main.py")
    (ws / "src" / "copy.txt").write_text((ws / ".env").read_text())
    _commit(ws, "src/copy.txt")  # the same content, under a name the rules allow

    assert ".git" in masks(ws, "Read(./.env)").hidden_dirs


def test_a_source_reads_the_history_again_only_once_the_store_changed(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[set[str]] = []
    paths_of = git_history._paths_of
    monkeypatch.setattr(
        git_history, "_paths_of", lambda store, new: read.append(new) or paths_of(store, new)
    )
    _commit(ws, "src/main.py")
    source = CachedMaskSource(RuleSet(deny=["Read(./.env)"]), ws, clock=an_hour_on)

    before = [source(), source()]
    _commit(ws, "locked/a.txt")
    between = source()
    _commit(ws, ".env")
    git(ws, "rm", "-q", "--cached", ".env")
    git(ws, "commit", "-q", "-m", "untrack")  # the index no longer tells
    after = source()

    assert [".git" in m.hidden_dirs for m in [*before, between, after]] == [
        False, False, False, True
    ]  # fmt: skip
    assert [len(new) for new in read] == [1, 1, 2], "each commit read once"


def test_when_git_cannot_read_the_history_git_is_hidden(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(ws, "src/main.py")
    monkeypatch.setattr(git_history, "GIT_TIMEOUT", 0.000001)

    assert ".git" in masks(ws, "Read(./.env)").hidden_dirs


@pytest.mark.parametrize("how", ["staged, then reset", "stashed, then dropped"])
def test_a_source_sees_what_git_stored_since_its_last_call(ws: Path, how: str) -> None:
    _commit(ws, "src/main.py")
    (ws / ".gitignore").write_text("")  # so that `stash -u` takes `.env` along
    source = CachedMaskSource(RuleSet(deny=["Read(./.env)"]), ws, clock=an_hour_on)
    assert ".git" not in source().hidden_dirs

    if how == "staged, then reset":
        git(ws, "add", ".env")
        git(ws, "reset", "-q", ".env")
    else:
        git(ws, "stash", "push", "-q", "--include-untracked")
        git(ws, "stash", "drop", "-q")

    assert ".git" in source().hidden_dirs

"""`sandbox_masks`: which existing workspace paths the deny rules make the sandbox hide or lock.

The sandbox backends apply these for real in `test_sandbox_contract.py`; here, which paths.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.permissions import masks as masks_module
from moot.permissions import tracked
from moot.permissions.masks import _Matcher, mask_source, sandbox_masks
from moot.permissions.rules import RuleSet
from moot.sandbox.base import SandboxMasks

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
    assert only_below == 1, "deep/a/b/c alone; secrets is hidden whole, .env is looked up"
    assert walked() > 8, "a floating pattern walks the whole tree"


def test_the_source_asks_again_each_time(ws: Path) -> None:
    source = mask_source(RuleSet(deny=["Read(.env)"]), ws)
    assert source is not None
    before = source()
    (ws / "src" / ".env").write_text("new")

    assert "src/.env" not in before.hidden_files
    assert "src/.env" in source().hidden_files


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
    matcher = _Matcher(rule, base)

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


def test_a_source_asks_git_again_only_once_the_index_changed(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    ask = tracked.git_tracks_any
    monkeypatch.setattr(tracked, "git_tracks_any", lambda b, p: asked.append(p) or ask(b, p))
    source = mask_source(RuleSet(deny=["Read(./.env)"]), ws)
    assert source is not None
    git(ws, "add", "src/main.py")

    before = [source(), source()]
    git(ws, "add", "-f", ".env")
    after = source()

    assert [".git" in masks.hidden_dirs for masks in [*before, after]] == [False, False, True]
    assert asked == [[".env"], [".env"]]


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

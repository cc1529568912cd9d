"""A new session whose source files all stat as an earlier session saw them answers its first
map from the saved look and the saved map, reading no row of the cache; any change between
the sessions (a file edited, touched, added, removed, renamed, made binary or a symlink, a deny
rule hiding a file by name or by another name) gives the map a fresh build gives."""

from __future__ import annotations

import os
import random
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from moot.permissions.links import DeniedInodes
from moot.repomap import RepoIndex, build_repo_map, find_symbols, map_repository, saved_look
from moot.repomap.languages import language_for
from moot.repomap.sources import PRUNED_DIRECTORIES, mapped_sources
from moot.sandbox.base import SandboxMasks

_SECRET = "secret.env"
_FILES = 6


def module(number: int, extra: str = "") -> str:
    """A module defining `helper_{number}` and using a few of the others."""
    uses = "".join(
        f"    helper_{n}()\n" for n in range(_FILES) if n != number and n % 3 == number % 2
    )
    return (
        f"def helper_{number}():\n{uses or '    pass'}\n{extra}\n\nclass Thing{number}:\n    pass\n"
    )


def make(root: Path) -> None:
    for number in range(_FILES):
        path = root / f"pkg{number % 2}" / f"mod{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(number))
    (root / _SECRET).write_text("TOKEN=1\n")


class Rules:
    """A session's deny rules: `secret.env` and the files `hide` names hidden by name, and
    every other name of `secret.env` by inode (as `Read(...)` deny rules do)."""

    def __init__(self, root: Path, hide: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.names = {_SECRET, *hide}

    def hidden(self, rel: str, is_dir: bool) -> bool:
        return rel in self.names

    def inodes(self) -> DeniedInodes:
        masks = SandboxMasks(hidden_files=tuple(sorted(self.names)))
        return DeniedInodes(lambda: masks, str(self.root))


def fresh(root: Path, rules: Rules | None, **options: object) -> tuple[object, ...]:
    """The map computed from nothing: a cache of its own, empty."""
    with tempfile.TemporaryDirectory(prefix="moot-fresh-") as scratch:
        made = build_repo_map(
            root,
            cache_file=Path(scratch, "cache.sqlite3"),
            hidden=rules.hidden if rules else None,
            inodes=rules.inodes() if rules else None,
            **options,  # type: ignore[arg-type]
        )
    return made.text, made.ranked, made.notes


def shown(made: tuple[object, ...]) -> tuple[object, ...]:
    """What a map says, whatever the order of files that rank alike (PageRank's sums round
    differently as the files come in another order, or start from an earlier ranking): the
    files, the notes, and each file's section of the text."""
    text, ranked, notes = made
    assert isinstance(text, str) and isinstance(ranked, tuple)
    sections = sorted(("\n" + text).split("\n" + "pkg")) if text else []
    return sorted(ranked), notes, sections


def mapped(index: RepoIndex, rules: Rules | None, **options: object) -> tuple[object, ...]:
    made = map_repository(
        index,
        hidden=rules.hidden if rules else None,
        inodes=rules.inodes() if rules else None,
        **options,  # type: ignore[arg-type]
    )
    return made.text, made.ranked, made.notes


def test_a_new_session_over_unchanged_files_reads_no_row_of_the_cache(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    with RepoIndex(root, cache_file=cache) as first:
        made = mapped(first, None)
        assert first.rows_read > 0
    with RepoIndex(root, cache_file=cache) as again:
        assert mapped(again, None) == made == fresh(root, None)
        assert again.rows_read == 0  # the saved look and the saved map: no row read
        assert mapped(again, None) == made and again.rows_read == 0  # and again, as it was
        focused = mapped(again, None, focus=["mod3.py"])  # the facts are needed: rows read
        assert again.rows_read > 0
        assert focused == fresh(root, None, focus=["mod3.py"])
        found = again.index()
        assert [s.path for s in find_symbols(found.files, "helper_4", found.facts)] == [
            "pkg0/mod4.py"
        ]


def test_a_file_edited_after_a_session_answered_from_the_saved_look_is_seen(
    tmp_path: Path,
) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    with RepoIndex(root, cache_file=cache) as first:
        mapped(first, None)
    with RepoIndex(root, cache_file=cache) as again:
        mapped(again, None)
        assert again.rows_read == 0
        edited = root / "pkg1" / "mod1.py"
        edited.write_text(module(1, "\ndef added_later():\n    helper_0()\n"))
        assert mapped(again, None) == fresh(root, None)
        assert "added_later" in again.index().facts["pkg1/mod1.py"].defined


def test_a_deny_rule_by_name_or_by_another_name_between_sessions_is_seen(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    (root / _SECRET).unlink()
    os.link(root / "pkg0" / "mod2.py", root / _SECRET)  # no stat of a source file changes now
    rules = Rules(root)
    with RepoIndex(root, cache_file=cache) as first:
        assert "pkg0/mod2.py" in map_repository(first).ranked
    with RepoIndex(root, cache_file=cache) as named:  # the name hidden, not the inode yet
        assert "pkg0/mod2.py" in map_repository(named, hidden=rules.hidden).ranked
    with RepoIndex(root, cache_file=cache) as again:  # the same listing, the same stats
        by_inode = mapped(again, rules)
        assert "pkg0/mod2.py" not in by_inode[1]
        assert by_inode == fresh(root, rules)
    hiding = Rules(root, frozenset({"pkg1/mod3.py"}))
    with RepoIndex(root, cache_file=cache) as third:
        assert mapped(third, hiding) == fresh(root, hiding)
    with RepoIndex(root, cache_file=cache) as fourth:  # no rule again: the first look's files
        assert mapped(fourth, None) == fresh(root, None)
        assert fourth.rows_read == 0


def test_a_damaged_saved_look_or_a_cache_that_lost_its_rows_still_maps(tmp_path: Path) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    with RepoIndex(root, cache_file=cache) as first:
        made = mapped(first, None)
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE looks SET look = x'92c0ff'")
    with RepoIndex(root, cache_file=cache) as again:
        assert mapped(again, None) == made  # a look in full, which saves the look again
        assert again.rows_read > 0
    with RepoIndex(root, cache_file=cache) as third:
        assert mapped(third, None) == made and third.rows_read == 0
        with sqlite3.connect(cache) as db:  # the rows go while the session holds no fact
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM tags")
        third.index(focus=["mod1.py"]).facts.get("pkg1/mod1.py")  # what is gone is dropped
        assert mapped(third, None, focus=["mod1.py"]) == fresh(root, None, focus=["mod1.py"])


_STEP = st.one_of(
    st.tuples(
        st.sampled_from(["edit", "resize", "touch", "remove", "binary", "symlink"]),
        st.integers(0, _FILES - 1),
    ),
    st.tuples(
        st.just("rename"), st.integers(0, _FILES - 1), st.sampled_from(["pkg0/x.py", "pkg2/y.py"])
    ),
    st.tuples(st.just("add"), st.sampled_from(["pkg0/new.py", "pkg3/new.py", "top.py"])),
    st.tuples(st.just("link"), st.integers(0, _FILES - 1)),
)


def change(root: Path, step: tuple[object, ...], tick: int) -> None:
    """One change to the repository; what it writes is a clock tick later than before (a
    change within a tick of the last stat keeps the stat: caches keyed by stat cannot see it)."""
    kind, *args = step
    sources = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    number = args[0] if args and isinstance(args[0], int) else None
    target = sources[number % len(sources)] if sources and number is not None else None
    written: Path | None = None
    if kind in ("edit", "resize") and target is not None:
        text = target.read_text(errors="replace")
        new = (
            text.replace("helper_", "helpor_", 1)
            if kind == "edit"
            else text + "\n\ndef grown():\n    pass\n"
        )
        target.write_text(new)
        written = target
    elif kind == "touch" and target is not None:
        written = target
    elif kind == "remove" and target is not None:
        target.unlink()
    elif kind == "binary" and target is not None:
        target.write_bytes(b"\x00\x01binary\x00" * 40)
        written = target
    elif kind == "symlink" and target is not None and len(sources) > 1:
        other = sources[(sources.index(target) + 1) % len(sources)]
        target.unlink()
        target.symlink_to(other)
    elif kind == "rename" and target is not None:
        destination = root / str(args[1])
        if not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            target.rename(destination)
    elif kind == "add":
        written = root / str(args[0])
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(module(7, f"\ndef new_{tick}():\n    helper_1()\n"))
    elif kind == "link" and target is not None:
        (root / _SECRET).unlink(missing_ok=True)
        os.link(target, root / _SECRET)
    if written is not None and written.exists():
        info = written.stat()
        os.utime(written, ns=(info.st_atime_ns, info.st_mtime_ns + (tick + 1) * 1_000_000_000))


@settings(
    derandomize=True,
    database=None,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    between=st.lists(_STEP, max_size=4),
    later=st.lists(_STEP, max_size=3),
    rules=st.tuples(st.booleans(), st.booleans()),
    hide=st.sets(st.sampled_from([f"pkg{n % 2}/mod{n}.py" for n in range(_FILES)]), max_size=2),
)
@example(between=[], later=[], rules=(False, False), hide=set())
@example(between=[("link", 2)], later=[], rules=(False, True), hide=set())
def test_any_change_between_two_sessions_maps_as_a_fresh_build(
    between: list[tuple[object, ...]],
    later: list[tuple[object, ...]],
    rules: tuple[bool, bool],
    hide: set[str],
) -> None:
    """Session one maps; the steps `between` change the files (and its deny rules may differ);
    session two's first map, a focused map, and a map after the `later` steps each equal a
    fresh build's. With nothing changed, session two reads no row of the cache."""
    with tempfile.TemporaryDirectory(prefix="moot-saved-look-") as scratch:
        root, cache = Path(scratch).resolve() / "repo", Path(scratch) / "cache.sqlite3"
        make(root)
        first_rules = Rules(root) if rules[0] else None
        second_rules = Rules(root, frozenset(hide)) if rules[1] else None
        with RepoIndex(root, cache_file=cache) as first:
            mapped(first, first_rules, tokens=8192)
        for tick, step in enumerate(between):
            change(root, step, tick)
        with RepoIndex(root, cache_file=cache) as second:
            made = mapped(second, second_rules, tokens=8192)
            assert shown(made) == shown(fresh(root, second_rules, tokens=8192))
            if not between and first_rules is None and second_rules is None:
                assert second.rows_read == 0
            for tick, step in enumerate(later, start=len(between)):
                change(root, step, tick)
            made = mapped(second, second_rules, tokens=8192)
            assert shown(made) == shown(fresh(root, second_rules, tokens=8192))
            focus = ["mod1.py", "helper_4"]
            made = mapped(second, second_rules, focus=focus, tokens=8192)
            assert shown(made) == shown(fresh(root, second_rules, focus=focus, tokens=8192))


def reference_sources(files: list[str]) -> list[tuple[str, str]]:
    """`mapped_sources` as it was written first: a name at a time."""
    found = []
    for rel in files:
        directory, _, name = rel.rpartition("/")
        spec = language_for(name)
        if spec is None:
            continue
        parts = directory.split("/") if directory else []
        if any(part.startswith(".") or part in PRUNED_DIRECTORIES for part in parts):
            continue
        found.append((rel, spec.name))
    return found


_PART = st.sampled_from(
    [
        "a",
        "b.c",
        ".hidden",
        "node_modules",
        "__pycache__",
        "src",
        "x.py",
        ".py",
        "v.min.js",
        "m.JS",
        "t.tsx",
        "R.Rs",
        "go.go",
        "n.bundle.js",
        "site-packages",
        "d.d",
        "noext",
        "p.pyi",
        "q.py.txt",
    ]
)


@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(paths=st.lists(st.lists(_PART, min_size=1, max_size=4).map("/".join), max_size=30))
def test_mapped_sources_finds_what_a_name_at_a_time_finds(paths: list[str]) -> None:
    files = sorted(set(paths))
    assert [(rel, spec.name) for rel, spec in mapped_sources(files)] == reference_sources(files)


def test_the_sources_of_a_big_listing_are_found_alike() -> None:
    rng = random.Random(7)
    parts = ["src", "lib", ".git", "node_modules", "a.b", "pkg"]
    names = ["m.py", "x.ts", "y.min.js", ".z.py", "README", "w.go", "v.RS", "q.txt"]
    files = sorted(
        {
            "/".join([*rng.choices(parts, k=rng.randint(0, 3)), rng.choice(names)])
            for _ in range(2000)
        }
    )
    assert [(rel, spec.name) for rel, spec in mapped_sources(files)] == reference_sources(files)


def test_a_cache_another_session_is_writing_still_answers_from_the_saved_look(
    tmp_path: Path,
) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    with RepoIndex(root, cache_file=cache) as first:
        made = mapped(first, None)
    writer = sqlite3.connect(cache, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another session's write, not committed yet
        writer.execute("DELETE FROM maps")
        with RepoIndex(root, cache_file=cache) as again:
            assert mapped(again, None) == made and again.rows_read == 0
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_look_saved_by_another_version_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "repo", tmp_path / "cache.sqlite3"
    make(root)
    with RepoIndex(root, cache_file=cache) as first:
        made = mapped(first, None)
    monkeypatch.setattr(saved_look, "LOOK_VERSION", saved_look.LOOK_VERSION + 1)
    with RepoIndex(root, cache_file=cache) as again:
        assert mapped(again, None) == made
        assert again.rows_read > 0  # the look in full (and saved for this version)
    with RepoIndex(root, cache_file=cache) as third:
        assert mapped(third, None) == made and third.rows_read == 0

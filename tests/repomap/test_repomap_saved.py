"""A new session over files that did not change answers its first map from the map an earlier
session saved, without decoding every file's tags or ranking them again; any change, a focus,
or another budget makes it rank, and every answer equals a fresh computation (issue 31)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from moot.repomap import RepoIndex, build_repo_map, map_repository


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for number in range(40):
        path = root / f"pkg{number // 10}" / f"mod{number:02}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        uses = "".join(f"    helper_{n}()\n" for n in range(number % 7) if n != number)
        body = uses or "    pass\n"
        path.write_text(f"def helper_{number}():\n{body}\n\nclass Thing{number}:\n    pass\n")
    return root


def fresh(root: Path, tmp_path: Path, **options: object) -> tuple[str, tuple[str, ...]]:
    """The map computed from nothing: a cache of its own, empty."""
    cache = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}.sqlite3"
    made = build_repo_map(root, cache_file=cache, **options)  # type: ignore[arg-type]
    return made.text, made.ranked


def test_a_new_session_over_unchanged_files_answers_with_the_saved_map(
    root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite3"
    with RepoIndex(root, cache_file=cache) as first:
        made = map_repository(first, tokens=512)
        assert "ranks" in first.results  # the first session ranked
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM maps").fetchone() == (1,)

    with RepoIndex(root, cache_file=cache) as again:
        saved = map_repository(again, tokens=512)
        assert "ranks" not in again.results  # answered from the saved map: nothing ranked
    assert (
        (saved.text, saved.ranked) == (made.text, made.ranked) == fresh(root, tmp_path, tokens=512)
    )
    assert saved.text and saved.parsed == ()


def test_a_change_a_focus_or_another_budget_ranks_again_as_a_fresh_map_would(
    root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite3"
    with RepoIndex(root, cache_file=cache) as first:
        map_repository(first)
    with RepoIndex(root, cache_file=cache) as again:
        focused = map_repository(again, focus=["mod07.py"])  # decodes the facts when asked
        assert "ranks" in again.results
        assert (focused.text, focused.ranked) == fresh(root, tmp_path, focus=["mod07.py"])
        other = map_repository(again, tokens=300)
        assert (other.text, other.ranked) == fresh(root, tmp_path, tokens=300)

    (root / "pkg3" / "mod39.py").write_text(
        "def helper_39():\n" + "".join(f"    helper_{n}()\n" for n in range(30))
    )
    with RepoIndex(root, cache_file=cache) as changed:
        after = map_repository(changed)
        assert "ranks" in changed.results  # not the saved map: a file's content changed
    assert (after.text, after.ranked) == fresh(root, tmp_path)


def test_a_cached_file_whose_tags_are_gone_is_dropped_then_parsed_again(
    root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite3"
    with RepoIndex(root, cache_file=cache) as first:
        map_repository(first, focus=["x"])
    with sqlite3.connect(cache) as db:
        db.execute("DELETE FROM maps")
    with RepoIndex(root, cache_file=cache) as again:
        found = again.index()
        with sqlite3.connect(cache) as db:  # the tags vanish after the look, before ranking
            db.execute("UPDATE tags SET tags = x'00'")
        unreadable = dict(found.facts)  # what this look knows of them: no names
        assert len(unreadable) == 40 and not any(facts.defined for facts in unreadable.values())
        assert map_repository(again).ranked == fresh(root, tmp_path)[1]  # parsed again


def test_a_look_that_finds_nothing_changed_answers_the_last_again_and_an_edit_is_seen(
    root: Path, tmp_path: Path
) -> None:
    with RepoIndex(root, cache_file=tmp_path / "cache.sqlite3") as index:
        first = index.index()
        again = index.index()
        assert again.facts is first.facts and again.version == first.version
        assert again.parsed == ()
        edited = root / "pkg0" / "mod01.py"  # written in place: its directory's time stays
        directory_time = (root / "pkg0").stat().st_mtime_ns
        edited.write_text(edited.read_text() + "\n\ndef added_name():\n    pass\n")
        assert (root / "pkg0").stat().st_mtime_ns == directory_time
        after = index.index()
        assert after.facts is not first.facts
        assert "added_name" in after.facts["pkg0/mod01.py"].defined
        assert after.parsed == ("pkg0/mod01.py",)


def test_a_look_whose_files_stat_as_before_still_parses_what_the_last_left(
    root: Path, tmp_path: Path
) -> None:
    with RepoIndex(root, cache_file=tmp_path / "cache.sqlite3", background=False) as index:
        first = index.index(seconds=0)  # out of time at once: every file left to parse
        assert first.pending == 40 and not first.facts
        again = index.index(seconds=3600)  # no file changed: the files left are parsed now
        assert again.pending == 0 and len(again.parsed) == 40
        assert index.index().facts is again.facts  # then nothing: the last look answers
        edited = root / "pkg1" / "mod12.py"
        edited.write_text(edited.read_text().replace("helper_12", "helper_xy"))
        after = index.index()
        assert (
            after.parsed == ("pkg1/mod12.py",)
            and "helper_xy" in after.facts[after.parsed[0]].defined
        )

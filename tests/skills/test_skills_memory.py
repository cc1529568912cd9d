"""Memory from real files: which files, in what order, `@path` imports and their bounds, the cap
and its visible note, and notes added with `#`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.skills.memory import NoteRefused, add_note, imports_in, load_memory
from moot.skills.places import find_places
from skill_files import git_repo


def memory(cwd: Path, user: Path | None = None, **kwargs: int):
    return load_memory(find_places(cwd, user, shipped=False), **kwargs)


def test_the_user_file_then_each_directory_from_the_top_down(tmp_path: Path) -> None:
    user = tmp_path / "config"
    user.mkdir()
    (user / "AGENTS.md").write_text("user: be terse\n")
    repo = git_repo(tmp_path / "repo")
    cwd = repo / "a" / "b"
    cwd.mkdir(parents=True)
    (repo / "AGENTS.md").write_text("top: use tabs\n")
    (repo / "CLAUDE.md").write_text("top claude: never read, AGENTS.md is here\n")
    (repo / "a" / "CLAUDE.md").write_text("a: claude only here\n")
    (cwd / "AGENTS.md").write_text("b: closest\n")
    (tmp_path / "AGENTS.md").write_text("above the repository: never read\n")

    found = memory(cwd, user)

    assert [f.shown for f in found.files] == [
        str(user.resolve() / "AGENTS.md"),
        "AGENTS.md",
        "a/CLAUDE.md",
        "a/b/AGENTS.md",
    ]
    text = found.text
    order = [text.index(s) for s in ("be terse", "use tabs", "claude only here", "closest")]
    assert order == sorted(order)
    assert "never read" not in text
    assert "## a/CLAUDE.md\n\na: claude only here" in text
    assert (found.cut, found.notes) == (False, ())


def test_imports_are_read_once_bounded_and_never_from_code(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "docs").mkdir()
    (repo / "AGENTS.md").write_text(
        "See @docs/style.md and @docs/style.md again, mail me@example.com, ask @alice.\n"
        "```\n@docs/in-code.md\n```\nAnd `@docs/inline.md`.\n"
        "Outside: @../outside.md @/etc/hostname\n"
    )
    (repo / "docs" / "style.md").write_text("style: short names. Next: @deeper.md\n")
    (repo / "docs" / "deeper.md").write_text("deeper: loops back to @../AGENTS.md\n")
    (repo / "docs" / "in-code.md").write_text("IN CODE\n")
    (repo / "docs" / "inline.md").write_text("INLINE\n")
    (tmp_path / "outside.md").write_text("OUTSIDE\n")

    found = memory(repo)

    assert [(f.shown, f.imported_by) for f in found.files] == [
        ("AGENTS.md", ""),
        ("docs/style.md", "AGENTS.md"),
        ("docs/deeper.md", "docs/style.md"),
    ]
    assert "## docs/style.md (imported by AGENTS.md)" in found.text
    for absent in ("IN CODE", "INLINE", "OUTSIDE"):
        assert absent not in found.text
    assert [n for n in found.notes if "outside.md" in n and "leads outside" in n]
    assert [n for n in found.notes if "hostname" in n and "leads outside" in n]


def test_imports_stop_at_the_depth_limit(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("@m1.md\n")
    for n in range(1, 8):
        (tmp_path / f"m{n}.md").write_text(f"level {n} @m{n + 1}.md\n")
    found = memory(tmp_path)
    assert len(found.files) == 6  # AGENTS.md and five levels of imports
    assert any("imports go 5 deep" in note for note in found.notes)


def test_a_symlinked_memory_file_that_leads_out_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("SECRET\n")
    repo = git_repo(tmp_path / "repo")
    os.symlink(tmp_path / "secret.txt", repo / "AGENTS.md")
    (repo / "CLAUDE.md").write_text("fallback is not used when AGENTS.md exists\n")
    found = memory(repo)
    assert "SECRET" not in found.text and found.files == ()
    assert any("leads outside" in note for note in found.notes)


def test_past_the_cap_the_memory_is_cut_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("".join(f"line {n:05}\n" for n in range(5000)))
    found = memory(tmp_path, cap=4096)
    assert found.cut
    assert len(found.text.encode()) < 4096 + 200
    last_line = found.text.rsplit("\n", 1)[-1]
    assert last_line.startswith("[moot: memory cut at 4 KiB; the last ")
    assert last_line.endswith(" bytes are left out. /memory shows every file.]")
    kept = found.text.rsplit("\n\n", 1)[0]
    assert kept.rsplit("\n", 1)[-1] == f"line {kept.count('line ') - 1:05}"  # at a line end
    assert found.notes[-1].startswith("[moot: memory cut at 4 KiB")


def test_a_file_larger_than_the_cap_is_read_only_up_to_it(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * 100_000)
    found = memory(tmp_path)
    assert found.files[0].bytes == 32 * 1024
    assert "only its first 32,768 bytes are read" in found.notes[0]


def test_imports_found_in_prose_only() -> None:
    text = "Read @a/b.md, @c.md. Not me@host.com or @bob or `@x.md`.\n```\n@y.md\n```"
    assert imports_in(text) == ["a/b.md", "c.md"]


# ---- notes ---------------------------------------------------------------------------------


def test_a_note_goes_to_the_workspace_agents_md(tmp_path: Path) -> None:
    path = add_note(tmp_path, "  use   tabs ")
    assert path == tmp_path.resolve() / "AGENTS.md"
    assert path.read_text() == "- use tabs\n"
    (tmp_path / "AGENTS.md").write_text("# Rules\nno newline at the end")
    add_note(tmp_path, "second")
    assert (tmp_path / "AGENTS.md").read_text() == "# Rules\nno newline at the end\n- second\n"


def test_a_note_goes_to_claude_md_when_it_is_the_only_memory_file(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Claude\n")
    assert add_note(tmp_path, "n").name == "CLAUDE.md"
    assert (tmp_path / "CLAUDE.md").read_text() == "# Claude\n- n\n"
    assert not (tmp_path / "AGENTS.md").exists()


def test_a_note_never_follows_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(target, work / "AGENTS.md")
    with pytest.raises(NoteRefused, match="symlink"):
        add_note(work, "planted")
    assert target.read_text() == "keep\n"
    with pytest.raises(NoteRefused, match="empty"):
        add_note(work, "   ")

"""Skills from real folders: where they are found, which one wins, every frontmatter rule, and
that nothing a repository holds can make discovery crash or read outside its root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.skills.arguments import substitute
from moot.skills.discovery import discover_skills
from moot.skills.index import skill_index
from moot.skills.places import find_places
from moot.skills.skill import load_skill
from skill_files import git_repo, skill


def discover(cwd: Path, user: Path | None = None, *, shipped: bool = False):
    return discover_skills(find_places(cwd, user, shipped=shipped))


def test_the_closest_skill_of_a_name_wins_and_the_others_are_reported(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    user = tmp_path / "config"
    here = skill(cwd / ".claude/skills/lint", description="From .claude in the cwd.")
    skill(cwd / ".agents/skills/lint", description="From .agents in the cwd.")
    winner = skill(cwd / ".moot/skills/lint", description="From .moot in the cwd.")
    skill(repo / ".moot/skills/lint", description="From the repository's top.")
    top_only = skill(repo / ".agents/skills/deploy", description="Only at the top.")
    skill(user / "skills/lint", description="The user's.")
    mine = skill(user / "skills/notes", description="Only the user's.")

    found = discover(cwd, user)

    assert found.skills["lint"].path == str(winner)
    assert found.skills["lint"].source == "project"
    assert found.skills["deploy"].path == str(top_only)
    assert (found.skills["notes"].path, found.skills["notes"].source) == (str(mine), "user")
    shadowed = {(s.path, s.by) for s in found.shadowed}
    assert (str(here), str(winner)) in shadowed
    assert len([s for s in found.shadowed if s.name == "lint"]) == 4
    assert all(p.severity == "warning" for p in found.problems)
    # Project skills come first in the index, then the user's.
    assert list(found.skills) == ["lint", "deploy", "notes"]


def test_nothing_above_the_repository_is_looked_at(tmp_path: Path) -> None:
    skill(tmp_path / ".moot/skills/outside")
    repo = git_repo(tmp_path / "repo")
    assert discover(repo).skills == {}


def test_outside_a_repository_only_the_working_directory_counts(tmp_path: Path) -> None:
    skill(tmp_path / ".moot/skills/above")
    cwd = tmp_path / "work"
    skill(cwd / ".moot/skills/here")
    assert list(discover(cwd).skills) == ["here"]


def test_the_shipped_skills_are_found_last_and_are_all_valid(tmp_path: Path) -> None:
    skill(tmp_path / ".moot/skills/commit-staged", description="The project's own commit skill.")
    found = discover(tmp_path, shipped=True)
    assert found.problems == (found.problems[0],)  # only the shadowed shipped `commit-staged`
    assert "shadowed by" in found.problems[0].message
    assert found.skills["commit-staged"].source == "project"
    shipped = {n for n, s in found.skills.items() if s.source == "shipped"}
    assert shipped == {"code-review", "write-tests", "explain-codebase", "skill-creator"}


# ---- every frontmatter rule -----------------------------------------------------------------

RULES = [
    ("name: Bad_Name", "folder", "may hold only lowercase letters, digits and single hyphens"),
    ("name: -lead", "-lead", "may not start or end with a hyphen"),
    ("name: two--hyphens", "two--hyphens", "single hyphens"),
    ("name: " + "a" * 65, "a" * 65, "is 65 characters; at most 64"),
    ("name: other", "folder", "must be the folder's name, 'folder'"),
    ("name: 12", "12", "`name` is required"),  # YAML reads 12 as a number
    ("description: ''", "folder", "`description` is required"),
    ("description: " + "d" * 1025, "folder", "is 1025 characters; at most 1024"),
    ("license: [MIT]", "folder", "`license` must be a string"),
    ("compatibility: " + "c" * 501, "folder", "is 501 characters; at most 500"),
    ("compatibility: ''", "folder", "`compatibility` must be a non-empty string"),
    ("metadata: [a, b]", "folder", "`metadata` must be a mapping"),
    ("allowed-tools: {a: 1}", "folder", "`allowed-tools` must be a string or a list"),
    ("allowed-tools: Bash(", "folder", "`allowed-tools` rule 'Bash('"),
    ("allowed-tools: Nope(x)", "folder", "only Bash, Edit"),
    ("disable-model-invocation: sometimes", "folder", "must be true or false"),
    ("user-invocable: 1", "folder", "`user-invocable` must be true or false"),
    ("argument-hint: [1, 2]", "folder", "`argument-hint` must be a string"),
]


@pytest.mark.parametrize(("line", "folder", "message"), RULES, ids=[r[2][:40] for r in RULES])
def test_each_frontmatter_rule_leaves_the_skill_out_with_its_reason(
    tmp_path: Path, line: str, folder: str, message: str
) -> None:
    key = line.split(":", 1)[0]
    fields = {"name": f"name: {folder}", "description": "description: Does things."}
    fields[key] = line
    path = tmp_path / folder
    path.mkdir()
    (path / "SKILL.md").write_text("---\n" + "\n".join(fields.values()) + "\n---\nbody\n")

    skill_found, problems = load_skill(tmp_path, path, "project")

    assert skill_found is None
    assert any(message in p.message and p.severity == "error" for p in problems), problems


def test_the_optional_fields_are_read(tmp_path: Path) -> None:
    extra = (
        "license: Apache-2.0\ncompatibility: needs git\nmetadata:\n  author: me\n  version: 2\n"
        "allowed-tools: Bash(git diff:*) Read, git_log\ndisable-model-invocation: true\n"
        "argument-hint: <path>\nmodel: opus"
    )
    path = skill(tmp_path / "full", extra=extra)
    found, problems = load_skill(tmp_path, path.parent, "user")
    assert found is not None
    assert found.allowed_tools == ("Bash(git diff:*)", "Read", "git_log")
    assert (found.model_invocable, found.user_invocable) == (False, True)
    assert (found.license, found.compatibility, found.argument_hint) == (
        "Apache-2.0",
        "needs git",
        "<path>",
    )
    assert found.metadata == {"author": "me", "version": "2"}
    messages = [p.message for p in problems]
    assert any("`metadata` values should be strings: version" in m for m in messages)
    assert any("moot ignores `model`" in m for m in messages)
    assert all(p.severity == "warning" for p in problems)


def test_no_frontmatter_or_no_skill_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".moot/skills/plain").mkdir(parents=True)
    (tmp_path / ".moot/skills/plain/SKILL.md").write_text("# Just text\n")
    (tmp_path / ".moot/skills/empty").mkdir(parents=True)
    found = discover(tmp_path)
    assert found.skills == {}
    messages = sorted(p.message for p in found.problems)
    assert messages[0].startswith("no SKILL.md in this skill folder")
    assert messages[1].startswith("no frontmatter")


# ---- a hostile repository ---------------------------------------------------------------------


def test_what_a_repository_plants_is_refused_with_a_reason_not_a_crash(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    skill(secret / "leak", description="Reads what it should not.")
    work = git_repo(tmp_path / "work")
    skills = work / ".moot/skills"
    skills.mkdir(parents=True)
    os.symlink(secret / "leak", skills / "leak")  # a skill folder that leads outside
    (skills / "file-link").mkdir()
    os.symlink(secret / "leak" / "SKILL.md", skills / "file-link" / "SKILL.md")
    (skills / "huge").mkdir()
    (skills / "huge" / "SKILL.md").write_text("---\nname: huge\n" + "x" * 200_000)
    (skills / "binary").mkdir()
    (skills / "binary" / "SKILL.md").write_bytes(b"---\nname: binary\n\xff\xfe\x00---\n")
    (skills / "fifo").mkdir()
    os.mkfifo(skills / "fifo" / "SKILL.md")
    skill(skills / "fine")

    found = discover(work)

    assert list(found.skills) == ["fine"]
    by_folder = {
        Path(p.path).parent.name if p.path.endswith("SKILL.md") else Path(p.path).name: p.message
        for p in found.problems
    }
    assert "leads outside" in by_folder["leak"]
    assert "leads outside" in by_folder["file-link"]
    assert "too big (200,015 bytes; the limit is 131,072)" in by_folder["huge"]
    assert "not a regular file" in by_folder["fifo"]
    assert "binary" in by_folder  # read with bad bytes replaced, then refused by the rules


def test_a_symlink_inside_the_repository_is_followed(tmp_path: Path) -> None:
    work = git_repo(tmp_path / "work")
    shared = skill(work / "shared/skills/share")
    (work / ".claude/skills").mkdir(parents=True)
    os.symlink(shared.parent, work / ".claude/skills/share")
    assert list(discover(work).skills) == ["share"]


# ---- the index and its budget ---------------------------------------------------------------


def test_the_index_lists_what_fits_and_says_what_it_left_out(tmp_path: Path) -> None:
    for n in range(12):
        skill(tmp_path / f".moot/skills/s{n:02}", description=f"Skill {n}. " + "d" * 300)
    skill(tmp_path / ".moot/skills/hidden", extra="disable-model-invocation: true")
    found = discover(tmp_path)

    index = skill_index(found.skills.values(), budget=2000)

    assert len(index.listed) == 6 and len(index.left_out) == 6
    assert "hidden" not in index.listed + index.left_out
    assert index.text.endswith(
        "- (6 more not listed: the skills index is over its 2,000-character budget; "
        "the person can see them all with /skills)"
    )
    assert len(index.text) < 2000 + 200


# ---- $ARGUMENTS ------------------------------------------------------------------------------


def test_arguments_fill_their_placeholders_once() -> None:
    assert substitute("Review $ARGUMENTS now", "src/app.py") == "Review src/app.py now"
    assert substitute("No placeholder", "x y") == "No placeholder\n\nARGUMENTS: x y"
    assert substitute("No placeholder", "") == "No placeholder"
    assert substitute("$1 then $2 and $3; all: $ARGUMENTS", '"a b" c', positional=True) == (
        'a b then c and ; all: "a b" c'
    )
    # What the person typed is never read as a placeholder itself.
    assert substitute("[$ARGUMENTS] $1", "$1 $ARGUMENTS", positional=True) == ("[$1 $ARGUMENTS] $1")
    # Skills fill only $ARGUMENTS: `$1` in a script stays.
    assert substitute("awk '{print $1}' $ARGUMENTS", "f.txt") == "awk '{print $1}' f.txt"
    # `$10` and `$ARGUMENTSX` are no placeholders, so the arguments are added at the end.
    assert substitute("$ARGUMENTSX $10", "a", positional=True) == (
        "$ARGUMENTSX $10\n\nARGUMENTS: a"
    )


# ---- who may start a skill -------------------------------------------------------------------


async def test_who_may_start_a_skill(tmp_path: Path) -> None:
    from moot.skills.grants import Grants
    from moot.skills.guidance import load_guidance
    from moot.skills.tool import SkillTool
    from moot.tools.context import ToolContext

    skill(tmp_path / ".moot/skills/person-only", extra="disable-model-invocation: true")
    skill(tmp_path / ".moot/skills/model-only", extra="user-invocable: false")
    guidance = load_guidance(tmp_path, None, shipped=False)
    tool = SkillTool(guidance.skills.skills, guidance.index, Grants())
    ctx = ToolContext(session_id="s", run_id="r", call_id="c", agent="moot", tool_call_id="t")

    refused = await tool.invoke({"name": "person-only"}, ctx)
    loaded = await tool.invoke({"name": "/model-only", "arguments": "x"}, ctx)
    bad = await tool.invoke({"name": 5}, ctx)

    assert refused.is_error and refused.content == "No skill 'person-only'. Skills: model-only."
    assert not loaded.is_error and "Do the thing with x." in loaded.content
    assert bad.is_error and "needs `name`" in bad.content
    assert "person-only" not in tool.description and "- model-only: " in tool.description
    assert [c.name for c in guidance.invocable()] == ["init", "person-only"]
    assert guidance.expand("model-only", "") is None
    assert guidance.expand("person-only", "y") is not None


def test_the_three_kinds_of_files_tell_unread_fields_and_folders_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skills, commands and agents share one rule for the fields moot does not read
    (`values.ignored_fields`) and one reading of their folders (`files.folder_entries`)."""
    from moot.skills import files
    from moot.skills.values import ignored_fields

    said = ignored_fields({"name": "x", "color": "red"}, ("name", "tools"))
    assert said == "moot ignores `color` (it reads: name, tools)"
    assert ignored_fields({"name": "x"}, ("name", "tools")) is None

    problems: list = []
    assert files.folder_entries(tmp_path, tmp_path / "absent", problems) == []
    assert problems == []  # a folder that is not there is no problem
    (tmp_path / "many").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "many" / name).write_text("x")
    monkeypatch.setattr(files, "MAX_ENTRIES", 2)
    found = files.folder_entries(tmp_path, tmp_path / "many", problems)
    assert [p.name for p in found] == ["a.md", "b.md"]
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "out").symlink_to(outside)
    assert files.folder_entries(tmp_path, tmp_path / "out", problems) == []
    assert problems[0].message == "1 more entries not looked at"
    assert len(problems) == 2 and problems[1].path == str(tmp_path / "out")


def test_a_frontmatter_and_the_command_line_split_rules_by_one_reading() -> None:
    """`allowed-tools` and `--allowedTools` split rules by one function (`split_rules`): on
    commas and spaces outside parentheses; a frontmatter on tabs and line ends too."""
    from moot.frontend.flags import rule_list, split_rules
    from moot.skills.values import split_tools

    written = "Bash(git diff:*) Read,Edit(./a b.py)"
    assert split_tools(written) == (rule_list([written]), None)
    assert rule_list([written]) == ["Bash(git diff:*)", "Read", "Edit(./a b.py)"]
    assert split_tools("Read\n\tGrep") == (["Read", "Grep"], None)
    assert split_rules("Read\nGrep") == ["Read\nGrep"]  # the command line: as it was

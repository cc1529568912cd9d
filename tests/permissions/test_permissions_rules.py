"""Permission rules: parsing what people write in settings, and what each rule covers."""

from __future__ import annotations

import pytest

from moot.permissions.rules import DomainPattern, PathPattern, Rule, RuleSet, parse_rule
from moot.protocol.modes import PermissionMode

ROOT = "/work/project"


@pytest.mark.parametrize(
    ("text", "tool", "specifier"),
    [
        ("Read", "Read", None),
        ("Edit(src/**)", "Edit", "src/**"),
        ("  Bash( npm run test:* )  ", "Bash", "npm run test:*"),
        ("Bash(git status)", "Bash", "git status"),
        ("Bash(echo (a))", "Bash", "echo (a)"),
        ("Bash(*)", "Bash", None),
        ("WebFetch(domain:docs.python.org)", "WebFetch", "domain:docs.python.org"),
        ("Read(~/.ssh/**)", "Read", "~/.ssh/**"),
        ("Read(//etc/**)", "Read", "//etc/**"),
        ("git_commit", "git_commit", None),
        ("mcp__github", "mcp__github", None),
        ("mcp__github__*", "mcp__github__*", None),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
    ],
)
def test_rules_parse_as_written(text: str, tool: str, specifier: str | None) -> None:
    rule = parse_rule(text)
    assert (rule.tool, rule.specifier) == (tool, specifier)
    assert parse_rule(str(rule)) == rule


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "no tool name"),
        ("   ", "no tool name"),
        ("(src/**)", "no tool name"),
        ("Edit(src/**", "closing ')'"),
        ("Edit(src/**) extra", "closing ')'"),
        ("Edit)", "')' without a '('"),
        ("Edit()", "empty parentheses"),
        ("Edit(  )", "empty parentheses"),
        ("Ed it", "letters, digits"),
        ("foo__*", "letters, digits"),
        ("git_commit(main)", "only Bash, Edit, Glob, Grep, LS, Read, WebFetch, Write"),
        ("bash(ls)", "did you mean Bash(...)"),
        ("read(.env)", "did you mean Read(...)"),
        ("web_fetch(domain:x.org)", "did you mean WebFetch(...)"),
        ("WebFetch(example.com)", "domain:<host>"),
        ("WebFetch(domain:https://example.com/a)", "not a host name"),
        ("WebFetch(domain:example.com:8080)", "not a host name"),
        ("Read(~bob/.ssh)", "~user/"),
        ("Bash(echo 'unbalanced)", "cannot read the Bash rule"),
        ("Read(!.env)", "cannot start with '!'"),
        ("Read(#x)", "cannot start with '#'"),
    ],
)
def test_malformed_rules_say_what_is_wrong(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        parse_rule(text)


def test_a_rule_must_be_a_string() -> None:
    with pytest.raises(ValueError, match="not int"):
        parse_rule(42)  # type: ignore[arg-type]


def test_rules_built_directly_are_checked_too() -> None:
    assert Rule("Edit", "src/**").path is not None
    with pytest.raises(ValueError, match="only Bash"):
        Rule("git_commit", "x")


def test_a_rule_set_names_the_list_and_position_of_a_bad_rule() -> None:
    with pytest.raises(ValueError, match=r"permissions\.deny\[1\]: .*closing"):
        RuleSet(deny=["Read(./.env)", "Edit(src/**"])
    with pytest.raises(ValueError, match=r"permissions\.allow must be a list"):
        RuleSet(allow="Bash")


def test_rule_sets_extend_without_duplicates() -> None:
    rules = RuleSet(allow=["Bash(ls:*)"], deny=["Read(./.env)"])
    more = rules.extended(allow=["Bash(ls:*)", "Edit(src/**)"], deny=[parse_rule("WebFetch")])
    assert [str(r) for r in more.allow] == ["Bash(ls:*)", "Edit(src/**)"]
    assert [str(r) for r in more.deny] == ["Read(./.env)", "WebFetch"]
    assert rules == RuleSet(allow=["Bash(ls:*)"], deny=["Read(./.env)"])
    assert "Edit(src/**)" in repr(more)


@pytest.mark.parametrize(
    ("rule", "tool", "covered"),
    [
        ("Read", "read", True),
        ("Read", "grep", True),
        ("Read", "glob", True),
        ("Read", "ls", True),
        ("Read", "write", False),
        ("Edit", "edit", True),
        ("Edit", "multi_edit", True),
        ("Edit", "write", True),
        ("Edit", "read", False),
        ("Write", "write", True),
        ("Write", "edit", False),
        ("Grep", "grep", True),
        ("Grep", "read", False),
        ("Glob", "glob", True),
        ("LS", "ls", True),
        ("Bash", "bash", True),
        ("Bash", "kill_shell", False),
        ("WebFetch", "web_fetch", True),
        ("bash", "bash", True),
        ("multi_edit", "multi_edit", True),
        ("multi_edit", "edit", False),
        ("git_commit", "git_commit", True),
        ("git_commit", "git_commit_all", False),
        ("mcp__github", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github", "mcp__githubber__x", False),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__close_issue", False),
    ],
)
def test_which_tools_a_rule_covers(rule: str, tool: str, covered: bool) -> None:
    assert parse_rule(rule).covers(tool) is covered


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "matched"),
    [
        # `./x` and `/x`: anchored at the workspace root.
        ("./.env", f"{ROOT}/.env", False, True),
        ("./.env", f"{ROOT}/config/.env", False, False),
        ("/.env", f"{ROOT}/.env", False, True),
        ("/.env", f"{ROOT}/config/.env", False, False),
        # No slash: any depth, as in .gitignore; even outside the workspace.
        (".env", f"{ROOT}/.env", False, True),
        (".env", f"{ROOT}/config/.env", False, True),
        (".env", "/home/someone/.env", False, True),
        (".env", f"{ROOT}/.env.example", False, False),
        ("*.key", f"{ROOT}/a/b/c.key", False, True),
        # A slash inside anchors at the root.
        ("src/**", f"{ROOT}/src/a.py", False, True),
        ("src/**", f"{ROOT}/src/deep/er/a.py", False, True),
        ("src/**", f"{ROOT}/src", True, True),
        ("src/**", f"{ROOT}/lib/src/a.py", False, False),
        ("src/**", f"{ROOT}/srcx/a.py", False, False),
        ("src/**", "/src/a.py", False, False),
        ("**/*.pem", f"{ROOT}/b.pem", False, True),
        ("**/*.pem", f"{ROOT}/a/b/c.pem", False, True),
        ("**/*.pem", "/etc/ssl/private/host.pem", False, True),
        # `dir/`: the directory and everything in it.
        ("secrets/", f"{ROOT}/secrets", True, True),
        ("secrets/", f"{ROOT}/secrets/db.txt", False, True),
        ("secrets/", f"{ROOT}/secrets", False, False),
        ("./secrets/", f"{ROOT}/secrets/db.txt", False, True),
        ("./secrets/", f"{ROOT}/lib/secrets/db.txt", False, False),
        # `//abs` is absolute; `../x` hangs from the root's parent.
        ("//etc/**", "/etc/passwd", False, True),
        ("//etc/**", f"{ROOT}/etc/passwd", False, False),
        ("//etc/passwd", "/etc/passwd", False, True),
        ("../shared/**", "/work/shared/DESIGN.md", False, True),
        ("../shared/**", f"{ROOT}/shared/DESIGN.md", False, False),
        # `**` and `./` name the whole workspace, root included.
        ("**", ROOT, True, True),
        ("./", f"{ROOT}/a/b", False, True),
        ("./", "/elsewhere/a", False, False),
    ],
)
def test_path_patterns_follow_gitignore_anchored_at_the_workspace(
    pattern: str, path: str, is_dir: bool, matched: bool
) -> None:
    assert PathPattern.parse(pattern).matches(path, ROOT, is_dir=is_dir) is matched


def test_home_patterns_hang_from_the_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    pattern = PathPattern.parse("~/.ssh/**")
    assert pattern.matches("/home/someone/.ssh/id_ed25519", ROOT)
    assert not pattern.matches(f"{ROOT}/.ssh/id_ed25519", ROOT)
    assert PathPattern.parse("~").matches("/home/someone/notes.txt", ROOT)


@pytest.mark.parametrize(
    ("specifier", "host", "matched"),
    [
        ("domain:example.com", "example.com", True),
        ("domain:example.com", "docs.example.com", True),
        ("domain:example.com", "EXAMPLE.com.", True),
        ("domain:example.com", "badexample.com", False),
        ("domain:example.com", "example.com.evil.net", False),
        ("domain:Docs.Python.org", "docs.python.org", True),
        ("domain:*.example.com", "docs.example.com", True),
        ("domain:*.example.com", "example.com", False),
    ],
)
def test_domains_cover_the_host_and_its_subdomains(
    specifier: str, host: str, matched: bool
) -> None:
    assert DomainPattern.parse(specifier).matches(host) is matched


def test_permission_modes_are_the_settings_strings() -> None:
    assert [m.value for m in PermissionMode] == [
        "default",
        "acceptEdits",
        "plan",
        "dontAsk",
        "bypassPermissions",
    ]
    assert PermissionMode("acceptEdits") is PermissionMode.ACCEPT_EDITS

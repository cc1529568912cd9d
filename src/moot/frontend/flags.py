"""What every front end reads the same way off its command line: rule lists and the
repository MCP servers allowed to start (the app, the REPL, `moot -p`, ACP, `moot mcp serve`)."""

from __future__ import annotations

from collections.abc import Sequence


def project_mcp(values: Sequence[str]) -> list[str]:
    """`--allow-project-mcp github,docs --allow-project-mcp all` as names (`*` for all)."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    return ["*" if name == "all" else name for name in names]


def rule_list(values: Sequence[str]) -> list[str]:
    """Rules from `--allowedTools "Read,Bash(git diff:*)" Edit`: split on commas and spaces
    outside parentheses."""
    return [rule for value in values for rule in split_rules(value)]


def split_rules(value: str, separators: str = ", ") -> list[str]:
    """Permission rules written in one string, split on `separators` outside parentheses
    (`Bash(git diff:*) Read,Edit`); the command line's and a skill's frontmatter's alike."""
    rules: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        depth += char == "("
        depth -= char == ")"
        if char in separators and depth == 0:
            if current:
                rules.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        rules.append("".join(current))
    return rules

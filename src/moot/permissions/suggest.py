"""The allow rules that would let calls like one that asked run: proposed with the question, and
kept by an answer "for the session" or "always"."""

from __future__ import annotations

from pathlib import Path

from moot.permissions.rule_match import commands_left, writes_left
from moot.permissions.rules import RuleSet
from moot.permissions.targets import FILE_EDIT_TOOLS, Call, describe, inside
from moot.protocol.approval import EXIT_PLAN_MODE, ApprovalRequest
from moot.protocol.modes import PermissionMode


def suggested_rules(
    call: ApprovalRequest, workspace_root: Path, rules: RuleSet | None = None
) -> list[str]:
    """Allow rules that would let calls like this one run, to propose or to save ("always").

    Args:
        call: The call that asked.
        workspace_root: The workspace; file rules are written relative to it.
        rules: The rules in force; sub-commands they already allow get no rule of their own.

    Returns:
        For a shell command, a prefix rule per sub-command not yet allowed (its command and,
        unless that is an option, its first argument: `Bash(npm run:*)`); for a file tool the
        file; for a fetch the host; otherwise the tool's name.
    """
    return suggest(describe(call, workspace_root), rules or RuleSet())


def suggest(described: Call, rules: RuleSet) -> list[str]:
    """`suggested_rules` for a call `targets.describe` has described already."""
    call = described.request
    if call.tool == EXIT_PLAN_MODE:
        return []  # each plan is approved on its own merits
    if call.tool == "bash" and described.commands:
        suggestions: list[str] = []
        for command in commands_left(described, rules):
            if not command.checkable or command.sub.unseen:
                continue  # no prefix rule would cover it; it must be approved each time
            words = list(command.sub.words)
            rule = f"Bash({_rule_spec(words)})"
            if words and rule not in suggestions:
                suggestions.append(rule)
        for _, written in writes_left(described, rules.allow, PermissionMode.DEFAULT):
            for form in written.forms:  # an edit of a file outside is never allowed by rule
                parts = inside(form, described.root)
                rule = f"Edit(./{'/'.join(parts)})"
                if parts and rule not in suggestions:
                    suggestions.append(rule)
        return suggestions
    if described.host:
        return [f"WebFetch(domain:{described.host})"]
    if described.targets and call.tool in FILE_EDIT_TOOLS | {"read"}:
        target = described.targets[0].forms[0]
        name = "Read" if call.tool == "read" else "Edit"
        parts = inside(target, described.root)
        return [f"{name}(./{'/'.join(parts)})" if parts else f"{name}(/{target})"]
    return [call.tool]


RUNNERS = frozenset(
    {"python", "python3", "node", "deno", "bun", "ruby", "perl", "php", "bash", "sh", "zsh",
     "uv", "uvx", "npx", "pipx", "poetry", "pdm", "hatch", "java", "dotnet"}
)  # fmt: skip
"""Commands that run whatever their arguments name: a rule for the bare name would allow any
code (`Bash(python:*)` for `python -m pytest`), so theirs names what they run."""


RUN_VERBS = frozenset({"run", "exec", "x", "dlx", "tool"})
"""A runner's sub-commands that run what follows them (`uv run`, `npm exec`, `pnpm dlx`)."""
WRAPPERS = frozenset({"env", "nice", "nohup", "time", "timeout", "command", "exec", "xargs"})
"""Commands that run the command after their own options: a rule names that one too."""


def _rule_spec(words: list[str], *, whole_words: bool = False) -> str:
    """What an "always" rule for this command says inside `Bash(...)`: its command and, unless
    that is an option, its first argument, as a prefix (`npm run:*`, `ls:*`).

    What runs arbitrary code is named down to what it runs, in whole words (`python -m pytest
    *` allows `python -m pytest -x`, not `python -m pytest_evil`): an interpreter's script or
    module, a runner's `run` target (`uv run pytest *`), a wrapper's command (`env python -m
    pytest *`); `whole_words` asks that form of what a runner or wrapper runs. An option in
    the way may take a value (`python -W ignore x.py`, `uv run --with pkg x`) that no prefix
    could tell from what runs, so the rule is then the command exactly, as for a bare
    interpreter (`python` reads its program from stdin). (`sudo apt` the parser splits.)
    """
    name = words[0].rsplit("/", 1)[-1] if words else ""
    whole = " ".join(words)
    if name in WRAPPERS:
        at = next((i for i, w in enumerate(words[1:], 1) if "=" not in w), len(words))
        if at < len(words) and not words[at].startswith("-") and not words[at].isdigit():
            inner = _rule_spec(words[at:], whole_words=True)
            return " ".join([*words[:at], inner])  # past `env VAR=value`
        return whole
    if not (name in RUNNERS or name.rstrip("0123456789.").removesuffix("python") == ""):
        named = words[:2] if len(words) > 1 and not words[1].startswith("-") else words[:1]
        return f"{' '.join(named)}{' *' if whole_words else ':*'}"
    if len(words) > 2 and words[1] == "-m":
        return f"{' '.join(words[:3])} *"
    if len(words) > 2 and words[1] in RUN_VERBS:
        at = 3 if words[2] == "--" else 2
        if at < len(words) and not words[at].startswith("-"):
            return " ".join([*words[:at], _rule_spec(words[at:], whole_words=True)])
        return whole
    if len(words) > 1 and not words[1].startswith("-"):
        return f"{' '.join(words[:2])} *"
    return whole

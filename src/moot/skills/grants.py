"""What a skill or command pre-approves while it is active: its `allowed-tools`.

A grant belongs to the agent that activated the skill (the person's own agent when they typed
`/name`) and lasts until the person's turn ends (the session's `TurnEnd` calls `end_turn`,
also when an interrupt ends it). A crash forgets it: a resumed run asks again, which is the
safe way to be wrong.

Whose files may grant anything is decided where a skill is activated (`moot.skills.tool`): a
skill from the repository grants only when the person started it, since a hostile repository
could otherwise pre-approve commands and describe the skill so the model starts it.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.protocol import events as ev


class Grants:
    """The active grants of one session, by agent."""

    def __init__(self) -> None:
        self._active: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def grant(self, agent: str, by: str, rules: Sequence[str]) -> None:
        """Let `agent` run calls matching `rules` without asking, until the turn ends.

        Args:
            agent: The agent the skill was activated for.
            by: What grants it, for the reason the person reads (`skill code-review`).
            rules: Permission rules (`Bash(git diff:*)`, `Read`), already checked.
        """
        if rules:
            self._active.setdefault(agent, []).append((by, tuple(rules)))

    def of(self, agent: str) -> list[tuple[str, tuple[str, ...]]]:
        """What is active for `agent`: (what granted it, its rules)."""
        return list(self._active.get(agent, ()))

    def end_turn(self, prompt: str = "") -> list[ev.Event]:
        """Forget every grant (a `TurnEnd`: the person's turn is over); records nothing."""
        self._active.clear()
        return []

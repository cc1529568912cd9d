"""Agents: peers with a name, a role the others see, instructions and a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from moot.providers.base import Provider
    from moot.tools.base import Tool


class Agent(msgspec.Struct, frozen=True):
    """One participant with a model. The person is the participant without one."""

    name: str
    role: str = ""
    """One line the other participants see in their roster."""
    instructions: str = ""
    """This agent's own system prompt."""
    model: str | Provider = ""
    """`provider/model`, `scripted:<file>`, or a Provider instance."""
    tools: Sequence[Tool] = ()
    """Tools only this agent has, on top of the run's shared tools."""
    given_tools: tuple[str, ...] | None = None
    """The names of the run's shared tools this agent is given (`call_agent` among them for
    it to call peers); None: all of them. An agent definition's `tools` list sets it."""

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "_").isidentifier():
            raise ValueError(f"agent name {self.name!r} must be a word (letters, digits, -, _)")
        if self.name == "user":
            raise ValueError("`user` is the person's name in every run; pick another")

"""The git status the prompt takes at the session's first op, not as the session opens.

A session opens without waiting for `git status` (`client/facts.py::GitProbe`; 250 ms and more
in a big repository): its prompt says the branch and that the status is not read yet. Before
the session's first op reaches the runtime (`LocalClient.submit`), `LateGit.settle` waits for
the status `FIRST_OP_WAIT_S` at most and, when git has answered, renders the agents' prompts
again around it, so the first model request carries it. It settles once: the prompt then stays
the same from request to request (the provider's cache), whatever git answers later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from moot.client.briefing import Briefing, renewed
from moot.client.facts import FIRST_OP_WAIT_S, GitProbe
from moot.client.prompt import system_prompt

if TYPE_CHECKING:
    from moot.client.session import Session


class LateGit:
    """Puts the git status into a session's prompts before its first op (see the module
    docstring).

    Args:
        probe: The status started as the session began opening.
        briefing: What the session's files made of it (its facts say the status is not read).
        session: The session whose agents' prompts take the status.
    """

    def __init__(self, probe: GitProbe, briefing: Briefing, session: Session) -> None:
        self._probe = probe
        self._briefing = briefing
        self._session = session

    def settle(self) -> None:
        """Wait `FIRST_OP_WAIT_S` at most for the status and render the prompts around it; the
        prompts keep saying it is not read yet when git has not answered by then. The client
        calls it once (`Session.settle_prompt`)."""
        briefing, session = self._briefing, self._session
        found = self._probe.summary(FIRST_OP_WAIT_S)
        if found is None or found == briefing.facts.git:  # not read yet, or already in
            return
        briefing.facts = msgspec.structs.replace(briefing.facts, git=found)
        memory = briefing.guidance.memory.text
        skills = bool(briefing.tools)
        _, briefing.parts = system_prompt(briefing.facts, skills=skills, memory=memory)
        runtime = session.runtime
        for agent in renewed(briefing, memory, list(runtime.agents.values())):
            runtime.agents[agent.name] = agent
            if runtime.entry.name == agent.name:
                runtime.entry = agent
        session.prompt_parts = tuple(
            msgspec.structs.replace(part, bytes=briefing.parts.template)
            if part.name == "system prompt"
            else part
            for part in session.prompt_parts
        )

"""The providers of a session's agents: each made once per model, and told the log it needs.

Core keeps no provider's bookkeeping: a provider whose answers depend on earlier calls (a
script's position) implements `ResumesFromLog`, and is told the session's `model_responded`
and provider `error` events once, when it is made (a provider given as an object, only those of
the agents it answers, since every `ScriptedProvider` is named `scripted`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from moot.core.agent import Agent
from moot.providers.base import LOG_KINDS, Provider, ResumesFromLog
from moot.store.base import Store


class SessionProviders:
    """Makes the provider of an agent of the session, once per model.

    Args:
        store: The session's log.
        session_id: The session.
        agents: The session's agents (as they are when a provider is made).
        resolve: Makes a provider of a model name (`provider/model`).
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        agents: Mapping[str, Agent],
        resolve: Callable[[str], Provider],
    ) -> None:
        self.store, self.session_id = store, session_id
        self.agents = agents
        self.resolve = resolve
        self._made: dict[str | int, Provider] = {}
        """Providers by model name, or by the `id` of a provider given as an object."""

    def __call__(self, agent: Agent) -> Provider:
        """The agent's provider, made once per model (and told the calls already made to it,
        when its answers depend on them).

        Raises:
            ValueError: The agent has no model.
            UnknownModel: Its model name cannot be made a provider.
        """
        model = agent.model
        if not model:
            raise ValueError(f"agent {agent.name!r} has no model")
        key = model if isinstance(model, str) else id(model)
        provider = self._made.get(key)
        if provider is None:
            provider = self.resolve(model) if isinstance(model, str) else model
            self._made[key] = provider
            if isinstance(provider, ResumesFromLog):
                log = self.store.events(self.session_id, kinds=LOG_KINDS)
                if not isinstance(model, str):
                    # Provider objects may share a name (every `ScriptedProvider` is
                    # "scripted"): each is told only the calls of the agents it answers.
                    users = {a.name for a in self.agents.values() if a.model is model}
                    log = [e for e in log if e.agent in users]
                provider.resume(log)
        return provider

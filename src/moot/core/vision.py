"""A turn that attaches an image to a model that reads none is refused before anything is sent,
naming the image and the catalog's models that would take it. (Images a tool returns to such
a model become a short note instead: the model asked for them, the turn goes on.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from moot.core.agent import Agent
from moot.protocol import ops
from moot.protocol.messages import Attachment
from moot.providers.base import Provider, UnknownModel, model_info
from moot.providers.catalog import ModelInfo

SHOWN = 6
"""How many models a refusal names at most."""


class Vision:
    """Checks a turn's attachments against the models that would read them.

    Args:
        provider_for: The provider of an agent of the session (`SessionProviders`).
        resolve: Makes a provider of a model name (a turn's own `model`).
    """

    def __init__(
        self, provider_for: Callable[[Agent], Provider], resolve: Callable[[str], Provider]
    ) -> None:
        self._provider_for, self._resolve = provider_for, resolve

    def refusal(self, op: ops.UserTurn, agents: Mapping[str, Agent], entry: Agent) -> str:
        """Why `op`'s images cannot go to the models that would answer it ("" when they can,
        or when nothing says: a scripted model, an agent without a model)."""
        images = [a for a in op.attachments if not a.is_document]
        if not images:
            return ""
        for name in op.agents or (op.agent or entry.name,):
            agent = agents.get(name)
            try:
                if op.model is not None:
                    provider = self._resolve(op.model)
                elif agent is not None and agent.model:
                    provider = self._provider_for(agent)
                else:
                    continue
            except (UnknownModel, ValueError):
                continue  # said by the turn's other checks
            info = model_info(provider)
            # A model the catalog does not list keeps the note in the image's place: it may
            # well read images, and its settings entry can say so (`"images": true`).
            if info is not None and info.known and not info.images:
                return refused_images(images[0], info)
        return ""


def refused_images(image: Attachment, info: ModelInfo) -> str:
    """The refusal of `image` for the model `info` describes."""
    takers = models_with_images(info.name)
    if takers:
        shown = ", ".join(takers[:SHOWN]) + (", ..." if len(takers) > SHOWN else "")
        switch = f"switch to a model that takes images (/model NAME): {shown}"
    else:
        switch = "the catalog knows no model that takes images"
    return (
        f"{image.label} was not sent: {info.name} does not take images; {switch}; or send the "
        f"message without it"
    )


def models_with_images(model: str, known: Mapping[str, ModelInfo] | None = None) -> list[str]:
    """The catalog's models that read images, those of `model`'s provider first."""
    if known is None:
        from moot.providers.catalog import known_models

        known = known_models()
    provider = model.split("/", 1)[0] + "/"
    takers = [name for name, info in known.items() if info.images]
    return sorted(takers, key=lambda name: not name.startswith(provider))

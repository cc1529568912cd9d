"""Model names to providers: `scripted:<file>` today; `provider/model` adapters plug in here."""

from __future__ import annotations

from moot.providers.base import Provider


class UnknownModel(ValueError):
    """No provider serves this model name."""


def resolve_model(spec: str) -> Provider:
    """The provider for a model name such as `scripted:demo.yaml`.

    Raises:
        UnknownModel: when no provider serves `spec`.
    """
    kind, _, rest = spec.partition(":")
    if kind == "scripted" and rest:
        from moot.providers.scripted import ScriptedProvider

        try:
            return ScriptedProvider.from_file(rest)
        except ValueError as exc:
            raise UnknownModel(str(exc)) from exc
    raise UnknownModel(f"no provider for model {spec!r}; this build serves `scripted:<file>`")

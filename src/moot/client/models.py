"""The models a front end may offer (`Client.models`, a setup screen's picker).

Each catalog model (the built-in list, the user's `models.json`, the settings' `models`) and
each model in use, with whether its provider has a key (never the key itself): a picker shows
the ready ones first and says what a model that is not ready needs.
"""

from __future__ import annotations

from collections.abc import Iterable

from moot.protocol.client import ModelChoice
from moot.settings import Settings


def model_choices(settings: Settings, in_use: Iterable[str] = ()) -> list[ModelChoice]:
    """The catalog's models and `in_use`, ready ones first, then by name."""
    from moot.client.environment import session_environ
    from moot.providers import credentials
    from moot.providers.catalog import known_models
    from moot.providers.registry import UnknownModel

    environ = session_environ(settings)
    try:
        catalog = known_models(settings.models)
    except ValueError:
        catalog = {}  # a malformed user catalog: `SetModel` will say so, naming the file
    names = dict.fromkeys([*in_use, *catalog])
    keys: dict[str, str] = {}
    choices = []
    for name in names:
        provider = name.partition("/")[0]
        endpoint = credentials.ENDPOINTS.get(provider)
        info = catalog.get(name)
        window = info.context_window if info is not None else None
        if name.startswith("scripted:") or "," in name:
            choices.append(ModelChoice(name, True, window, "in use"))
            continue
        if endpoint is None:
            choices.append(ModelChoice(name, False, window, f"unknown provider {provider!r}"))
            continue
        if provider not in keys:
            try:
                key, _ = credentials.find_key(provider, environ)
                needs = bool(endpoint.key_env) and provider not in credentials.KEYLESS_OPTIONAL
                keys[provider] = (
                    "" if key or not needs else "no key: set " + " or ".join(endpoint.key_env)
                )
            except UnknownModel as exc:
                keys[provider] = f"unusable key: {exc}"
        note = keys[provider]
        lacks = provider if note.startswith("no key") else None
        choices.append(ModelChoice(name, not note, window, note, needs_key=lacks))
    choices.sort(key=lambda c: (not c.ready, c.name))
    return choices

"""API keys and endpoints: from the conventional environment variables or a saved key file.

Keys are looked up in this order: the provider's environment variable(s), then the key file
(`<config dir>/keys.json`, written with mode 0600). Nothing here ever prints or logs a key.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from moot import paths
from moot.providers.base import UnknownModel
from moot.providers.presets import PRESETS, with_scheme


class Endpoint(msgspec.Struct, frozen=True):
    """Where a provider lives and which variables configure it."""

    base_url: str
    key_env: tuple[str, ...] = ()
    """Variables that may hold the key, first found wins; empty when no key is needed."""
    base_url_env: str | None = None
    api: str = "openai_chat"
    """The wire API: anthropic, openai_responses, openai_chat or gemini."""


_NATIVE: dict[str, Endpoint] = {
    "anthropic": Endpoint(
        "https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL", "anthropic"
    ),
    "openai": Endpoint(
        "https://api.openai.com/v1", ("OPENAI_API_KEY",), "OPENAI_BASE_URL", "openai_responses"
    ),
    "openai-chat": Endpoint("https://api.openai.com/v1", ("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    "gemini": Endpoint(
        "https://generativelanguage.googleapis.com",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "GEMINI_BASE_URL",
        "gemini",
    ),
}

# OpenAI-compatible servers are presets of the Chat Completions adapter (presets.py holds them
# with their dialects); `openai` itself is served by the Responses API above.
ENDPOINTS: dict[str, Endpoint] = {
    **_NATIVE,
    **{
        name: Endpoint(p.base_url, (p.key_env,) if p.key_env else (), p.base_url_env)
        for name, p in PRESETS.items()
        if name not in _NATIVE
    },
}
KEYLESS_OPTIONAL = frozenset(
    name for name, p in PRESETS.items() if name not in _NATIVE and (p.key_optional or not p.key_env)
)
"""Local servers: a key is sent when one is set, and none is needed."""


key_file = paths.key_file


def saved_keys(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    path = key_file(environ)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the key file {path}: {exc}") from None
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def save_key(provider: str, key: str, environ: Mapping[str, str] | None = None) -> Path:
    """Store `key` for `provider` in the key file, readable by its owner only (0600)."""
    path = key_file(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = saved_keys(environ) | {provider: key}
    temp = path.with_suffix(".tmp")
    # Created 0600 from the start: the key is never readable by others, not even briefly.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(keys, f, indent=1)
    os.chmod(temp, 0o600)
    os.replace(temp, path)
    return path


MIN_KEY_CHARS = 12
"""Shorter values are not blanked as keys (a test's `x`, a placeholder): replacing them
would mangle ordinary text, and no provider's key is that short."""


SECRET_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PAT", "AUTH",
     "CREDENTIAL", "CREDENTIALS", "PRIVATE"}
)  # fmt: skip
"""A variable whose name has one of these words (`GITHUB_TOKEN`, `MY_SERVICE_KEY`, `DB_PASS`)
holds a secret as far as exports go: words, not substrings, so `KEYMAP` or `PASSAGE` do not."""


def secret_named(name: str) -> bool:
    """Whether the variable `name` looks like it holds a secret (`SECRET_WORDS`)."""
    return not SECRET_WORDS.isdisjoint(name.upper().replace("-", "_").split("_"))


def known_keys(
    environ: Mapping[str, str] | None = None, *, key_file: bool = True
) -> frozenset[str]:
    """Every key in `environ` (the process's when None): each provider's variables, every
    variable named like a secret (`secret_named`), and with `key_file` the key file's (found
    by `environ`'s `MOOT_HOME`), trimmed as `find_key` trims them. For blanking keys out of
    what moot writes (exports)."""
    env = os.environ if environ is None else environ
    found = {
        env.get(name, "").strip() for endpoint in ENDPOINTS.values() for name in endpoint.key_env
    }
    found |= {value.strip() for name, value in env.items() if secret_named(name)}
    if key_file:
        # An unreadable key file holds no key moot could use.
        with contextlib.suppress(ValueError):
            found |= {key.strip() for key in saved_keys(environ).values()}
    return frozenset(key for key in found if len(key) >= MIN_KEY_CHARS)


class KeySource(msgspec.Struct, frozen=True):
    """Where a provider's key comes from (for `moot doctor`); never the key itself."""

    provider: str
    source: str | None
    """The variable's name, "key file", or None when there is no key."""


def find_key(
    provider: str, environ: Mapping[str, str] | None = None
) -> tuple[str | None, KeySource]:
    """The provider's key, without surrounding whitespace, and where it came from.

    A key read from a file often ends in a newline (`echo key > file`, a Kubernetes secret);
    that is trimmed. A variable holding only whitespace counts as unset.

    Raises:
        UnknownModel: the key holds a control or non-ASCII character even after trimming (the
            message names the variable or key file, never the key), or the key file cannot
            be read.
    """
    env = os.environ if environ is None else environ
    endpoint = ENDPOINTS.get(provider)
    for name in endpoint.key_env if endpoint else ():
        if key := env.get(name, "").strip():
            return _usable(key, name), KeySource(provider, name)
    try:
        saved = saved_keys(environ).get(provider, "").strip()
    except ValueError as exc:
        raise _usage_error(str(exc)) from None
    if saved:
        where = f"the key for {provider} in {key_file(environ)}"
        return _usable(saved, where), KeySource(provider, "key file")
    return None, KeySource(provider, None)


def _usable(key: str, where: str) -> str:
    """`key`, or a usage error naming `where` when it cannot go in an HTTP header."""
    if all(" " <= char <= "~" for char in key):
        return key
    # Never the key, nor the character's position: either would tell part of the key.
    raise _usage_error(
        f"{where} holds a control or non-ASCII character inside the key (surrounding whitespace "
        "is trimmed); set it to the key alone"
    )


def _usage_error(message: str) -> ValueError:
    return UnknownModel(message)


def base_url(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """The provider's base URL: its variable's value (trimmed; without a scheme, `https://`
    unless the host is loopback, see `presets.with_scheme`) or the default."""
    env = os.environ if environ is None else environ
    preset = PRESETS.get(provider)
    if preset is not None and provider not in _NATIVE:
        return preset.resolve_base_url(env).rstrip("/")
    endpoint = ENDPOINTS[provider]
    value = env.get(endpoint.base_url_env or "", "").strip()
    return (with_scheme(value) or endpoint.base_url).rstrip("/")


def headers(provider: str) -> dict[str, str]:
    """Extra headers a provider's requests carry (a preset's app attribution, say)."""
    preset = PRESETS.get(provider)
    return dict(preset.headers) if preset is not None and provider not in _NATIVE else {}


class KeyRefused(ValueError):
    """A key that cannot be saved as given; the message says why and never holds the key."""


def key_providers() -> list[str]:
    """The providers that take a key (the ones `moot login` accepts), in the catalog's order."""
    return [p for p, e in ENDPOINTS.items() if e.key_env]


def save_given_key(provider: str, key: str) -> Path:
    """Save `key` for `provider` in the key file (`<config dir>/keys.json`, mode 0600).

    Raises:
        KeyRefused: See `given_key`.
    """
    return save_key(provider, given_key(provider, key))


def given_key(provider: str, key: str) -> str:
    """`key` as it would be saved for `provider`: surrounding whitespace trimmed (a pasted key
    often ends in a newline).

    Raises:
        KeyRefused: The provider takes no key, or the key is empty, or holds a control or
            non-ASCII character inside it (such a key could never be sent in a header).
    """
    endpoint = ENDPOINTS.get(provider)
    if endpoint is None or not endpoint.key_env:
        known = ", ".join(key_providers())
        raise KeyRefused(f"{provider!r} takes no key here; providers with keys: {known}")
    key = key.strip()
    if not key:
        raise KeyRefused("no key given; nothing saved")
    if not all(" " <= char <= "~" for char in key):
        # Never the key, nor where the character is: either would tell part of it.
        raise KeyRefused("the key holds a control or non-ASCII character inside it; nothing saved")
    return key

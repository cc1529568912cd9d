"""Before the first session: what a person with no model set up yet is shown and can do.

Front-end neutral (the app's first-run screen uses it; the plain REPL can): which providers
have a key (in the environment, the settings' `env`, or the key file), whether a local Ollama or
LM Studio answers on its usual port, the models to pick from (the catalog's and the local
servers'), saving a key exactly as `moot login` does, remembering the chosen model in the user
settings, and the built-in demo: a scripted model playing a short session (a read, an edit that
asks for approval, an answer) in a scratch folder, so moot can be tried offline.

`detect` blocks for up to `PROBE_TIMEOUT_S` (it asks the local servers over HTTP): call it off
the UI thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from moot.paths import data_dir, make_private_dir
from moot.settings import SettingsError, load_settings, save_user_setting

# `moot` (the app) asks `needs_setup` before its first paint: the key lookup (`credentials`, the
# providers' credentials) and the thread pool load only in the functions that use them.

PROBE_TIMEOUT_S = 0.5
"""How long a local server may take to answer: on this machine it answers in milliseconds, and
a port nobody listens on is refused at once; only a remote `OLLAMA_HOST` can take this long."""

LOCAL_SERVERS = {"ollama": "Ollama", "lmstudio": "LM Studio"}
"""The local servers probed, by provider name."""

DEMO_TASK = "Make greet() in greeting.py say hello instead of hi."
"""What the demo sends for the person, as its first message."""
_DEMO_FILES = {"greeting.py": 'def greet(name):\n    return "hi " + name\n'}
"""The demo's scratch folder, written fresh each time the demo starts."""


class KeyFound(msgspec.Struct, frozen=True):
    """Where a provider's key is; never the key itself."""

    provider: str
    variables: tuple[str, ...]
    """The variables it is read from (first found wins), before the key file."""
    source: str | None
    """The variable's name, "key file", or None when there is no key."""
    problem: str | None = None
    """Why the key found cannot be used (a control character inside it, say)."""


class LocalServer(msgspec.Struct, frozen=True):
    """A model server on this machine (or where `OLLAMA_HOST` points), and what it serves."""

    provider: str
    """`ollama` or `lmstudio`: the provider part of its models' names."""
    label: str
    url: str
    """Where it was asked (credentials in the URL hidden)."""
    answering: bool
    models: tuple[str, ...] = ()
    """Its models as moot names them, `ollama/qwen3-coder`."""
    note: str = ""
    """Why it does not count when it does not (`no answer`, `answers, but not as Ollama`)."""
    host: str = ""
    """The URL's host and port, for a short line."""


class Detection(msgspec.Struct, frozen=True):
    """What was found: keys per provider, local servers, and a catalog problem if any."""

    keys: tuple[KeyFound, ...]
    servers: tuple[LocalServer, ...] = ()
    catalog_problem: str | None = None
    """The user's `models.json` could not be read (the built-in catalog is still listed)."""

    def has_key(self, provider: str) -> bool:
        return any(k.provider == provider and k.source and not k.problem for k in self.keys)


class ModelChoice(msgspec.Struct, frozen=True):
    """One model to pick, and whether it can start now."""

    name: str
    """`provider/model`."""
    ready: bool
    """Its provider has a usable key, or it is served by a local server that answered."""
    detail: str
    """Context window and prices (USD per million tokens in/out), or where it is served."""

    @property
    def provider(self) -> str:
        return self.name.partition("/")[0]


def _environ(cwd: Path | None, environ: Mapping[str, str] | None) -> dict[str, str]:
    """The environment a session in `cwd` would read keys from (the settings' `env` under the
    process's own), as `moot doctor` reads it."""
    import os

    base = dict(os.environ if environ is None else environ)
    if cwd is None:
        return base
    from moot.client.environment import session_environ  # the one rule for the settings' `env`

    try:
        return session_environ(load_settings(cwd, base), base)
    except SettingsError:
        return base  # opening a session reports a broken settings file; detection goes on


def key_providers() -> list[str]:
    """The providers that take a key, as `moot login` lists them."""
    from moot.providers.credentials import key_providers as providers

    return providers()


def detect_keys(environ: Mapping[str, str] | None = None) -> tuple[KeyFound, ...]:
    """Where each provider that takes a key has one (local servers, whose key is optional, are
    left out)."""
    from moot.providers import credentials
    from moot.providers.registry import UnknownModel

    found: list[KeyFound] = []
    for provider in key_providers():
        if provider in credentials.KEYLESS_OPTIONAL:
            continue
        variables = credentials.ENDPOINTS[provider].key_env
        if any(k.variables == variables for k in found):
            continue  # `openai-chat`: OpenAI's other wire format, read from the same variable
        try:
            _, where = credentials.find_key(provider, environ)
            found.append(KeyFound(provider, variables, where.source))
        except UnknownModel as exc:
            found.append(KeyFound(provider, variables, "?", problem=str(exc)))
    return tuple(found)


def _probe(provider: str, environ: Mapping[str, str] | None, timeout: float) -> LocalServer:
    """Ask one local server for its models."""
    from urllib.parse import urlsplit

    import httpx  # only when probing: `moot -p` never gets here

    from moot.providers import credentials
    from moot.providers.report import shown_url

    label = LOCAL_SERVERS[provider]
    base = credentials.base_url(provider, environ)
    if provider == "ollama":
        url = base.removesuffix("/v1") + "/api/tags"
    else:
        url = (base if base.rstrip("/").endswith("/v1") else base + "/v1") + "/models"
    shown = shown_url(base)
    host = urlsplit(base).netloc.rpartition("@")[2]
    try:
        # trust_env off: a proxy set for the internet must not carry a request to this machine.
        with httpx.Client(timeout=timeout, trust_env=False) as http:
            reply = http.get(url)
        data = reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return LocalServer(provider, label, shown, False, host=host, note="no answer")
    field = "models" if provider == "ollama" else "data"
    listed = data.get(field) if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return LocalServer(
            provider, label, shown, False, host=host, note=f"answers, but not as {label}"
        )
    key = "name" if provider == "ollama" else "id"
    names = [m.get(key) for m in listed if isinstance(m, dict)]
    models = tuple(f"{provider}/{n.removesuffix(':latest')}" for n in names if isinstance(n, str))
    note = "" if models else "no model downloaded yet"
    return LocalServer(provider, label, shown, True, models=models, host=host, note=note)


def probe_local(
    environ: Mapping[str, str] | None = None, timeout: float = PROBE_TIMEOUT_S
) -> tuple[LocalServer, ...]:
    """Ask Ollama and LM Studio (at their usual ports, or where their variables point) which
    models they serve, both at once, each within `timeout` seconds."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(LOCAL_SERVERS)) as pool:
        futures = [pool.submit(_probe, p, environ, timeout) for p in LOCAL_SERVERS]
        return tuple(f.result() for f in futures)


def detect(
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: float = PROBE_TIMEOUT_S,
) -> Detection:
    """Keys and local servers, as a session started in `cwd` would see them (blocking)."""
    env = _environ(cwd, environ)
    catalog_problem = None
    try:
        from moot.providers.catalog import known_models

        known_models()
    except ValueError as exc:
        catalog_problem = str(exc)
    return Detection(detect_keys(env), probe_local(env, timeout), catalog_problem)


def _detail(info: object) -> str:
    context = getattr(info, "context_window", 0)
    price_in, price_out = getattr(info, "input", None), getattr(info, "output", None)
    text = f"{context // 1000}k ctx"
    if price_in is not None and price_out is not None:
        text += f"  ${price_in:g}/${price_out:g}"  # per million tokens in and out
    return text


def model_choices(detection: Detection) -> list[ModelChoice]:
    """The models to pick from: the local servers' first, then the catalog's; within each, those
    that can start now first."""
    from moot.providers.catalog import known_models

    local = [
        ModelChoice(name, True, f"{server.label}, local")
        for server in detection.servers
        if server.answering
        for name in server.models
    ]
    try:
        listed = known_models()
    except ValueError:  # the user's models.json: `detect` reported it; list the built-in ones
        listed = known_models(user=False)
    catalog = [
        ModelChoice(info.name, detection.has_key(info.name.partition("/")[0]), _detail(info))
        for info in listed.values()
    ]
    catalog.sort(key=lambda c: not c.ready)  # stable: the catalog's order within each
    return local + catalog


def save_key(provider: str, key: str) -> Path:
    """Save a pasted key as `moot login` does (`<config dir>/keys.json`, mode 0600).

    Raises:
        ValueError: The provider takes no key, or the key is empty or unusable
            (`providers.credentials.KeyRefused`; the message never holds the key).
    """
    from moot.providers.credentials import save_given_key

    return save_given_key(provider, key)


def remember_model(model: str) -> Path:
    """Make `model` the user's default (`model` in `<config dir>/settings.json`), so the next
    start goes straight to the app.

    Raises:
        SettingsError: The user settings file cannot be read or written.
    """
    try:
        return save_user_setting("model", model)
    except OSError as exc:
        raise SettingsError(f"cannot save the model to the user settings: {exc}") from None


def needs_setup(cwd: Path, model: str | None) -> bool:
    """True when no model is configured: none given (`--model`, `MOOT_MODEL`) and none in the
    settings. A settings file that cannot be read is not a first run: opening the session says
    what is wrong with it."""
    if model:
        return False
    try:
        return not load_settings(cwd).model
    except SettingsError:
        return False


def demo_script() -> Path:
    """The demo's scripted model, shipped in the package (`moot/demo/script.yaml`)."""
    return Path(__file__).parents[1] / "demo" / "script.yaml"  # moot/demo/, beside client/


def demo_model() -> str:
    """The demo's model name: its script, played by the scripted provider."""
    return f"scripted:{demo_script()}"


def demo_workspace(environ: Mapping[str, str] | None = None) -> Path:
    """The demo's scratch folder (`<data dir>/demo`), its files written fresh: the demo edits
    them, never the person's own."""
    root = make_private_dir(data_dir(environ) / "demo")
    for name, text in _DEMO_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root

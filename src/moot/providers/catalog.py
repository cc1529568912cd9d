"""The model catalog: context window, output cap, prices and abilities of known models.

The data lives in `models.json` beside this module; settings may pass more entries (for a new
model or a private deployment). A model the catalog does not know works with conservative
defaults and no price (its cost counts as zero, and says so nowhere it would mislead: the
usage still counts tokens).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from moot.protocol.messages import Usage

_PER_MILLION = 1_000_000


class ModelInfo(msgspec.Struct, frozen=True):
    """What moot knows about one model."""

    name: str
    """`provider/model`."""
    context_window: int = 32_768
    max_output: int = 4_096
    input: float | None = None
    """USD per million input tokens (None: unknown)."""
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    tools: bool = True
    images: bool = False
    thinking: bool = False
    known: bool = False
    """False for a model the catalog does not list (defaults apply)."""

    def cost(self, usage: Usage) -> float | None:
        """USD for `usage`, or None when the model's prices are unknown.

        Input tokens are the uncached ones; providers report cache reads and writes apart.
        """
        if self.input is None or self.output is None:
            return None
        read = self.cache_read if self.cache_read is not None else self.input
        write = self.cache_write if self.cache_write is not None else self.input
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
        ) / _PER_MILLION


_FIELDS = {f.name for f in msgspec.structs.fields(ModelInfo)} - {"name", "known"}


def _entry(name: str, data: Mapping[str, Any]) -> ModelInfo:
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"model {name}: unknown catalog fields {sorted(unknown)}")
    return ModelInfo(name=name, known=True, **data)


@cache
def _builtin() -> dict[str, ModelInfo]:
    data = json.loads(Path(__file__).with_name("models.json").read_text(encoding="utf-8"))
    return {name: _entry(name, entry) for name, entry in data.items() if not name.startswith("_")}


@cache
def _user(path: Path) -> dict[str, ModelInfo]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the model catalog {path}: {exc}") from None
    return {name: _entry(name, entry) for name, entry in data.items() if not name.startswith("_")}


@cache
def _known(user_path: Path) -> dict[str, ModelInfo]:
    return {**_builtin(), **_user(user_path)}


def user_catalog_path() -> Path:
    """`<config dir>/models.json`: the person's own entries, which win over the built-in ones."""
    from moot.paths import config_dir

    return config_dir() / "models.json"


def lookup(name: str, extra: Mapping[str, Mapping[str, Any]] | None = None) -> ModelInfo:
    """The catalog entry for `provider/model`.

    `extra` entries (from settings) win, then the user's `models.json`, then the built-in list.
    A dated or suffixed id (`claude-sonnet-4-5-20250929`) matches its listed prefix.
    """
    if extra and name in extra:
        return _entry(name, extra[name])
    known = _known(user_catalog_path())
    if name in known:
        return known[name]
    prefixes = [k for k in known if name.startswith(k + "-")]
    if prefixes:
        base = known[max(prefixes, key=len)]
        return msgspec.structs.replace(base, name=name)
    return ModelInfo(name=name)


def accepts_images(provider: object) -> bool:
    """Whether an HTTP adapter's model takes images; scripted and function providers do."""
    from moot.providers.config import ProviderConfig

    config = getattr(provider, "config", None)
    return lookup(config.name).images if isinstance(config, ProviderConfig) else True


def context_window(provider: object) -> int | None:
    """The context window of an HTTP adapter's model; None for providers without one."""
    from moot.providers.config import ProviderConfig

    config = getattr(provider, "config", None)
    return lookup(config.name).context_window if isinstance(config, ProviderConfig) else None

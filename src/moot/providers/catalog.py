"""The model catalog: context window, output cap, prices and abilities of known models.

The data lives in `models.json` beside this module. `<config dir>/models.json` and the settings'
`models` key add entries (for a new model or a private deployment) or change some fields of a
listed one: an entry's fields override what the layer below gives the model, the fields it
leaves out stay. A model the catalog does not know works with conservative defaults and no
price (its cost counts as zero, and says so nowhere it would mislead: the usage still counts
tokens).

A name is looked up as given first, then as the model it stands for on another provider:
`openai-chat/gpt-4.1` is OpenAI's `gpt-4.1`, OpenRouter's `vendor/model` names
(`openrouter/anthropic/claude-sonnet-4.5`) are the vendor's own model, and Gemini's resource
names (`gemini/models/gemini-2.5-pro`, which the adapter accepts) are the bare model's.

A name matches an entry exactly, or as that entry plus one version suffix (`VERSION_SUFFIX`):
`gpt-4.1-2025-04-14` is `gpt-4.1`, but `gpt-4.1-mini` is another model with other prices, and
finds only its own entry (or none). So an entry is keyed without a version suffix
(`mistral/devstral-medium`, not `-latest`): a key with one would be reached by that exact name
only, never by the model's other versions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import msgspec

from moot.protocol.messages import Usage

_PER_MILLION = 1_000_000

OPENROUTER_VENDORS = {"google": "gemini", "x-ai": "xai", "mistralai": "mistral"}
"""OpenRouter's vendor slugs that differ from moot's provider names; the others are the same
(`anthropic`, `openai`, `deepseek`). https://openrouter.ai/models"""

_Tokens = Annotated[int, msgspec.Meta(gt=0)]
_Price = Annotated[float, msgspec.Meta(ge=0)]

_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")
"""OpenRouter writes Anthropic's versions with dots (`claude-sonnet-4.5`); the API with hyphens."""

VERSION_SUFFIX = re.compile(
    r"""(?:
        -\d{4}-\d{2}-\d{2}                  # OpenAI snapshots: gpt-4.1-2025-04-14
      | [-@]\d{8}                          # Anthropic: claude-sonnet-4-5-20250929, Vertex @20250929
      | -\d{3,4}                           # Gemini -001, xAI grok-4-0709, OpenAI gpt-4-0613
      | -preview-\d{2}-(?:\d{2}|\d{4})     # Gemini previews: -preview-05-20, -preview-09-2025
      | -latest                            # moving aliases: claude-3-7-sonnet-latest
    )\Z""",
    re.VERBOSE,
)
"""A suffix that names a version of the model before it, not another model: a date, a version
number, a dated preview or `-latest`. `-mini`, `-nano`, `-lite`, `-pro`, `-codex`,
`-chat-latest`, `-image-preview` and `-preview-tts` are other models, often with other prices
and abilities."""


class CatalogEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One model's entry in `models.json` or the settings' `models`; every field optional.

    A field left out keeps what the catalog would otherwise give the model (its built-in entry,
    or the conservative defaults for a model it does not list).
    """

    context_window: _Tokens | None = None
    """Tokens the model reads at most, prompt and answer together."""
    max_output: _Tokens | None = None
    """Tokens the model writes at most in one answer (sent as the request's output cap)."""
    input: _Price | None = None
    """USD per million uncached input tokens."""
    output: _Price | None = None
    """USD per million output tokens (thinking included)."""
    cache_read: _Price | None = None
    """USD per million input tokens read from the prompt cache (the input price when unset)."""
    cache_write: _Price | None = None
    """USD per million input tokens written to the prompt cache (the input price when unset)."""
    tools: bool | None = None
    """Whether the model calls tools."""
    images: bool | None = None
    """Whether the model reads images; a turn that attaches one to a model that does not is
    refused, and images from tools become a short note."""
    documents: bool | None = None
    """Whether the model reads PDFs as documents; for models that do not, their text."""
    thinking: bool | None = None
    """Whether the model reasons, so `MOOT_REASONING_EFFORT` is sent to it."""

    def given(self) -> dict[str, Any]:
        """The fields this entry sets."""
        return {f: v for f in self.__struct_fields__ if (v := getattr(self, f)) is not None}


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
    documents: bool = False
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


Catalog = Mapping[str, ModelInfo]


def _read(path: Path) -> dict[str, CatalogEntry]:
    """The entries of a catalog file (keys starting with `_` are comments)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the model catalog {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the model catalog {path} must hold a JSON object")
    return {name: _entry(name, value, path) for name, value in data.items() if name[:1] != "_"}


def _entry(name: str, value: object, source: object) -> CatalogEntry:
    """`value` as the catalog entry of model `name`, or a ValueError naming both and `source`."""
    try:
        return msgspec.convert(value, CatalogEntry, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{source}: model {name}: {exc}") from None


def _layer(below: Catalog, entries: Mapping[str, CatalogEntry]) -> dict[str, ModelInfo]:
    """`below` with `entries` laid over it, each over what `below` gives its model."""
    merged = dict(below)
    for name, entry in entries.items():
        base = _find(below, name) or ModelInfo(name=name)
        merged[name] = msgspec.structs.replace(base, name=name, known=True, **entry.given())
    return merged


@cache
def _builtin() -> dict[str, ModelInfo]:
    return _layer({}, _read(Path(__file__).with_name("models.json")))


@cache
def _known(user_path: Path) -> dict[str, ModelInfo]:
    return _layer(_builtin(), _read(user_path))


def user_catalog_path() -> Path:
    """`<config dir>/models.json`: the person's own entries, which win over the built-in ones."""
    from moot.paths import config_dir

    return config_dir() / "models.json"


def known_models(
    extra: Mapping[str, CatalogEntry] | None = None, *, user: bool = True
) -> dict[str, ModelInfo]:
    """Every model the catalog lists, by name, in its file's order: the built-in list, the
    user's `models.json` (unless `user` is False: what a picker still shows when that file is
    broken), then `extra` (the settings' `models`).

    Raises:
        ValueError: as `lookup` (a malformed `models.json` names the file).
    """
    known: Catalog = _known(user_catalog_path()) if user else _builtin()
    if extra:
        entries = {
            n: e if isinstance(e, CatalogEntry) else _entry(n, e, "the settings' models")
            for n, e in extra.items()
        }
        known = _layer(known, entries)
    return dict(known)


def lookup(name: str, extra: Mapping[str, CatalogEntry] | None = None) -> ModelInfo:
    """The catalog entry for `provider/model`.

    Layers, highest first: `extra` (the settings' `models`), the user's `models.json`, the
    built-in list. The name as given is tried first, then the model it stands for (see the
    module docstring), each exactly or as a listed model plus a version suffix
    (`claude-sonnet-4-5-20250929`, see `VERSION_SUFFIX`). A model found nowhere gets the
    conservative defaults (`known` False).

    Raises:
        ValueError: when the user's `models.json` or an `extra` entry is malformed (the message
            names the file or the settings, and the model).
    """
    known: Catalog = _known(user_catalog_path())
    if extra:
        # Settings are checked when loaded; a caller may still hand over plain values.
        entries = {
            n: e if isinstance(e, CatalogEntry) else _entry(n, e, "the settings' models")
            for n, e in extra.items()
        }
        known = _layer(known, entries)
    return _find(known, name) or ModelInfo(name=name)


def _find(known: Catalog, name: str) -> ModelInfo | None:
    """`name`'s entry in `known`, by its own name or a name it stands for; None if none."""
    for candidate in _candidates(name):
        info = known.get(candidate)
        if info is None and (version := VERSION_SUFFIX.search(candidate)):
            info = known.get(candidate[: version.start()])
        if info is not None:
            return info if info.name == name else msgspec.structs.replace(info, name=name)
    return None


def _candidates(name: str) -> Iterator[str]:
    """`name`, then the names of the same model at its maker, most specific first."""
    yield name
    provider, _, model = name.partition("/")
    if provider == "openai-chat":
        yield f"openai/{model}"  # the same models as the Responses API, other wire format
    elif provider == "gemini" and model.startswith("models/"):
        yield f"gemini/{model.removeprefix('models/')}"  # the API's resource name for the model
    elif provider == "openrouter" and "/" in model:
        vendor, _, vendor_model = model.partition("/")
        vendor = OPENROUTER_VENDORS.get(vendor, vendor)
        yield f"{vendor}/{vendor_model}"
        if vendor == "anthropic":
            yield f"{vendor}/{_DOTTED_VERSION.sub('-', vendor_model)}"

"""Checking a settings file against the schema, with messages that name the file, the key path
and what it takes; the keys moot ignores, told once per process."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, TextIO, get_args

import msgspec

from moot.protocol.modes import ModeName
from moot.providers.catalog import CatalogEntry
from moot.settings.review import SESSION_VARIABLES
from moot.settings.schema import (
    NetworkSettings,
    Permissions,
    ReplSettings,
    SandboxName,
    SandboxSettings,
    ScrollbackFormat,
    Settings,
    SettingsError,
    SettingsWarning,
    TerminalOptions,
    VerifySettings,
)

_UNCHECKED_KEYS = frozenset({"$schema"})
"""Top-level keys that are no setting of any agent (an editor's JSON schema reference)."""

_CHOICES: dict[str, Any] = {
    "sandbox": SandboxName,
    "sandbox.backend": SandboxName,
    "permissions.defaultMode": ModeName,
    "ui.scrollback": ScrollbackFormat,
}
"""The closed sets by key path, to list in the message when a value is not one of them."""
_KEYS: dict[str, type[msgspec.Struct]] = {
    "permissions": Permissions,
    "models.*": CatalogEntry,
    "ui": TerminalOptions,
    "repl": ReplSettings,
    "verify": VerifySettings,
    "sandbox": SandboxSettings,
    "sandbox.network": NetworkSettings,
}
"""The objects that refuse unknown keys by key path (`*`: any key of a dictionary), to list the
keys they take."""
_JSON_TYPES = {
    type(None): "null",
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    list: "array",
    dict: "object",
}
"""The names msgspec's messages give JSON values ("got `int`")."""


# The `MOOT_*` variables a settings file's `env` may set are read per session, from the
# session's environment; the others shape the process before any settings file is read.
_FROM_SHELL = "moot reads this before the settings; set it in the shell"
_NOT_FROM_ENV = {
    "MOOT_MODEL": "use the `model` key",
    "MOOT_SANDBOX": "use the `sandbox` key",
    "MOOT_AUTO_COMMIT": "use the `autoCommit` key",
}


@cache
def field_names(struct: type[msgspec.Struct]) -> tuple[tuple[str, str], ...]:
    """Each field of `struct` as (its Python name, its name in the files), from what the class
    holds: `msgspec.structs.fields` would evaluate every annotation at each call (~0.5 ms for
    `Settings`, on every front end's start)."""
    return tuple(zip(struct.__struct_fields__, struct.__struct_encode_fields__, strict=True))


def validate(data: dict[str, Any], source: object) -> Settings:
    """`data` as `Settings`, or a `SettingsError` naming `source` and the offending key path."""
    # Other top-level keys are allowed (other agents' settings share the file), so a key
    # spelled the Python way would be ignored without a word: refuse it, naming the right one.
    for name, encode_name in field_names(Settings):
        if name != encode_name and name in data:
            raise SettingsError(f"{source}: {name}: did you mean {encode_name}?")
    env = data.get("env")
    for name in env if isinstance(env, dict) else ():
        if name.startswith("MOOT_") and name not in SESSION_VARIABLES:
            raise SettingsError(f"{source}: env.{name}: {_NOT_FROM_ENV.get(name, _FROM_SHELL)}")
    try:
        # Lax: "true", "false", 1 and 0 are read as booleans, "5" as a number.
        return msgspec.convert(data, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"{source}: {_problem(str(exc), data)}") from None


def _problem(message: str, data: dict[str, Any]) -> str:
    """msgspec's "Expected `str`, got `int` - at `$.permissions.allow[1]`" as
    "permissions.allow[1]: Expected `str`, got `int`", with the choices or keys missed."""
    message, _, at = message.rpartition(" - at `")
    if not message:  # the value as a whole, which `read` has already checked is an object
        return at
    at = at.rstrip("`")
    where = _key_path(at, message, data)
    if unknown := re.fullmatch(r"Object contains unknown field `(.*)`", message):
        struct = _KEYS.get(at.removeprefix("$.").replace("[...]", ".*"))
        keys = [encoded for _, encoded in field_names(struct)] if struct else []
        near = _nearest(unknown[1], keys)
        mean = f"; did you mean {near[0]}?" if near else ""
        takes = f" (it takes {', '.join(keys)})" if keys else ""
        return f"{where}.{unknown[1]}: not a known key{takes}{mean}"
    if where in _CHOICES and message.startswith("Invalid enum value"):
        message += f"; expected one of {', '.join(get_args(_CHOICES[where]))}"
    return f"{where}: {message}"


def _key_path(at: str, message: str, data: dict[str, Any]) -> str:
    """`$.permissions.allow[1]` as `permissions.allow[1]`. For a value in a dictionary msgspec
    writes `$.env[...]`; the key is then the first one whose value (or what the rest of the path
    names inside it) is what the message is about: a value of the type it complains about, or an
    object with the unknown field (the values are checked in order, and all of one kind fail
    alike)."""
    got = re.search(r"got `(\w+)`", message)
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", message)
    steps: list[tuple[str, str]] = re.findall(r"\.([^.\[]+)|\[([^\]]*)\]", at)

    def fits(node: object) -> bool:
        if got:
            return _JSON_TYPES.get(type(node)) == got[1]
        return not unknown or (isinstance(node, dict) and unknown[1] in node)

    def walk(node: object, steps: list[tuple[str, str]]) -> str | None:
        if not steps:
            return "" if fits(node) else None
        (name, index), rest = steps[0], steps[1:]
        if index == "..." and isinstance(node, dict):
            for key, value in node.items():
                if (tail := walk(value, rest)) is not None:
                    return f".{key}{tail}"
            return None
        if name:
            child = node.get(name) if isinstance(node, dict) else None
            step = f".{name}"
        else:
            listed = isinstance(node, list) and index.isdigit() and int(index) < len(node)
            child = node[int(index)] if listed else None  # type: ignore[index]
            step = f"[{index}]"
        tail = walk(child, rest)
        return None if tail is None else step + tail

    found = walk(data, steps)
    if found is None:  # nothing fits: name the path as msgspec gives it
        found = "".join(f".{name}" if name else f"[{index}]" for name, index in steps)
    return found.removeprefix(".")


def _known_keys() -> dict[str, str]:
    """Every key moot reads, by the name a person might write for it: top-level keys as they
    are, nested ones dotted and by their own name (`defaultMode` -> `permissions.defaultMode`)."""
    known = {encoded: encoded for _, encoded in field_names(Settings)}
    for _, encoded in field_names(Permissions):
        dotted = f"permissions.{encoded}"
        known[dotted] = dotted
        known.setdefault(encoded, dotted)
    return known


def _nearest(key: str, candidates: Iterable[str]) -> list[str]:
    """The candidate nearest to `key`, if one is near (as a list: empty when none is)."""
    import difflib  # only for a key moot does not know: `moot -p` starts without it

    return difflib.get_close_matches(key, list(candidates), n=1)


def unknown_keys(data: Mapping[str, Any], path: object) -> list[SettingsWarning]:
    """A warning for each top-level key of a settings file that moot does not read."""
    if not data:  # most layers are absent files: no schema walk (it is on the app's start-up)
        return []
    known = _known_keys()
    top_level = {encoded for _, encoded in field_names(Settings)} | _UNCHECKED_KEYS
    warnings = []
    for key in data:
        if key in top_level:
            continue
        near = _nearest(key, known)
        warnings.append(SettingsWarning(str(path), key, known[near[0]] if near else None))
    return warnings


_TOLD: set[tuple[str, str]] = set()
"""The (file, key) warnings this process has printed: a person is told once per process."""


def print_warnings(warnings: Iterable[SettingsWarning], stream: TextIO | None = None) -> None:
    """Print each warning not printed before in this process, as `moot: <warning>`, to
    `stream` (stderr when None). Front ends with a screen show `LoadedSettings.warnings`
    themselves."""
    for warning in warnings:
        if (warning.file, warning.key) not in _TOLD:
            _TOLD.add((warning.file, warning.key))
            print(f"moot: {warning}", file=stream or sys.stderr)

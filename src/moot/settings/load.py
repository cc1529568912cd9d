"""Reading the settings files (only regular files, of a bounded size, of UTF-8 JSON), merging
them by precedence, and holding a project file's grants until approved (`moot.settings.review`)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from moot.settings import review
from moot.settings.check import unknown_keys, validate
from moot.settings.layers import ALL, SOURCES, SettingsLayers
from moot.settings.review import HeldSettings
from moot.settings.schema import (
    MAX_FILE_BYTES,
    LoadedSettings,
    RuleKind,
    Settings,
    SettingsError,
)


def settings_files(project: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in order of rising precedence."""
    from moot.paths import config_dir

    return [
        config_dir(environ) / "settings.json",
        project / ".moot" / "settings.json",
        project / ".moot" / "settings.local.json",
    ]


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when there is no file. Only a regular file (a symlink to one is
    fine) of at most `MAX_FILE_BYTES` is read: opening a FIFO would wait for a writer forever,
    and a device or a huge file would never end."""
    try:
        # Non-blocking, so that opening a FIFO returns at once; a regular file ignores it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SettingsError(f"cannot read {path}: it is a directory, not a settings file")
        if not stat.S_ISREG(mode):
            raise SettingsError(f"cannot read {path}: it is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise SettingsError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB: not settings")
    return data


def parse(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise SettingsError(f"{path} is not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    validate(data, path)
    return data


def read(path: Path) -> dict[str, Any]:
    raw = read_bytes(path)
    return {} if raw is None else parse(path, raw)


def merge(layers: list[dict[str, Any]]) -> Settings:
    """Later layers win; permission rule lists add up (without duplicates), and so do the
    hooks of each event: a project's `PreToolUse` hooks run besides the user's, not instead.
    `env` merges by variable, `ui`, `repl` and `verify` by key, `models` by model and `lsp` by
    language, then by field.

    Raises:
        SettingsError: the merged settings do not fit the schema (named as `settings`).
    """
    merged: dict[str, Any] = {}
    rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    mode = None
    for layer in layers:
        for key, value in layer.items():
            if key == "permissions":
                for kind in rules:
                    rules[kind] += [r for r in value.get(kind, ()) if r not in rules[kind]]
                mode = value.get("defaultMode", mode)
            elif key == "hooks" and isinstance(value, dict):
                hooks = merged.setdefault("hooks", {})
                for event, groups in value.items():
                    before = hooks.get(event)
                    if isinstance(before, list) and isinstance(groups, list):
                        hooks[event] = [*before, *(g for g in groups if g not in before)]
                    else:
                        hooks[event] = groups  # a malformed value: the hook parser names it
            elif key in ("env", "ui", "repl", "verify") and isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "sandbox" and isinstance(value, dict | str):
                merged[key] = _sandbox_merged(merged.get(key), value)
            elif key in ("models", "lsp") and isinstance(value, dict):
                models = merged.setdefault(key, {})
                for name, entry in value.items():
                    before = models.get(name)
                    both = isinstance(before, dict) and isinstance(entry, dict)
                    models[name] = {**before, **entry} if both else entry
            else:
                merged[key] = value
    merged["permissions"] = {**rules, "defaultMode": mode}
    return validate(merged, "settings")


def _sandbox_merged(before: object, value: dict[str, Any] | str) -> object:
    """The `sandbox` key over the one before it: the backend of the later file wins, the
    network lists add up; a string stays a string until an object joins it."""
    if isinstance(value, str) and not isinstance(before, dict):
        return value
    old = before if isinstance(before, dict) else {"backend": before} if before else {}
    new = value if isinstance(value, dict) else {"backend": value}
    merged = {**old, **{k: v for k, v in new.items() if k != "network"}}
    networks = [n for n in (old.get("network"), new.get("network")) if isinstance(n, dict)]
    if networks:
        lists: dict[str, list[Any]] = {}
        for network in networks:
            for name, listed in network.items():
                into = lists.setdefault(name, [])
                if isinstance(listed, list):
                    into += [item for item in listed if item not in into]
                else:
                    lists[name] = listed  # a malformed value: the schema check names it
        merged["network"] = lists
    return merged


_ORIGIN_KEYS = ("model", "sandbox", "autoCommit")


def _chosen_raws(files: list[Path], chosen: SettingsLayers) -> list[bytes | None]:
    """The files' bytes, None for a file that is absent or not among `chosen.sources`."""
    return [
        read_bytes(path) if name in chosen.sources else None
        for name, path in zip(SOURCES, files, strict=True)
    ]


def load_settings(
    project: Path, environ: Mapping[str, str] | None = None, chosen: SettingsLayers = ALL
) -> LoadedSettings:
    """The merged settings for a project directory, with what loading them found out: keys
    moot ignores (`warnings`), which file each value came from, and the project files whose
    grants are held until the person approves them (`held`, see `moot.settings.review`).

    Args:
        project: The project directory.
        environ: The environment (for the user's config directory); `os.environ` when None.
        chosen: The files read, and `--settings`' layer over them (`moot.settings.layers`).

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
    """
    files = settings_files(project, environ)
    raws = _chosen_raws(files, chosen)
    layers = [
        {} if raw is None else parse(path, raw) for path, raw in zip(files, raws, strict=True)
    ]
    warnings = [
        w for path, layer in zip(files, layers, strict=True) for w in unknown_keys(layer, path)
    ]
    held: list[HeldSettings] = []
    for index in (1, 2):  # the project's files: a repository can ship either
        if raw := raws[index]:
            layers[index], holding = _review(project, files[index], raw, layers[index], environ)
            held += holding
    named: list[tuple[str, dict[str, Any]]] = [
        (str(p), lay) for p, lay in zip(files, layers, strict=True)
    ]
    if chosen.given is not None:  # the caller's own: checked when read, never held
        named.append((chosen.given_name, chosen.given))
        warnings += unknown_keys(chosen.given, chosen.given_name)
    merged = merge([layer for _, layer in named])
    origins: dict[str, str] = {}
    for path, layer in named:
        for key in _ORIGIN_KEYS:
            if key in layer:
                origins[key] = path
        if isinstance(layer.get("permissions"), dict) and "defaultMode" in layer["permissions"]:
            origins["permissions.defaultMode"] = path
    fields = {name: getattr(merged, name) for name in merged.__struct_fields__}
    return LoadedSettings(**fields, warnings=tuple(warnings), origins=origins, held=tuple(held))


def _review(
    project: Path, path: Path, raw: bytes, layer: dict[str, Any], environ: Mapping[str, str] | None
) -> tuple[dict[str, Any], list[HeldSettings]]:
    """A project file's layer as it takes effect: whole if it grants nothing or the person
    approved this content here, else without its grants (and the file named as held)."""
    found = review.grants(layer)
    if not found:
        return layer, []
    digest = review.digest(raw)
    if review.SettingsApprovals(environ).approved(project, path, digest):
        return layer, []
    return review.held_out(layer), [HeldSettings(str(path), digest, tuple(found))]


def local_settings_file(project: Path) -> Path:
    """`.moot/settings.local.json`: personal, git-ignored; where moot itself writes rules."""
    return project / ".moot" / "settings.local.json"


def rule_sources(
    project: Path, environ: Mapping[str, str] | None = None, chosen: SettingsLayers = ALL
) -> list[tuple[RuleKind, str, Path]]:
    """Every permission rule in force with the file it comes from, in order of rising
    precedence (a rule in two files is listed twice); a project file's allow rules only once
    the person approved it (`moot.settings.review`); `--settings`' rules last.

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
    """
    found: list[tuple[RuleKind, str, Path]] = []
    files = settings_files(project, environ)
    layers: list[tuple[Path, dict[str, Any]]] = []
    for index, (path, raw) in enumerate(zip(files, _chosen_raws(files, chosen), strict=True)):
        data = {} if raw is None else parse(path, raw)
        if index and raw:
            data, _held = _review(project, path, raw, data, environ)
        layers.append((path, data))
    if chosen.given is not None:
        layers.append((Path(chosen.given_name), chosen.given))
    for path, data in layers:
        permissions = data.get("permissions") or {}
        for kind in ("allow", "ask", "deny"):
            found += [(kind, rule, path) for rule in permissions.get(kind, ())]
    return found


def chosen_layers(sources: Iterable[str] | None, given: str | None, cwd: Path) -> SettingsLayers:
    """The layers `--setting-sources` and `--settings` choose.

    Args:
        sources: The files to read by name (`user`, `project`, `local`); None: all of them.
        given: `--settings`: JSON text (it starts with `{`) or a settings file's path,
            relative to `cwd`; None: no such layer.
        cwd: Where a relative path is read from.

    Raises:
        SettingsError: A source of no such name; a file that cannot be read, or settings
            that are no JSON object or do not fit the schema (the message names them).
    """
    chosen = frozenset(SOURCES if sources is None else sources)
    if unknown := sorted(chosen - set(SOURCES)):
        raise SettingsError(
            f"--setting-sources: no source {', '.join(unknown)} (there are: {', '.join(SOURCES)})"
        )
    if given is None:
        return SettingsLayers(sources=chosen)
    if given.lstrip().startswith("{"):
        return SettingsLayers(
            sources=chosen, given=parse(Path("--settings"), given.encode("utf-8"))
        )
    path = cwd / given
    raw = read_bytes(path)
    if raw is None:
        raise SettingsError(f"--settings: no file {path}")
    if raw.startswith(b"\xef\xbb\xbf"):  # as Claude Code reads it: with or without a BOM
        raw = raw[3:]
    return SettingsLayers(sources=chosen, given=parse(path, raw), given_name=str(path))

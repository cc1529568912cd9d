"""The app's preferences, `<config dir>/tui.json`: what the person chose for the app that outlasts
a session (its theme, its side panes' sizes), and the theme files it can choose from.

The app reads the file at start and writes it at each change. The plain REPL draws no theme (the
terminal's own colours apply) but takes the same `/theme`: it sets the theme the app starts
with. So both front ends need the file and the list of themes without the other's toolkit:
nothing here imports textual (the app checks each theme file as it loads it, `moot.tui.themes`).

A TOML theme file is read through a cache (`<cache dir>/themes.json`, what each file held, keyed
by its size and times): the app reads its themes as it starts, and tomllib (~3 ms to import and
parse, a start-up benchmark) is then needed only for a file new or changed since.
"""

from __future__ import annotations

import json
import os
import time
from functools import cache
from pathlib import Path

from moot.paths import cache_dir, config_dir
from moot.shipped import shipped_dir

THEME = "theme"
"""The key of the theme's name in the preferences."""


def prefs_file() -> Path:
    return config_dir() / "tui.json"


def load_prefs() -> dict[str, object]:
    """The preferences; empty when there are none yet or the file cannot be read."""
    try:
        data = json.loads(prefs_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_prefs(prefs: dict[str, object]) -> None:
    path = prefs_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(prefs, indent=1), encoding="utf-8")
    except OSError:
        pass  # preferences are a convenience: a read-only config dir must not stop moot


def theme_files() -> list[Path]:
    """Shipped themes first, then the person's (which win on a name clash)."""
    found: list[Path] = []
    for folder in (shipped_dir("themes"), config_dir() / "themes"):
        if folder is not None and folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".json"))
    return found


def theme_file_names() -> list[str]:
    """The names the theme files give themselves, sorted; a file without one is left out.

    Only the name is read: whether the rest fits is the app's to check when it loads them (a
    theme that does not is skipped there with a warning, and the app starts with its default).
    """
    names: set[str] = set()
    for path in theme_files():
        try:
            data = theme_data(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name.strip():
            names.add(name)
    return sorted(names)


def remember_theme(name: str) -> None:
    """Make `name` the theme the app starts with."""
    prefs = load_prefs()
    prefs[THEME] = name
    save_prefs(prefs)


def theme_data(path: Path) -> object:
    """What a theme file holds (a JSON or TOML document), through the cache for TOML.

    Raises:
        OSError: The file cannot be read.
        UnicodeDecodeError: It is not UTF-8.
        ValueError: It is not a JSON or TOML document.
    """
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    stat = path.stat()
    key, stamp = str(path), [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]
    cached = _theme_cache()
    entry = cached.get(key)
    if isinstance(entry, list) and len(entry) == 2 and entry[0] == stamp:
        return json.loads(json.dumps(entry[1]))  # a copy: the caller's theme may change it
    import tomllib  # a TOML theme file new or changed since it was cached

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if time.time_ns() - stat.st_mtime_ns < SETTLED_NS:
        return data  # changed just now: it could change again within the times' resolution
    try:
        cached[key] = [stamp, json.loads(json.dumps(data))]
    except (TypeError, ValueError):  # a value JSON has no form for (a TOML date): not cached
        return data
    _save_theme_cache(cached)
    return data


SETTLED_NS = 2_000_000_000
"""A theme file is cached once it has been still this long (its times alone could miss a second
change within their resolution)."""


@cache
def _theme_cache() -> dict[str, object]:
    """The theme cache as this process has it: read once, updated at each file parsed."""
    try:
        read = json.loads((cache_dir() / "themes.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        read = {}
    return read if isinstance(read, dict) else {}


def _save_theme_cache(cached: dict[str, object]) -> None:
    """Write the cache, without the entries of theme files deleted since (pruned at each save,
    which comes with a file parsed: a handful of stats)."""
    for gone in [key for key in cached if not os.path.exists(key)]:
        del cached[gone]
    path = cache_dir() / "themes.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"themes.json.{os.getpid()}")
        partial.write_text(json.dumps(cached), encoding="utf-8")
        os.replace(partial, path)  # another moot reading it sees the old file or this one
    except (OSError, TypeError, ValueError):
        pass  # a cache: without it the files are parsed again

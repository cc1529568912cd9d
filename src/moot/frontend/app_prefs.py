"""The app's preferences, `<config dir>/tui.json`: what the person chose for the app that outlasts
a session (its theme, its side panes' sizes), and the theme files it can choose from.

The app reads the file at start and writes it at each change. The plain REPL draws no theme (the
terminal's own colours apply) but takes the same `/theme`: it sets the theme the app starts
with. So both front ends need the file and the list of themes without the other's toolkit:
nothing here imports textual (the app checks each theme file as it loads it, `moot.tui.themes`).
"""

from __future__ import annotations

import json
from pathlib import Path

from moot.paths import config_dir
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
    import tomllib  # only /theme reads the files' names: the REPL's start never does

    names: set[str] = set()
    for path in theme_files():
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
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

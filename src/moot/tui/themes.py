"""Themes from files: the ones shipped in the top-level `themes/` folder, and the person's own in
`<config dir>/themes/`. Textual has no theme-file loader, so each TOML (or JSON) file is read
into a `textual.theme.Theme`; its keys are that class's fields. A file that does not fit is a
warning naming the file and the field, never a crash.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields
from pathlib import Path

from textual.theme import Theme

from moot.paths import config_dir
from moot.shipped import shipped_dir

DEFAULT_THEME = "moot-dark"
_FIELDS = {f.name: f.type for f in fields(Theme)}


class ThemeProblem(Exception):
    """A theme file that cannot be used; the message names the file and the field."""


def read_theme(path: Path) -> Theme:
    """The theme a file describes.

    Raises:
        ThemeProblem: The file cannot be read, or a field is unknown or of the wrong kind.
    """
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ThemeProblem(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ThemeProblem(f"{path}: a theme is a table of fields")
    for field, value in data.items():
        if field not in _FIELDS:
            raise ThemeProblem(f"{path}: unknown field {field!r} (fields: {', '.join(_FIELDS)})")
        if field in ("dark", "ansi") and not isinstance(value, bool):
            raise ThemeProblem(f"{path}: {field!r} must be true or false")
        if field in ("luminosity_spread", "text_alpha") and not isinstance(value, int | float):
            raise ThemeProblem(f"{path}: {field!r} must be a number")
        if field == "variables" and not isinstance(value, dict):
            raise ThemeProblem(f"{path}: 'variables' must be a table")
        plain = field not in ("dark", "ansi", "luminosity_spread", "text_alpha", "variables")
        if plain and not isinstance(value, str):
            raise ThemeProblem(f"{path}: {field!r} must be a colour string")
    if "name" not in data or "primary" not in data:
        raise ThemeProblem(f"{path}: a theme needs at least 'name' and 'primary'")
    try:
        theme = Theme(**data)
        theme.to_color_system()  # parses every colour: a bad one fails here, not when shown
    except Exception as exc:  # Textual raises several kinds for a bad colour
        raise ThemeProblem(f"{path}: {exc}") from None
    return theme


def theme_files() -> list[Path]:
    """Shipped themes first, then the person's (which win on a name clash)."""
    found: list[Path] = []
    for folder in (shipped_dir("themes"), config_dir() / "themes"):
        if folder is not None and folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".json"))
    return found


def load_themes() -> tuple[list[Theme], list[str]]:
    """Every usable theme, and a warning for each file that is not."""
    themes: dict[str, Theme] = {}
    warnings: list[str] = []
    for path in theme_files():
        try:
            theme = read_theme(path)
        except ThemeProblem as exc:
            warnings.append(f"theme skipped: {exc}")
            continue
        themes[theme.name] = theme
    return list(themes.values()), warnings

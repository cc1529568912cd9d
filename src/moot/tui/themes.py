"""Themes from files: the ones shipped in the top-level `themes/` folder, and the person's own in
`<config dir>/themes/`. Textual has no theme-file loader, so each TOML (or JSON) file is read
into a `textual.theme.Theme`; its keys are that class's fields, and its `[variables]` table
overrides Textual's CSS variables. A file that does not fit is skipped with one warning naming
the file and each field or variable that does not fit, and why
(`t.toml: primary: 'notacolor' is not a colour`), never a crash: not at the start, and not when
the theme is switched to (a bad variable would fail Textual's stylesheet there).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.theme import Theme

from moot.frontend.app_prefs import theme_data, theme_files

DEFAULT_THEME = "moot-dark"
_FIELDS = tuple(f.name for f in fields(Theme))
_SWITCHES = ("dark", "ansi")
_NUMBERS = ("luminosity_spread", "text_alpha")
_COLOURS = tuple(f for f in _FIELDS if f not in (*_SWITCHES, *_NUMBERS, "name", "variables"))
_KINDS = {"background": "a colour", "color": "a colour", "text-style": "a text style"}
"""The CSS properties a variable's value is checked in (the first its default fits), and what
the warning calls a value that fits none."""


class ThemeProblem(Exception):
    """A theme file that cannot be used; the message names the file and each field."""


def read_theme(path: Path) -> Theme:
    """The theme a file describes.

    Raises:
        ThemeProblem: The file cannot be read, or a field or variable is unknown or does not
            fit; the message names each.
    """
    try:
        data = theme_data(path)  # TOML through a cache: no tomllib at a start with none new
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ThemeProblem(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ThemeProblem(f"{path}: a theme is a table of fields")
    problems = [f"{field}: {why}" for field, why in _field_problems(data)]
    variables = data.get("variables", {})
    if isinstance(variables, dict):
        problems += [f"variables.{name}: {why}" for name, why in _variable_problems(variables)]
    if problems:
        raise ThemeProblem(f"{path}: " + "; ".join(problems))
    try:
        theme = Theme(**data)
        theme.to_color_system()  # parses every colour: a bad one fails here, not when shown
    except Exception as exc:  # the checks above should leave nothing for here; never a crash
        raise ThemeProblem(f"{path}: {exc}") from None
    return theme


def _field_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for field, value in data.items():
        if field not in _FIELDS:
            fields_are = f"fields: {', '.join(_FIELDS)}"
            found.append((field, f"not a theme field ({_nearest(field, _FIELDS, fields_are)})"))
        elif field in _SWITCHES and not isinstance(value, bool):
            found.append((field, f"{value!r} is not true or false"))
        elif field in _NUMBERS and (isinstance(value, bool) or not isinstance(value, int | float)):
            found.append((field, f"{value!r} is not a number"))
        elif field == "name" and not (isinstance(value, str) and value.strip()):
            found.append((field, f"{value!r} is not a name"))
        elif field == "variables" and not isinstance(value, dict):
            found.append((field, "not a table of variables (`[variables]`)"))
        elif field in _COLOURS and not _is_colour(value):
            found.append((field, f"{value!r} is not a colour"))
    needed = [f for f in ("name", "primary") if f not in data]
    return found + [(f, "missing (a theme needs 'name' and 'primary')") for f in needed]


def _variable_problems(variables: dict[str, Any]) -> list[tuple[str, str]]:
    if not variables:
        return []  # the usual case: no variable's kind needs working out
    known = _variable_kinds()
    found = []
    for name, value in variables.items():
        if name not in known:
            textual_docs = "Textual's theme variables are listed at textual.textualize.io"
            found.append((name, f"not a Textual variable ({_nearest(name, known, textual_docs)})"))
        elif not (isinstance(value, str) and _fits(known[name], value)):
            found.append((name, f"{value!r} is not {_KINDS[known[name]]}"))
    return found


def _nearest(name: str, known: Iterable[str], otherwise: str) -> str:
    close = get_close_matches(name, list(known), n=1)
    return f"did you mean {close[0]!r}?" if close else otherwise


def _is_colour(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        Color.parse(value)
    except ColorParseError:
        return False
    return True


@cache
def _variable_kinds() -> dict[str, str]:
    """Each of Textual's variables and the property its value is checked in: the first of
    `_KINDS` its default value fits (a variable takes the kind of value its default is)."""
    defaults = Theme(name="defaults", primary="#000000").to_color_system().generate()
    kinds = {}
    for name, default in defaults.items():
        kinds[name] = next((p for p in _KINDS if _fits(p, default)), "color")
    return kinds


def _fits(prop: str, value: str) -> bool:
    """`value` parses as `prop` in Textual's stylesheet, as the theme's variable would."""
    sheet = Stylesheet(variables={"moot-theme-value": value})
    sheet.add_source(f"Screen {{ {prop}: $moot-theme-value; }}", read_from=("theme", ""))
    try:
        sheet.parse()
    except StylesheetParseError:
        return False
    return True


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

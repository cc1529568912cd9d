"""What the app asks of the terminal beyond drawing: mouse capture on and off, and themes that
fit a terminal with only 16 colours.

Mouse capture: Textual (8.2) has no public switch at run time; its driver's own
`_enable_mouse_support` / `_disable_mouse_support` write the xterm sequences (1000, 1003, 1015,
1006) and flush. They are private, so they are used here only, and textual is pinned to 8.2.x.
They do nothing when the driver was built with `mouse=False`, so the app always starts the
driver with the mouse on and turns it off at once when the person asked for that.

Colours: Textual reads `NO_COLOR` itself (every colour drawn as a shade of grey) and takes the
colour system from `TEXTUAL_COLOR_SYSTEM` or, by default, from `COLORTERM` and `TERM` (Rich's
detection: `xterm` means 16 colours, `xterm-256color` 256). On 16 colours Rich would round each
of a theme's exact colours to the nearest of the 16, which loses the contrast between panels and
text; a shipped theme is swapped for Textual's ANSI theme of the same brightness instead, which
uses the terminal's own palette.
"""

from __future__ import annotations

from typing import Any

from textual.app import App

SIXTEEN_COLOURS = frozenset({"standard", "windows"})
"""Rich's names for colour systems with 16 colours or fewer."""
ANSI_FALLBACK = {
    "moot-dark": "ansi-dark",
    "moot-high-contrast": "ansi-dark",
    "moot-light": "ansi-light",
}
"""The 16-colour stand-in for each shipped theme. A person's own theme is left as it is."""


def few_colours(color_system: str | None) -> bool:
    """Whether a colour system (`App.console.color_system`) has only 16 colours, or none
    (`TERM=dumb`)."""
    return color_system is None or color_system in SIXTEEN_COLOURS


def fitted_theme(app: App[Any], name: str) -> str:
    """`name`, or its 16-colour stand-in when the terminal has only 16 colours. Headless (tests,
    screenshots) there is no terminal, and the theme is left as asked; so it is while the app
    loads, before it knows its terminal (the app fits it again once mounted)."""
    if app._driver is None or app.is_headless or not few_colours(app.console.color_system):
        return name
    return ANSI_FALLBACK.get(name, name)


def set_mouse_capture(app: App[Any], capture: bool) -> bool:
    """Turn the terminal's mouse reporting on or off; False when there is no terminal to tell
    (headless, under test) or its driver cannot."""
    driver = app._driver
    if driver is None or app.is_headless:
        return False
    switch = getattr(driver, "_enable_mouse_support" if capture else "_disable_mouse_support", None)
    if switch is None:  # a driver without mouse support (Windows' has none of these)
        return False
    switch()
    return True

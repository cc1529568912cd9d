"""Markdown rendered once for scrollback, with rich, in the styled look.

rich (with markdown-it and, for code, pygments) loads at the first answer, never before the
prompt is ready; `warm_up` loads it in a thread once the prompt shows, so the first answer does
not wait for it.
"""

from __future__ import annotations

import io
import re
import threading

_PADDING = re.compile(r" +$", re.MULTILINE)


def render_markdown(text: str, width: int) -> str:
    """`text` (markdown) as terminal lines with colour escapes, without trailing padding or
    blank lines around it (the source's own blank lines are printed as they come)."""
    # rich loads here only: ~65-80 ms of imports that start-up must not pay.
    from rich.console import Console
    from rich.markdown import Markdown

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        width=max(20, width),
        legacy_windows=False,
        emoji=False,
        highlight=False,
    )
    # Links as "text (url)": an OSC 8 link is invisible in some terminals and in logs.
    console.print(Markdown(text, hyperlinks=False, code_theme="ansi_dark"), end="")
    return _PADDING.sub("", buffer.getvalue()).strip("\n")


def warm_up() -> threading.Thread:
    """Import rich's markdown in a daemon thread (the import lock makes a later import wait
    for it rather than repeat it)."""

    def load() -> None:
        render_markdown("*warm* `up`\n\n```python\npass\n```", 40)

    thread = threading.Thread(target=load, name="moot-markdown-warm-up", daemon=True)
    thread.start()
    return thread

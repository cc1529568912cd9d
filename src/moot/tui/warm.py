"""Loads what the first answer needs in a thread once the session is open.

The markdown modules (markdown_it with its plugins, Textual's `Markdown`, rich's) and pygments
(diffs, the inspector) stay out of the app's first paint; loaded here, off the UI thread, the
first answer does not wait for them either (the import lock makes a first answer that comes
sooner wait for this thread instead of loading them twice).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

MODULES = ("textual.widgets._markdown", "rich.markdown", "rich.syntax")
"""An answer's `Markdown` (markdown_it and its plugins), a finished one's, and pygments."""


def warm_up(then: Callable[[], None] | None = None) -> threading.Thread:
    """Import the first answer's modules in a daemon thread (the process never waits for it),
    then call `then` there (the app freezes its heap again: `heap.settle`)."""

    def load() -> None:
        for name in MODULES:
            importlib.import_module(name)
        if then is not None:
            then()

    thread = threading.Thread(target=load, name="moot-app-warm-up", daemon=True)
    thread.start()
    return thread

"""Keep httpx's command-line client from loading with httpx.

`httpx/__init__.py` imports `httpx._main` (its `httpx` console script) whenever click, rich and
pygments are installed, and the app's and the MCP SDK's dependencies install all three: that
costs `moot -p` tens of milliseconds before its first request, for a command line moot never
runs. httpx offers no switch for it, so the program (not the library) puts a stand-in for
`httpx._main` in `sys.modules` before httpx loads; its `main` loads the real module when called,
so `httpx.main()` still works for anyone who calls it.
"""

from __future__ import annotations

import importlib
import sys
import types

_NAME = "httpx._main"


def _real_main() -> None:
    sys.modules.pop(_NAME, None)
    importlib.import_module(_NAME).main()


def keep_httpx_cli_unloaded() -> None:
    """Install the stand-in, unless httpx (or its command line) is loaded already."""
    if "httpx" in sys.modules or _NAME in sys.modules:
        return
    stand_in = types.ModuleType(_NAME, "A stand-in: the real module loads when main() runs.")
    stand_in.main = _real_main  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in

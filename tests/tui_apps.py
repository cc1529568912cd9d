"""The app as its tests open it (not a test module): over a client (a `FakeClient` playing a
script, or a real one), with no prompt history file, and the options the test names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moot.tui.app import MootApp


def app_for(client: Any, **options: Any) -> MootApp:
    """A `MootApp` over `client`; `options` are `AppOptions` fields (`clock`, `show_history`)."""
    from moot.frontend.history import PromptHistory
    from moot.tui.app import MootApp  # Textual only when a test opens the app
    from moot.tui.options import AppOptions

    return MootApp(client, AppOptions(history=PromptHistory(None), **options))

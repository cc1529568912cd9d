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


async def send(pilot: Any, text: str) -> None:
    """Type `text` and press enter, then wait until the app shows what the fake client played
    for it (`shown`)."""
    await pilot.press(*text, "enter")
    await shown(pilot)


async def shown(pilot: Any) -> None:
    """Wait, boundedly, until the app's bridge has taken every event its `FakeClient` played,
    then for the bridge's flush, the chat's mounts and their first paint."""
    played = pilot.app.client.log
    for _ in range(100):  # bounded: the bridge worker takes them in its own time under load
        bridge = pilot.app.view.bridge
        if bridge is not None and played and bridge.last_seq >= played[-1].seq:
            break
        await pilot.pause()
    for _ in range(3):
        await pilot.pause()

"""Waiting in Pilot tests for the app to show what its fake client played (not a test module)."""

from __future__ import annotations

from textual.pilot import Pilot


async def caught_up(pilot: Pilot) -> None:
    """Until the app's bridge has taken every event `FakeClient` played (bounded: under load the
    bridge worker takes them in its own time), then the bridge's flush, the chat's mounts and
    their first paint."""
    played = pilot.app.client.log  # type: ignore[attr-defined]
    for _ in range(100):
        bridge = pilot.app.view.bridge  # type: ignore[attr-defined]
        if bridge is not None and played and bridge.last_seq >= played[-1].seq:
            break
        await pilot.pause()
    for _ in range(3):
        await pilot.pause()

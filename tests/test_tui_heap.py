"""An app that owns its process's heap (`moot` itself) freezes it once its session shows, and
lets it go when another session replaces that one; an app that does not (every test) leaves
the collector alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from moot.history import PromptHistory
from moot.testing import FakeClient
from moot.tui import heap
from moot.tui.app import MootApp


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector as it was before the test, restored after it."""
    threshold = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


async def test_an_app_that_owns_its_heap_freezes_it_and_releases_it_for_another_session(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = MootApp(FakeClient(), history=PromptHistory(None), own_heap=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 0  # the session shows: what it holds is frozen
        assert gc.get_threshold() == heap.THRESHOLDS
        frozen_first = gc.get_freeze_count()
        released = []
        real_release = heap.release

        def release() -> None:
            released.append(gc.get_freeze_count())
            real_release()

        monkeypatch.setattr(heap, "release", release)
        await app._switch_client(FakeClient(), show_history=False)
        assert released == [frozen_first]  # the first session's heap was let go
        assert gc.get_freeze_count() > 0  # and the next one's frozen once it shows


async def test_an_app_that_does_not_own_its_heap_leaves_the_collector_alone(
    collector: None,
) -> None:
    threshold = gc.get_threshold()
    app = MootApp(FakeClient(), history=PromptHistory(None))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == threshold

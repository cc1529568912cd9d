"""An app that owns its process's heap (`moot` itself) freezes it once its session shows, and
lets it go when another session replaces that one; an app that does not (every test) leaves
the collector alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from moot.testing import FakeClient
from moot.tui import heap
from tui_apps import app_for


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
    app = app_for(FakeClient(), own_heap=True)
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
        await app.view.switch_client(FakeClient(), show_history=False)
        # The first session's heap was let go while still frozen (the answer's modules, frozen
        # once the warm-up thread loaded them, may have joined it meanwhile; a frozen object
        # whose last reference went is gone from it, so the count is no floor).
        assert len(released) == 1 and released[0] > frozen_first // 2
        assert gc.get_freeze_count() > 0  # and the next one's frozen once it shows


async def test_an_app_that_does_not_own_its_heap_leaves_the_collector_alone(
    collector: None,
) -> None:
    threshold = gc.get_threshold()
    app = app_for(FakeClient())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == threshold


def test_the_quiet_collector_collects_once_the_app_has_been_quiet_for_quiet_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    armed: list[tuple[float, object]] = []
    collected: list[float] = []
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(now[0]) or 0)
    quiet = heap.QuietCollector(lambda delay, then: armed.append((delay, then)), lambda: now[0])

    quiet.touch()
    quiet.touch()  # one timer at a time
    assert [delay for delay, _ in armed] == [heap.QUIET_S]
    now[0] += 1.5
    quiet.touch()  # activity meanwhile: the timer, when it fires, waits out the rest
    now[0] += 0.5
    armed.pop(0)[1]()  # type: ignore[operator]
    assert collected == [] and [delay for delay, _ in armed] == [pytest.approx(1.5)]
    now[0] += 1.5
    armed.pop(0)[1]()  # type: ignore[operator]
    assert collected == [103.5] and armed == []  # quiet for QUIET_S: collected, nothing armed

    quiet.touch()  # the next activity arms it again
    assert len(armed) == 1


def test_typing_holds_the_oldest_generation_off_until_the_keys_pause(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    armed: list[tuple[float, object]] = []
    monkeypatch.setattr(gc, "collect", lambda *a: 0)
    gc.set_threshold(*heap.THRESHOLDS)
    quiet = heap.QuietCollector(lambda delay, then: armed.append((delay, then)), lambda: now[0])

    quiet.typed()
    assert gc.get_threshold() == (*heap.THRESHOLDS[:2], heap.HELD)  # the young ones still run
    for _ in range(5):  # keys 0.3 s apart: still typing when the timer fires
        now[0] += 0.3
        quiet.typed()
        if armed and now[0] >= armed[0][0]:
            armed.pop(0)[1]()  # type: ignore[operator]
    assert gc.get_threshold()[2] == heap.HELD
    now[0] += heap.TYPING_S
    while armed:
        armed.pop(0)[1]()  # type: ignore[operator]
        now[0] += heap.QUIET_S
    assert gc.get_threshold() == heap.THRESHOLDS  # the keys paused: let go


def test_typing_holds_collections_off_for_so_long_at_most(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    gc.set_threshold(*heap.THRESHOLDS)
    quiet = heap.QuietCollector(lambda delay, then: None, lambda: now[0])
    while now[0] <= heap.HELD_AT_MOST_S + 1:
        quiet.typed()
        now[0] += 0.2
    assert gc.get_threshold() == heap.THRESHOLDS  # let go though the keys never paused
    quiet.typed()
    assert gc.get_threshold() == heap.THRESHOLDS  # and not held again before they do

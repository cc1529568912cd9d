"""What every run's log must show of how its calls ended."""

from __future__ import annotations

from moot.protocol import events as ev


def ends_in_order(events: list[ev.Event]) -> None:
    """Each call's end comes after the ends of the calls it made, and the run's end last."""
    ended: dict[str, int] = {}
    parents: dict[str, str | None] = {}
    for index, event in enumerate(events):
        if isinstance(event, ev.AgentCalled | ev.TurnStarted):
            parents[event.call_id] = event.parent_call_id
        if isinstance(event, ev.AgentReturned | ev.TurnFinished):
            ended[event.call_id] = index
    assert set(ended) == set(parents), "every call ended"
    for child, parent in parents.items():
        if parent is not None:
            assert ended[child] < ended[parent]
    assert isinstance(events[-1], ev.TurnFinished)

"""What every event carries: its place in the log, its session, run, agent and call, the op it
answers and when it happened (`EventBase`)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec


def utc_now() -> datetime:
    return datetime.now(UTC)


class EventBase(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"
):
    # msgspec rather than pydantic: events are made, written and read on every step, and
    # `moot -p` imports them before its first request (pydantic's import and model building
    # cost ~100 ms of start-up; msgspec's ~10). Types are checked when an event is decoded,
    # not when the runtime builds one from values it already has.

    seq: int = 0
    """Position in the session's log, from 1; the store assigns it on append."""
    session_id: str = ""
    run_id: str = ""
    """The person's turn this belongs to: the call id of that turn's first call."""
    agent: str = ""
    """The agent whose call this happened in."""
    call_id: str = ""
    parent_call_id: str | None = None
    ts: datetime = msgspec.field(default_factory=utc_now)
    submission_id: str = ""
    """The op this event answers (`Client.submit` returned it): a run's events carry the
    submission that started it, `approval_decided` that of the `Approve`/`Deny`, what an
    interrupt ends that of the `Interrupt`. Empty for events no op caused."""

    @property
    def kind(self) -> str:
        """What happened (`turn_started`, `tool_finished`, ...): the tag in the JSON form."""
        return self.__struct_config__.tag  # type: ignore[return-value]

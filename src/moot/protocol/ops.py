"""Ops: what front ends ask the runtime to do (`runtime.submit(op)`).

Each op's docstring names the events that answer it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.protocol.messages import Attachment
from moot.protocol.modes import ModeName


class _Op(BaseModel):
    # defer_build: built at first use, not at import (start-up time; see events._Event).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class UserTurn(_Op):
    """The person says something to an agent.

    Answered by `turn_started`, the run's events, then `turn_finished`.
    """

    kind: Literal["user_turn"] = "user_turn"
    text: str
    attachments: tuple[Attachment, ...] = ()
    agent: str | None = None
    """The agent to address; the runtime's first agent when None."""


class ResumeRun(_Op):
    """Finish the session's interrupted run from where its log ends.

    Answered by `run_resumed`, `tool_finished(interrupted=True)` for each tool that started
    without a result, the run's further events, then `turn_finished`.
    """

    kind: Literal["resume_run"] = "resume_run"


class Interrupt(_Op):
    """Cancel the running turn.

    Answered by `tool_finished(interrupted=True)` for running tools, `agent_returned` for open
    peer calls and `turn_finished` with state cancelled / stop reason user_cancelled.
    """

    kind: Literal["interrupt"] = "interrupt"


class Approve(_Op):
    """Allow a tool call that waits on `approval_requested`. Answered by `approval_decided`.

    `scope` "session" keeps an allow rule for the rest of the session; "always" also saves it
    to `.moot/settings.local.json`. The rule is `rule`, or the request's first suggestion.
    `mode` also switches the session's permission mode (answered by `mode_changed`): approving
    a plan (`exit_plan_mode`) leaves plan mode for `mode`, or for "default" when it is None.
    """

    kind: Literal["approve"] = "approve"
    tool_call_id: str
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    mode: ModeName | None = None


class Deny(_Op):
    """Refuse a tool call that waits on `approval_requested`; the model sees the feedback.

    Answered by `approval_decided` (approved false).
    """

    kind: Literal["deny"] = "deny"
    tool_call_id: str
    feedback: str = ""


class SetMode(_Op):
    """Switch the session's permission mode; the next tool call is decided under it.

    Answered by `mode_changed`; later tool calls are decided under the new mode.
    """

    kind: Literal["set_mode"] = "set_mode"
    mode: ModeName


class Shutdown(_Op):
    """Interrupt whatever runs, then close the event stream (`events()` ends)."""

    kind: Literal["shutdown"] = "shutdown"


Op = Annotated[
    UserTurn | ResumeRun | Interrupt | Approve | Deny | SetMode | Shutdown,
    Field(discriminator="kind"),
]

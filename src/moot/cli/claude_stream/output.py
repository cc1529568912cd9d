"""What a headless turn writes on stdout, by `--output-format`.

- `text`: the answer.
- `json`: one result object (`result.result_object`).
- `stream-json`: Claude Code's messages, one a line: `system`/`init`, `assistant`, `user`,
  `stream_event` (with `--include-partial-messages`), and the `result`.
- `events`: moot's own events, one stored event a line (a superset of the above).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from moot.protocol import events as ev
from moot.protocol.client import SessionStatus
from moot.protocol.mcp import McpServerStatus
from moot.protocol.states import RunState, StopReason

if TYPE_CHECKING:
    from moot.cli.claude_stream.messages import ClaudeMessages, ModelUsage

FORMATS = ("text", "json", "stream-json", "events")
RESULTS = ("json", "stream-json")
"""The formats that end with a result object (its usage and model time counted per event);
only they load Claude Code's message shapes (`messages`, `result`): `moot -p`'s text output
does not pay for them."""


class ModelTime:
    """The time a run waited for its models (`duration_api_ms`): for each model answer, the
    time since the call's previous event other than a delta (its turn's start or the last
    tool result)."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._last: dict[str, datetime] = {}

    def take(self, event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta | ev.ThinkingDelta) or not event.call_id:
            return
        before = self._last.get(event.call_id)
        if isinstance(event, ev.ModelResponded) and before is not None:
            self.ms += (event.ts - before).total_seconds() * 1000
        self._last[event.call_id] = event.ts


class TurnOutput:
    """Writes one headless turn to `out` in `format`.

    Args:
        format: One of `FORMATS`.
        out: stdout, or a test's buffer.
        session_id: The session the messages name.
        partial: `--include-partial-messages`: stream the model's deltas (stream-json).
    """

    def __init__(
        self,
        format: str,
        out: TextIO,
        session_id: str,
        *,
        partial: bool = False,
        schema: bool = False,
    ):
        self.format = format
        self.schema = schema
        """`--json-schema` was given: the answer is `structured_output`."""
        self.out = out
        self.session_id = session_id
        self.messages: ClaudeMessages | None = None
        self.model_time = ModelTime()
        self.model_usage: ModelUsage | None = None
        if format in RESULTS:
            from moot.cli.claude_stream.messages import ClaudeMessages, ModelUsage

            self.model_usage = ModelUsage()
            if format == "stream-json":
                self.messages = ClaudeMessages(session_id, partial=partial)

    def _line(self, value: Any) -> None:
        self.out.write(json.dumps(value) + "\n")
        self.out.flush()

    def opened(
        self,
        status: SessionStatus,
        servers: list[McpServerStatus],
        tools: tuple[str, ...] | None = None,
        sdk_servers: dict[str, str] | None = None,
    ) -> None:
        """The session is open: stream-json starts with its `system`/`init` line."""
        if self.format == "stream-json":
            from moot.cli.claude_stream.result import init_message

            self._line(init_message(status, servers, tools, sdk_servers))

    def event(self, event: ev.Event) -> None:
        """One event of the turn, as it is stored."""
        if self.model_usage is not None:  # a result will say them
            self.model_time.take(event)
            self.model_usage.take(event)
        if self.format == "events":
            self.out.write(ev.event_to_json(event) + "\n")
            self.out.flush()
        elif self.messages is not None:  # stream-json
            for message in self.messages.take(event):
                self._line(message)

    def finished(
        self, finished: ev.TurnFinished, problem: str, denials: list[dict[str, object]]
    ) -> None:
        """The turn ended: the answer (text) or the result (json, stream-json)."""
        if self.format == "text":
            if finished.output:
                self.out.write(finished.output.rstrip("\n") + "\n")
            return
        if self.model_usage is not None:  # json, stream-json
            from moot.cli.claude_stream.result import result_object

            structured, subtype = self._structured(finished)
            result = result_object(
                finished,
                self.session_id,
                problem,
                denials,
                api_ms=self.model_time.ms,
                structured=structured,
                subtype=subtype,
            )
            self._line(result | {"modelUsage": self.model_usage.models})

    def _structured(self, finished: ev.TurnFinished) -> tuple[object, str]:
        """Under `--json-schema`: the answer's JSON, or the subtype of one that never fit."""
        if not self.schema:
            return None, ""
        if finished.stop_reason is StopReason.GATE_STOPPED:
            return None, "error_max_structured_output_retries"
        if finished.state is not RunState.COMPLETED:
            return None, ""
        try:
            return json.loads(finished.output), ""  # the gate kept it as plain JSON
        except ValueError:  # a run resumed from before the schema was given
            return None, ""

    def refused(self, reason: str) -> None:
        """The session would not take the turn: an error result, so a reader is answered."""
        if self.format in RESULTS:
            from moot.cli.claude_stream.result import refused_result

            self._line(refused_result(self.session_id, reason))

"""One agent call as the fold of the log leaves it (`CallState`), and what waits for its next
step (`Waiting`).

A call's messages begin with a conversation of the session's `History`, whose own list the
call appends to; what the pre-flight check counts of them is kept beside them (`Weights`),
so neither a model request nor its check against the context window walks the conversation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import msgspec

from moot.core.history import (
    Beginning,
    ImagelessView,
    MessagesView,
    ResolvingView,
    TakenIds,
    Weights,
)
from moot.protocol import events as ev
from moot.protocol.messages import Message, ToolCall, ToolResultMessage
from moot.protocol.states import RunState

NOT_RUN = "Not run: the run ended before this tool call ({reason})."


class Waiting(msgspec.Struct, frozen=True):
    """A message that waits for its receiver's next step: from a peer, from the person, or a
    background agent's return."""

    sender: str
    text: str
    task_id: str | None = None
    """The background agent's call id, for a return; the sender's call for a message."""
    returned: bool = False
    """A background agent's return (its text says so itself)."""

    def for_model(self) -> str:
        if self.returned:
            return self.text
        if self.task_id is not None and self.sender != "user":
            return f"[message from {self.sender} (task {self.task_id})]\n{self.text}"
        return f"[message from {self.sender}]\n{self.text}"


class CallState(msgspec.Struct):
    """One agent call, as far as the log tells."""

    call_id: str
    agent: str
    caller: str
    depth: int
    parent_call_id: str | None = None
    tool_call_id: str | None = None
    """The caller's `call_agent` tool call this call answers."""
    state: RunState = RunState.CREATED
    messages: list[Message] = []
    text: str = ""
    """The text of the latest model turn."""
    pending: tuple[ToolCall, ...] = ()
    """Tool calls of the latest model turn, until their observations are recorded."""
    tool_call_ids: TakenIds = msgspec.field(default_factory=TakenIds)
    """Every tool call id the conversation holds and this call's model has used (a new
    turn's ids must differ)."""
    version: int = 0
    """The version of the history's conversation the call began with (`History.begin`)."""
    kept: int = 0
    """How many of that conversation's messages still begin `messages` unchanged: what a
    checkpoint of the conversation this call closes need not write again."""
    shared: int = 0
    """How many of the first messages belong to the history too: `messages` is the
    conversation's own list, which the call appends to (none: a list of its own). When the
    call ends the list is the history's conversation, and the next run's call appends to it:
    read what a finished call said through the history, not through its `messages`."""
    viewed: int = 0
    """How many of the first messages a model request holds (`view`): they do not change."""
    weights: Weights = msgspec.field(default_factory=Weights)
    """What the pre-flight check counts of `messages`, kept as they grow (`view`)."""
    results: dict[str, ToolResultMessage] = {}
    decisions: dict[str, bool] = {}
    started: set[str] = set()
    finish_message: str | None = None
    gate_retries: int = 0
    errors: int = 0
    """Consecutive all-failed tool steps (a failed model call ends the turn at once)."""
    last_error: str = ""
    """The message of the call's latest provider or internal error: why it failed, for its
    caller when it ends with no output."""
    last_tool: str | None = None
    repeats: int = 0
    """How many times in a row `last_tool` (a fingerprint) has started."""
    recent_steps: deque[str] = msgspec.field(default_factory=deque)
    stale: int = 0
    """Steps in a row that repeated a step within the no-progress window."""
    output: str = ""
    stop_reason: str | None = None
    pre_hooks: dict[str, ev.HookRan] = {}
    """What PreToolUse hooks said about each pending tool call (a resume does not ask again)."""
    prompt_hooked: bool = False
    """UserPromptSubmit hooks have run for this call's prompt."""
    stop_blocks: int = 0
    """Times Stop hooks sent the model back to work in this call."""
    hook_stop: str | None = None
    """A hook refused the prompt or said `continue: false`, with this reason: the call ends."""
    background: bool = False
    """A background agent: its caller did not wait for it (`agent_called.background`)."""
    with_history: bool = False
    """It began with its earlier exchange with the same caller (`agent_called.with_history`)."""
    inbox: list[Waiting] = []
    """Messages and background returns not yet read (delivered at the next step)."""
    received: list[Waiting] = []
    """Messages and background returns already read, oldest first (`get_messages`)."""
    live_background: set[str] = set()
    """Call ids of this call's background agents that have not returned."""

    def begin(self, beginning: Beginning, first: Message) -> None:
        """Begin with a conversation of the history (`History.begin`), then `first`."""
        self.messages = beginning.messages
        self.messages.append(first)
        self.version, self.kept = beginning.version, beginning.length
        self.shared = beginning.length if beginning.shared else 0
        self.tool_call_ids = beginning.taken
        self.weights = beginning.weights

    def rewrites(self, at: int) -> None:
        """The message at `at` (and any after it) is about to change: a message the history
        or a model request holds too is changed in a copy."""
        self.kept = min(self.kept, at)
        if at < max(self.shared, self.viewed):
            self.messages, self.shared, self.viewed = list(self.messages), 0, 0
            self.weights = self.weights.copy(at)  # the history's stay with its list
        else:
            self.weights.cut(at)

    def replaced(self, messages: list[Message]) -> None:
        """`messages` replace the call's whole (a compaction): a list of its own, whose
        weights are counted anew; the history's and a request's stay as they are."""
        self.messages, self.weights = messages, Weights()
        self.kept = self.shared = self.viewed = 0

    def view(
        self, *, images: bool = True, data_of: Callable[[str], str] | None = None
    ) -> MessagesView:
        """The messages as they are now, for a model request: a view, not a copy, weighed
        without a walk of the conversation (`Weights`); without `images`, for a model that
        takes none, each attachment a note in its place; with `data_of`, attachments held by
        reference get their data from it (`ResolvingView`)."""
        self.viewed = length = len(self.messages)
        chars, bare = self.weights.upto(self.messages, length)
        if images and data_of is not None:
            return ResolvingView(self.messages, length, chars, data_of)
        if images:
            return MessagesView(self.messages, length, chars)
        return ImagelessView(self.messages, length, bare)

    @property
    def running_tools(self) -> list[ToolCall]:
        """Tool calls that started and have no result (yet, or ever: after a crash)."""
        return [c for c in self.pending if c.id in self.started and c.id not in self.results]

    @property
    def closed_messages(self) -> list[Message]:
        """The messages, with an error result for every tool call that never got one (the
        messages themselves, not a copy, when none is missing: the call has ended)."""
        if not self.pending:
            return self.messages
        return [*self.messages, *self.pending_results()]

    def pending_results(self) -> list[ToolResultMessage]:
        """A result for each pending tool call: its own, or an error saying it never ran."""
        reason = self.stop_reason or "interrupted"
        return [
            self.results.get(c.id)
            or ToolResultMessage(
                tool_call_id=c.id, name=c.name, content=NOT_RUN.format(reason=reason), is_error=True
            )
            for c in self.pending
        ]

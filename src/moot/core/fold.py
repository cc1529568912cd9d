"""The model's context as a pure fold over the event log.

The live loop and resume share this code: the loop appends an event, then applies it here, and
reads its decisions from the result. Resume applies the stored events and arrives at exactly
the state the crashed process had. Nothing is pasted back in as text.

Some events mean more here than their names say:

- `state_changed` to `observation_recorded` is where a model turn's tool results join the
  conversation: every pending call's result (or, for a call that never ran, why not) is
  appended as tool-result messages in the order the model asked, and the step counts toward
  the no-progress and consecutive-error limits. Until then results wait in `CallState.results`,
  so a crash between two results resumes with the turn still open.
- `tool_pending` is a pass-through state: the loop moves through it to `approval_pending` at
  once. Entering it resets the gate's retry count, so each new set of tool calls gets the
  gate's full allowance; it is a state of its own so that a resume knows the model's calls
  were received and not yet decided.
- `hook_ran` changes the context: SessionStart and UserPromptSubmit context joins the
  person's prompt (a refused prompt is removed, never sent), PostToolUse context joins that
  tool's result, a Stop hook's feedback becomes a new user message, a PreToolUse hook's
  `updated_input` replaces the call's arguments (so a resume runs the same arguments), and
  `continue: false` ends the call (`hook_stop`).
- `context_compacted` replaces the call's older messages by a summary and blanks elided tool
  outputs (`core/compact.py::apply`); what it costs counts toward the run's totals.
- `approval_decided` with `approved=False` gives the call its result at once (the refusal and
  any feedback), so the model reads why; an approved call's result comes from the tool.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from msgspec.structs import replace

from moot.core.call_state import CallState, Waiting
from moot.core.history import History
from moot.core.limits import Limits, RunTotals
from moot.protocol import events as ev
from moot.protocol.approval import PLAN_MODE_NOTE
from moot.protocol.messages import (
    AssistantMessage,
    AttachedFile,
    Message,
    ToolResultMessage,
    UserMessage,
)
from moot.protocol.states import RunState

DENIED = "The user refused this tool call."
HOOK_DENIED = "A PreToolUse hook refused this tool call: {reason}"
INTERRUPTED = (
    "Interrupted: this tool call was stopped before it finished; its effects, if any, are "
    "unknown. Check them before running it again."
)


def fingerprint(value: object) -> str:
    """A stable digest of a JSON-able value (loop detection compares these)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def exchange(caller: str, callee: str) -> str:
    """The history key of what `callee` and `caller` said to each other when it was last called
    (kept beside each agent's conversation with the person, and with the session)."""
    return f"{caller}>{callee}"


def returned_text(agent: str, task_id: str, state: str, stop_reason: str, output: str) -> str:
    """What a caller reads when its background agent returns."""
    return f"[background agent {agent} (task {task_id}) {state}: {stop_reason}]\n{output}"


class RunFold:
    """The state of one run (one turn of the person) and all the calls in it."""

    def __init__(self, limits: Limits, history: Mapping[str, list[Message]]) -> None:
        """A run under `limits` that begins with the session's conversations: a `History`,
        which the run changes as its calls end, or any other mapping, which it copies."""
        self.limits = limits
        if not isinstance(history, History):  # a History lends its lists to calls
            history = History({key: list(messages) for key, messages in history.items()})
        self.history = history
        self.calls: dict[str, CallState] = {}
        self.children: dict[tuple[str, str], str] = {}
        """(caller call id, call_agent tool call id) -> the callee's call id."""
        self.totals = RunTotals()
        self.run_id = ""
        self.root_agent = ""
        self.turn_model = ""
        self.starting_agents: tuple[str, ...] = ()
        """The agents the person's own call hands the prompt to (`turn_started`)."""
        """The model the root call answers with in this run only (`turn_started.model`)."""
        self.started_at: datetime | None = None
        self.last_at: datetime | None = None
        self.finished: ev.TurnFinished | None = None
        self.prompt = ""
        self.prompt_at = 0
        """Where the person's prompt sits in the root call's messages."""

    def apply(self, e: ev.Event) -> None:
        self.last_at = e.ts
        handler = _HANDLERS.get(e.kind)
        if handler is not None:
            handler(self, e)

    def live_call(self, task: str) -> CallState | None:
        """The running call with this task id, or the latest running call of the agent of
        that name; None when neither runs. Never the person's own call (several starting
        agents): it has no model to read messages (`person_call`)."""
        call = self.calls.get(task)
        if call is not None:
            return None if call.state.terminal or self.person_call(task) else call
        for call in reversed(self.calls.values()):
            if (
                call.agent == task
                and not call.state.terminal
                and not self.person_call(call.call_id)
            ):
                return call
        return None

    def person_call(self, task: str) -> bool:
        """Whether `task` is the person's own call of a run with several starting agents (a
        message to it is a message to the person)."""
        call = self.calls.get(task)
        return call is not None and call.depth == 0 and bool(self.starting_agents)

    def running_tasks(self) -> list[str]:
        return [f"{c.agent} ({c.call_id})" for c in self.calls.values() if not c.state.terminal]

    # ---- creation and ending ---------------------------------------------------------------

    def _turn_started(self, e: ev.TurnStarted) -> None:
        self.run_id, self.root_agent, self.started_at = e.run_id, e.agent, e.ts
        self.turn_model = e.model
        self.starting_agents = e.starting_agents
        self.totals = RunTotals()
        call = CallState(call_id=e.call_id, agent=e.agent, caller="user", depth=0)
        text = _noted(_with_files(e.prompt, e.files), e.mode)
        prompt = UserMessage(content=text, attachments=e.attachments)
        # Ids must stay unique across the whole conversation the model sees, earlier runs too.
        call.begin(self.history.begin(e.agent), prompt)
        self.prompt, self.prompt_at = e.prompt, call.kept
        self.calls[e.call_id] = call

    def _agent_called(self, e: ev.AgentCalled) -> None:
        call = CallState(
            call_id=e.call_id,
            agent=e.agent,
            caller=e.caller,
            depth=e.depth,
            parent_call_id=e.parent_call_id,
            tool_call_id=e.tool_call_id,
            background=e.background,
        )
        key = exchange(e.caller, e.agent) if e.with_history else None
        call.begin(self.history.begin(key), UserMessage(content=_noted(e.message, e.mode)))
        call.with_history = e.with_history
        self.calls[e.call_id] = call
        if e.parent_call_id and e.tool_call_id:
            self.children[(e.parent_call_id, e.tool_call_id)] = e.call_id
        if e.background and e.parent_call_id in self.calls:
            self.calls[e.parent_call_id].live_background.add(e.call_id)

    def _terminal(self, e: ev.AgentReturned | ev.TurnFinished) -> None:
        call = self.calls[e.call_id]
        call.state, call.output, call.stop_reason = e.state, e.output, e.stop_reason
        parent = self.calls.get(call.parent_call_id or "")
        if call.background and parent is not None:
            parent.live_background.discard(call.call_id)
            text = returned_text(call.agent, call.call_id, e.state, e.stop_reason, e.output)
            parent.inbox.append(
                Waiting(sender=call.agent, text=text, task_id=call.call_id, returned=True)
            )
        if call.with_history:
            self._close(exchange(call.caller, call.agent), call)
        if isinstance(e, ev.TurnFinished):
            self.finished = e
            self._close(call.agent, call)

    def _close(self, key: str, call: CallState) -> None:
        """The conversation `key` of the history is now what `call` closed with."""
        self.history.replace(
            key, call.closed_messages, version=call.version, kept=call.kept, weights=call.weights
        )

    # ---- the state machine -----------------------------------------------------------------

    def _state_changed(self, e: ev.StateChanged) -> None:
        call = self.calls[e.call_id]
        call.state = e.to_state
        if e.to_state is RunState.OBSERVATION_RECORDED:
            self._record_observations(call)
        elif e.to_state is RunState.TOOL_PENDING:
            call.gate_retries = 0

    def _record_observations(self, call: CallState) -> None:
        results = call.pending_results()  # not closed_messages: no copy of the whole context
        call.messages.extend(results)
        step = [
            (c.name, c.arguments, r.content, r.is_error)
            for c, r in zip(call.pending, results, strict=True)
        ]
        self._step(call, fingerprint(step))
        failed = all(r.is_error for r in results)
        call.errors = call.errors + 1 if failed else 0
        call.pending, call.results, call.decisions, call.started = (), {}, {}, set()
        call.pre_hooks = {}

    def _step(self, call: CallState, digest: str) -> None:
        window = self.limits.no_progress_window or 0
        call.stale = call.stale + 1 if digest in call.recent_steps else 0
        call.recent_steps.append(digest)
        while len(call.recent_steps) > window:
            call.recent_steps.popleft()

    # ---- the model -------------------------------------------------------------------------

    def _model_responded(self, e: ev.ModelResponded) -> None:
        call = self.calls[e.call_id]
        if e.agent != "user":  # the person's own hand-over to starting agents is no model turn
            self.totals.turns += 1
        call.text, call.pending = e.text, e.tool_calls
        call.tool_call_ids.update(c.id for c in e.tool_calls)
        call.messages.append(
            AssistantMessage(content=e.text, thinking=e.thinking, tool_calls=e.tool_calls)
        )
        if not e.text and not e.tool_calls:
            self._step(call, "empty turn")

    def _usage(self, e: ev.UsageRecorded) -> None:
        self.totals.usage = self.totals.usage + e.usage
        self.totals.cost_usd += e.cost_usd

    def _compacted(self, e: ev.ContextCompacted) -> None:
        from moot.core.compact import apply  # lazy: only compacted runs need it

        call = self.calls[e.call_id]
        call.replaced(apply(call.messages, e))
        if e.call_id == self.run_id and e.replaced:
            # The prompt moved (or went into the summary: hooks no longer find it).
            gone = e.replaced > self.prompt_at
            self.prompt_at = len(call.messages) + 1 if gone else self.prompt_at - e.replaced + 1
        self.totals.usage = self.totals.usage + e.usage
        self.totals.cost_usd += e.cost_usd

    def _error(self, e: ev.Error) -> None:
        call = self.calls.get(e.call_id)
        if call is not None and e.source in ("provider", "internal"):
            call.last_error = e.message

    def _gate_decided(self, e: ev.GateDecided) -> None:
        call = self.calls[e.call_id]
        if e.action == "replace":
            call.rewrites(len(call.messages) - 1)
            last = call.messages[-1]
            assert isinstance(last, AssistantMessage)
            call.messages[-1] = replace(last, content=e.text, tool_calls=e.tool_calls)
            call.text, call.pending = e.text, e.tool_calls
            call.tool_call_ids.update(c.id for c in e.tool_calls)
        elif e.action == "retry":
            call.rewrites(len(call.messages) - 1)
            call.gate_retries += 1
            call.messages.pop()
            call.messages.append(UserMessage(content=e.text))
            call.text, call.pending = "", ()

    # ---- messages between peers --------------------------------------------------------------

    def _message_sent(self, e: ev.MessageSent) -> None:
        receiver = self.calls.get(e.to_call_id or "")
        if receiver is not None and not receiver.state.terminal:
            sender_call = None if e.sender == "user" else e.call_id
            receiver.inbox.append(Waiting(sender=e.sender, text=e.text, task_id=sender_call))

    def _messages_delivered(self, e: ev.MessagesDelivered) -> None:
        call = self.calls[e.call_id]
        read, call.inbox = call.inbox[: e.count], call.inbox[e.count :]
        call.received.extend(read)
        call.messages.append(UserMessage(content="\n\n".join(w.for_model() for w in read)))
        # An answer given before these arrived is no longer the last word: the model goes on.
        call.text, call.finish_message = "", None

    # ---- tools -----------------------------------------------------------------------------

    def _approval_decided(self, e: ev.ApprovalDecided) -> None:
        call = self.calls[e.call_id]
        call.decisions[e.tool_call_id] = e.approved
        if e.approved and e.updated_input is not None:  # a resume runs the same arguments
            call.pending = tuple(
                replace(c, arguments=e.updated_input, arguments_error=None, raw_arguments=None)
                if c.id == e.tool_call_id
                else c
                for c in call.pending
            )
        if not e.approved:
            name = next((c.name for c in call.pending if c.id == e.tool_call_id), "")
            text = DENIED + (f" Their feedback: {e.feedback}" if e.feedback else "")
            if e.by == "hook":
                text = HOOK_DENIED.format(reason=e.feedback)
            call.results[e.tool_call_id] = ToolResultMessage(
                tool_call_id=e.tool_call_id, name=name, content=text, is_error=True
            )

    # ---- hooks -----------------------------------------------------------------------------

    def _hook_ran(self, e: ev.HookRan) -> None:
        call = self.calls[e.call_id]
        if e.stop and e.hook_event in _STOPPING_HOOKS:
            call.hook_stop = e.stop_reason or f"a {e.hook_event} hook stopped the run"
        elif e.hook_event == "UserPromptSubmit" and e.decision == "block":
            call.hook_stop = e.reason or "a UserPromptSubmit hook refused the prompt"
        match e.hook_event:
            case "SessionStart" | "UserPromptSubmit":
                call.prompt_hooked |= e.hook_event == "UserPromptSubmit"
                call.rewrites(self.prompt_at)
                if e.decision == "block" and self.prompt_at < len(call.messages):
                    del call.messages[self.prompt_at]  # a refused prompt never reaches the model
                elif e.context and self.prompt_at < len(call.messages):
                    prompt = call.messages[self.prompt_at]
                    assert isinstance(prompt, UserMessage)
                    text = f"{prompt.content}\n\n{e.context}"
                    call.messages[self.prompt_at] = replace(prompt, content=text)
            case "PreToolUse" if e.tool_call_id:
                call.pre_hooks[e.tool_call_id] = e
                if e.updated_input is not None and e.decision not in ("deny", "block"):
                    call.pending = tuple(
                        replace(
                            c, arguments=e.updated_input, arguments_error=None, raw_arguments=None
                        )
                        if c.id == e.tool_call_id
                        else c
                        for c in call.pending
                    )
            case "PostToolUse" if e.tool_call_id in call.results and e.context:
                result = call.results[e.tool_call_id]
                text = f"{result.content}\n\n{e.context}"
                call.results[e.tool_call_id] = replace(result, content=text)
            case "Stop" if e.decision == "block":
                call.stop_blocks += 1
                call.messages.append(UserMessage(content=e.context))
                # The answer is no longer final: a resume goes back to the model, not to Stop.
                call.text, call.finish_message = "", None

    def _tool_started(self, e: ev.ToolStarted) -> None:
        call = self.calls[e.call_id]
        call.started.add(e.tool_call_id)
        digest = fingerprint((e.tool, e.arguments))
        call.repeats = call.repeats + 1 if digest == call.last_tool else 1
        call.last_tool = digest
        if e.tool == "finish" and isinstance(e.arguments.get("message"), str):
            call.finish_message = e.arguments["message"]

    def _tool_finished(self, e: ev.ToolFinished) -> None:
        call = self.calls[e.call_id]
        call.results[e.tool_call_id] = ToolResultMessage(
            tool_call_id=e.tool_call_id,
            name=e.tool,
            content=e.content,
            is_error=e.is_error,
            attachments=e.attachments,
        )
        if e.tool == "get_messages" and not e.is_error and call.inbox:
            # Its result lists the inbox (the loop builds it and records this with no await
            # between, so no message can slip in): read now, not delivered again next step.
            call.received.extend(call.inbox)
            call.inbox = []


_HANDLERS: dict[str, Callable[[RunFold, Any], None]] = {
    "turn_started": RunFold._turn_started,
    "agent_called": RunFold._agent_called,
    "agent_returned": RunFold._terminal,
    "turn_finished": RunFold._terminal,
    "state_changed": RunFold._state_changed,
    "model_responded": RunFold._model_responded,
    "usage": RunFold._usage,
    "error": RunFold._error,
    "gate_decided": RunFold._gate_decided,
    "approval_decided": RunFold._approval_decided,
    "tool_started": RunFold._tool_started,
    "tool_finished": RunFold._tool_finished,
    "hook_ran": RunFold._hook_ran,
    "context_compacted": RunFold._compacted,
    "message_sent": RunFold._message_sent,
    "messages_delivered": RunFold._messages_delivered,
}
_STOPPING_HOOKS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})
"""Events whose hooks may end the run with `continue: false` (a Stop hook's run ends anyway)."""


def _noted(text: str, mode: str | None) -> str:
    """What the model reads of a message that begins a call: in plan mode, with the note."""
    return f"{text}\n\n{PLAN_MODE_NOTE}" if mode == "plan" else text


def _with_files(prompt: str, files: tuple[AttachedFile, ...]) -> str:
    """The prompt with the files it names (`@path`) after it, as the model reads them."""
    if not files:
        return prompt
    return "\n\n".join([prompt, *(f.for_model() for f in files)])

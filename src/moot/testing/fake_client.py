"""`FakeClient`: the client surface over a script of events, recording the ops it receives.

A front end under test holds a `FakeClient` as it would a real session. With `autoplay` (the
default) the fake answers ops as a session would, from its script: a `UserTurn` (or a
`RunCommand`, an `Approve`/`Deny`, or `ResumeRun`) plays the script up to and including the next
`approval_requested` or `turn_finished`, unless a turn is open (then, as a session does, it is
answered by `op_refused`); an `Interrupt` while a turn is open ends it cancelled, and without one
is answered by `op_refused`;
`SetMode` plays a `mode_changed`; `SetModel` a `model_changed` (each an `op_refused` when
nothing would change, and `SetModel` for a model not in `models`, when given); `RunTool` a
`tool_ran` with the tool's canned result from `tool_results` (or an `op_refused` for a tool
without one); `NoteToMemory` a `memory_noted`; `RestoreFiles` a `files_restored` (nothing is
put back); the MCP ops an `op_refused` (the fake has no MCP servers).
Without `autoplay`, the test plays events itself with `play` or `emit`. Every op is kept in
`ops`, so a test can assert exactly what the front end sent. It is a `SessionAdmin` too:
`fork` and `save_key` are recorded (`forks`, `keys`), and change nothing.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import (
    AgentStatus,
    ContextPart,
    ContextReport,
    CostLine,
    ModelChoice,
    PermissionsReport,
    SandboxStatus,
    SessionStatus,
    SessionSummary,
    WorkspaceFiles,
)
from moot.protocol.messages import Usage
from moot.protocol.states import RunState, StopReason
from moot.protocol.subscription import Subscription

_PAUSE_AFTER = frozenset({"approval_requested", "turn_finished"})

ToolOutcome = str | tuple[str, bool] | Mapping[str, Any]
"""A canned result: its content, (content, is_error), or the `tool_ran` fields (`content`,
`is_error`, `display`)."""
CannedTool = ToolOutcome | Callable[[dict[str, Any]], ToolOutcome]
"""What a tool answers `RunTool`: a fixed result, or one made from the arguments."""


def events_from_export(source: str | Path | dict[str, Any]) -> list[ev.Event]:
    """The events of a session exported with `moot sessions export ID --format json` (a path,
    the JSON text, or the parsed object)."""
    if isinstance(source, Path) or (
        isinstance(source, str) and not source.lstrip().startswith("{")
    ):
        source = Path(source).read_text(encoding="utf-8")
    data = json.loads(source) if isinstance(source, str) else source
    return [ev.event_from_dict(item) for item in data["events"]]


class FakeClient:
    """A `Client` that plays scripted events and records the ops it is sent.

    Args:
        script: Events to play, in order (their `seq`, `session_id` and `submission_id` are
            filled in as they are played).
        session_id: The session this fake stands for.
        status: What `status()` answers; a plausible default when None.
        sessions: Other sessions the queries list (besides this one).
        autoplay: Answer ops from the script as a session would (see the module docstring).
        files: What `files()` lists.
        tool_results: What `RunTool` of each tool answers (see `CannedTool`).
        models: What `models()` lists; when given, `SetModel` refuses other names.
        context: What `context()` answers; a small plausible report when None.
        permissions: What `permissions()` answers; no rules when None.
    """

    def __init__(
        self,
        script: Iterable[ev.Event] = (),
        *,
        session_id: str = "ses_fake",
        status: SessionStatus | None = None,
        sessions: Iterable[SessionSummary] = (),
        autoplay: bool = True,
        files: Iterable[str] = (),
        tool_results: Mapping[str, CannedTool] | None = None,
        models: Iterable[ModelChoice] = (),
        context: ContextReport | None = None,
        permissions: PermissionsReport | None = None,
    ) -> None:
        self._session_id = session_id
        self.script: deque[ev.Event] = deque(script)
        self.log: list[ev.Event] = []
        """Every event played so far, with its seq: what the store of a real session holds."""
        self.ops: list[ops.Op] = []
        """Every op submitted, in order."""
        self.restores: list[str] = []
        """The runs `RestoreFiles` named, in order."""
        self.forks: list[int | None] = []
        """What `fork` was asked, in order."""
        self.keys: list[str] = []
        """The providers `save_key` was given a key for, in order (the keys are not kept)."""
        self.autoplay = autoplay
        self.closed = False
        self._status = status or SessionStatus(
            session_id=session_id,
            workspace="/workspace",
            mode="default",
            model="scripted:fake",
            agents=(AgentStatus("moot", "coding agent", "scripted:fake"),),
            tools=("read", "edit", "bash"),
            sandbox=SandboxStatus("bubblewrap", "bwrap works here"),
            open_run=None,
            running=False,
        )
        self._others = list(sessions)
        self._files = list(files)
        self.tool_results: dict[str, CannedTool] = dict(tool_results or {})
        self._models = list(models)
        self._context = context
        self._permissions = permissions
        self._subscribers: list[Subscription] = []
        self._submissions = 0
        self._submission = ""
        self._open_run: ev.TurnStarted | None = None
        self.query = _FakeQueries(self)

    @classmethod
    def from_export(cls, source: str | Path | dict[str, Any], **options: Any) -> FakeClient:
        """A fake that plays a session exported with `moot sessions export --format json`."""
        return cls(events_from_export(source), **options)

    # ---- the client surface -----------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self._session_id

    def submit(self, op: ops.Op) -> str:
        op = ops.checked(op)
        self.ops.append(op)
        self._submissions += 1
        submission = f"sub_{self._submissions}"
        if self.autoplay:
            self._answer(op, submission)
        return submission

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        replay = () if after_seq is None else [e for e in self.log if e.seq > after_seq]
        subscription = Subscription(replay, on_close=self._unsubscribe)
        self._subscribers.append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        # Closing the client ends (and forgets) every subscription first; a subscriber that
        # closes its own afterwards finds it gone already.
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)

    def status(self) -> SessionStatus:
        mode, model = self._status.mode, self._status.model
        for event in self.log:
            if isinstance(event, ev.ModeChanged):
                mode = event.mode
            elif isinstance(event, ev.ModelChanged):
                model = event.model
        open_run = self._open_run.run_id if self._open_run else None
        person = tuple(t for t in self.tool_results if t not in self._status.tools)
        return replace(
            self._status,
            mode=mode,
            model=model,
            open_run=open_run,
            running=open_run is not None,
            person_tools=self._status.person_tools or person,
        )

    def files(self) -> WorkspaceFiles:
        return WorkspaceFiles(tuple(self._files))

    def context(self, agent: str | None = None) -> ContextReport:
        if self._context is not None:
            return self._context
        status = self.status()
        parts = (
            ContextPart("system prompt", 120, "instructions and the peers"),
            ContextPart("memory", 0, "none"),
            ContextPart("tools", 900, f"{len(status.tools)} tool schemas"),
            ContextPart("messages", 40 * len(self.log), f"{len(self.log)} events"),
        )
        return ContextReport(agent or "moot", status.model, parts, status.context_window)

    def permissions(self) -> PermissionsReport:
        if self._permissions is not None:
            return self._permissions
        local = f"{self.status().workspace}/.moot/settings.local.json"
        return PermissionsReport(mode=self.status().mode, rules=(), local_file=local)

    def models(self) -> list[ModelChoice]:
        return list(self._models)

    # ---- `SessionAdmin` ------------------------------------------------------------------------

    def fork(self, at: int | None = None) -> str:
        """Records the fork (`forks`); the id of a session this fake does not hold."""
        self.forks.append(at)
        return f"{self._session_id}_fork{len(self.forks)}"

    async def save_key(self, provider: str, key: str) -> str:
        """Records the provider (`keys`); saves nothing."""
        self.keys.append(provider)
        return f"saved the {provider} key (a fake: nothing was written)"

    async def close(self) -> None:
        self.closed = True
        for subscription in list(self._subscribers):
            subscription.end()
        self._subscribers.clear()

    # ---- playing ------------------------------------------------------------------------------

    def play(
        self, count: int | None = None, *, until: str | Collection[str] = ()
    ) -> list[ev.Event]:
        """Play events from the script: `count` of them, or up to and including the first of a
        kind in `until`, or (neither given) all that are left."""
        kinds = {until} if isinstance(until, str) else set(until)
        played: list[ev.Event] = []
        while self.script and (count is None or len(played) < count):
            event = self.emit(self.script.popleft())[0]
            played.append(event)
            if event.kind in kinds:
                break
        return played

    def emit(self, *events: ev.Event) -> list[ev.Event]:
        """Publish `events` now, as a session would: each gets the next seq and this session."""
        published = []
        for event in events:
            event = replace(
                event,
                seq=len(self.log) + 1,
                session_id=self._session_id,
                submission_id=event.submission_id or self._submission,
            )
            self.log.append(event)
            if isinstance(event, ev.TurnStarted):
                self._open_run = event
            elif isinstance(event, ev.TurnFinished):
                self._open_run = None
            for subscription in self._subscribers:
                subscription.put(event)
            published.append(event)
        return published

    def _answer(self, op: ops.Op, submission: str) -> None:
        self._submission = submission
        match op:
            case ops.UserTurn() | ops.RunCommand() if self._open_run is not None:
                reason = "a turn is running: wait for it to end, or interrupt it"
                self.emit(ev.OpRefused(op=op.kind, reason=reason))
            case ops.Interrupt() if self._open_run is None:
                self.emit(ev.OpRefused(op=op.kind, reason="nothing is running to interrupt"))
            case ops.UserTurn() | ops.RunCommand() | ops.ResumeRun() | ops.Approve() | ops.Deny():
                self.play(until=_PAUSE_AFTER)
            case ops.NoteToMemory(text=text):
                self.emit(ev.MemoryNoted(path=f"{self._status.workspace}/AGENTS.md", note=text))
            case ops.Interrupt() if self._open_run is not None:
                self._cancel(self._open_run)
            case ops.SetMode(mode=mode) if mode == self.status().mode:
                self.emit(ev.OpRefused(op=op.kind, reason=f"the session is in {mode} mode already"))
            case ops.SetMode(mode=mode):
                previous = self.status().mode or "default"
                self.emit(ev.ModeChanged(mode=mode, previous=previous))  # type: ignore[arg-type]
            case ops.SetModel(model=model) if model == self.status().model:
                self.emit(ev.OpRefused(op=op.kind, reason=f"moot answers with {model} already"))
            case ops.SetModel(model=model):
                names = [m.name for m in self._models]
                if names and model not in names:
                    reason = f"unknown model {model!r}; models: {', '.join(names)}"
                    self.emit(ev.OpRefused(op=op.kind, reason=reason))
                else:
                    previous = self.status().model
                    self.emit(ev.ModelChanged(agent="moot", model=model, previous=previous))
            case ops.RunTool(tool=tool, arguments=arguments):
                self._run_tool(tool, arguments)
            case ops.Rename(title=title):
                self.emit(ev.SessionRenamed(title=title))
            case ops.RestoreFiles(run_id=run_id):
                self.restores.append(run_id)
                self.emit(ev.FilesRestored(before_run=run_id, restored=("greet.py",)))
            case ops.ApproveMcpServer() | ops.RestartMcpServer():
                self.emit(ev.OpRefused(op=op.kind, reason="this session has no MCP servers"))
            case ops.SendMessage(to=to, text=text):
                self._message(to, text)
            case ops.Shutdown():
                for subscription in list(self._subscribers):
                    subscription.end()
                self._subscribers.clear()

    def _message(self, to: str, text: str) -> None:
        """The person's message reaches the open run's agent (by its name or call id), as a
        session's would; with no run open, or another name, it is refused."""
        run = self._open_run
        if run is None or to not in (run.agent, run.call_id):
            self.emit(ev.OpRefused(op="send_message", reason=f"no running agent {to!r}"))
            return
        self.emit(
            ev.MessageSent(
                run_id=run.run_id,
                agent=run.agent,
                call_id=run.call_id,
                sender="user",
                to_call_id=run.call_id,
                to_agent=run.agent,
                text=text,
            )
        )

    def _run_tool(self, tool: str, arguments: dict[str, Any]) -> None:
        canned = self.tool_results.get(tool)
        if canned is None:
            every = ", ".join(sorted(self.tool_results))
            self.emit(ev.OpRefused(op="run_tool", reason=f"no tool {tool!r}; tools: {every}"))
            return
        outcome = canned(arguments) if callable(canned) else canned
        if isinstance(outcome, str):
            outcome = {"content": outcome}
        elif isinstance(outcome, tuple):
            outcome = {"content": outcome[0], "is_error": outcome[1]}
        self.emit(ev.ToolRan(tool=tool, arguments=arguments, **outcome))

    def _cancel(self, run: ev.TurnStarted) -> None:
        """End the open turn as an interrupt would; the script's rest of that turn is skipped."""
        while self.script and not isinstance(self.script[0], ev.TurnStarted):
            self.script.popleft()
        self.emit(
            ev.TurnFinished(
                run_id=run.run_id,
                agent=run.agent,
                call_id=run.call_id,
                state=RunState.CANCELLED,
                stop_reason=StopReason.USER_CANCELLED,
                output="",
                turns=0,
                usage=Usage(),
                cost_usd=0.0,
                duration_ms=0.0,
            )
        )


class _FakeQueries:
    """The fake's `Queries`: this session (from what was played) and the given others."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def _own(self) -> SessionSummary:
        log = self._client.log
        started = [e for e in log if isinstance(e, ev.TurnStarted)]
        finished = [e for e in log if isinstance(e, ev.TurnFinished)]
        when = log[-1].ts if log else datetime.fromtimestamp(0).astimezone()
        state = "running" if self._client._open_run else (finished[-1].state if finished else None)
        return SessionSummary(
            id=self._client.session_id,
            title=started[0].prompt[:80] if started else "",
            workspace=self._client.status().workspace,
            created_at=log[0].ts if log else when,
            updated_at=when,
            turns=len(started),
            cost_usd=sum(e.cost_usd for e in finished),
            state=str(state) if state else None,
            event_count=len(log),
            tokens=sum(e.usage.input_tokens + e.usage.output_tokens for e in finished),
        )

    def sessions(self, *, workspace: str | None = None, limit: int = 50) -> list[SessionSummary]:
        every = [self._own(), *self._client._others]
        every.sort(key=lambda s: s.updated_at, reverse=True)
        return [s for s in every if workspace is None or s.workspace == workspace][:limit]

    def session(self, session_id: str) -> SessionSummary | None:
        return next((s for s in self.sessions(limit=10**9) if s.id == session_id), None)

    def events(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        before_seq: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
        run_id: str | None = None,
    ) -> list[ev.Event]:
        if session_id != self._client.session_id:
            raise KeyError(f"no session {session_id!r}")
        chosen = [
            e
            for e in self._client.log
            if e.seq > after_seq
            and (before_seq is None or e.seq < before_seq)
            and (kinds is None or e.kind in kinds)
            and (run_id is None or e.run_id == run_id)
        ]
        return chosen if limit is None else chosen[max(len(chosen) - limit, 0) :]

    def costs(
        self,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        workspace: str | None = None,
    ) -> list[CostLine]:
        """This session's usage, priced as the fake's models reported it (no catalog)."""
        if session_id not in (None, self._client.session_id):
            raise KeyError(f"no session {session_id!r}")
        lines: dict[str, CostLine] = {}
        for e in self._client.log:
            if not isinstance(e, ev.UsageRecorded) or (since is not None and e.ts < since):
                continue
            was = lines.get(e.model) or CostLine(self._client.session_id, e.model, 0, cost_usd=0.0)
            lines[e.model] = CostLine(
                session_id=was.session_id,
                model=e.model,
                calls=was.calls + 1,
                input_tokens=was.input_tokens + e.usage.input_tokens,
                output_tokens=was.output_tokens + e.usage.output_tokens,
                cache_read_tokens=was.cache_read_tokens + e.usage.cache_read_tokens,
                cache_write_tokens=was.cache_write_tokens + e.usage.cache_write_tokens,
                cost_usd=(was.cost_usd or 0.0) + e.cost_usd,
            )
        return [lines[m] for m in sorted(lines)]

    def export(self, session_id: str, kind: str = "md") -> str:
        """This session as a transcript (the fake knows no keys to blank)."""
        from moot.frontend.transcript import render  # json and msgspec's encoders: only an export

        summary = self.session(session_id)
        if summary is None:
            raise KeyError(f"no session {session_id!r}")
        return render(kind, summary, self.events(session_id))

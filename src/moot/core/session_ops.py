"""The answers to the ops that change a session outside its runs (`SetMode`, `SetModel`,
`Rename`, `RestoreFiles`, `ApproveMcpServer`, `RestartMcpServer`), the turn a `RunCommand`
starts, and whether a turn or a `Compact` may start.

Each is a function of the session as it is now that returns the event answering the op (the
change, or `op_refused` saying why not) without recording it: `Runtime.submit` records it
(`record_session`), which is the one way the session changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from moot.core.agent import Agent
from moot.core.options import (
    CommandTurn,
    McpServers,
    NetworkQuestions,
    SessionCommands,
    Snapshots,
)
from moot.core.session import SessionState
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.modes import ModeName
from moot.protocol.titles import TITLE_LENGTH
from moot.providers.base import Provider
from moot.providers.registry import UnknownModel
from moot.store.base import Store


def turn_refusal(
    op: ops.UserTurn,
    *,
    busy: str,
    session: SessionState,
    agents: Mapping[str, Agent],
    entry: Agent,
    unusable_model: Callable[[str], str],
) -> str:
    """Why `op` cannot start a turn now ("" when it can): one runs (`busy` comes first, as for
    any turn), its model cannot be used, it names an agent the session lacks, or the log
    holds a turn a crash left open."""
    if busy:
        return busy
    if op.model is not None and (why := unusable_model(op.model)):
        return why
    if unknown := [a for a in (*op.agents, op.agent or entry.name) if a not in agents]:
        return f"no agent {unknown[0]!r} in this run; agents: {', '.join(agents)}"
    if session.open_run is not None:
        # A new run cannot start while the log holds one a crash left open (the store
        # refuses its turn_started): the front end resumes that one first.
        return (
            "the last turn was interrupted (moot ended in the middle of it): resume it "
            "first (resume_run), then send this"
        )
    return ""


def op_refused(op: ops.Op, reason: str, submission: str) -> ev.OpRefused:
    """The `op_refused` that answers `op`, saying why."""
    return ev.OpRefused(op=op.kind, reason=reason, submission_id=submission)


def unusable_model(resolve: Callable[[str], Provider], model: str) -> str:
    """Why `model` cannot answer a turn ("" when it can): a bad name, a missing key."""
    try:
        resolve(model)
    except UnknownModel as exc:
        return str(exc)
    return ""


def set_mode(
    session: SessionState, mode: ModeName, *, has_modes: bool, submission: str
) -> ev.Event:
    """`SetMode`: `mode_changed`; refused in a session without modes, or in that mode already
    (nothing would change)."""
    previous = session.mode
    if not has_modes or previous is None:
        return ev.OpRefused(
            op="set_mode",
            reason="this session has no permission modes (no permission rules)",
            submission_id=submission,
        )
    if mode == previous:
        reason = f"the session is in {mode} mode already"
        return ev.OpRefused(op="set_mode", reason=reason, submission_id=submission)
    return ev.ModeChanged(mode=mode, previous=previous, submission_id=submission)


def set_model(
    agent: Agent | None,
    model: str,
    *,
    agents: Mapping[str, Agent],
    name: str | None,
    running: bool,
    resolve: Callable[[str], Provider],
    submission: str,
) -> ev.Event:
    """`SetModel`: `model_changed` for `agent` (None: the op named no agent of the session);
    refused while a turn runs, for a model that cannot be used, or one the agent has already
    (nothing would change)."""

    def refused(reason: str) -> ev.Event:
        return ev.OpRefused(op="set_model", reason=reason, submission_id=submission)

    model = model.strip()
    if agent is None:
        return refused(f"no agent {name!r}; agents: {', '.join(agents)}")
    if running:
        return refused("a turn is running: switch the model when it has ended (or interrupt it)")
    previous = agent.model if isinstance(agent.model, str) else agent.model.name
    if model == previous:
        return refused(f"{agent.name} answers with {model} already")
    try:
        # Resolved only to check it (a bad name, a missing key); the turn that needs the
        # provider makes it, so that a scripted one is moved past turns already played.
        resolve(model)
    except UnknownModel as exc:
        return refused(str(exc))
    return ev.ModelChanged(
        agent=agent.name, model=model, previous=previous, submission_id=submission
    )


def rename(title: str, *, previous: str, submission: str) -> ev.Event:
    """`Rename`: `session_renamed` with the title tidied (one line, `TITLE_LENGTH` at most);
    refused when it has no word."""
    title = " ".join(title.split())[:TITLE_LENGTH]
    if not title:
        reason = "a title needs a word: /rename TITLE"
        return ev.OpRefused(op="rename", reason=reason, submission_id=submission)
    return ev.SessionRenamed(title=title, previous=previous, submission_id=submission)


def compact_refusal(
    session: SessionState,
    agent: Agent | None,
    *,
    agents: Mapping[str, Agent],
    name: str | None,
    running: bool,
) -> str:
    """Why a `Compact` of `agent`'s conversation cannot start ("" when it can): no such agent,
    a turn runs or is unfinished, or there is nothing to compact yet."""
    if agent is None:
        return f"no agent {name!r}; agents: {', '.join(agents)}"
    if running or session.open_run is not None:
        return "a turn is running or unfinished: compact when it has ended"
    if not session.history.get(agent.name):
        return "nothing to compact yet"
    return ""


def command_turn(
    op: ops.RunCommand,
    commands: SessionCommands | None,
    *,
    turn_refusal: Callable[[ops.UserTurn], str],
    unusable_model: Callable[[str], str],
) -> tuple[ops.UserTurn, CommandTurn] | str:
    """`RunCommand`: the turn it starts and what it expands to; or why it cannot start: the
    session reads no commands or has no such one, or the turn cannot start now (as a
    `UserTurn`: busy, a model that cannot be used, which the reason names as the command's).
    """
    if commands is None:
        return "this session reads no skills, commands or memory from files"
    expansion = commands.expand(op)
    if isinstance(expansion, str):
        return expansion
    turn = ops.UserTurn(text=expansion.prompt, agent=op.agent, model=expansion.model or None)
    if why := turn_refusal(turn):
        if expansion.model and why == unusable_model(expansion.model):
            why = f"/{op.name} names model {expansion.model!r}: {why}"
        return why
    return turn, expansion


def note_to_memory(
    op: ops.NoteToMemory,
    commands: SessionCommands | None,
    agents: Iterable[Agent],
    submission: str,
) -> tuple[ev.Event, Sequence[Agent]]:
    """`NoteToMemory`: `memory_noted`, and `agents` with their instructions rendered again
    around the new memory; or `op_refused` (the session reads no memory from files, or the
    note could not be written) and no agent."""
    if commands is None:
        reason = "this session reads no skills, commands or memory from files"
        return op_refused(op, reason, submission), ()
    noted = commands.note(op.text, list(agents))
    if isinstance(noted, str):
        return op_refused(op, noted, submission), ()
    event = ev.MemoryNoted(path=noted.path, note=noted.note, submission_id=submission)
    return event, noted.agents


def restore_files(
    op: ops.RestoreFiles,
    snapshots: Snapshots | None,
    *,
    store: Store,
    running: bool,
    session_id: str,
    submission: str,
) -> ev.Event:
    """`RestoreFiles`: `files_restored`, undoing run `op.run_id` and every later run of the
    session, newest first; refused while a turn runs, for a run the session lacks, or where
    no snapshots are kept."""
    runs = [e.run_id for e in store.events(session_id, kinds=("turn_started",))]
    if snapshots is None:
        return op_refused(op, "this session keeps no snapshots of its files", submission)
    if running:
        return op_refused(op, "a turn is running: interrupt it first", submission)
    if op.run_id not in runs:
        return op_refused(op, f"no turn {op.run_id!r} in session {session_id}", submission)
    undone = list(reversed(runs[list(runs).index(op.run_id) :]))
    restored, failures = snapshots.restore_runs(undone)
    return ev.FilesRestored(
        before_run=op.run_id, restored=restored, failures=failures, submission_id=submission
    )


def mcp_server_op(
    op: ops.ApproveMcpServer | ops.RestartMcpServer | ops.AnswerMcpQuestion,
    servers: McpServers | None,
    submission: str,
) -> ev.Event:
    """`ApproveMcpServer`, `RestartMcpServer`, `AnswerMcpQuestion`: `mcp_server_approved`,
    `mcp_server_restarted` or `mcp_question_answered`; refused for a server (a question) the
    session lacks or one the op cannot apply to (the reason says why), or where the session
    has no MCP servers."""
    if servers is None:
        return op_refused(op, "this session has no MCP servers", submission)
    if isinstance(op, ops.AnswerMcpQuestion):
        try:
            server = servers.questions.answer(op.ask_id, op.action, op.content)
        except KeyError:
            return op_refused(op, f"no MCP server's question {op.ask_id!r} waits", submission)
        return ev.McpQuestionAnswered(
            ask_id=op.ask_id, server=server, action=op.action, submission_id=submission
        )
    try:
        if isinstance(op, ops.ApproveMcpServer):
            note = servers.approve(op.name)
            return ev.McpServerApproved(server=op.name, note=note, submission_id=submission)
        note = servers.restart(op.name)
        return ev.McpServerRestarted(server=op.name, note=note, submission_id=submission)
    except KeyError:
        return op_refused(op, f"no MCP server {op.name!r} in this session", submission)
    except ValueError as exc:
        return op_refused(op, str(exc), submission)


def network_answer(
    op: ops.AnswerNetworkAccess, questions: NetworkQuestions | None, submission: str
) -> ev.Event:
    """`AnswerNetworkAccess`: `network_access_decided`; refused when no such question waits."""
    if questions is None:
        return op_refused(op, "this session asks nothing about the network", submission)
    try:
        host, note = questions.answer(op.request_id, op.approved, op.scope)
    except KeyError:
        return op_refused(op, f"no network question {op.request_id!r} waits", submission)
    return ev.NetworkAccessDecided(
        request_id=op.request_id,
        host=host,
        approved=op.approved,
        scope=op.scope,
        note=note,
        submission_id=submission,
    )

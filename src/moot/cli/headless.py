"""Headless runs (`moot -p`): one turn, its output on stdout, an exit code for scripts.

Exit codes: 0 completed; 1 stopped or failed; 2 usage error; 3 completed, but tool calls were
refused (nobody can approve here: each refusal is on stderr with what would allow it, and in
the JSON result's `permission_denials`); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any, TextIO

import msgspec

from moot.cli.claude_stream.flags import (
    EFFORTS,
    FlagError,
    session_choices,
    tool_names,
    unknown_tools,
)
from moot.cli.claude_stream.output import TurnOutput
from moot.client.errors import SessionBusy, SetupError, StoreError
from moot.client.local import LocalClient, SessionOptions, open_client
from moot.frontend.flags import project_mcp
from moot.frontend.flags import rule_list as _rule_list
from moot.frontend.heap import HeldCollector
from moot.frontend.inert import on_terminal
from moot.paths import workspace_root
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import SessionStatus
from moot.protocol.messages import Attachment
from moot.protocol.states import RunState, StopReason

EXIT_OK, EXIT_STOPPED, EXIT_USAGE, EXIT_REFUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class Refusals:
    """The tool calls a run refused (a rule, a hook, or the mode, where nobody can approve),
    with the tool and arguments the model asked for (`model_responded` names them)."""

    def __init__(self) -> None:
        self._asked: dict[str, tuple[str, dict[str, object]]] = {}
        self.denials: list[dict[str, object]] = []
        """As Claude Code's result lists them: `tool_name`, `tool_use_id`, `tool_input`, and
        moot's `reason`."""

    def take(self, event: ev.Event) -> ev.ApprovalDecided | None:
        """Note the calls asked for; the refusal, when `event` is one."""
        if isinstance(event, ev.ModelResponded):
            for call in event.tool_calls:
                self._asked[call.id] = (call.name, dict(call.arguments))
        elif isinstance(event, ev.ApprovalDecided) and not event.approved:
            tool, arguments = self._asked.get(event.tool_call_id, ("", {}))
            self.denials.append(
                {
                    "tool_name": tool,
                    "tool_use_id": event.tool_call_id,
                    "tool_input": arguments,
                    "reason": event.feedback,
                }
            )
            return event
        return None

    def said(self) -> str:
        """The stderr line of the last refusal."""
        last = self.denials[-1]
        return f"moot: refused {last['tool_name'] or 'a tool call'}: {last['reason']}"


def exit_code(finished: ev.TurnFinished | None, refused: bool = False) -> int:
    if finished is None:
        return EXIT_STOPPED
    if finished.state is RunState.COMPLETED:
        return EXIT_REFUSED if refused else EXIT_OK
    if finished.state is RunState.CANCELLED:
        return EXIT_INTERRUPTED
    return EXIT_STOPPED


def _fail(message: str) -> int:
    print(f"moot: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_headless(options: Namespace, out: TextIO | None = None, *, own_heap: bool = False) -> int:
    """Run `moot -p` (or finish a resumed run): one turn, its answer on `out`, then exit.

    `own_heap`: this process is `moot` itself, so its collector may be tuned: it is held while
    the session opens (most of moot's modules load then) and the heap frozen after.

    On a terminal, what is printed is made inert (`moot.frontend.inert`): the answer is the
    model's, and a refusal quotes the model's arguments, either of which could hold a sequence
    that sets the clipboard (OSC 52) or the title. Pipes get every character.
    """
    with contextlib.redirect_stderr(on_terminal(sys.stderr)):
        return _run_headless(options, on_terminal(out or sys.stdout), own_heap=own_heap)


def _run_headless(options: Namespace, out: TextIO, *, own_heap: bool) -> int:
    title = options.prompt.strip().splitlines()[0][:80] if options.prompt else ""
    try:
        choices = session_choices(options)
    except FlagError as exc:
        return _fail(str(exc))
    if options.effort:  # read by the providers, as the variable of that name
        os.environ["MOOT_REASONING_EFFORT"] = EFFORTS[options.effort]
    # As `moot.cli.main` does for the command's import: the collector would scan the growing,
    # long-lived heap of the session's modules ~20 times while it opens.
    try:
        attachments = _attachments(options)
    except ValueError as exc:  # `AttachmentError`: said before any session opens
        return _fail(str(exc))
    collector = HeldCollector(held=own_heap)
    try:
        client = open_client(
            SessionOptions(
                cwd=workspace_root(Path.cwd()),
                model=options.model,
                permission_mode=options.permission_mode,
                allowed_tools=_rule_list(options.allowed_tools),
                disallowed_tools=_rule_list(options.disallowed_tools),
                agents=options.agents,
                session_id=options.resume,
                title=title,
                max_turns=options.max_turns,
                # Nobody answers approvals, but the Agent SDK's permission callback may.
                can_ask=options.permission_prompt_tool == "stdio",
                # A resumed run finishes the turn that was interrupted; it commits nothing new.
                auto_commit=None if options.prompt is not None else False,
                allow_project_mcp=project_mcp(options.allow_project_mcp),
                mcp_late=_late_server,  # a short run waits for its servers' tools
                **choices,
            )
        )
    except SetupError as exc:
        return _fail(str(exc))
    except SessionBusy as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_STOPPED
    except StoreError as exc:
        return _store_failed(exc, options.resume)
    finally:
        collector.let_go()
    turn, problem = _what_to_run(client, options, choices)
    if isinstance(turn, ops.UserTurn) and attachments is not None:
        turn = msgspec.structs.replace(turn, text=attachments[0], attachments=attachments[1])
    try:
        return asyncio.run(_drive(client, options, out, problem, turn))
    except StoreError as exc:
        # The run stopped where the store failed; what was stored stays, and a resume goes on
        # from there once the database can be written again.
        return _store_failed(exc, client.session_id, resume=not problem)
    except BrokenPipeError:
        # The reader went away (`moot -p ... | head -1`). asyncio.run has cancelled a run
        # still going, so its log ends with turn_finished. Point stdout at devnull so the
        # interpreter's last flush does not raise again (the advice in Python's `signal` docs).
        if getattr(out, "wrapped", out) is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"moot: output closed early; session {client.session_id}", file=sys.stderr)
        return EXIT_STOPPED


def _attachments(options: Namespace) -> tuple[str, tuple[Attachment, ...]] | None:
    """The `-p` task's message and its images and PDFs (`-i FILE`, `@path`); None when it
    has none.

    Raises:
        AttachmentError: one cannot be attached (the runtime's check, as every front end's).
    """
    images = getattr(options, "images", [])
    if options.prompt is None or (not images and "@" not in options.prompt):
        return None
    from moot.client.attachments import attach_file
    from moot.frontend.attach import for_prompt

    root = workspace_root(Path.cwd())
    text, found = for_prompt(options.prompt, images, root, Path.cwd(), attach_file)
    return (text, found) if found else None


def _what_to_run(
    client: LocalClient, options: Namespace, choices: dict[str, Any]
) -> tuple[ops.Op | None, str]:
    """The run's first op, or why there is none; the session's notices go to stderr."""
    status = client.status()
    for notice in status.notices:  # settings keys moot ignores, a repository's own settings
        print(f"moot: {notice}", file=sys.stderr)
    if status.sandbox.backend == "host":
        print(
            f"moot: shell commands run on the host, unsandboxed ({status.sandbox.reason})",
            file=sys.stderr,
        )
    problem = unknown_tools(choices["tools"], status.tools)
    if options.prompt is not None and status.open_run:
        problem = (
            f"session {client.session_id} has an unfinished run; finish it first with "
            f"`moot --resume {client.session_id}` (no -p)"
        )
    streamed = options.input_format == "stream-json"  # the turns come on stdin
    if options.prompt is None and not status.open_run and not streamed:
        problem = f"session {client.session_id} has no unfinished run to resume"
    turn: ops.Op | None = None
    if options.prompt is not None and not problem:
        turn, problem = first_op(options.prompt, status)
    return turn, problem


def _store_failed(exc: Exception, session_id: str | None, *, resume: bool = False) -> int:
    """The sessions database failed (damaged, read-only, a full disk): one line, exit 1;
    `resume` says how to go on with a run it stopped."""
    where = f" (session {session_id})" if session_id else ""
    if session_id and resume:
        where = f" (session {session_id}; then `moot --resume {session_id}` finishes its run)"
    print(f"moot: {exc}{where}", file=sys.stderr)
    return EXIT_STOPPED


def _ends_the_run(event: ev.Event) -> bool:
    """Whether `event` says why the person's turn ended: a limit (limits bound the whole run),
    or a provider's or moot's own error in the turn's first call. A sandbox refusal is a tool
    result the model saw, and a peer's failure is its caller's tool result; neither ends it."""
    if isinstance(event, ev.LimitHit):
        return True
    return (
        isinstance(event, ev.Error)
        and event.parent_call_id is None
        and event.source in ("provider", "internal")
    )


def first_op(prompt: str, status: SessionStatus) -> tuple[ops.Op | None, str]:
    """The op a `-p` prompt makes: a turn, or `RunCommand` for a leading `/name` that is one
    of the session's skills or custom commands (`moot -p "/code-review src/app.py"`).

    Returns:
        The op, or None and why the prompt cannot run.
    """
    if not prompt.lstrip().startswith("/"):
        return ops.UserTurn(text=prompt), ""
    from moot.commands.registry import is_command  # only for a prompt that starts with `/`

    if not is_command(prompt):
        return ops.UserTurn(text=prompt), ""
    name, _, arguments = prompt.strip()[1:].partition(" ")
    names = [c.name for c in status.instructions.commands]
    if name.startswith("mcp__"):  # an MCP server's prompt: read once the servers are up
        return ops.UserTurn(text=prompt.strip()), ""
    if name in names:
        return ops.RunCommand(name=name, arguments=arguments.strip()), ""
    listed = ", ".join(f"/{n}" for n in names) or "none"
    return None, (
        f"no command /{name} for a headless run; the skills and commands here are: {listed} "
        "(moot's own commands, such as /help, work in the app)"
    )


async def _drive(
    client: LocalClient, options: Namespace, out: TextIO, problem: str, turn: ops.Op | None
) -> int:
    try:
        if problem:
            return _fail(problem)
        if options.input_format == "stream-json":
            from moot.cli.claude_stream.session import StreamSession

            stop_on_signals(client)
            return await StreamSession(client, options, out).serve()
        return await _turn(client, options, out, turn)
    finally:
        await client.close()  # background shells and the sandbox end with the session


def stop_on_signals(client: LocalClient) -> None:
    """The first SIGINT, SIGTERM or SIGHUP (the terminal went away) interrupts the run, which
    records its end, its open calls' first; a second one ends moot at once, whatever the run
    still waits for (a tool's thread, a store that stays locked), so Ctrl-C always ends moot.
    Nothing is lost: every event is stored as it happens, the session's claim is an OS lock
    the kernel frees, and `--resume` finishes the run."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def again(signum: int, frame: object) -> None:
        resume = f"moot --resume {client.session_id}"
        with contextlib.suppress(OSError):  # a terminal that went away takes stderr along
            os.write(2, f"moot: stopped at once; `{resume}` finishes the run\n".encode())
        os._exit(EXIT_INTERRUPTED)

    def first() -> None:
        client.submit(ops.Interrupt())
        for number in signals:
            # A plain handler, not the loop's: it runs even while the loop is stuck.
            loop.remove_signal_handler(number)
            signal.signal(number, again)

    for number in signals:
        loop.add_signal_handler(number, first)


async def _turn(client: LocalClient, options: Namespace, out: TextIO, turn: ops.Op | None) -> int:
    stop_on_signals(client)
    events = client.subscribe()
    if isinstance(turn, ops.UserTurn) and turn.text.startswith("/mcp__"):
        from moot.cli.mcp_prompts import prompt_turn

        turn, problem = await prompt_turn(client, turn.text)
        if turn is None:
            events.close()
            return _fail(problem)
    if isinstance(turn, ops.UserTurn) and "@" in turn.text:
        from moot.commands.mentions import expand_mentions  # an MCP resource, @server:uri

        text, attachments = await expand_mentions(client, turn.text)
        turn = msgspec.structs.replace(
            turn, text=text, attachments=(*turn.attachments, *attachments)
        )
    output = _output(client, options, out)
    submission = client.submit(turn if turn is not None else ops.ResumeRun())
    problem = ""
    finished: ev.TurnFinished | None = None
    refusals = Refusals()
    async for event in events:
        if _ends_the_run(event):
            problem = getattr(event, "detail", "") or getattr(event, "message", "")
        output.event(event)
        _tell(event)
        if refusals.take(event) is not None:
            print(refusals.said(), file=sys.stderr)
        if isinstance(event, ev.TurnFinished):
            finished = event
            break
        if isinstance(event, ev.OpRefused) and event.submission_id == submission:
            # The session would not take the turn (a command's model it cannot use): no
            # turn_finished will come.
            print(f"moot: {event.reason}; session {client.session_id}", file=sys.stderr)
            output.refused(event.reason)
            events.close()
            return EXIT_STOPPED
    events.close()
    if finished is None:  # the run could not record its end (the store failed): see close()
        return EXIT_STOPPED
    if finished.stop_reason is StopReason.USER_CANCELLED:
        problem = ""  # the person's interrupt is the whole reason
    output.finished(finished, problem, refusals.denials)
    if finished.state is not RunState.COMPLETED:
        print(
            f"moot: run {finished.state} ({finished.stop_reason}"
            f"{': ' + problem if problem else ''}); session {client.session_id}",
            file=sys.stderr,
        )
    elif refusals.denials:
        count = len(refusals.denials)
        print(
            f"moot: {count} tool call{'s' if count > 1 else ''} refused (exit {EXIT_REFUSED}); "
            f"session {client.session_id}",
            file=sys.stderr,
        )
    return exit_code(finished, refused=bool(refusals.denials))


def _output(client: LocalClient, options: Namespace, out: TextIO) -> TurnOutput:
    """The turn's stdout, by `--output-format`; stream-json opens with the session's init."""
    output = TurnOutput(
        options.output_format,
        out,
        client.session_id,
        partial=options.include_partial_messages,
        schema=options.json_schema is not None,
    )
    output.opened(client.status(), client.mcp_servers(), tool_names(options.tools))
    return output


def _late_server(said: str) -> None:
    print(f"moot: {said}", file=sys.stderr)


def _tell(event: ev.Event) -> None:
    """What the person reads on stderr besides the answer: moot's own commit, or why not, and
    what an agent says to them on the way (`send_message` to `user`: nobody answers here)."""
    if isinstance(event, ev.MessageSent) and event.to_agent == "user":
        print(f"moot: message from {event.sender}: {event.text}", file=sys.stderr)
    elif isinstance(event, ev.AutoCommitted):
        print(f"moot: committed {event.sha[:10]} {event.subject}", file=sys.stderr)
        if event.note:
            print(f"moot: {event.note}", file=sys.stderr)
    elif isinstance(event, ev.Error) and event.source == "session":
        print(f"moot: {event.message}", file=sys.stderr)

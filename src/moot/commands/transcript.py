"""Commands about the transcript: export it, copy the last answer, search it, inspect a run."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from moot.commands.registry import CommandContext, CommandError, Registry
from moot.commands.run_events import find_run, read, recent_runs, run_scope
from moot.commands.show import words
from moot.frontend.attachment_files import attachment_files, folder_of, write_files
from moot.protocol import events as ev

FORMATS = ("md", "json", "html")
ATTACHING = ("turn_started", "tool_finished")
"""The events that carry attachments."""


def register(registry: Registry) -> None:
    """Add the transcript commands to `registry`."""

    @registry.command(
        "export",
        "Write the session to a file: markdown, JSON (the events) or a self-contained HTML page",
        arguments="[md|json|html] [path]",
        complete=lambda context, typed: [f for f in FORMATS if f.startswith(typed)],
    )
    async def export(context: CommandContext, args: str) -> None:
        found = words(args)
        kind = found.pop(0) if found and found[0] in FORMATS else "md"
        if len(found) > 1:
            raise CommandError("/export [md|json|html] [path]")
        if found and not any(c in found[0] for c in "./"):
            raise CommandError(
                f"/export [md|json|html] [path]: {found[0]!r} is no format (md, json, html), "
                "and a file to write needs a suffix or a directory (notes.md, ./notes)"
            )
        client = context.client
        workspace = Path(client.status().workspace)
        target = Path(found[0]) if found else Path(f"moot-{client.session_id}.{kind}")
        target = target if target.is_absolute() else workspace / target
        if target.exists():
            raise CommandError(f"{target} exists; name another file: /export {kind} PATH")
        summary = client.query.session(client.session_id)
        if summary is None:
            raise CommandError("nothing to export yet: the session has no events")
        text = client.query.export(client.session_id, kind)
        files: list[tuple[str, bytes]] = []
        if kind == "md":  # its images and PDFs, as files in the folder it links to
            events = client.query.events(client.session_id, kinds=ATTACHING)
            files = attachment_files(events)
        try:
            await asyncio.to_thread(_write_new, target, text)
            folder = target.parent / folder_of(client.session_id)
            await asyncio.to_thread(_write_files, folder, files)
        except OSError as exc:
            raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
        beside = f" and {len(files)} attachments to {folder}" if files else ""
        context.say(f"wrote {summary.event_count} events as {kind} to {target}{beside}")

    @registry.command("copy", "Copy the last answer to the clipboard")
    async def copy(context: CommandContext, args: str) -> None:
        client = context.client
        finished = client.query.events(client.session_id, kinds=("turn_finished",), limit=1)
        last = finished[0] if finished else None
        answer = last.output if isinstance(last, ev.TurnFinished) else ""
        if not answer:
            raise CommandError("no answer to copy yet")
        how = await context.copy(answer)
        context.say(f"copied the last answer ({len(answer):,} characters; {how})")

    @registry.command(
        "search", "Find text in the transcript (no text: clear the marks)", arguments="[text]"
    )
    async def search(context: CommandContext, args: str) -> None:
        shown = context.search(args)
        if not args:
            return
        client = context.client
        stored = client.query.events(
            client.session_id, kinds=("turn_started", "model_responded", "tool_finished")
        )
        everywhere = sum(args.lower() in _text(e).lower() for e in stored)
        more = everywhere - shown
        tail = f"; {more} more in earlier history (load earlier)" if more > 0 else ""
        context.say(f"{shown} match{'es' if shown != 1 else ''} on screen for {args!r}{tail}")

    @registry.command(
        "inspect",
        "The stored events of a run (the last one without an id)",
        arguments="[RUN]",
        complete=_complete_runs,
    )
    async def inspect(context: CommandContext, args: str) -> None:
        client = context.client
        started = find_run(client.query, client.session_id, args.strip())
        shown = read(client.query, client.session_id, run_scope(started))
        context.inspect(f"run {started.run_id}", shown.events, note=shown.note)


def _write_files(folder: Path, files: list[tuple[str, bytes]]) -> None:
    if files:
        write_files(folder, files)  # its parent made with the export; no link followed


def _write_new(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "x", encoding="utf-8") as file:  # never over a file made since the check
        file.write(text)


def _complete_runs(context: CommandContext, typed: str) -> Sequence[str]:
    runs = recent_runs(context.client.query, context.client.session_id)
    return [e.run_id for e in reversed(runs) if e.run_id.startswith(typed)]


def _text(event: ev.Event) -> str:
    match event:
        case ev.TurnStarted():
            return event.prompt
        case ev.ModelResponded():
            return event.text
        case ev.ToolFinished():
            return event.content
    return ""

"""Commands about stored sessions: `/resume` (a picker of this workspace's sessions) and
`/fork` (a new session sharing this one's history). Both leave this session in the store and
go on with another through the front end's `open_session`."""

from __future__ import annotations

from moot.commands.registry import CommandContext, CommandError, Registry
from moot.protocol.client import SessionSummary

PICKER_SIZE = 50


def register(registry: Registry) -> None:
    """Add the session-list commands to `registry`."""

    @registry.command(
        "resume", "Go on with another session of this workspace (a picker; type to search)",
        arguments="[id or words]",
    )  # fmt: skip
    async def resume(context: CommandContext, args: str) -> None:
        client = context.client
        own = client.query.session(client.session_id)
        workspace = own.workspace if own is not None else client.status().workspace
        sessions = [
            s
            for s in client.query.sessions(workspace=workspace, limit=PICKER_SIZE)
            if s.id != client.session_id
        ]
        words = args.lower().split()
        if words:
            exact = [s for s in sessions if s.id == args.strip()]
            sessions = exact or [
                s for s in sessions if all(w in f"{s.title} {s.id}".lower() for w in words)
            ]
        if not sessions:
            raise CommandError(
                f"no other session here{f' matches {args!r}' if words else ''} "
                f"(moot sessions list --all shows every workspace's)"
            )
        chosen = sessions[0].id if len(sessions) == 1 and words else None
        if chosen is None:
            labelled = [(s.id, session_label(s)) for s in sessions]
            chosen = await context.pick("resume which session", labelled)
        if chosen is not None:
            await context.open_session(chosen)

    @registry.command(
        "fork", "A new session sharing this one's history (up to event SEQ); go on there",
        arguments="[SEQ]",
    )  # fmt: skip
    async def fork(context: CommandContext, args: str) -> None:
        at = None
        if args.strip():
            if not args.strip().isdigit():
                raise CommandError("/fork [SEQ]: the number of the last event to share")
            at = int(args)
        if context.client.status().running:
            raise CommandError("a turn is running: fork once it ends")
        try:
            new = context.client.fork(at)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        context.say(f"forked {context.client.session_id} as {new}")
        await context.open_session(new)


def session_label(s: SessionSummary) -> str:
    """A session in a picker: title, time, turns, cost and state."""
    when = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    title = s.title or "(untitled)"
    return f"{title}  ·  {when}  ·  {s.turns} turns  ·  ${s.cost_usd:.4f}  ·  {s.state or '-'}"

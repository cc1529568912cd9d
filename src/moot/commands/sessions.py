"""Commands about stored sessions: `/resume` (a picker of this workspace's sessions), `/fork`
(a new session sharing this one's history) and `/rewind` (back to before one of the person's
turns: the files, the conversation, or both). A session is never rewritten: going on with an
earlier conversation is going on in a fork of it (`SessionAdmin.fork`), so this one stays in
the store as it was; the files come back by an op (`RestoreFiles`)."""

from __future__ import annotations

from moot.commands.answers import answer
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import SessionAdmin, SessionSummary
from moot.protocol.titles import title_of

PICKER_SIZE = 50


def register(registry: Registry) -> None:
    """Add the session-list commands (`COMMANDS`, at the end of this module) to `registry`."""
    for command in COMMANDS:
        registry.add(command)


REWIND_WAYS = [
    ("both", "conversation and code"),
    ("conversation", "conversation only (files stay as they are)"),
    ("code", "code only (the conversation goes on)"),
]


def _admin(context: CommandContext) -> SessionAdmin:
    """The client's `SessionAdmin`, which forks.

    Raises:
        CommandError: This client cannot fork its session.
    """
    client = context.client
    if not isinstance(client, SessionAdmin):
        raise CommandError("this session cannot be forked here")
    return client


def _clock(event: ev.Event) -> str:
    return event.ts.astimezone().strftime("%Y-%m-%d %H:%M")


def session_label(s: SessionSummary) -> str:
    """A session in a picker: title, time, turns, cost and state."""
    when = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    title = s.title or "(untitled)"
    return f"{title}  ·  {when}  ·  {s.turns} turns  ·  ${s.cost_usd:.4f}  ·  {s.state or '-'}"


async def _resume(context: CommandContext, args: str) -> None:
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


async def _fork(context: CommandContext, args: str) -> None:
    at = None
    if args.strip():
        if not args.strip().isdigit():
            raise CommandError("/fork [SEQ]: the number of the last event to share")
        at = int(args)
    if context.client.status().running:
        raise CommandError("a turn is running: fork once it ends")
    try:
        new = _admin(context).fork(at)
    except KeyError as exc:
        raise CommandError(str(exc.args[0])) from None
    context.say(f"forked {context.client.session_id} as {new}")
    await context.open_session(new)


async def _rewind(context: CommandContext, args: str) -> None:
    client = context.client
    if client.status().running:
        raise CommandError("a turn is running: interrupt it first")
    turns = [
        e
        for e in client.query.events(client.session_id, kinds=("turn_started",))
        if isinstance(e, ev.TurnStarted)
    ]
    if not turns:
        raise CommandError("nothing to rewind: this session has no turns yet")
    # The turn's number goes after its words: a front end that numbers its list (the
    # REPL) would otherwise show two numbers in a row.
    labelled = [
        (e.run_id, f"{title_of(e.prompt) or '(empty)'}  ·  turn {n}  ·  {_clock(e)}")
        for n, e in reversed(list(enumerate(turns, 1)))
    ]
    chosen = await context.pick("rewind to before which turn", labelled)
    if chosen is None:
        return
    how = await context.pick(
        "restore what (of shell commands' changes, only the files their command lines"
        " write are tracked)",
        REWIND_WAYS,
    )
    if how is None:
        return
    turn = next(e for e in turns if e.run_id == chosen)
    admin = _admin(context) if how in ("both", "conversation") else None
    if how in ("both", "code"):
        report = await answer(client, ops.RestoreFiles(run_id=chosen), ("files_restored",))
        assert isinstance(report, ev.FilesRestored)
        listed = ", ".join(report.restored) or "none (no tool changed a file since)"
        context.say(f"files restored: {listed}")
        if report.failures:
            context.say("not restored: " + "; ".join(report.failures), warning=True)
        context.say(
            "shell commands' changes other than the files their command lines write"
            " (`>`, `tee`, `-o`, `rm`, ...) are not tracked: check them yourself",
            warning=True,
        )
    if admin is not None:
        fork = admin.fork(turn.seq - 1)
        context.say(
            f"conversation rewound to before {title_of(turn.prompt)!r}: going on in "
            f"{fork} ({client.session_id} stays in the store as it was)"
        )
        await context.open_session(fork)


COMMANDS = (
    Command(
        "resume",
        "Go on with another session of this workspace (a picker; type to search)",
        _resume,
        arguments="[id or words]",
    ),
    Command(
        "fork",
        "A new session sharing this one's history (up to event SEQ); go on there",
        _fork,
        arguments="[SEQ]",
    ),
    Command(
        "rewind",
        "Go back to before one of your turns: the conversation, the code, or both",
        _rewind,
    ),
)

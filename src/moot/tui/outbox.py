"""`Outbox`: what the person sends from the app's prompt, and what becomes of it.

A message goes to the session shown as a turn (its `@server:uri` resources read first); a
`/command`, a `!command` and a `# note` go their own ways. What is sent while the session
opens or another one replaces it waits and goes, in order, once it is shown (one message to the
model at most); what is sent while a command runs goes after it; a message sent while a turn
runs, or one the session refuses (`op_refused`), goes back into the prompt.

Its own object rather than more of the app: the app's shell, the session view and the command
context each hold it, and it holds none of them (it asks for the client, the registry and the
context it runs commands with), so their modules import it and it imports none of theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from textual.app import App

from moot.commands.files import memory_note
from moot.commands.mentions import MENTION, expand_mentions
from moot.commands.registry import CommandContext, Registry, is_command
from moot.commands.shell import is_shell, run_shell
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import Client
from moot.protocol.messages import Attachment
from moot.tui.pane_lookup import PaneLookup

Attached = tuple[Attachment, ...]
"""A message's images and PDFs, in the order of its chips."""


class Outbox:
    """What the person sends to the session shown.

    Args:
        app: Where notices, workers and the panes are.
        panes: The app's panes.
        client: The session shown; None while it opens.
        registry: The slash commands.
        context: What the commands run against (`tui/app_commands.py::AppCommands`).
        model: The model asked for, which the status line names while the session opens.
        task: A first message, sent once the session is shown.
    """

    def __init__(
        self,
        app: App[Any],
        panes: PaneLookup,
        *,
        client: Callable[[], Client | None],
        registry: Callable[[], Registry],
        context: Callable[[], CommandContext],
        model: str | None = None,
        task: str | None = None,
    ) -> None:
        self._app = app
        self._panes = panes
        self._client = client
        self._registry = registry
        self._context = context
        self._model = model
        self.task = task
        """A first message, sent once the session is shown (`send_task`)."""
        self.switching = False
        """Another session is opening (`/new`, `/resume`): what is sent meanwhile waits for it."""
        self.turn_running = False
        """A turn runs in the session shown: a message now goes back into the prompt."""
        self._waiting: list[tuple[str, Attached]] = []
        """What was sent before the session was open, in order."""
        self._commands = 0
        """Commands the person sent that still run; what is sent meanwhile waits for them."""
        self._after_commands: list[tuple[str, Attached]] = []
        self._sent: dict[str, str] = {}
        self._sent_attachments: dict[str, Attached] = {}
        """The images and PDFs of `_sent` messages: a message given back keeps them."""
        """The person's messages sent and not yet answered (`turn_started` or `op_refused`), by
        submission id: one the session refuses goes back into the prompt."""

    # ---- sending -------------------------------------------------------------------------------

    def send(self, text: str, attachments: Attached = ()) -> None:
        """Send what the person typed: a message (with the images and PDFs of its chips,
        `attachments`), a command, a `!command` or a `# note`."""
        client = self._client()
        if client is None or self.switching:
            self._wait_for_session(text, attachments)
            return
        if self._commands:
            # A command still runs (`/new` opening the next session, `/model` switching): what
            # is sent after it goes after it, in order, and to the session it leaves.
            self._after_commands.append((text, attachments))
            self._app.notify("a command is still running: this goes once it is done")
            return
        # What the person sends shows where they look: the view follows again (a command
        # that scrolls, `/search`, does so after this).
        self._panes.chat.follow()
        if is_command(text):
            self.run_command(self._registry().run(self._context(), text.strip()))
        elif is_shell(text):  # `!command`: the person's own, through the session's sandbox
            self.run_command(run_shell(self._context(), text))
        elif (note := memory_note(text)) is not None:
            self.submit(ops.NoteToMemory(text=note))
        elif self.turn_running and (to := _addressed_agent(client, text)):
            # `@agent message` while a turn runs: for that agent, read at its next step.
            line = f"/msg {to} {text.strip()[len(to) + 1 :].strip()}"
            self.run_command(self._registry().run(self._context(), line))
        elif self.turn_running:
            self._app.notify("a turn is running: wait for it, or press Esc to interrupt it")
            self.give_back(text, attachments)
        elif MENTION.search(text):  # `@server:uri`: its MCP resource is read first
            work = self._send_with_resources(client, text, attachments)
            self._app.run_worker(work, group="command")
        else:
            self._send_turn(ops.UserTurn(text=text, attachments=attachments), text, attachments)

    def _send_turn(self, turn: ops.UserTurn, typed: str, attached: Attached) -> None:
        """Submit a turn; `attached`: the person's own attachments (a message given back
        keeps them; an MCP resource's images are read again)."""
        submission = self.submit(turn, text=typed, attachments=attached)
        if submission is not None:
            self._sent[submission] = typed
            if attached:
                self._sent_attachments[submission] = attached

    def submit(self, op: ops.Op, *, text: str = "", attachments: Attached = ()) -> str | None:
        """Submit `op` to the session shown; its submission id. A sessions database that
        cannot be written (a full disk) takes no op: that is told here, a message (`text`)
        goes back into the prompt, and None is returned."""
        client = self._client()
        assert client is not None, "an op goes to a session shown"
        try:
            return client.submit(op)
        except Exception as exc:
            from moot.client.errors import StoreError  # only when an op failed

            if not isinstance(exc, StoreError):
                raise
            self._app.notify(str(exc), severity="error", timeout=30)
            if text:
                self.give_back(text, attachments)
            return None

    def give_back(self, text: str, attachments: Attached = ()) -> None:
        """Put a message that was not sent back into the prompt, before what is typed there
        now, with the cursor at the end (typing goes on after it); its chips hold their
        `attachments` again."""
        prompt = self._panes.prompt
        prompt.images.chips.restore(text, attachments)
        typed = prompt.text
        prompt.load_text(f"{text}\n{typed}" if typed.strip() else text)
        prompt.move_cursor(prompt.document.end)

    def run_command(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a command the person sent; what they send while it runs waits for its end."""
        self._commands += 1  # now, not when the worker starts: the next key may come first

        async def command() -> None:
            try:
                await work
            finally:
                self._commands -= 1
                if not self._commands:
                    after, self._after_commands = self._after_commands, []
                    for text, attachments in after:
                        self.send(text, attachments)

        self._app.run_worker(command(), group="command")

    async def _send_with_resources(self, client: Client, typed: str, attached: Attached) -> None:
        text, found = await expand_mentions(client, typed)
        self._send_turn(ops.UserTurn(text=text, attachments=(*attached, *found)), typed, attached)

    # ---- waiting for the session -----------------------------------------------------------

    def _wait_for_session(self, text: str, attachments: Attached) -> None:
        """Keep what is sent while the session opens; it goes, in order, once it is open. One
        message to the model at most (the session runs one turn at a time), as while a turn
        runs."""
        if starts_a_turn(text) and (self.task or any(starts_a_turn(t) for t, _ in self._waiting)):
            self._app.notify("a message already waits for the session to open: send this after it")
            prompt = self._panes.prompt
            prompt.images.chips.restore(text, attachments)
            prompt.load_text(text)
            prompt.move_cursor(prompt.document.end)
            return
        self._waiting.append((text, attachments))
        self._panes.status.opening(self._model, waiting=len(self._waiting))
        self._app.notify("the session is still opening: this goes as soon as it is open")

    def send_waiting(self) -> None:
        """Send, in order, what was sent while the session opened."""
        waiting, self._waiting = self._waiting, []
        for text, attachments in waiting:
            self.send(text, attachments)

    def send_task(self) -> None:
        """Send the first message (the command line's task), once."""
        if self.task:
            task, self.task = self.task, None
            self.send(task)

    # ---- what the session answers ------------------------------------------------------------

    def answered(self, event: ev.Event) -> None:
        """Follow the session's answers to what was sent: a turn that runs or ended, a message
        the session refused (the chat shows why; the message goes back into the prompt, to send
        again)."""
        match event:
            case ev.TurnStarted() | ev.RunResumed():
                self.turn_running = True
                self._sent.pop(event.submission_id, None)
            case ev.OpRefused() if event.submission_id in self._sent:
                attachments = self._sent_attachments.pop(event.submission_id, ())
                self.give_back(self._sent.pop(event.submission_id), attachments)
            case ev.TurnFinished():
                self.turn_running = False

    def new_session(self, task: str | None = None) -> None:
        """Another session is shown: no turn of it runs yet, and submission ids are its own."""
        self.turn_running = False
        self._sent.clear()
        self._sent_attachments.clear()
        self.task = task


def starts_a_turn(text: str) -> bool:
    """Whether sending `text` asks the model (not a command, `!command` or `#` note)."""
    return not (is_command(text) or is_shell(text) or memory_note(text) is not None)


def _addressed_agent(client: Client, text: str) -> str | None:
    """The agent `@name message` addresses (one of the session's, with a message)."""
    first, _, rest = text.strip().partition(" ")
    name = first[1:]
    if not first.startswith("@") or not rest.strip():
        return None
    return name if name in {a.name for a in client.status().agents} else None

"""The slash-command registry every front end shares (the app, the plain REPL).

A command registers itself once, with its name, arguments, description and completion, and
runs against a `CommandContext` that each front end implements: the client (ops, queries) and
the few things only a front end can do (print, pick from a list, switch theme, quit). Nothing
here imports a UI toolkit.

A line that starts with `/` is a command, never a message: an unknown name or a bad argument
says what would work, and nothing goes to the model by mistake.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol

import msgspec

from moot.protocol.client import Client
from moot.protocol.events import Event


class CommandError(Exception):
    """A command could not run as asked; the message says what would work."""


class RefusedBySession(CommandError):
    """The session refused the command's op: its `op_refused` event (stored, and shown by a
    front end that shows the session's events) says why, so such a front end is not told
    twice (`CommandContext.shows_refusals`)."""


PaneName = Literal["tools", "trace"]
"""The app's side panes: the tools pane and the run-trace pane."""


class Panes(Protocol):
    """A front end's side panes (the app's tools and run-trace panes), as `/panes` moves them."""

    def show(self, pane: PaneName, shown: bool | None = None) -> None:
        """Show or hide `pane`; None turns it the other way, as its key does."""
        ...

    def widen(self, steps: int) -> None:
        """Widen the side column by `steps` of its key's step (negative: narrow it)."""
        ...

    def set_width(self, columns: int) -> None:
        """Make the side column `columns` wide (fitted to the terminal: the chat keeps room)."""
        ...

    def set_split(self, tools_percent: int) -> None:
        """Give the tools pane `tools_percent` of the column's height, the trace pane the rest."""
        ...

    def reset(self) -> None:
        """Back to how the panes start: both shown, the default width, an even split."""
        ...

    def describe(self) -> str:
        """What shows now and how big, for the person."""
        ...


class CommandContext(Protocol):
    """What a command may use: the session's client and the front end's own abilities."""

    @property
    def client(self) -> Client: ...

    @property
    def shows_refusals(self) -> bool:
        """Whether this front end shows the session's `op_refused` events itself (the app's
        chat and the REPL do; an editor does not): a command the session refused then says
        nothing more."""
        ...

    @property
    def columns(self) -> int:
        """How many characters a line the front end shows may hold (a table wider than this
        is laid out as a list)."""
        ...

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        """Show a line (or a markdown block) in the transcript."""
        ...

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        """Let the person choose one of `choices` (value, label); None if they cancel."""
        ...

    async def ask_secret(self, question: str) -> str | None:
        """Ask for a secret (a key) that is never shown, kept in the history or logged; None
        when the person cancels.

        Raises:
            CommandError: This front end cannot ask for one (an editor: `moot login`).
        """
        ...

    def theme_names(self) -> Sequence[str]:
        """The themes this front end can switch to (the plain REPL: the app's, which it sets
        for the app's next start); none where there are none (an editor)."""
        ...

    def set_theme(self, name: str) -> None:
        """Switch to a theme and remember it; raises CommandError for an unknown one."""
        ...

    @property
    def theme(self) -> str:
        """The theme in use (the plain REPL: the one the app starts with); "" where none is."""
        ...

    def exit(self) -> None:
        """Close the session and quit."""
        ...

    async def new_session(self) -> None:
        """Leave this session (it stays in the store) and start a new one."""
        ...

    async def open_session(self, session_id: str) -> None:
        """Leave this session for a stored one (`/resume`, `/fork`), its history shown."""
        ...

    def show_help(self) -> None:
        """Show every command and key."""
        ...

    async def copy(self, text: str) -> str:
        """Put `text` on the clipboard (the terminal's, OSC 52, and a clipboard command such as
        `wl-copy`, `xclip` or `pbcopy` when there is one); says how, for the person.

        Raises:
            CommandError: No way to reach a clipboard worked.
        """
        ...

    def offer(self, text: str, label: str) -> None:
        """Offer `text` for the next message: the person sees it (as `label`) where they type,
        and it goes with what they send unless they take it out."""
        ...

    def search(self, text: str) -> int:
        """Show where the transcript on screen says `text` (case-insensitive) and move to the
        first match; an empty `text` clears the marks. Returns how many blocks match."""
        ...

    def inspect(self, title: str, events: Sequence[Event], *, note: str = "") -> None:
        """Show stored events, one by one, as the run inspector does; `note` says what was
        left out of them (`commands/run_events.py`)."""
        ...

    def panes(self) -> Panes:
        """The front end's side panes, for `/panes`.

        Raises:
            CommandError: This front end has none (the plain REPL, an editor); the message says
                where they are.
        """
        ...


Run = Callable[[CommandContext, str], Awaitable[None]]
Complete = Callable[[CommandContext, str], Sequence[str]]


class CommandSource(Protocol):
    """Commands that depend on the session (an MCP server's prompts): looked up by name when no
    registered command has it, and listed for help and for editors."""

    def find(self, context: CommandContext, name: str) -> Command | None: ...

    def commands(self, context: CommandContext) -> Sequence[Command]: ...


class Command(msgspec.Struct, frozen=True):
    """One slash command."""

    name: str
    """Without the slash."""
    description: str
    run: Run
    arguments: str = ""
    """How its arguments read in help and completion, e.g. `[name]`."""
    complete: Complete | None = None
    """Completions for its argument, given what is typed so far."""
    aliases: tuple[str, ...] = ()


class Registry:
    """The commands, by name and alias."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._names: dict[str, str] = {}
        self._session: list[str] = []
        """Names a session's files added (`replace_session`)."""
        self._sources: list[CommandSource] = []

    def add_source(self, source: CommandSource) -> None:
        """Look names up in `source` when no registered command has them."""
        self._sources.append(source)

    def session_commands(self, context: CommandContext) -> list[Command]:
        """The commands the sources give for this session now."""
        return [c for source in self._sources for c in source.commands(context)]

    def add(self, command: Command) -> Command:
        for name in (command.name, *command.aliases):
            if name in self._names:
                raise ValueError(f"/{name} is registered twice")
            self._names[name] = command.name
        self._commands[command.name] = command
        return command

    def from_session(self, name: str) -> bool:
        """Whether `/name` came from the open session's files (`replace_session`)."""
        return name in self._session

    def replace_session(self, commands: Sequence[Command]) -> list[str]:
        """Swap the commands an open session brought (its skills and custom commands, see
        `moot.commands.files`) for `commands`; moot's own commands keep their names.

        Returns:
            The names skipped because a command of moot's own already has them.
        """
        for name in self._session:
            del self._commands[name]
            self._names.pop(name, None)
        self._session = []
        skipped: list[str] = []
        for command in commands:
            if command.name in self._names:
                skipped.append(command.name)
                continue
            self._commands[command.name] = command
            self._names[command.name] = command.name
            self._session.append(command.name)
        return skipped

    def command(
        self,
        name: str,
        description: str,
        *,
        arguments: str = "",
        aliases: tuple[str, ...] = (),
        complete: Complete | None = None,
    ) -> Callable[[Run], Run]:
        """Register the decorated coroutine function as `/name`."""

        def register(run: Run) -> Run:
            self.add(Command(name, description, run, arguments, complete, aliases))
            return run

        return register

    def __iter__(self):
        return iter(sorted(self._commands.values(), key=lambda c: c.name))

    def get(self, name: str) -> Command | None:
        real = self._names.get(name)
        return self._commands[real] if real else None

    def completions(self, typed: str, context: CommandContext | None = None) -> list[Command]:
        """Commands whose name (or alias) starts with what follows the slash; with a
        `context`, the sources' commands too (an MCP server's prompts)."""
        prefix = typed.lstrip("/")
        found = [c for c in self if any(n.startswith(prefix) for n in (c.name, *c.aliases))]
        if context is not None and self._sources:
            try:
                extra = self.session_commands(context)
            except Exception:  # a source that cannot list now offers nothing, never an error
                extra = []
            known = {c.name for c in found}
            found += [c for c in extra if c.name.startswith(prefix) and c.name not in known]
        return found

    def resolve(self, line: str) -> tuple[Command, str]:
        """The command a `/name args` line names, and its arguments.

        Raises:
            CommandError: No such command; the message names the nearest ones.
        """
        name, _, args = line.strip()[1:].partition(" ")
        command = self.get(name)
        if command is None and name:
            # A unique beginning names its command (`/stat` is `/status`); an ambiguous one
            # never runs any of them (`/mod` is `/mode` or `/model`).
            starting = {
                c.name for c in self if any(n.startswith(name) for n in (c.name, *c.aliases))
            }
            if len(starting) == 1:
                command = self.get(starting.pop())
            elif starting:
                listed = ", ".join("/" + n for n in sorted(starting))
                raise CommandError(f"/{name} is the start of several commands: {listed}")
        if command is None:
            import difflib  # only an unknown name needs it; `moot -p` never loads it

            near = difflib.get_close_matches(name, list(self._names), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join('/' + n for n in near)}?" if near else ""
            raise CommandError(f"no command /{name}{hint} (/help lists them)")
        return command, args.strip()

    async def run(self, context: CommandContext, line: str) -> None:
        """Run a `/name args` line; errors are told to the person, never raised."""
        try:
            try:
                command, args = self.resolve(line)
            except CommandError:
                name, _, args = line.strip()[1:].partition(" ")
                found = next((c for s in self._sources if (c := s.find(context, name))), None)
                if found is None:
                    raise
                command, args = found, args.strip()
            await command.run(context, args)
        except RefusedBySession as exc:
            if not context.shows_refusals:
                context.say(str(exc), warning=True)
        except CommandError as exc:
            context.say(str(exc), warning=True)
        except Exception as exc:  # a bug in a command must not take the front end down
            context.say(f"{line.split()[0]} failed: {type(exc).__name__}: {exc}", warning=True)


def is_command(text: str) -> bool:
    """A message is a command when it starts with `/word`; `/usr/bin/env is slow` (a path,
    a slash inside the first word) is a message."""
    stripped = text.lstrip()
    if not stripped.startswith("/"):
        return False
    first = stripped[1:].split(maxsplit=1)[0] if stripped[1:].strip() else ""
    return "/" not in first

"""Argument parsing for `moot`; kept apart so `moot --version` never builds a parser."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Collection, Sequence
from typing import Any, NoReturn

from moot._version import __version__
from moot.cli.commands import COMMAND_TABLE, COMMANDS
from moot.cli.values import names, positive

EXAMPLES = """\
examples:
  moot                               open the app in this directory
  moot "explain the build"           open the app and send a task
  moot -c                            continue the latest session here, in the app
  moot -r                            pick a session of this directory to resume
  moot -p "and now the tests" -c     continue the latest session here, headless
  moot --plain                       the line REPL: scrollback, screen readers, dumb terminals
  moot -p "fix the failing test" --model scripted:demo.yaml
  moot -p "what changed?" --output-format json --resume ses_0190...
  moot --resume ses_0190...          finish a run a crash or kill left open
  moot sessions list [--all]         this directory's sessions (--all: every one)
  moot sessions export ses_0190... --format md
  moot sessions fork ses_0190... --at 42   a new session sharing history up to event 42
  moot sessions prune --older-than 30d
  moot sandbox status                where shell commands run (MOOT_SANDBOX), and why
  moot sandbox run -- ls -la
  moot -p "/code-review src/app.py"  run a skill (or a custom command) headless
  moot skills list                   the skills here, where each comes from, their problems
  moot init --model anthropic/claude-sonnet-4-5   write an AGENTS.md for this repository
  moot mcp add github -- npx -y @modelcontextprotocol/server-github
  moot mcp add --transport http docs https://example.com/mcp
  moot mcp list                      MCP servers here, their origin and state
  moot mcp serve                     moot's workspace tools for another agent (stdio)
  moot acp                           the Agent Client Protocol over stdio, for editors
"""


PICK = "\0pick"
"""`--resume` given without a session: pick one."""

PRINT = "\0print"
"""`-p` given as a flag: the task is the positional one, or stdin."""


def _usage_error(message: str) -> NoReturn:
    sys.stderr.write(f"moot: {message}\n(see `moot --help`)\n")
    sys.exit(2)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`, the same way, without importing shutil.

    argparse's formatter imports shutil (and with it bz2, lzma, fnmatch: ~4 ms) at a parser's
    first argument, on every start-up, `moot sessions list` included.
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    """The top parser's: its epilog's examples keep their line breaks."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Subparsers are made with this class too, so they share the formatter.
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        _usage_error(message)


class _Refused(Exception):
    """The lean parser met what it leaves to the whole one: an error, or a help flag."""


class _LeanParser(_Parser):
    """Parses with only the commands named (`parse`); no help flag, and no message of its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # `-h` is then an unknown option: refused, and answered by the whole parser.
        kwargs.setdefault("add_help", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def _parser(named: Collection[str] = (), *, lean: bool = False) -> argparse.ArgumentParser:
    """The parser; of the commands, only those `named` get their options and actions.

    A parser per command and action and an argument each cost start-up time (~5 ms for all of
    them, gettext's lookups mostly), and one process runs one command. The whole parser lists
    every command (help, "invalid choice"); a `lean` one has only those `named`.
    """
    parser = (_LeanParser if lean else _Parser)(
        prog="moot",
        description="A terminal coding agent where every agent is a peer.",
        epilog=EXAMPLES,
        formatter_class=_RawFormatter,
        # Whole option names only: `sessions list --all` is not an abbreviation of --allowedTools.
        allow_abbrev=False,
    )
    _add_run_flags(parser)
    _add_claude_flags(parser)
    _add_sitting_flags(parser)
    _add_look_flags(parser)
    _add_commands(parser, named, every=not lean)
    return parser


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    """What a run is: the task, the output, the model, turns, mode and rules."""
    parser.add_argument("--version", action="version", version=f"moot {__version__}")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="TASK",
        nargs="?",
        const=PRINT,
        help="run TASK headless ('-' or none: read stdin); the task may also follow the options",
    )
    parser.add_argument(
        "-i",
        "--image",
        dest="images",
        action="append",
        default=[],
        metavar="FILE",
        help="attach an image (png, jpeg, gif, webp) or a PDF to the -p task; repeatable",
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json", "events"),
        default="text",
        help="text: the answer; json: one result object; stream-json: Claude Code's messages, "
        "one per line; events: moot's own events, one per line",
    )
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="stream-json: the model's answer as it streams (stream_event lines)",
    )
    parser.add_argument("--model", help="provider/model or scripted:<file> (env: MOOT_MODEL)")
    parser.add_argument("--max-turns", type=positive, metavar="N", help="stop after N model turns")
    parser.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"),
        help="how tool calls are settled (headless: what would ask is refused)",
    )
    parser.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help='allow rules, comma- or space-separated: "Read,Bash(git status:*)"',
    )
    parser.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="RULES",
        help='deny rules, e.g. "Bash(rm:*),WebFetch"',
    )


def _add_claude_flags(parser: argparse.ArgumentParser) -> None:
    """Claude Code's flags, as its scripts and Agent SDKs pass them (`cli/claude_stream`)."""
    add = parser.add_argument
    add("--verbose", action="store_true", help="accepted: moot's stream-json is always whole")
    add(
        "--replay-user-messages",
        action="store_true",
        help="--input-format stream-json: each user message back on stdout as its turn starts, "
        "with the uuid rewind_files takes",
    )
    add(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: user messages and the control protocol on stdin, as the Agent SDKs "
        "send them (with --output-format stream-json)",
    )
    add(
        "--permission-prompt-tool",
        metavar="stdio",
        help="stdio: ask the Agent SDK's can_use_tool callback what would ask the person",
    )
    add("--system-prompt", metavar="TEXT", help="replace moot's instructions to the agent")
    add("--system-prompt-file", metavar="FILE", help="--system-prompt, read from FILE")
    add("--append-system-prompt", default="", metavar="TEXT", help="add to the instructions")
    add("--tools", metavar="NAMES", help="the only tools offered ('default': all; '': none)")
    add("--max-budget-usd", type=float, metavar="USD", help="stop a run that has spent USD")
    add(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE|JSON",
        help='MCP servers, {"mcpServers": {...}} (repeatable)',
    )
    add(
        "--json-schema",
        metavar="SCHEMA",
        help="the answer is JSON fitting SCHEMA (retried until it does; json/stream-json give "
        "it as structured_output)",
    )
    add("--session-id", metavar="ID", help="the id of the new session (a UUID)")
    add("--strict-mcp-config", action="store_true", help="only --mcp-config's MCP servers")
    add("--fork-session", action="store_true", help="with --resume: go on in a fork of it")
    add("--fallback-model", metavar="MODEL", help="the model to fall back to when --model fails")
    add("--effort", metavar="LEVEL", help="the model's reasoning effort: low, medium, high")
    add(
        "--setting-sources",
        metavar="SOURCES",
        help="the settings files read, of user,project,local (default: all)",
    )
    add(
        "--settings",
        metavar="FILE|JSON",
        help="settings over the files' (JSON, or a file), checked as the files are",
    )
    add(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory the file tools and sandboxed commands may write (repeatable)",
    )
    for flag, kind in _REFUSED_FLAGS:
        add(flag, action=kind, help=argparse.SUPPRESS)


_REFUSED_FLAGS = (
    ("--betas", "store"),
    ("--task-budget", "store"),
    ("--resume-session-at", "store"),
    ("--resume-drops-turn", "store"),
    ("--session-mirror", "store_true"),
    ("--plugin-dir", "append"),
    ("--thinking", "store"),
    ("--max-thinking-tokens", "store"),
    ("--thinking-display", "store"),
    ("--include-hook-events", "store_true"),
)
"""Flags moot parses only to refuse them by name (`claude_stream/flags.py` says why)."""


def _add_sitting_flags(parser: argparse.ArgumentParser) -> None:
    """Which session goes on, with which agents and repository servers."""
    parser.add_argument(
        "--resume",
        "-r",
        metavar="SESSION",
        nargs="?",
        const=PICK,
        help="continue SESSION (a picker of this directory's sessions without one): in the "
        "app (on a terminal); with -p a new turn; without -p and with no terminal, finish "
        "its interrupted run",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session of this directory",
    )
    parser.add_argument(
        "--agents",
        type=names,
        metavar="NAMES",
        help="the agent definitions (.moot/agents/, the config dir, moot's own) that join the "
        "session as peers, comma-separated; '' for none (setting: agents; default: all)",
    )
    parser.add_argument(
        "--allow-project-mcp",
        dest="allow_project_mcp",
        action="append",
        default=[],
        metavar="NAMES",
        help="start these MCP servers of the repository's .mcp.json or .moot/settings without "
        "asking (comma-separated; 'all' for every one)",
    )


def _add_look_flags(parser: argparse.ArgumentParser) -> None:
    """How the app or the plain REPL uses the terminal."""
    parser.add_argument(
        "--plain",
        action="store_true",
        help="the line-oriented REPL instead of the app (also where the app cannot run: "
        "TERM=dumb, output not a terminal)",
    )
    parser.add_argument(
        "--no-toolbar",
        action="store_true",
        help="the plain REPL without its status toolbar (setting: repl.toolbar)",
    )
    parser.add_argument(
        "--no-alt-screen",
        action="store_true",
        help="run the app inline, below the shell prompt, keeping the terminal's scrollback "
        "(setting: ui.altScreen)",
    )
    parser.add_argument(
        "--scrollback",
        choices=("off", "text", "markdown"),
        help="on exit, print the conversation to the terminal's scrollback (default: markdown "
        "with --no-alt-screen, else off; setting: ui.scrollback)",
    )
    parser.add_argument(
        "--no-mouse",
        action="store_true",
        help="start with mouse capture off, so the terminal selects text; f4 switches it "
        "(setting: ui.mouse)",
    )


def _add_commands(parser: argparse.ArgumentParser, named: Collection[str], *, every: bool) -> None:
    if not every and not named:
        parser.set_defaults(command=None)  # what the subparsers would have set
        return
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text, fill in COMMAND_TABLE:
        if name in named:
            fill(sub.add_parser(name, help=help_text))
        elif every:
            sub.add_parser(name, help=help_text)


def _takes_value(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The top-level options followed by a value, read from the parser itself (a list kept by
    hand missed new options, and their values became the app's task)."""
    return frozenset(
        name for action in parser._actions if action.nargs != 0 for name in action.option_strings
    )


def _split_task(argv: Sequence[str], takes_value: frozenset[str]) -> tuple[list[str], str | None]:
    """`moot [options] "task"`: the first word that is neither an option, an option's value,
    nor a command is the task for the app."""
    args = list(argv)
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg in ("-p", "--print"):
            # Its task is optional too: an option after it is not its task.
            following = args[index + 1] if index + 1 < len(args) else None
            index += 2 if following is not None and not following.startswith("-") else 1
            if following == "-":
                index += 1
            continue
        if arg in ("-r", "--resume"):
            # Its session is optional: what follows is the session only when it is one.
            following = args[index + 1] if index + 1 < len(args) else None
            index += 2 if following is not None and _is_session(following) else 1
            continue
        if arg.startswith("-"):
            index += 2 if arg in takes_value else 1
            continue
        if arg in COMMANDS:
            return args, None
        return args[:index] + args[index + 1 :], arg
    return args, None


def _is_session(word: str) -> bool:
    """A session's id: moot's own (`ses_...`), or a UUID one was given (`--session-id`)."""
    return word == "" or word.startswith("ses_") or _UUID.fullmatch(word) is not None


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    # Any word that names a command may be the one argparse picks: those are filled in. A
    # lean parser with only them reads what it can; what it refuses (an error, `-h`) the whole
    # parser reads again, so help and every message are the whole parser's.
    named = COMMANDS.intersection(argv)
    try:
        options, task = _parse_with(_parser(named, lean=True), argv)
    except _Refused:
        options, task = _parse_with(_parser(named), argv)
    options.task = task
    if options.command == "init":
        options.model = options.model or os.environ.get("MOOT_MODEL")
    if options.command is None:
        if options.prompt == PRINT:  # `moot -p [options] "task"`, or the task on stdin
            options.prompt, options.task = options.task or "-", None
        if options.prompt == "-":
            options.prompt = sys.stdin.read()
        if options.prompt is not None and not options.prompt.strip():
            _usage_error("the task given to -p is empty")
        if options.prompt is None and getattr(options, "images", None):
            _usage_error(
                "-i/--image goes with a -p task; in the app and the REPL paste an image "
                "(ctrl+v) or name it as @path"
            )
        # The model may also come from settings files; headless.py settles it after reading them.
        options.model = options.model or os.environ.get("MOOT_MODEL")
    if options.command in ("acp", "mcp") and hasattr(options, "model"):
        options.model = options.model or os.environ.get("MOOT_MODEL")
    return options


def _parse_with(
    parser: argparse.ArgumentParser, argv: Sequence[str]
) -> tuple[argparse.Namespace, str | None]:
    args, task = _split_task(argv, _takes_value(parser))
    return parser.parse_args(args), task

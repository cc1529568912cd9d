"""The subcommands' own options (`moot sessions ...`, `moot mcp ...`, ...), one function per
command, and the table that names each command with its line in `moot --help`. Only the command
being run gets its options filled in (`args._add_commands`): each parser costs start-up time."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from moot.cli.values import age, positive


def _fill_sessions(sessions: argparse.ArgumentParser) -> None:
    sessions_sub = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sessions_sub.add_parser("list", help="this directory's sessions, newest first")
    listing.add_argument(
        "--all", action="store_true", help="every workspace's (this directory's first)"
    )
    listing.add_argument("--limit", type=positive, default=50, metavar="N")
    show = sessions_sub.add_parser("show", help="a session's transcript")
    show.add_argument("session_id")
    export = sessions_sub.add_parser("export", help="a session as Markdown, JSON or HTML")
    export.add_argument("session_id")
    export.add_argument("--format", choices=("md", "json", "html"), default="md")
    delete = sessions_sub.add_parser("delete", help="remove a session and its snapshots")
    delete.add_argument("session_id")
    fork = sessions_sub.add_parser(
        "fork", help="a new session sharing a session's history (up to an event with --at)"
    )
    fork.add_argument("session_id")
    fork.add_argument("--at", type=positive, metavar="SEQ", help="the last event to share")
    prune = sessions_sub.add_parser("prune", help="delete sessions not used for a while")
    prune.add_argument(
        "--older-than", required=True, type=age, metavar="AGE", help="e.g. 30d, 12h, 90m"
    )


def _fill_cost(cost: argparse.ArgumentParser) -> None:
    cost.add_argument(
        "--since", metavar="DATE", help="only usage from DATE on (YYYY-MM-DD, or an ISO time)"
    )
    cost.add_argument(
        "--all-workspaces", action="store_true", help="every workspace's sessions, not only here"
    )


def _fill_doctor(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument(
        "--check", action="store_true", help="send one tiny request to each configured provider"
    )
    doctor.add_argument(
        "--model", action="append", metavar="PROVIDER/MODEL", help="check this model (repeatable)"
    )


def _fill_sandbox(sandbox: argparse.ArgumentParser) -> None:
    sandbox_sub = sandbox.add_subparsers(dest="action", metavar="ACTION", required=True)
    sandbox_sub.add_parser("status", help="the sandbox MOOT_SANDBOX picks here, and why")
    run = sandbox_sub.add_parser("run", help="run one command through it: moot sandbox run -- CMD")
    run.add_argument(
        "--timeout", type=float, default=120.0, metavar="SECONDS", help="kill it after this"
    )
    run.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="CMD", help="one shell line, or a command"
    )


def _fill_nothing(parser: argparse.ArgumentParser) -> None:
    """For a command with no options of its own (`undo`)."""


def _fill_skills(skills: argparse.ArgumentParser) -> None:
    skills_sub = skills.add_subparsers(dest="action", metavar="ACTION", required=True)
    skills_sub.add_parser("list", help="every skill here, closest first, and their problems")
    show_skill = skills_sub.add_parser("show", help="one skill's frontmatter, files and text")
    show_skill.add_argument("name")
    validate = skills_sub.add_parser(
        "validate", help="check skill folders (default: every skill, command and agent here)"
    )
    validate.add_argument("paths", nargs="*", metavar="PATH")


def _fill_init(init: argparse.ArgumentParser) -> None:
    init.add_argument("note", nargs="*", help="what the AGENTS.md should also cover")
    # SUPPRESS: `moot --model X init` keeps the X the main parser read.
    init.add_argument("--model", default=argparse.SUPPRESS, help="provider/model")


def _fill_login(login: argparse.ArgumentParser) -> None:
    from moot.providers.credentials import key_providers  # only for `moot login`

    login.add_argument("provider", help=f"one of: {', '.join(key_providers())}")
    login.add_argument(
        "--no-check",
        action="store_true",
        help="save the key without trying it (one tiny request to the provider's cheap model)",
    )


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    """What `moot mcp serve` and `moot acp` take to shape the sessions they open."""
    parser.add_argument("--model", help="provider/model (env: MOOT_MODEL; or the settings')")
    parser.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"),
        help="how tool calls are settled",
    )
    parser.add_argument(
        "--allowedTools", "--allowed-tools", dest="allowed_tools", action="append", default=[],
        metavar="RULES", help="allow rules on top of the settings'",
    )  # fmt: skip
    parser.add_argument(
        "--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append",
        default=[], metavar="RULES", help="deny rules on top of the settings'",
    )  # fmt: skip
    parser.add_argument(
        "--allow-project-mcp", dest="allow_project_mcp", action="append", default=[],
        metavar="NAMES", help="repository MCP servers to start without asking ('all')",
    )  # fmt: skip


def _fill_mcp(mcp: argparse.ArgumentParser) -> None:
    actions = mcp.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add",
        help="add a server: NAME COMMAND [ARGS...] (stdio), or NAME URL with --transport",
        description="Add an MCP server. stdio: moot mcp add NAME -- COMMAND [ARGS...]; "
        "remote: moot mcp add --transport http NAME URL.",
    )
    add.add_argument("--scope", choices=("local", "project", "user"), default="local",
                     help="local: .moot/settings.local.json (default); project: .mcp.json; "
                     "user: your settings")  # fmt: skip
    add.add_argument("--transport", "-t", choices=("stdio", "http", "sse"), default="stdio")
    add.add_argument("--env", "-e", action="append", default=[], metavar="NAME=VALUE")
    add.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'")
    add.add_argument("name")
    add.add_argument("target", metavar="COMMAND_OR_URL")
    add.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")
    actions.add_parser("list", help="every server here: origin, approval and state")
    get = actions.add_parser("get", help="one server: its definition, state, tools and prompts")
    get.add_argument("name")
    remove = actions.add_parser("remove", help="remove a server from the file that defines it")
    remove.add_argument("name")
    remove.add_argument("--scope", choices=("local", "project", "user"))
    approve = actions.add_parser(
        "approve", help="let a repository's server start in this workspace (remembered)"
    )
    approve.add_argument("name")
    serve = actions.add_parser(
        "serve", help="serve moot's workspace tools over MCP on stdio, for another agent"
    )
    add_session_flags(serve)


def _fill_trust(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-y", "--yes", action="store_true", help="approve what the files ask for without asking"
    )
    parser.add_argument(
        "--revoke", action="store_true", help="forget every approval of this workspace"
    )


def _fill_resident(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("status", help="whether one runs: its pid, children and modules")
    actions.add_parser("stop", help="take no more runs; end once the running ones end")


COMMAND_TABLE: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("sessions", "list, show, export, delete, fork and prune sessions", _fill_sessions),
    ("cost", "tokens and cost per session and model (catalog prices)", _fill_cost),
    ("doctor", "configured providers, keys and endpoints", _fill_doctor),
    ("sandbox", "which sandbox runs shell commands; try one in it", _fill_sandbox),
    ("undo", "take back moot's last commit here (see MOOT_AUTO_COMMIT)", _fill_nothing),
    ("skills", "list, show and validate skills (SKILL.md folders)", _fill_skills),
    ("init", "have the model write an AGENTS.md for this repository (headless)", _fill_init),
    ("trust", "approve what this repository's settings, skills and commands turn on", _fill_trust),
    ("login", "save an API key (mode 0600) for a provider", _fill_login),
    ("mcp", "MCP servers: add, list, get, remove, approve; serve", _fill_mcp),
    ("acp", "speak the Agent Client Protocol on stdio (for editors)", add_session_flags),
    ("resident", "the resident moot that starts runs at once: status, stop", _fill_resident),
)
"""Each command: its name, its line in `moot --help`, and what fills in its parser."""
COMMANDS = frozenset(name for name, _, _ in COMMAND_TABLE)

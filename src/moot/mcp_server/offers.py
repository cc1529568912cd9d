"""What `moot mcp serve` offers besides running tools: how each tool behaves (annotations, so a
client can run the read-only ones without asking), the session's skills and custom commands as
prompts, and the workspace files the session may read as resources.

Prompts expand as `moot -p "/name args"` would (`SessionCommands.expand`); resources are the
workspace's files (gitignored ones left out), each read through the session's path policy and
`Read(...)` deny rules, as the `read` tool would be.
"""

from __future__ import annotations

import base64
import mimetypes
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from moot.client.session import Session
from moot.protocol import ops

if TYPE_CHECKING:
    from mcp_types import ToolAnnotations

    from moot.mcp_server.tools import WorkspaceTools

BEHAVIOUR: dict[str, tuple[str, bool, bool, bool, bool]] = {
    # name: (title, read-only, destructive, idempotent, open world)
    "read": ("Read a file", True, False, True, False),
    "grep": ("Search file contents", True, False, True, False),
    "glob": ("Find files by pattern", True, False, True, False),
    "ls": ("List a directory", True, False, True, False),
    "repo_map": ("Map the repository", True, False, True, False),
    "symbols": ("Find symbols", True, False, True, False),
    "git_status": ("Git status", True, False, True, False),
    "git_diff": ("Git diff", True, False, True, False),
    "git_log": ("Git log", True, False, True, False),
    "git_show": ("Git show", True, False, True, False),
    "shell_output": ("Read a background shell's output", True, False, False, False),
    "edit": ("Edit a file", False, True, False, False),
    "multi_edit": ("Edit a file in several places", False, True, False, False),
    "write": ("Write a file", False, True, True, False),
    "bash": ("Run a shell command (sandboxed)", False, True, False, True),
    "lint": ("Run the project's linters (sandboxed)", False, False, True, False),
    "test": ("Run the project's tests (sandboxed)", False, False, True, False),
    "kill_shell": ("Stop a background shell", False, True, True, False),
    "git_commit": ("Git commit", False, False, False, False),
    "git_branch": ("Git branch", False, False, False, False),
    "moot_task": ("Give moot a task", False, True, False, True),
}
"""How each served tool behaves, for the client (MCP's tool annotations). Hints, not
guarantees: moot's permissions and sandbox still decide every call."""

PAGE = 500
"""Resources listed a page at a time."""

MAX_RESOURCE_BYTES = 2_000_000


def tool_annotations(name: str) -> ToolAnnotations | None:
    """MCP's annotations of a served tool (None for one not in `BEHAVIOUR`)."""
    from mcp_types import ToolAnnotations

    if name not in BEHAVIOUR:
        return None
    title, read_only, destructive, idempotent, open_world = BEHAVIOUR[name]
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


class Offers:
    """The prompts and resources of one served session."""

    def __init__(self, session: Session, tools: WorkspaceTools) -> None:
        self.session = session
        self.tools = tools

    # ---- prompts -------------------------------------------------------------------------

    def prompts(self) -> list[Any]:
        from mcp_types import Prompt, PromptArgument

        briefing = self.session.briefing
        if briefing is None:
            return []
        listed = []
        for entry in briefing.guidance.invocable():
            hint = entry.argument_hint
            arguments = [
                PromptArgument(name="arguments", description=hint or "what follows the command")
            ]
            listed.append(
                Prompt(
                    name=entry.name,
                    title=f"/{entry.name}",
                    description=f"{entry.description} ({entry.kind})".strip(),
                    arguments=arguments,
                )
            )
        return listed

    def prompt(self, name: str, arguments: dict[str, str]) -> Any:
        """The prompt's messages, as moot would send `/name arguments`.

        Raises:
            LookupError: No such skill or command (the message lists those there are).
        """
        from mcp_types import GetPromptResult, PromptMessage, TextContent

        commands = self.session.runtime.options.commands
        if commands is None:
            raise LookupError("this workspace has no skills or custom commands")
        words = " ".join(v for v in arguments.values() if v)
        turn = commands.expand(ops.RunCommand(name=name, arguments=words))
        if isinstance(turn, str):
            raise LookupError(turn)
        message = PromptMessage(role="user", content=TextContent(type="text", text=turn.prompt))
        return GetPromptResult(description=f"/{name} {words}".strip(), messages=[message])

    # ---- resources -----------------------------------------------------------------------

    def resources(self, cursor: str | None) -> Any:
        """A page of the workspace's files (the next page's cursor: an offset)."""
        from itertools import islice

        from mcp_types import ListResourcesResult, Resource

        from moot.workspace.walk import walk_files

        workspace = self.session.workspace
        start = int(cursor) if cursor and cursor.isdigit() else 0
        found = walk_files(workspace.root, workspace.root, workspace.ignore())
        page = list(islice(found, start, start + PAGE + 1))
        listed = [
            Resource(
                name="/".join(entry.parts),
                uri=(workspace.root.joinpath(*entry.parts)).as_uri(),
                mime_type=mimetypes.guess_type(entry.parts[-1])[0] or "text/plain",
            )
            for entry in page[:PAGE]
            if not self._denied("/".join(entry.parts))
        ]
        more = str(start + PAGE) if len(page) > PAGE else None
        return ListResourcesResult(resources=listed, next_cursor=more)

    def _denied(self, path: str) -> bool:
        verdict, _ = self.tools.verdict("read", {"path": path})
        return verdict.decision == "deny"

    def read(self, uri: str) -> Any:
        """A file's contents, read as the `read` tool would be allowed to.

        Raises:
            LookupError: Not a file URI of the workspace, refused, or not readable.
        """
        from mcp_types import BlobResourceContents, ReadResourceResult, TextResourceContents

        from moot.workspace.no_follow import PathRefused

        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise LookupError(f"moot serves file:// resources of its workspace, not {uri}")
        path = unquote(parsed.path)
        if "read" not in self.tools.tools:
            raise LookupError("reading is turned off for this session")
        verdict, _ = self.tools.verdict("read", {"path": path})
        if verdict.decision == "deny":
            raise LookupError(f"moot refused to read {path}: {verdict.reason}")
        try:
            real = self.session.workspace.resolve_read(path)
            if real.stat().st_size > MAX_RESOURCE_BYTES:
                raise LookupError(f"{path} is larger than {MAX_RESOURCE_BYTES:,} bytes")
            data = real.read_bytes()
        except (PathRefused, OSError) as exc:
            raise LookupError(f"cannot read {path}: {exc}") from None
        mime = mimetypes.guess_type(real.name)[0] or "text/plain"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode()
            contents: Any = BlobResourceContents(uri=uri, mime_type=mime, blob=blob)
        else:
            contents = TextResourceContents(uri=uri, mime_type=mime, text=text)
        return ReadResourceResult(contents=[contents])

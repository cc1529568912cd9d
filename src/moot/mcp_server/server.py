"""`moot mcp serve`: the SDK's low-level MCP server over stdio, answering with moot's tools.

The low-level `Server` is used because moot's tools already have their JSON schemas (generated
data, `moot.tools.builtin_specs`). A call that would ask the person becomes an elicitation: on a
handshake-era connection a request back to the client (`elicitation/create`), on a 2026-07-28
one an `InputRequiredResult` the client answers by calling again (the SDK's client does both).
A client that declared no elicitation capability gets a refusal that says how to allow the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moot._version import __version__
from moot.mcp_server.offers import Offers, tool_annotations
from moot.mcp_server.task import TASK_OUTPUT_SCHEMA, TASK_SCHEMA, TASK_TOOL, run_task
from moot.mcp_server.tools import Answer, WorkspaceTools, refusal
from moot.protocol.approval import Verdict
from moot.tools.base import ToolResult

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        InputRequiredResult,
        ListToolsResult,
        PaginatedRequestParams,
    )

    from moot.client.local import SessionOptions

APPROVAL = "approval"
"""The key of the approval question in an `InputRequiredResult`."""
ANSWERS = ("allow once", "allow for this session", "deny")


def approval_message(verdict: Verdict, name: str, arguments: dict[str, Any]) -> str:
    preview = verdict.preview or str(arguments)
    return f"moot asks before {name}: {verdict.reason}\n\n{preview[:4000]}"


def approval_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "title": "Allow this call?", "enum": list(ANSWERS)}
        },
        "required": ["answer"],
    }


def read_answer(result: Any) -> Answer:
    """An `ElicitResult` as an `Answer`."""
    if result is None or getattr(result, "action", "") != "accept":
        action = getattr(result, "action", "no answer")
        return Answer(False, why=f"the person did not allow it ({action})")
    answer = (result.content or {}).get("answer")
    if answer == ANSWERS[0]:
        return Answer(True, "once")
    if answer == ANSWERS[1]:
        return Answer(True, "session")
    return Answer(False, why="the person denied it")


def build_server(tools: WorkspaceTools, task_options: Callable[[], SessionOptions]) -> Server[Any]:
    """The MCP server over `tools`, with `moot_task` opening sessions from `task_options`."""
    from mcp.server import Server

    calls = ServedCalls(tools, task_options)
    offered = Served(Offers(tools.session, tools))
    return Server(
        "moot",
        version=__version__,
        instructions=f"moot's workspace tools for {tools.session.workspace.root}, under "
        "moot's permissions and sandbox; `moot_task` runs moot's own agent on a task. The "
        "workspace's skills and custom commands are prompts; its files are resources.",
        on_list_tools=calls.list_tools,
        on_call_tool=calls.call_tool,
        on_list_prompts=offered.list_prompts,
        on_get_prompt=offered.get_prompt,
        on_list_resources=offered.list_resources,
        on_list_resource_templates=offered.list_resource_templates,
        on_read_resource=offered.read_resource,
    )


class Served:
    """The SDK's handlers for the prompts and resources (`moot.mcp_server.offers`)."""

    def __init__(self, offers: Offers) -> None:
        self.offers = offers

    async def list_prompts(self, ctx: Any, params: Any) -> Any:
        from mcp_types import ListPromptsResult

        return ListPromptsResult(prompts=self.offers.prompts())

    async def get_prompt(self, ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS

        try:
            return self.offers.prompt(params.name, dict(params.arguments or {}))
        except LookupError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        return self.offers.resources(getattr(params, "cursor", None))

    async def list_resource_templates(self, ctx: Any, params: Any) -> Any:
        from mcp_types import ListResourceTemplatesResult

        return ListResourceTemplatesResult(resource_templates=[])

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS

        try:
            return self.offers.read(str(params.uri))
        except LookupError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None


class ServedCalls:
    """What the server answers: the tools it lists, and each call, settled by the session's
    permissions (what would ask the person is put to the client as an elicitation)."""

    def __init__(self, tools: WorkspaceTools, task_options: Callable[[], SessionOptions]) -> None:
        from mcp_types import Tool

        self.tools = tools
        self.task_options = task_options
        self.listed = [
            Tool(
                name=name,
                description=tool.description,
                input_schema=tool.parameters,
                annotations=tool_annotations(name),
            )
            for name, tool in tools.tools.items()
        ]
        self.listed.append(
            Tool(
                name=TASK_TOOL,
                description="Give moot (a coding agent working in this workspace) a task; it "
                "works on it with its own tools, under its permissions and sandbox, and returns "
                "its answer. Pass `session_id` from an earlier answer to continue that session.",
                input_schema=TASK_SCHEMA,
                output_schema=TASK_OUTPUT_SCHEMA,
                annotations=tool_annotations(TASK_TOOL),
            )
        )

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        from mcp_types import ListToolsResult

        return ListToolsResult(tools=self.listed)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        name, arguments = params.name, dict(params.arguments or {})
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if name == TASK_TOOL:
            return await self._task(ctx, arguments, modern)
        tools = self.tools
        if name not in tools.tools:
            return _result(
                ToolResult.error(f"no tool {name!r}; moot serves {', '.join(tools.tools)}")
            )
        verdict, request = tools.verdict(name, arguments)
        if verdict.decision == "deny":
            return _result(ToolResult.error(f"moot refused {name}: {verdict.reason}"))
        if verdict.decision == "ask":
            answer = await self._answer(ctx, params, verdict, arguments, modern)
            if not isinstance(answer, Answer):
                return answer  # a refusal, or the question for the client to answer
            if not answer.allowed:
                return _result(ToolResult.error(f"moot did not run {name}: {answer.why}"))
            if answer.scope == "session" and verdict.suggestions:
                tools.remember(verdict.suggestions[0])
        return _result(await tools.run(name, arguments, request))

    async def _task(
        self, ctx: ServerRequestContext[Any], arguments: dict[str, Any], modern: bool
    ) -> CallToolResult:
        """`moot_task`: a session of its own runs the task to its answer."""
        ask = None
        if _can_elicit(ctx) and not modern:  # a running task can ask only on a back-channel

            async def ask(message: str) -> Answer:
                answer = await ctx.session.elicit_form(
                    message, approval_schema(), related_request_id=ctx.request_id
                )
                return read_answer(answer)

        outcome = await run_task(self.task_options(), arguments, ask)
        return _result(outcome, structured=dict(outcome.display) or None)

    async def _answer(
        self,
        ctx: ServerRequestContext[Any],
        params: CallToolRequestParams,
        verdict: Verdict,
        arguments: dict[str, Any],
        modern: bool,
    ) -> Answer | CallToolResult | InputRequiredResult:
        """The person's answer to a call that asks, through the client: an elicitation on a
        handshake-era connection, an `InputRequiredResult` on a modern one (then the answer
        comes with the call made again). A client that cannot answer gets the refusal."""
        from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

        name = params.name
        if not _can_elicit(ctx):
            return _result(ToolResult.error(refusal(verdict, name)))
        message = approval_message(verdict, name, arguments)
        if modern:
            responses = params.input_responses or {}
            if APPROVAL not in responses:
                question = ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=message, requested_schema=approval_schema()
                    )
                )
                return InputRequiredResult(input_requests={APPROVAL: question})
            return read_answer(responses[APPROVAL])
        return read_answer(
            await ctx.session.elicit_form(
                message, approval_schema(), related_request_id=ctx.request_id
            )
        )


def _result(outcome: ToolResult, structured: dict[str, Any] | None = None) -> CallToolResult:
    from mcp_types import CallToolResult, ImageContent, TextContent

    content: list[Any] = [TextContent(type="text", text=outcome.content)]
    content += [
        ImageContent(type="image", data=a.data, mime_type=a.mime_type) for a in outcome.attachments
    ]
    return CallToolResult(content=content, is_error=outcome.is_error, structured_content=structured)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    from mcp_types import ClientCapabilities, ElicitationCapability

    wanted = ClientCapabilities(elicitation=ElicitationCapability())
    return ctx.session.check_client_capability(wanted)

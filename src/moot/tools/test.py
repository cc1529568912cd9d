"""The `test` tool: run the project's tests (pytest, vitest, jest, `node --test`, `go test`,
`cargo test`, `make test`, or the `verify.test` setting) and read the results: counts, each
failing test with its message, `path:line` and the command that runs it alone
(`moot.tools.verify_run`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from moot.tools.base import SideEffect, ToolContext, ToolResult, tool
from moot.tools.verify_run import Verifier
from moot.tools.verify_tool import DEFAULT_TIMEOUT, VerifyTool, run_checks

if TYPE_CHECKING:
    from moot.sandbox.base import Sandbox
    from moot.workspace.paths import Workspace

DESCRIPTION = (
    "Run the project's tests (the runner is found from its files: pytest, vitest, jest, node "
    "--test, go test, cargo test, a Makefile's test target, or the verify.test setting) in the "
    "sandbox and get structured results: counts, and each failing test with its message, "
    "path:line and a command that reruns it alone. Run it after changing code and before "
    "saying you are done; narrow it with path (a test file, directory or id such as "
    "tests/test_x.py::test_a) or filter (a test-name pattern) while iterating."
)


def run_tests_tool(
    sandbox: Sandbox | None,
    workspace: Workspace,
    *,
    configured: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> VerifyTool:
    """The `test` tool for one session (`configured`: the `verify.test` setting's lines)."""
    verifier = Verifier("test", sandbox, workspace, configured, env)

    @tool(name="test", side_effect=SideEffect.RUNS_COMMANDS, description=DESCRIPTION)
    async def run_tests(
        ctx: ToolContext,
        path: Annotated[
            str | None,
            Field(description="A test file, directory or test id; every test if omitted"),
        ] = None,
        filter: Annotated[  # the name the model reads
            str | None, Field(description="Only tests whose names match this pattern")
        ] = None,
        timeout: Annotated[float, Field(gt=0, description="Seconds; at most 1800")] = (
            DEFAULT_TIMEOUT
        ),
    ) -> ToolResult:
        return await run_checks(verifier, {"path": path, "filter": filter}, timeout, ctx)

    return VerifyTool(run_tests, verifier)

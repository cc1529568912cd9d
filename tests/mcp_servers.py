"""MCP servers written with the SDK, for tests: `python tests/mcp_servers.py KIND [--port N]`.

KIND is one of:

- `good`: tools `echo`, `add`, `picture`, `big`, `slow_echo` and `list_files`, a prompt `review`
  and a resource `notes://today`; well behaved.
- `crash`: like `good`, but its `crash` tool writes to stderr and exits the process.
- `orphans`: like `crash`, and its `orphans` tool starts helpers that exit at once, each in a
  process of its own that exits first (so each is an orphan: moot's host adopts it).
- `hang`: its `hang` tool never answers.
- `malformed`: its `garble` tool writes lines that are not JSON-RPC to stdout, then never
  answers.
- `flood`: its `flood` tool answers with 3 MB of text.
- `many`: 60 tools with long descriptions and schemas (for deferral).
- `dies`: exits at once, writing why to stderr.
- `http`: `good` over streamable HTTP on 127.0.0.1:`--port`.
- `parent`: `good`, having started a helper process in its own process group, which it leaves
  running when it ends (as a server started by a wrapper script or `npx` may).

Every tool call is also appended to the file `MOOT_TEST_MCP_LOG` names, when set (so a test can
prove what the server saw, or that it never started).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()


ORPHANS = """
import os, sys
end, ended = os.pipe()
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        os.close(ended)
        os.read(end, 1)
        os._exit(0)
    print(pid, flush=True)
"""


def note(text: str) -> None:
    log = os.environ.get("MOOT_TEST_MCP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(text + "\n")


def build(kind: str) -> MCPServer:
    note(f"started {kind} pid={os.getpid()}")
    server = MCPServer(f"test-{kind}")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        note(f"echo {text}")
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def picture() -> list:
        """A tiny picture."""
        from mcp.types import ImageContent, TextContent

        return [
            TextContent(type="text", text="a red dot"),
            ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
        ]

    @server.tool()
    def big(chars: int) -> str:
        """Text of the given length."""
        return "".join(f"line {i:06d}\n" for i in range(chars // 12 + 1))[:chars]

    @server.tool()
    def list_files() -> str:
        """The files in the server's working directory."""
        return "\n".join(sorted(p.name for p in Path.cwd().iterdir()))

    @server.tool()
    async def steps(count: int, ctx: Context) -> str:
        """Count to `count`, reporting progress at each step."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count, f"step {step}")
        return "counted"

    @server.prompt()
    def review(topic: str) -> str:
        """Ask for a review of a topic."""
        return f"Please review {topic} carefully."

    @server.resource("notes://today")
    def today() -> str:
        """Today's notes."""
        return "buy milk; fix the build"

    if kind == "asks":  # elicitation from a Python SDK server

        @server.tool()
        async def ask_name(ctx: Context) -> str:
            """Ask the person their name (elicitation), as a Python SDK server does."""
            from pydantic import BaseModel

            class Name(BaseModel):
                name: str

            answer = await ctx.elicit("Your name?", Name)
            if answer.action == "accept":
                return f"hello {answer.data.name}"
            return f"no name ({answer.action})"

    if kind == "orphans":

        @server.tool()
        def orphans(count: int) -> str:
            """Start `count` helpers that exit at once, orphaned; their pids."""
            import subprocess

            # Each helper exits once the process that started it has: on a pipe's end.
            started = subprocess.run(
                [sys.executable, "-c", ORPHANS, str(count)], capture_output=True, text=True
            )
            return started.stdout

    if kind in ("crash", "orphans"):

        @server.tool()
        def crash() -> str:
            """Crash the server."""
            print("boom: the crash tool was called", file=sys.stderr, flush=True)
            os._exit(3)

    if kind == "hang":

        @server.tool()
        async def hang() -> str:
            """Never answer."""
            await asyncio.Event().wait()
            return "never"

    if kind == "malformed":

        @server.tool()
        async def garble() -> str:
            """Write lines that are not JSON-RPC, then never answer."""
            # The SDK moves fd 1 to stderr while it serves (stray prints cannot corrupt the
            # wire), so write to the copy of the wire taken before it started.
            os.write(WIRE, b'this is not json\n{"jsonrpc": "2.0", "what": 1}\n')
            await asyncio.Event().wait()
            return "never"

    if kind == "flood":

        @server.tool()
        def flood() -> str:
            """Three megabytes of text."""
            return "".join(f"flood line {i:08d}\n" for i in range(160_000))

    if kind == "many":
        for index in range(60):

            def make(i: int):
                def tool_fn(query: str, limit: int = 10, verbose: bool = False) -> str:
                    return f"tool {i}: {query}"

                tool_fn.__name__ = f"lookup_{i:02d}"
                tool_fn.__doc__ = (
                    f"Look up records of kind {i} in the catalogue by a free-text query. "
                    + "It returns matching records with their identifiers and summaries. " * 3
                )
                return tool_fn

            server.tool()(make(index))
    return server


WIRE = 1


def main() -> None:
    global WIRE
    kind = sys.argv[1]
    WIRE = os.dup(1)
    if kind == "dies":
        print("dies: cannot open the database /nonexistent/db", file=sys.stderr, flush=True)
        sys.exit(1)
    if kind == "stuck":  # hangs at start, saying why on stderr
        print("stuck: waiting for the licence server at 10.9.8.7", file=sys.stderr, flush=True)
        import threading

        threading.Event().wait()
    if kind == "parent":
        import subprocess

        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        note(f"helper pid={helper.pid}")
        kind = "good"
    if kind == "http":
        port = int(sys.argv[sys.argv.index("--port") + 1])
        build("good").run(transport="streamable-http", host="127.0.0.1", port=port)
        return
    build(kind).run()


if __name__ == "__main__":
    main()

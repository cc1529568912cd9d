"""Providers: start-up to the first model request, a whole task, SSE parsing, request size.

All against a real HTTP server on 127.0.0.1 (tests/model_server.py) that answers instantly in
the Anthropic Messages wire format, so the numbers are moot's own cost:
- `moot -p` process start to the moment its first model request reaches the server, beside
  the floor under it: a bare Python process that imports asyncio and httpx and posts once;
- a whole three-turn task (read a file, edit it with a tool, answer): wall time and peak RSS;
- SSE parsing: deltas per second through the Anthropic adapter, over local HTTP, and through
  the bare decoder;
- the bytes of the first request (system prompt plus tool schemas), as models are billed for
  them on every request.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, mib, ms
from timing import GNU_TIME, VENV_BIN, child_env, median, percentile

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from model_server import ModelServer, Reply  # noqa: E402
from wire_builders import anthropic  # noqa: E402

NAME = "providers"
TARGET = "first request <= 150 ms; task <= 400 ms, <= 100 MiB; >= 50,000 deltas/s"
MODEL = "anthropic/claude-haiku-4-5"


def _env(server: ModelServer, home: Path) -> dict[str, str]:
    keep = {k: v for k, v in child_env().items() if not k.startswith(("ANTHROPIC_", "MOOT_"))}
    return keep | {
        "ANTHROPIC_API_KEY": "sk-bench",
        "ANTHROPIC_BASE_URL": server.url,
        "MOOT_HOME": str(home),
    }


def _moot(task: str) -> list[str]:
    return [
        str(VENV_BIN / "moot"),
        "-p",
        task,
        "--model",
        MODEL,
        "--permission-mode",
        "acceptEdits",
    ]


# The floor under moot's start-up: a Python process that imports asyncio and httpx and posts
# one streaming request, as moot's providers do, and nothing else.
BARE_HTTPX = """
import asyncio, os, httpx
async def main():
    async with httpx.AsyncClient() as client:
        url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
        async with client.stream("POST", url, json={"model": "m"}) as response:
            await response.aread()
asyncio.run(main())
"""


def first_request(runs: int, work: Path, command: list[str]) -> list[float]:
    """Seconds from spawning `command` to its first request arriving at the server."""
    times = []
    with ModelServer() as server:
        for _ in range(runs):
            server.reply(Reply(body=anthropic("ok")))
            seen = len(server.requests)
            started = time.perf_counter()
            proc = subprocess.Popen(
                command, cwd=work, env=_env(server, work / "home"), stdout=subprocess.DEVNULL
            )
            while len(server.requests) == seen and proc.poll() is None:
                time.sleep(0.0005)
            times.append(time.perf_counter() - started)
            proc.wait()
    return times


def _task_replies() -> list[Reply]:
    edit = {"path": "notes.txt", "old": "wrold", "new": "world"}
    return [
        Reply(body=anthropic(call=("read", {"path": "notes.txt"}), n=1)),
        Reply(body=anthropic(call=("edit", edit), n=2)),
        Reply(body=anthropic("Fixed the typo.", n=3)),
    ]


def whole_task(runs: int, work: Path) -> tuple[list[float], list[float], int]:
    """Wall seconds and peak RSS (KiB) of the three-turn task; bytes of its first request."""
    walls, rss = [], []
    first_bytes = 0
    with ModelServer() as server:
        for _ in range(runs):
            (work / "notes.txt").write_text("hello wrold\n")
            server.reply(*_task_replies())
            seen = len(server.requests)
            command = _moot("fix the typo in notes.txt")
            if GNU_TIME:
                command = [GNU_TIME, "-f", "%M", *command]
            started = time.perf_counter()
            done = subprocess.run(
                command, cwd=work, env=_env(server, work / "home"), capture_output=True, text=True
            )
            walls.append(time.perf_counter() - started)
            if done.returncode != 0 or (work / "notes.txt").read_text() != "hello world\n":
                raise RuntimeError(f"the benchmark task failed: {done.stderr[-500:]}")
            if GNU_TIME:
                rss.append(float(done.stderr.strip().splitlines()[-1]))
            first_bytes = len(server.requests[seen].body)
    return walls, rss, first_bytes


def _stream(deltas: int) -> bytes:
    head = anthropic("", n=1).split(b"event: message_delta")[0]
    piece = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"token "}}\n\n'
    )
    start = (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
    )
    tail = anthropic("", n=1)[len(head) :]
    return head + start + piece * deltas + tail


async def _adapter_rate(deltas: int) -> float:
    from moot.protocol.messages import UserMessage
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.base import ModelRequest, TextPart
    from moot.providers.config import ProviderConfig

    with ModelServer() as server:
        server.reply(Reply(body=_stream(deltas), chunk_size=16384))
        provider = AnthropicProvider(ProviderConfig("anthropic", "claude-haiku-4-5", server.url))
        request = ModelRequest(model=MODEL, system="", messages=(UserMessage(content="go"),))
        started = time.perf_counter()
        count = sum([isinstance(d, TextPart) async for d in provider.stream(request)], start=0)
        elapsed = time.perf_counter() - started
        await provider.aclose()
    assert count == deltas, count
    return deltas / elapsed


def _decoder_rate(deltas: int) -> float:
    from moot.providers.sse import SSEDecoder

    body = _stream(deltas)
    started = time.perf_counter()
    decoder = SSEDecoder()
    count = 0
    for offset in range(0, len(body), 16384):
        for event in decoder.feed(body[offset : offset + 16384]):
            json.loads(event.data)
            count += 1
    return count / (time.perf_counter() - started)


def run(quick: bool = False) -> list[Row]:
    runs = 3 if quick else 10
    deltas = 20_000 if quick else 200_000
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        work = Path(tmp)
        starts = first_request(runs, work, _moot("hi"))
        floor = first_request(runs, work, [str(VENV_BIN / "python"), "-c", BARE_HTTPX])
        walls, rss, first_bytes = whole_task(runs, work)
    rows = [
        Row(
            f"moot -p: process start to first model request, p50 / p90 ({runs} runs)",
            f"{ms(median(starts))} / {ms(percentile(starts, 90))}",
            "p50 <= 150 ms",
        ),
        Row(
            "  the floor: python importing asyncio + httpx, one streaming POST, p50",
            ms(median(floor)),
            "(reference)",
        ),
        Row(
            f"three-turn task (read, edit, answer) on a local server: wall p50 ({runs} runs)",
            ms(median(walls)),
            "<= 400 ms",
        ),
    ]
    if rss:
        rows.append(Row("  same, peak RSS (GNU time), median", mib(median(rss)), "<= 100 MiB"))
    adapter = asyncio.run(_adapter_rate(deltas))
    rows += [
        Row(
            f"SSE: Anthropic adapter over local HTTP, {deltas:,} text deltas",
            f"{adapter:,.0f} deltas/s",
            ">= 50,000 deltas/s",
        ),
        Row("  same, the SSE decoder + JSON alone", f"{_decoder_rate(deltas):,.0f} events/s", ""),
        Row(
            "first request body (system prompt + tool schemas + task)",
            f"{first_bytes:,} bytes",
            "(printed; leading agents: 30-113 KB)",
        ),
    ]
    return rows


def main() -> None:
    from report import table

    print(table(run(quick="--quick" in sys.argv)))


if __name__ == "__main__":
    main()

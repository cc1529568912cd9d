"""The Textual app: start-up in tmux, streaming, a long session, the trace pane, and idling.

- Start: `moot --model scripted:...` in a new tmux window (the tmux server already running), from
  the spawn to the status line and the prompt drawn, each round beside a bare Textual app
  (`BARE_APP`) drawn the same way (`capture-pane` polled every ~5 ms; the
  app focuses the prompt before it draws the status); then to the session open (its id on the
  status line), in a small repository and in the generated 100,000-file one
  (`start_speed.committed_repo`), their order swapped every round; and the CPU time each
  process had used when its last mark showed (`timing.cpu_seconds`), which the load moves
  much less than the wall times. The same start in the small repository through the resident
  moot (`MOOT_RESIDENT=1`, `resident_moot.py`) takes part in each round too, first, second or
  third in turn; its cold start, which finds no resident process and starts one, is given on
  its own.
  Idle: the same process, 11 s after it is ready (the cursor stops blinking after 10 s), its CPU
  time over 5 s from `/proc` and the bytes it wrote to the terminal meanwhile (`pipe-pane`): a
  repaint would write some.
- Streaming: a headless app on the fake client (`moot.testing.FakeClient`) that publishes a
  10,000-token answer at 1,000 tokens a second (one token of ~4 characters a delta, in bursts
  every 10 ms). A probe task asks to wake every 5 ms; how late it wakes is the event loop's stall.
  The last token "on screen" is the first frame painted with the answer's Markdown holding it;
  a key is posted every ~100 ms and timed to the first frame painted with it in the prompt.
- Long session: a session of 2,000 messages (1,000 turns) opened with its history (as `--resume`
  shows it), then turns arriving live: the time from a turn's event to the first frame that
  paints its block (`FrameWatch`), and to the app idle again; the stall p99 while an answer
  streams, and the process's peak RSS.
- Trace pane: 5,000 nodes (tool calls under turns); one batch applied and drawn, and how many
  batches a second apply while events pour in.

Each part runs in its own process (`python app_speed.py PART` prints JSON), so RSS is its own,
and its app owns that process's heap as `moot`'s does (`own_heap`: frozen once the session
shows, `tui/heap.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from report import Row, ms
from resident_moot import ResidentMoot, cold_row, ended, environ_of
from start_speed import committed_repo, ratio_row
from timing import VENV_BIN, child_env, cpu_seconds, percentile, tmux_session

NAME = "app"
WORDS = ("alpha ", "beta ", "gamma ", "delta ", "tokens ", "stream ", "here ", "quick ") * 7 + (
    "done.\n\n",
)
"""The answer's tokens: a paragraph every 57 tokens (each paragraph is a widget while it
streams)."""


# ---- the headless parts (run in a child process) -----------------------------------------------


def _ids(run_id: str, i: int = 0) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {
        "run_id": run_id,
        "call_id": run_id,
        "agent": "moot",
        "parent_call_id": None,
        "ts": datetime(2026, 12, 1, tzinfo=UTC),
    }


def _turn(run_id: str, prompt: str, answer: str) -> list[Any]:
    from moot.protocol import events as ev
    from moot.protocol.messages import Usage
    from moot.protocol.states import RunState, StopReason

    ids = _ids(run_id)
    return [
        ev.TurnStarted(**ids, prompt=prompt, mode="default"),
        ev.ModelResponded(**ids, model="scripted", text=answer),
        ev.TurnFinished(
            **ids,
            state=RunState.COMPLETED,
            stop_reason=StopReason.COMPLETED,
            output=answer,
            turns=1,
            usage=Usage(input_tokens=100, output_tokens=20),
            cost_usd=0.0,
            duration_ms=10.0,
        ),
    ]


class Probe:
    """Wakes every `period` s and records how late it woke (the event loop's stalls)."""

    def __init__(self, period: float = 0.005) -> None:
        self.period, self.stalls, self._task = period, [], None  # type: ignore[var-annotated]

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())  # type: ignore[assignment]

    async def _run(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(self.period)
            self.stalls.append(max(0.0, time.perf_counter() - asked - self.period))

    def stop(self) -> list[float]:
        if self._task is not None:
            self._task.cancel()
        return self.stalls


async def _stream(app: Any, client: Any, tokens: int, *, keys: bool) -> dict[str, Any]:
    """Publish an answer of `tokens` tokens at 1,000 a second; stalls, last token, key echo."""
    from textual import events

    from moot.protocol import events as ev
    from moot.tui.widgets.answer import AnswerBlock
    from moot.tui.widgets.prompt import PromptInput

    run_id = f"run_s{time.perf_counter_ns()}"
    ids = _ids(run_id)
    client.emit(ev.TurnStarted(**ids, prompt="stream", mode="default"))
    await asyncio.sleep(0.05)
    prompt = app.query_one(PromptInput)
    prompt.focus()
    frames = FrameWatch(app.screen)
    probe = Probe()
    probe.start()
    echoes: list[float] = []
    text = [WORDS[i % len(WORDS)] for i in range(tokens)]
    text[-1] = "FINALTOKEN"
    began = time.perf_counter()
    sent = 0
    next_key = began + 0.5
    key: tuple[float, asyncio.Future[float]] | None = None
    while sent < tokens:
        due = int((time.perf_counter() - began) * 1000) + 1
        while sent < min(due, tokens):
            client.emit(ev.TextDelta(**ids, text=text[sent]))
            sent += 1
        now = time.perf_counter()
        if keys and key is None and now >= next_key:
            typed = prompt.text.count("q") + 1
            key = (now, frames.painted(lambda typed=typed: prompt.text.count("q") >= typed))
            app.post_message(events.Key("q", "q"))
        await asyncio.sleep(0.01)
        if key is not None and key[1].done():
            echoes.append(key[1].result() - key[0])
            key, next_key = None, time.perf_counter() + 0.1
    chat = app.chat

    def last_token_shows() -> bool:
        last = chat.children[-1] if chat.children else None
        markdown = last._markdown if isinstance(last, AnswerBlock) else None
        return markdown is not None and markdown.source.endswith("FINALTOKEN")

    last_sent = time.perf_counter()
    last_shown = await frames.painted(last_token_shows) - last_sent
    stalls = probe.stop()
    whole = "".join(text)
    client.emit(ev.ModelResponded(**ids, model="scripted", text=whole))
    client.emit(*_turn(run_id, "", whole)[2:])
    await asyncio.sleep(0.2)
    return {"stalls": stalls, "last_shown": last_shown, "echoes": echoes}


def _shows(chat: Any, kind: type, text: str) -> bool:
    last = chat.children[-1] if chat.children else None
    return isinstance(last, kind) and str(last.content) == text


def _app(client: Any, **kw: Any) -> Any:
    from moot.frontend.history import PromptHistory
    from moot.tui.app import MootApp
    from moot.tui.options import AppOptions

    # Each part's process is the app's alone, as `moot`'s is: its heap is tuned as `run_app`
    # tunes it (`own_heap`, `tui/heap.py`).
    return MootApp(client, AppOptions(history=PromptHistory(None), own_heap=True, **kw))


async def part_stream(tokens: int) -> dict[str, Any]:
    from moot.testing import FakeClient

    client = FakeClient(autoplay=False)
    app = _app(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        return await _stream(app, client, tokens, keys=True)


class FrameWatch:
    """Counts the frames the screen paints and tells when the first frame painted with a
    condition true (a frame is painted in the compositor's refresh, which follows each layout
    in the same step; this hooks it, a private method of Textual's `Screen`: a benchmark may).
    Timing to the frame leaves out the waits of polling and of `Pilot.pause`, which sleeps at
    least 20 ms and until the whole app is idle."""

    def __init__(self, screen: Any) -> None:
        self.count = 0
        self.last = 0.0
        self._waiting: list[tuple[Any, asyncio.Future[float]]] = []
        refresh = screen._compositor_refresh

        def watched() -> None:
            refresh()
            self.count += 1
            self.last = time.perf_counter()
            for waiter in list(self._waiting):
                shows, painted = waiter
                if shows():
                    painted.set_result(self.last)
                    self._waiting.remove(waiter)

        screen._compositor_refresh = watched

    def painted(self, shows: Any) -> asyncio.Future[float]:
        """When the first frame from now on is painted with `shows()` true."""
        painted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting.append((shows, painted))
        return painted


def _peak_rss_kib_now() -> int:
    """This process's own peak resident set size (`VmHWM`), in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/status has no VmHWM")


async def part_session(messages: int, live_turns: int, tokens: int) -> dict[str, Any]:
    from moot.testing import FakeClient
    from moot.tui.widgets.blocks import UserBlock

    client = FakeClient(autoplay=False)
    for i in range(messages // 2):
        answer = f"Answer {i}: " + " ".join(WORDS[j % len(WORDS)].strip() for j in range(60))
        client.emit(*_turn(f"run_{i}", f"question {i}", answer))
    app = _app(client, show_history=True)
    shown: list[float] = []
    settled: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        chat = app.chat
        frames = FrameWatch(app.screen)
        for i in range(live_turns):

            def block_shows(text: str = f"live {i}") -> bool:
                last = chat.children[-1] if chat.children else None
                return (
                    _shows(chat, UserBlock, text) and last in app.screen._compositor.visible_widgets
                )

            painted = frames.painted(block_shows)
            began = time.perf_counter()
            client.emit(*_turn(f"run_live{i}", f"live {i}", f"live answer {i}")[:1])
            shown.append(await painted - began)
            await pilot.pause()
            settled.append(time.perf_counter() - began)
            client.emit(*_turn(f"run_live{i}", f"live {i}", f"live answer {i}")[1:])
            await pilot.pause()
        mounted = len(chat.children)
        streamed = await _stream(app, client, tokens, keys=False)
    # The high-water mark of this address space, not `ru_maxrss`: Linux carries the peak of
    # the address space before `exec` into that, and this part's process starts as a copy of
    # the benchmark runner (hundreds of MiB late in a whole run: `timing.peak_rss_kib`).
    rss_kib = _peak_rss_kib_now()
    return {
        "shown": shown,
        "settled": settled,
        "stalls": streamed["stalls"],
        "rss_kib": rss_kib,
        "mounted": mounted,
    }


async def part_trace(nodes: int, seconds: float) -> dict[str, Any]:
    from moot.protocol import events as ev
    from moot.testing import FakeClient
    from moot.tui.widgets.trace import TracePane

    client = FakeClient(autoplay=False)
    app = _app(client)
    per_turn = 50
    async with app.run_test(size=(160, 48)) as pilot:
        trace = app.query_one(TracePane)
        count = 0
        turn = 0
        while count < nodes:
            run_id = f"run_{turn}"
            ids = _ids(run_id)
            trace.take(ev.TurnStarted(**ids, prompt=f"turn {turn}", mode="default"))
            count += 2
            for t in range(per_turn):
                trace.take(ev.ToolStarted(**ids, tool_call_id=f"t{t}", tool="read", arguments={}))
                trace.take(
                    ev.ToolFinished(
                        **ids,
                        tool_call_id=f"t{t}",
                        tool="read",
                        content="",
                        is_error=False,
                        duration_ms=1.0,
                        display={},
                    )
                )
                count += 1
            trace.take(_turn(run_id, "", "")[2])  # the turn finished: it collapses
            turn += 1
        trace.apply_pending()
        await pilot.pause()

        frames = FrameWatch(app.screen)

        async def one_update(i: int, tag: str) -> tuple[float, float]:
            """From the take to the frame that paints the change, and to the app idle again."""
            ids = _ids(f"run_{turn - 1 - i % turn}")
            # Timed from the take: after a quiet spell the pane applies an event at once.
            painted = frames.painted(lambda: True)  # the change is applied before any frame
            began = time.perf_counter()
            trace.take(ev.ToolStarted(**ids, tool_call_id=f"{tag}{i}", tool="bash", arguments={}))
            trace.apply_pending()
            shown = await painted - began
            await pilot.pause()
            return shown, time.perf_counter() - began

        # As the pane shows them (finished turns collapsed), then the worst case: every node.
        await pilot.pause()
        shown = [await one_update(i, "x") for i in range(20)]
        trace.root.expand_all()
        await pilot.pause()
        ones = [await one_update(i, "z") for i in range(20)]
        before = trace.updates
        began = time.perf_counter()
        i = 0
        while time.perf_counter() - began < seconds:
            ids = _ids(f"run_{i % turn}")
            trace.take(ev.ToolStarted(**ids, tool_call_id=f"y{i}", tool="bash", arguments={}))
            i += 1
            await asyncio.sleep(0.002)
        rate = (trace.updates - before) / (time.perf_counter() - began)
    return {
        "shown": [t[0] for t in shown],
        "shown_idle": [t[1] for t in shown],
        "ones": [t[0] for t in ones],
        "ones_idle": [t[1] for t in ones],
        "rate": rate,
        "nodes": count,
        "events": i,
    }


# ---- tmux: start-up and idle -------------------------------------------------------------------


def _tmux_parts(runs: int, idle_s: float, resident: ResidentMoot) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="moot-bench-app-"))
    try:
        repo = root / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        script = root / "script.json"
        script.write_text(json.dumps({"turns": [{"text": "hello"}]}))
        env = child_env()
        for name in ("COLUMNS", "LINES", "NO_COLOR", "TMUX"):
            env.pop(name, None)
        env.update({"MOOT_HOME": str(root / "home"), "TERM": "xterm-256color"})
        env = resident.env(env, resident=False)  # a window asks for the resident moot itself
        socket = str(root / "tmux.sock")
        tmux = tmux_session(socket, env)
        command = f"exec {VENV_BIN / 'moot'} --model scripted:{script}"
        bare = root / "bare.py"
        bare.write_text(BARE_APP)
        bare_command = f"exec {sys.executable} {bare}"

        big = committed_repo()

        def drawn(
            window: str, cmd: str, *marks: str, cwd: Path = repo, through: bool = False
        ) -> list[float]:
            """Seconds from the spawn to each of `marks` on screen, in turn; then the CPU
            seconds the process had used when the last one showed (`through` the resident
            moot: its fork's and the client's)."""
            began = time.perf_counter()
            asks = ["-e", "MOOT_RESIDENT=1"] if through else []
            tmux("new-window", "-t", "bench", "-n", window, "-c", str(cwd), *asks, cmd)
            pid = _pane_pid(tmux, window)
            times: list[float] = []
            while len(times) < len(marks):
                screen = tmux("capture-pane", "-p", "-t", f"bench:{window}")
                while len(times) < len(marks) and marks[len(times)] in screen:
                    times.append(time.perf_counter() - began)
                if time.perf_counter() - began > 30:
                    raise TimeoutError(f"{cmd} never drew {marks[len(times)]!r}:\n{screen}")
                time.sleep(0.005)
            forked = resident.fork_cpu() if through and resident.started else 0.0
            return [*times, cpu_seconds(pid) + forked]

        starts: list[float] = []
        opens: dict[str, list[float]] = {"small": [], "big": [], "resident": []}
        bares: list[float] = []
        cpus: dict[str, list[float]] = {"app": [], "bare": [], "resident": []}
        idle: dict[str, float] = {}
        cold: dict[str, float] = {}
        for n in range(runs + 1):  # the first warms the page cache and .pyc files
            took, bare_cpu = drawn(f"b{n}", bare_command, "bare: ready")
            _closed(tmux, f"b{n}")
            if n:
                bares.append(took)
                cpus["bare"].append(bare_cpu)
            # The big repository before the small one every other round, the resident moot
            # first, second or third in turn: load weighs alike. It has no run in the first
            # round: its cold start follows it.
            order = ["big", "small"] if n % 2 else ["small", "big"]
            if n:
                order.insert(n % 3, "resident")
            for where in order:
                window = f"{where}{n}"
                cwd = big if where == "big" else repo
                # The prompt with the model asked for, then the session's id: it is open.
                ready, opened, cpu = drawn(
                    window, command, "scripted:", "ses_", cwd=cwd, through=where == "resident"
                )
                if n:
                    opens[where].append(opened)
                    if where == "small":
                        starts.append(ready)
                        cpus["app"].append(cpu)
                    if where == "resident":
                        cpus["resident"].append(cpu)
                if n == runs and where == "small":
                    idle = _idle(tmux, f"bench:{window}", root, idle_s)
                _closed(tmux, window)
            if n == 0:
                cold = _cold_start(tmux, drawn, command, resident)
        tmux("kill-server")
        return {
            "starts": starts,
            "opens": opens,
            "bares": bares,
            "cpus": cpus,
            "cold": cold,
            **idle,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cold_start(tmux: Any, drawn: Any, command: str, resident: ResidentMoot) -> dict[str, float]:
    """The first app asking for the resident moot: none is there, so it runs in process and
    starts one as it ends (a hang-up, as `kill-window` gives, ends it so). Then that process's
    first fork, untimed, as each other start has a warm-up run."""
    resident.cold(child_env())  # an empty directory: nothing of the person's could answer
    opened = drawn("cold", command, "scripted:", "ses_", through=True)[1]
    # The resident process's socket is named by values of the pane's environment (`TERM_PROGRAM`
    # is tmux's): `moot resident status` runs with that environment.
    pane_env = environ_of(_pane_pid(tmux, "cold"))
    listened = resident.listening(since=_closed(tmux, "cold"))
    resident.serving(pane_env)
    drawn("warm", command, "scripted:", "ses_", through=True)
    _closed(tmux, "warm")
    return {"opened": opened, "listened": listened}


def _pane_pid(tmux: Any, window: str) -> int:
    return int(tmux("display-message", "-p", "-t", f"bench:{window}", "#{pane_pid}"))


def _closed(tmux: Any, window: str) -> float:
    """Kill `window` and wait for its process to end (`resident_moot.ended`), so that no
    start overlaps the previous one's ending, and nothing writes in the directory after it
    is removed; the moment it ended."""
    pid = _pane_pid(tmux, window)
    tmux("kill-window", "-t", f"bench:{window}")
    return ended(pid)


BARE_APP = """\
from textual.app import App
from textual.widgets import Static, TextArea


class Bare(App):
    def compose(self):
        yield TextArea()
        yield Static("bare: ready")

    def on_mount(self):
        self.query_one(TextArea).focus()


Bare().run()
"""
"""The reference: a Textual app with a focused text area and a line, nothing else (what the
issue's "bare Textual paints in ~290 ms" measures), started in the same rounds as moot."""


def _idle(tmux: Any, target: str, root: Path, idle_s: float) -> dict[str, float]:
    pid = int(tmux("display-message", "-p", "-t", target, "#{pane_pid}").strip())
    time.sleep(11)  # past the cursor's blinking (10 s after the last key)
    written = root / "written"
    tmux("pipe-pane", "-o", "-t", target, f"cat > {written}")
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    before, began = cpu(), time.perf_counter()
    time.sleep(idle_s)
    used, wall = cpu() - before, time.perf_counter() - began
    tmux("pipe-pane", "-t", target)
    size = written.stat().st_size if written.exists() else 0
    return {"idle_cpu": used / wall * 100, "idle_bytes": float(size), "idle_s": wall}


# ---- the table ---------------------------------------------------------------------------------


def _child(part: str, *args: object) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, part, *map(str, args)],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"app_speed {part} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _stall_row(what: str, stalls: list[float], target: str) -> Row:
    p95, p99 = percentile(stalls, 95), percentile(stalls, 99)
    return Row(what, f"{ms(p95)} / {ms(p99)} / {ms(max(stalls))}", target)


def run(*, quick: bool) -> list[Row]:
    rows: list[Row] = []
    if shutil.which("tmux"):
        with ResidentMoot() as resident:
            runs = 2 if quick else 8
            tm = _tmux_parts(runs=runs, idle_s=2 if quick else 5, resident=resident)
            what = (
                "app (tmux), resident: session open (its id shown) / the bare Textual app, "
                "same rounds"
            )
            unserved = resident.unserved(what, runs + 1, "<= 1.25x")
        starts = tm["starts"]
        rows.append(
            Row(
                f"app (tmux): process start to a focused, ready prompt, p50 / p90 of {len(starts)}",
                f"{ms(percentile(starts, 50))} / {ms(percentile(starts, 90))}",
                "<= 450 ms",
            )
        )
        bares = tm["bares"]
        rows.append(
            Row(
                "  bare Textual (a focused TextArea and a Static), same rounds, p50 / p90",
                f"{ms(percentile(bares, 50))} / {ms(percentile(bares, 90))}",
                "(reference)",
            )
        )
        rows.append(
            ratio_row(
                "app (tmux): session open (its id shown) / the bare Textual app, same rounds",
                tm["opens"]["small"],
                bares,
                "<= 1.25x",
            )
        )
        app_cpu, bare_cpu = (percentile(tm["cpus"][k], 50) for k in ("app", "bare"))
        rows.append(
            Row(
                "  same, CPU time by then (user + system): the app / the bare Textual app",
                f"{ms(app_cpu)} / {ms(bare_cpu)} = {app_cpu / bare_cpu:.2f}x",
                "(reference)",
            )
        )
        rows.append(unserved or ratio_row(what, tm["opens"]["resident"], bares, "<= 1.25x"))
        if unserved is None:
            served_cpu = percentile(tm["cpus"]["resident"], 50)
            rows.append(
                Row(
                    "  same, CPU time by then: the resident moot's fork + its client / the bare "
                    "Textual app",
                    f"{ms(served_cpu)} / {ms(bare_cpu)} = {served_cpu / bare_cpu:.2f}x",
                    "(reference)",
                )
            )
        rows.append(cold_row("session open", tm["cold"]["opened"], tm["cold"]["listened"]))
        rows.append(
            ratio_row(
                "app (tmux): session open (its id shown), 100k-file repo / small repo",
                tm["opens"]["big"],
                tm["opens"]["small"],
                "<= 1.1x",
            )
        )
        rows.append(
            Row(
                f"app (tmux): idle CPU over {tm['idle_s']:.0f} s / bytes written to the terminal",
                f"{tm['idle_cpu']:.2f} % / {tm['idle_bytes']:.0f} B",
                "<= 1 %, no repaint",
            )
        )
    else:
        rows.append(Row("app (tmux): start-up and idle", "skipped: no tmux", "<= 450 ms"))
    tokens = 2_000 if quick else 10_000
    st = _child("stream", tokens)
    rows.append(
        _stall_row(
            f"app: {tokens:,}-token answer at 1,000 tok/s, loop stall p95 / p99 / max",
            st["stalls"],
            "<= 33 / 100 / 250 ms",
        )
    )
    rows.append(
        Row("app: last token on screen after it arrived", ms(st["last_shown"]), "<= 200 ms")
    )
    echoes = st["echoes"]
    rows.append(
        Row(
            f"app: a typed key painted in the prompt while it streams, p50 / max of {len(echoes)}",
            f"{ms(percentile(echoes, 50))} / {ms(max(echoes))}" if echoes else "none echoed",
            "<= 50 ms",
        )
    )
    messages = 400 if quick else 2_000
    se = _child("session", messages, 5 if quick else 20, 1_000 if quick else 3_000)
    rows.append(
        Row(
            f"app: {messages:,}-message session (resumed, then live): a new message from its "
            f"event to the frame that paints it, p50 / max ({se['mounted']} blocks mounted)",
            f"{ms(percentile(se['shown'], 50))} / {ms(max(se['shown']))}",
            "<= 100 ms",
        )
    )
    rows.append(
        Row(
            "  same, until the app is idle again (Pilot.pause: sleeps >= 20 ms, waits out "
            "follow-up layouts)",
            f"{ms(percentile(se['settled'], 50))} / {ms(max(se['settled']))}",
            "",
        )
    )
    rows.append(
        _stall_row(
            f"app: {messages:,}-message session, loop stall p95 / p99 / max while streaming",
            se["stalls"],
            "p99 <= 200 ms",
        )
    )
    rows.append(
        Row(
            f"app: {messages:,}-message session, peak RSS",
            f"{se['rss_kib'] / 1024:.0f} MiB",
            "<= 250 MiB",
        )
    )
    tr = _child("trace", 1_000 if quick else 5_000, 1 if quick else 3)
    for key, how in (("shown", "finished turns collapsed"), ("ones", "every node expanded")):
        rows.append(
            Row(
                f"app: trace pane with {tr['nodes']:,} nodes ({how}), one update from its "
                "event to the frame that paints it, p50 / max",
                f"{ms(percentile(tr[key], 50))} / {ms(max(tr[key]))}",
                "<= 50 ms",
            )
        )
        idle = tr[f"{key}_idle"]
        rows.append(
            Row(
                "  same, until the app is idle again (Pilot.pause: sleeps >= 20 ms)",
                f"{ms(percentile(idle, 50))} / {ms(max(idle))}",
                "",
            )
        )
    rows.append(
        Row(
            f"app: trace pane updates a second while {tr['events']:,} events pour in",
            f"{tr['rate']:.1f} /s",
            "<= 10 /s",
        )
    )
    return rows


def main(argv: list[str]) -> None:
    part, *args = argv
    numbers = [int(float(a)) if float(a).is_integer() else float(a) for a in args]
    runner = {"stream": part_stream, "session": part_session, "trace": part_trace}[part]
    result = asyncio.run(runner(*numbers))  # type: ignore[operator]
    print(json.dumps(result))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main(sys.argv[1:])

"""Sessions at scale: a turn's cost as a session grows from 1k to 50k events, resuming a
5,000-turn session to ready, and `moot sessions list` over a store of 1,000 sessions, some of
50k events.

The long session is made the honest way: the runtime plays turns of a function model that
the catalog bounds (`bounded_model`; each turn a question and its answer, seven events, a
session checkpoint at each turn's end) until the log holds 50,000 events, in a store warmed
by another session's turns (`warmed`). Each turn is timed from `submit` to its
`turn_finished` (the model answers at once, so this is the runtime's own cost: events built,
checked, stored, folded and published, the request assembled and checked against the
window, the checkpoint written); the figure at a size is the median of the `WINDOW` turns
that end there, and the growth is the figure at 50k over the figure at 1k, against a target
of `GROWTH_TARGET`: past it the row says FAIL and `scripts/bench` exits nonzero
(`Row.missed`). The 50k-event session is then opened by a fresh process, which times
`WINDOW` more turns: a resumed session's turns must cost what a live one's do.

A copy of the session as it stood at 5,000 turns (SQLite's backup, so what its log still held
in the `-wal` file is in it) is opened by a fresh process the way a front end resumes one
(`open_client` with the session's id, then `status()`, which is what the prompt needs to show).
The front ends are timed too, as whole processes: `moot --plain -r ID` on a pty and `moot -r
ID` (the app) in tmux, from the spawn to the last turn of the history on screen with the
session open (the REPL prints the history once the session is; the app's status line stops
saying it opens). Of the 1,000 sessions, `BIG` (the most recently updated, so the list shows
them) hold 50,000 events, the others one finished run, all appended through the store's
rules; `moot sessions list --all` is timed as a whole process, interpreter start included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from report import Row, ms
from timing import VENV_BIN, median, time_processes, tmux_session

if TYPE_CHECKING:
    from moot.store.sqlite import SQLiteStore

NAME = "sessions"
RESUME_TARGET = "<= 500 ms"
LIST_TARGET = "<= 100 ms"
GROWTH_TARGET = 1.2
"""A turn's cost at the largest size over its cost at the smallest, at most."""
WINDOW = 100
"""Turns timed at each size (their median is the figure)."""
WARMUP = 500
"""Turns of another session of the same store played before the timed ones (`warmed`)."""
BIG = 3
"""Sessions of `BIG_EVENTS` events among those `moot sessions list` reads."""


class LongSession:
    """One session the runtime plays turn after turn (a function model that answers at once),
    timing each turn."""

    def __init__(self, store: SQLiteStore, session_id: str | None = None) -> None:
        from moot.core.agent import Agent
        from moot.core.runtime import Runtime

        agent = Agent("moot", model=bounded_model())
        self.runtime = Runtime([agent], store=store, session_id=session_id)
        self.turns = 0
        self.timed: list[tuple[int, float]] = []
        """(events in the log after the turn, seconds the turn took), each turn in order."""

    async def turn(self) -> int:
        """Play one turn; the number of events the log holds after it."""
        from moot.protocol import ops

        started = time.perf_counter()
        self.runtime.submit(ops.UserTurn(text=f"step {self.turns}: keep going"))
        finished = await self.runtime.wait()
        took = time.perf_counter() - started
        if finished is None or finished.state != "completed":
            raise RuntimeError(f"turn {self.turns} of the long session did not complete")
        self.turns += 1
        self.timed.append((finished.seq, took))
        return finished.seq

    def at(self, events: int) -> float:
        """The median seconds of the `WINDOW` turns that end where the log reached `events`."""
        upto = [took for seq, took in self.timed if seq <= events]
        return median(upto[-WINDOW:])

    def close(self) -> None:
        """End the session (the store stays open)."""
        from moot.protocol import ops

        self.runtime.submit(ops.Shutdown())


def bounded_model() -> object:
    """A function model that answers at once and that the catalog bounds, as every model a
    session talks to is: each request is checked against its context window and compaction
    threshold, and it takes no images (a catalog model's default), so the request leaves
    them out. A model with no window (a bare `FunctionProvider`) skips that check, and the
    benchmark would never see what it costs as the conversation grows."""
    from moot.providers.catalog import ModelInfo
    from moot.providers.scripted import FunctionProvider

    class Bounded(FunctionProvider):
        def model_info(self) -> ModelInfo:
            return ModelInfo(name="bench/bounded", context_window=10**9, images=False)

    return Bounded(lambda request: "noted", name="bounded")


async def warmed(db: Path) -> SQLiteStore:
    """The store at `db`, after `WARMUP` turns of a session of its own. A process's first
    turns load modules and warm caches, and the log file (`-wal`) grows at first, each append
    making it longer, until the store's backstop checkpoint lets SQLite start it over
    (`moot.store.wal`, ~2,800 appends); it is removed when the store closes. Timed at the
    smallest size, or in a fresh process, they would measure that, not the session's size."""
    from moot.store.sqlite import SQLiteStore

    store = SQLiteStore(db)
    warm = LongSession(store)
    for _ in range(WARMUP):
        await warm.turn()
    warm.close()
    return store


def backup(source: Path, copy: Path) -> None:
    """Copy the database at `source` whole, what its `-wal` file holds included (a copy of the
    main file alone loses every event not yet copied into it)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(copy)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def last_seq(db: Path, session_id: str) -> int:
    """The seq of the session's last event in the database at `db` (its `-wal` included)."""
    with contextlib.closing(sqlite3.connect(db)) as con:
        (seq,) = con.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()
    return int(seq)


async def build_long(
    db: Path, marks: tuple[int, ...], copy_at: int, copy: Path
) -> tuple[LongSession, Growth]:
    """Play turns until the log holds `marks[-1]` events (in a `warmed` store), copying the
    database to `copy` when `copy_at` turns are played; then against a session of
    `marks[0]` events (`taking_turns`). The session is closed, and its store."""
    store = await warmed(db)
    session = LongSession(store)
    events = 0
    while events < marks[-1]:
        events = await session.turn()
        if session.turns == copy_at:
            backup(db, copy)
    growth = await taking_turns(store, session, marks[0])
    session.close()
    store.close()
    return session, growth


class Growth(msgspec.Struct, frozen=True):
    """A turn on the large session against one on a small session, the two taking turns (so
    whatever else loads the machine weighs on both alike)."""

    large: float
    """Median seconds of a turn on the large session."""
    small: float
    """Median seconds of a turn on the small one."""
    first: float
    """Seconds of the large session's first turn here (after a resume: what it rebuilt)."""

    @property
    def ratio(self) -> float:
        return self.large / self.small


async def taking_turns(store: SQLiteStore, large: LongSession, small_events: int) -> Growth:
    """Play a new session to `small_events` events, then `WINDOW` turns of each, by turns."""
    small = LongSession(store)
    while await small.turn() < small_events:
        pass
    already = len(large.timed)
    for _ in range(WINDOW):
        await small.turn()
        await large.turn()
    small.close()
    timed = [took for _, took in large.timed[already:]]
    return Growth(
        large=median(timed),
        small=median([took for _, took in small.timed[-WINDOW:]]),
        first=timed[0],
    )


def after_resume(db: Path, session_id: str, small_events: int) -> Growth:
    """`taking_turns` in a fresh process that resumed the large session (this file as a
    script)."""
    done = subprocess.run(
        [sys.executable, __file__, "turns", str(db), session_id, str(small_events)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the resumed turns failed:\n{done.stderr}")
    return msgspec.json.decode(done.stdout.splitlines()[-1], type=Growth)


def resumed_turns(db: str, session_id: str, small_events: str) -> None:
    async def play() -> Growth:
        store = await warmed(Path(db))
        large = LongSession(store, session_id)
        try:
            return await taking_turns(store, large, int(small_events))
        finally:
            large.close()
            store.close()

    print(msgspec.json.encode(asyncio.run(play())).decode())


def growth_rows(
    session: LongSession, marks: tuple[int, ...], live: Growth, resumed: Growth
) -> list[Row]:
    """A turn's cost as the session grew, and the growth against the target."""
    figures = [session.at(mark) for mark in marks]
    sizes = " / ".join(f"{mark // 1000}k" for mark in marks)
    large, small = f"{marks[-1] // 1000}k", f"{marks[0] // 1000}k"

    def judged(growth: Growth) -> str:
        return f"{growth.ratio:.2f}x ({ms(growth.large)} / {ms(growth.small)})"

    return [
        Row(
            f"a turn's runtime cost (submit to turn_finished, model answers at once) as the "
            f"session grew, at {sizes} events, median of {WINDOW} turns each",
            " / ".join(ms(f) for f in figures),
            "(reference)",
        ),
        Row(
            f"  growth: a turn on the {large}-event session / on a {small}-event one, "
            f"{WINDOW} turns each, taking turns",
            judged(live),
            f"<= {GROWTH_TARGET}x",
            missed=live.ratio > GROWTH_TARGET,
        ),
        Row(
            f"  the same in a fresh process that resumed the {large}-event session (its first "
            f"turn there: {ms(resumed.first)})",
            judged(resumed),
            f"<= {GROWTH_TARGET}x",
            missed=resumed.ratio > GROWTH_TARGET,
        ),
    ]


def build_many(db: Path, count: int, big_events: int) -> None:
    """`count` sessions of one finished run each, but the last `BIG`, of `big_events`."""
    from moot.protocol import events as ev
    from moot.protocol.messages import Usage
    from moot.protocol.states import RunState, StopReason
    from moot.store.sqlite import SQLiteStore

    created, pending = RunState.CREATED, RunState.MODEL_PENDING
    steps = ((created, pending), (pending, RunState.DECISION_RECEIVED))
    store = SQLiteStore(db)
    for n in range(count):
        sid = store.create_session(workspace=f"/work/project{n % 7}").id
        runs = max(1, big_events // 4) if n >= count - BIG else 1
        for r in range(runs):
            run = f"run_{n}_{r}"
            common = {"session_id": sid, "run_id": run, "call_id": run, "agent": "moot"}
            store.append(ev.TurnStarted(prompt=f"task number {n}", **common))
            for before, after in steps:
                store.append(ev.StateChanged(from_state=before, to_state=after, **common))
            store.append(
                ev.TurnFinished(
                    state=RunState.COMPLETED,
                    stop_reason=StopReason.COMPLETED,
                    output="done",
                    turns=1,
                    usage=Usage(input_tokens=10),
                    cost_usd=0.001,
                    duration_ms=1.0,
                    **common,
                )
            )
    store.close()


def measure_resume(db: Path, session_id: str, workdir: Path) -> dict[str, float]:
    """Open the long session in a fresh process (this file as a script); its timings."""
    done = subprocess.run(
        [sys.executable, __file__, "measure", str(db), session_id, str(workdir)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the resume measurement failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def measure(db: str, session_id: str, workdir: str) -> None:
    started = time.perf_counter()
    from moot.client.local import SessionOptions, open_client
    from moot.store.sqlite import SQLiteStore

    imported = time.perf_counter()
    script = Path(workdir) / "model.json"
    script.write_text('["unused"]')
    options = SessionOptions(cwd=Path(workdir), model=f"scripted:{script}", session_id=session_id)
    client = open_client(options, store=SQLiteStore(db))
    status = client.status()
    ready = time.perf_counter()
    assert not status.running
    turns = client.query.session(session_id).turns  # type: ignore[union-attr]
    asyncio.run(client.close())
    print(json.dumps({"imports": imported - started, "ready": ready - imported, "turns": turns}))


def end_lingering(pid: int, wait_s: float = 5.0) -> None:
    """Wait for the app whose window was closed to end; kill it past `wait_s`. The app may
    outlive its terminal (Textual's writer thread can deadlock on a pty that is gone), and
    the next one, opening the same session, must not find it still holding the session."""
    deadline = time.perf_counter() + wait_s
    while time.perf_counter() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    print(
        f"bench: the app (pid {pid}) outlived its window by {wait_s:.0f} s: killed", file=sys.stderr
    )
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def front_ends_resume(root: Path, db: Path, session_id: str, turns: int, runs: int) -> dict:
    """`moot --plain -r` and `moot -r` (tmux) over the long session: seconds to its last turn
    shown with the session open, each run a fresh process (after one warm-up)."""
    import shutil

    from repl_speed import READY_MARK, Terminal
    from timing import child_env

    home = root / "resume-home"
    (home / "data").mkdir(parents=True, exist_ok=True)
    backup(db, home / "data" / "sessions.db")
    copied = last_seq(home / "data" / "sessions.db", session_id)
    if copied != last_seq(db, session_id):
        raise RuntimeError(f"the copy of the session ends at event {copied}, before its tail")
    repo = root / "resume-repo"
    repo.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = root / "resume-model.json"
    script.write_text('["unused"]')
    last = f"step {turns - 1}: keep going"
    env = child_env()
    for name in ("NO_COLOR", "TMUX", "COLUMNS", "LINES"):
        env.pop(name, None)
    env.update({"MOOT_HOME": str(home), "TERM": "xterm-256color", "GIT_CONFIG_NOSYSTEM": "1"})
    argv = [str(VENV_BIN / "moot"), "-r", session_id, "--model", f"scripted:{script}"]
    plain: list[float] = []
    plain_ready: list[float] = []
    for n in range(runs + 1):
        terminal = Terminal([argv[0], "--plain", *argv[1:]], repo, env)
        try:
            terminal.wait_for(READY_MARK)
            mark = terminal.received.rfind(READY_MARK.encode())
            ready = terminal.wait_for(">", since=mark) - terminal.started
            shown = terminal.wait_for(last) - terminal.started
            if n:
                plain.append(shown)
                plain_ready.append(ready)
        finally:
            terminal.type("\x04")
            terminal.close()
    app: list[float] = []
    app_ready: list[float] = []
    if shutil.which("tmux"):
        socket = str(root / "resume-tmux.sock")
        tmux = tmux_session(socket, env)
        tmux("set-option", "-g", "remain-on-exit", "on")  # an app that ends says why
        try:
            for n in range(runs + 1):
                began = time.perf_counter()
                ready = 0.0
                window = ("-t", "bench", "-n", f"r{n}", "-c", str(repo), " ".join(argv))
                pid = int(tmux("new-window", "-P", "-F", "#{pane_pid}", *window).strip())
                while True:
                    screen = tmux("capture-pane", "-p", "-t", f"bench:r{n}")
                    if tmux("display-message", "-p", "-t", f"bench:r{n}", "#{pane_dead}") == "1\n":
                        raise RuntimeError(f"the app ended before it showed the history:\n{screen}")
                    if not ready and "scripted:" in screen:  # the status line: prompt focused
                        ready = time.perf_counter() - began
                    if last in screen and "scripted:" in screen and "opening" not in screen:
                        break
                    if time.perf_counter() - began > 60:
                        raise TimeoutError(f"the app never showed the history:\n{screen}")
                    time.sleep(0.005)
                if n:
                    app.append(time.perf_counter() - began)
                    app_ready.append(ready)
                tmux("kill-window", "-t", f"bench:r{n}")
                end_lingering(pid)
        finally:
            tmux("kill-server")
    return {"plain": plain, "plain_ready": plain_ready, "app": app, "app_ready": app_ready}


def run(*, quick: bool) -> list[Row]:
    turns, count, runs = (500, 200, 2) if quick else (5_000, 1_000, 5)
    marks = (1_000, 5_000) if quick else (1_000, 10_000, 25_000, 50_000)
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        root = Path(tmp)
        scaled = root / "scaled.db"
        db = root / "long.db"
        session, live = asyncio.run(build_long(scaled, marks, turns, db))
        session_id = session.runtime.session_id
        resumed = after_resume(scaled, session_id, marks[0])
        timings = [measure_resume(db, session_id, root) for _ in range(runs)]
        fronts = front_ends_resume(root, db, session_id, turns, runs)
        home = root / "home"
        (home / "data").mkdir(parents=True)
        build_many(home / "data" / "sessions.db", count, marks[-1])
        old = os.environ.get("MOOT_HOME")
        os.environ["MOOT_HOME"] = str(home)
        try:
            timed = time_processes(
                {
                    "list": [str(VENV_BIN / "moot"), "sessions", "list", "--all"],
                    "pass": [sys.executable, "-c", "pass"],  # what the machine gives any process
                },
                runs=runs,
            )
            listing, bare = timed["list"], timed["pass"]
        finally:
            if old is None:
                del os.environ["MOOT_HOME"]
            else:
                os.environ["MOOT_HOME"] = old
    stored = timings[0]["turns"]
    if stored != turns:
        raise RuntimeError(f"the copy of the {turns}-turn session holds {stored} turns")
    how = f"median of {runs} fresh processes"
    return [
        *growth_rows(session, marks, live, resumed),
        Row(
            f"resume a {stored:,}-turn session: open_client + status, ready ({how})",
            ms(median([t["ready"] for t in timings])),
            RESUME_TARGET,
        ),
        Row(
            "  moot.client imports in that process, before it",
            ms(median([t["imports"] for t in timings])),
            "",
        ),
        Row(
            f"resume it with `moot --plain -r ID` (pty): process start to a ready prompt / to its "
            f"last turn shown, the session open ({how})",
            f"{ms(median(fronts['plain_ready']))} / {ms(median(fronts['plain']))}",
            RESUME_TARGET,
        ),
        Row(
            f"resume it with `moot -r ID`, the app (tmux): process start to a ready prompt / to "
            f"its last turn shown, the session open ({how})",
            f"{ms(median(fronts['app_ready']))} / {ms(median(fronts['app']))}"
            if fronts["app"]
            else "skipped: no tmux",
            RESUME_TARGET,
        ),
        Row(
            f"`moot sessions list --all` over {count:,} sessions, {BIG} of them of "
            f"{marks[-1]:,} events (whole process, {how})",
            ms(median(listing.walls)),
            LIST_TARGET,
        ),
        Row("  `python -c pass` in the same rounds, for reference", ms(median(bare.walls)), ""),
    ]


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(*sys.argv[2:5])
    elif sys.argv[1] == "turns":
        resumed_turns(*sys.argv[2:5])

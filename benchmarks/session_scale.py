"""Sessions at scale: resuming a 5,000-turn session to ready, and `moot sessions list` over a
store of 1,000 sessions.

The long session is made the honest way: the runtime plays 5,000 turns of a function model
(each turn a question and its answer, a session checkpoint at each turn's end), then a fresh
process opens it the way a front end resumes one (`open_client` with the session's id, then
`status()`, which is what the prompt needs to show). The front ends are timed too, as whole
processes: `moot --plain -r ID` on a pty and `moot -r ID` (the app) in tmux, from the spawn to
the last turn of the history on screen with the session open (the REPL prints the history
once the session is; the app's status line stops saying it opens). The 1,000 sessions each
hold one finished run, appended through the store's rules; `moot sessions list --all` is
timed as a whole process, interpreter start included.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, ms
from timing import VENV_BIN, median, time_processes, tmux_session

NAME = "sessions"
RESUME_TARGET = "<= 500 ms"
LIST_TARGET = "<= 100 ms"


async def build_long(db: Path, turns: int) -> str:
    from moot.core.agent import Agent
    from moot.core.runtime import Runtime
    from moot.protocol import ops
    from moot.providers.scripted import FunctionProvider
    from moot.store.sqlite import SQLiteStore

    def model(request: object) -> str:
        return "noted"

    runtime = Runtime([Agent("moot", model=FunctionProvider(model))], store=SQLiteStore(db))
    for n in range(turns):
        runtime.submit(ops.UserTurn(text=f"step {n}: keep going"))
        await runtime.wait()
    runtime.submit(ops.Shutdown())
    return runtime.session_id


def build_many(db: Path, count: int) -> None:
    from moot.protocol import events as ev
    from moot.protocol.messages import Usage
    from moot.protocol.states import RunState, StopReason
    from moot.store.sqlite import SQLiteStore

    store = SQLiteStore(db)
    for n in range(count):
        sid = store.create_session(workspace=f"/work/project{n % 7}").id
        run = f"run_{n}"
        common = {"session_id": sid, "run_id": run, "call_id": run, "agent": "moot"}
        store.append(ev.TurnStarted(prompt=f"task number {n}", **common))
        for before, after in ((RunState.CREATED, RunState.MODEL_PENDING),
                              (RunState.MODEL_PENDING, RunState.DECISION_RECEIVED)):  # fmt: skip
            store.append(ev.StateChanged(from_state=before, to_state=after, **common))
        store.append(ev.TurnFinished(state=RunState.COMPLETED, stop_reason=StopReason.COMPLETED,
                                     output="done", turns=1, usage=Usage(), cost_usd=0.001,
                                     duration_ms=1.0, **common))  # fmt: skip
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


def front_ends_resume(root: Path, db: Path, session_id: str, turns: int, runs: int) -> dict:
    """`moot --plain -r` and `moot -r` (tmux) over the long session: seconds to its last turn
    shown with the session open, each run a fresh process (after one warm-up)."""
    import shutil

    from repl_speed import READY_MARK, Terminal
    from timing import child_env

    home = root / "resume-home"
    (home / "data").mkdir(parents=True, exist_ok=True)
    shutil.copy(db, home / "data" / "sessions.db")
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
        try:
            for n in range(runs + 1):
                began = time.perf_counter()
                ready = 0.0
                tmux("new-window", "-t", "bench", "-n", f"r{n}", "-c", str(repo), " ".join(argv))
                while True:
                    screen = tmux("capture-pane", "-p", "-t", f"bench:r{n}")
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
        finally:
            tmux("kill-server")
    return {"plain": plain, "plain_ready": plain_ready, "app": app, "app_ready": app_ready}


def run(*, quick: bool) -> list[Row]:
    turns, count, runs = (500, 200, 2) if quick else (5_000, 1_000, 5)
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        root = Path(tmp)
        db = root / "long.db"
        session_id = asyncio.run(build_long(db, turns))
        timings = [measure_resume(db, session_id, root) for _ in range(runs)]
        fronts = front_ends_resume(root, db, session_id, turns, runs)
        home = root / "home"
        (home / "data").mkdir(parents=True)
        build_many(home / "data" / "sessions.db", count)
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
    how = f"median of {runs} fresh processes"
    return [
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
            f"`moot sessions list --all` over {count:,} sessions (whole process, {how})",
            ms(median(listing.walls)),
            LIST_TARGET,
        ),
        Row("  `python -c pass` in the same rounds, for reference", ms(median(bare.walls)), ""),
    ]


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(*sys.argv[2:5])

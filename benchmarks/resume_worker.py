"""The processes of the resume benchmark (run as a script; the benchmark starts it).

`resume_worker.py build DB` prints its session id, then runs the echo agent for ever; the
benchmark kills it with SIGKILL once the log is long enough, leaving the run unfinished.

`resume_worker.py measure DB SESSION` resumes that run in a fresh process and prints, as JSON,
how long opening the store and loading the session took, and how long until the resumed run's
first model request reached the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time


async def build(db: str) -> None:
    from echo_agent import LIMITS, agent, echo, echo_turn
    from moot.core.options import RuntimeOptions
    from moot.core.runtime import Runtime
    from moot.protocol import ops
    from moot.store.sqlite import SQLiteStore

    turns = 0

    def model(request: object) -> dict[str, object]:
        nonlocal turns
        turns += 1
        return echo_turn(turns)

    options = RuntimeOptions(tools=[echo], limits=LIMITS)
    runtime = Runtime([agent(model)], store=SQLiteStore(db), options=options)
    print(runtime.session_id, flush=True)
    runtime.submit(ops.UserTurn(text="go"))
    await runtime.wait()


async def measure(db: str, session_id: str) -> None:
    # Imported here, not at the top, so their cost is timed apart from the resume itself.
    imports_started = time.perf_counter()
    from echo_agent import LIMITS, agent, echo
    from moot.core.options import RuntimeOptions
    from moot.core.runtime import Runtime
    from moot.protocol import ops
    from moot.store.sqlite import SQLiteStore

    imported = time.perf_counter()
    first_request: list[float] = []

    def model(request: object) -> str:
        first_request.append(time.perf_counter())
        return "done"  # ends the resumed run at once; only the time to get here is reported

    started = time.perf_counter()
    store = SQLiteStore(db)
    options = RuntimeOptions(tools=[echo], limits=LIMITS)
    runtime = Runtime([agent(model)], store=store, session_id=session_id, options=options)
    if runtime.unfinished_run is None:
        raise SystemExit(f"session {session_id} in {db} has no unfinished run to resume")
    ready = time.perf_counter()
    runtime.submit(ops.ResumeRun())
    finished = await runtime.wait()
    if finished is None or finished.state != "completed" or not first_request:
        raise SystemExit(f"the resumed run did not complete: {finished}")
    result = {
        "imports": imported - imports_started,
        "ready": ready - started,
        "first_request": first_request[0] - started,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["build", db]:
            asyncio.run(build(db))
        case ["measure", db, session_id]:
            asyncio.run(measure(db, session_id))
        case _:
            raise SystemExit(f"usage: {sys.argv[0]} build DB | measure DB SESSION")

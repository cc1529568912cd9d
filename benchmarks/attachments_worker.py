"""The processes of the attachments benchmark (run as a script; the benchmark starts it).

`attachments_worker.py attach FILE` attaches FILE as the front ends do (`attachment_from_path`,
Pillow's import included, moot's not: a front end has it loaded) and fits it for a request, in
a fresh process; it prints, as JSON, how long that took.

`attachments_worker.py build DB TURNS SCREENSHOTS` makes a session of TURNS turns, a distinct
screenshot attached to each of the first SCREENSHOTS, and prints its id.

`attachments_worker.py measure DB SESSION` opens that session again in a fresh process and
prints, as JSON, how long until its Runtime was ready and until its next turn's request reached
the model.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time


def attach(path: str) -> None:
    # A front end has moot loaded when the person attaches; Pillow it has not (lazy): the
    # time counts its import and everything up to the request's body holding the image.
    from moot.providers.images import LIMITS, fit
    from moot.workspace.attachments import attachment_from_path

    started, cpu = time.perf_counter(), time.process_time()
    attachment = attachment_from_path(path)
    fit(attachment, LIMITS["anthropic"])  # what the request does with it
    done, cpu_done = time.perf_counter(), time.process_time()
    size = f"{attachment.width}x{attachment.height}"
    print(json.dumps({"attach": done - started, "cpu": cpu_done - cpu, "size": size}))


async def build(db: str, turns: int, screenshots: int) -> None:
    import base64

    from echo_agent import LIMITS, agent, echo
    from moot.core.options import RuntimeOptions
    from moot.core.runtime import Runtime
    from moot.protocol import ops
    from moot.protocol.messages import Attachment
    from moot.store.sqlite import SQLiteStore
    from sample_images import screenshot

    options = RuntimeOptions(tools=[echo], limits=LIMITS)
    runtime = Runtime([agent(lambda request: "seen")], store=SQLiteStore(db), options=options)
    for n in range(turns):
        attached: tuple[Attachment, ...] = ()
        if n < screenshots:
            raw = screenshot(1280, 800, seed=n)
            data = base64.b64encode(raw).decode()
            attached = (Attachment(mime_type="image/png", data=data, name=f"shot{n}.png",
                                   width=1280, height=800),)  # fmt: skip
        runtime.submit(ops.UserTurn(text=f"what is wrong on screen {n}?", attachments=attached))
        await runtime.wait()
    runtime.submit(ops.Shutdown())
    print(runtime.session_id, flush=True)


async def measure(db: str, session_id: str) -> None:
    from echo_agent import LIMITS, agent, echo
    from moot.core.options import RuntimeOptions
    from moot.core.runtime import Runtime
    from moot.protocol import ops
    from moot.providers.base import ModelRequest
    from moot.store.sqlite import SQLiteStore

    first_request: list[float] = []

    def model(request: ModelRequest) -> str:
        # As an adapter does: every attachment's data, which a resumed history resolves now.
        sum(len(a.data) for m in request.messages for a in getattr(m, "attachments", ()))
        first_request.append(time.perf_counter())
        return "done"

    started = time.perf_counter()
    options = RuntimeOptions(tools=[echo], limits=LIMITS)
    runtime = Runtime([agent(model)], store=SQLiteStore(db), session_id=session_id, options=options)
    ready = time.perf_counter()
    runtime.submit(ops.UserTurn(text="and now?"))
    finished = await runtime.wait()
    if finished is None or finished.state != "completed" or not first_request:
        raise SystemExit(f"the turn did not complete: {finished}")
    result = {"ready": ready - started, "first_request": first_request[0] - started}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["attach", path]:
            attach(path)
        case ["build", db, turns, shots]:
            asyncio.run(build(db, int(turns), int(shots)))
        case ["measure", db, session_id]:
            asyncio.run(measure(db, session_id))
        case _:
            raise SystemExit(f"usage: {sys.argv[0]} attach FILE | build DB N K | measure DB S")

"""`warm_the_first_request`: what `moot -p`'s first request needs and opening its session does not
(httpx and the asyncio back end its connections use), imported in a daemon thread while the
session opens.

Opening a session waits on the disk (the sessions database's syncs) and on subprocesses (the
sandbox's probe, git); httpx, httpcore and anyio's asyncio back end (~25-40 ms of imports,
which the first request always pays) load in those waits instead of after them. Python's
per-module import locks make the main thread wait for a module the thread is still loading
rather than load it twice; moot's modules are not imported here, so no tool, rule or hook code
loads early.
"""

from __future__ import annotations

import threading


def _load() -> None:
    # What the first request imports, in the order it does: the client, then (at the first
    # connection) httpcore's asyncio pool and anyio's back end.
    import anyio._backends._asyncio  # noqa: F401
    import httpcore._async.connection_pool  # noqa: F401
    import httpx  # noqa: F401


def warm_the_first_request(model: str | None) -> threading.Thread | None:
    """Start loading the first request's libraries in a daemon thread, unless the model is one
    moot plays itself (`scripted:`, the demo's too), which sends no request."""
    if model is not None and model.startswith("scripted:"):
        return None
    thread = threading.Thread(target=_load, name="moot-warm-first-request", daemon=True)
    thread.start()
    return thread

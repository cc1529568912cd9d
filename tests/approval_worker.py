"""A session that waits for an approval until a test kills it with SIGKILL (run as
`python approval_worker.py WORKSPACE MODEL DB`): it prints each event as a JSON line."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from moot.client.local import SessionOptions, open_client
from moot.protocol import events as ev
from moot.protocol import ops
from moot.store.sqlite import SQLiteStore


async def main(workspace: Path, model: str, db: Path) -> None:
    client = open_client(SessionOptions(cwd=workspace, model=model), store=SQLiteStore(db))
    subscription = client.subscribe()
    client.submit(ops.UserTurn(text="write it"))
    async for event in subscription:  # nobody answers: it waits until killed
        sys.stdout.write(_json(event) + "\n")
        sys.stdout.flush()


def _json(event: ev.Event) -> str:
    import msgspec

    return msgspec.json.encode(event).decode()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))

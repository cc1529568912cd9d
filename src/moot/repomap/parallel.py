"""Parsing many files at once in parser processes (`moot.repomap.parse_worker`), one per
core: the repository map of a big repository parses tens of thousands of files, at about
0.5 ms each, and tree-sitter holds the GIL while it parses.

The processes start at the first batch (about 0.3 s each, importing tree-sitter) and stay for
the pool's life, which is its repository index's: the session's. Batches are small
(`BATCH` files), and each process has at most two at a time, so a caller that stops (its
deadline, or a stop asked) waits for at most two batches per process.
"""

from __future__ import annotations

import atexit
import os
import selectors
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from moot.repomap.parse import Parsed, read_message, write_message

BATCH = 32
"""Files per message to a parser process."""
_IN_FLIGHT = 2
"""Batches a process holds at once: one parsing, one waiting, so it never idles between."""


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class _Worker:
    def __init__(self, root: Path) -> None:
        source = str(Path(__file__).resolve().parents[2])  # this moot's, not another
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": source + (os.pathsep + path if path else "")}
        # -P: moot's working directory (the workspace) is not on the worker's import path,
        # where a repository's `msgspec.py` would run on the host as it imports msgspec.
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "moot.repomap.parse_worker", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            bufsize=0,  # unbuffered: the pool waits with `select`, which sees no buffer
        )  # fmt: skip
        self.batches: deque[list[tuple[str, str]]] = deque()

    def send(self, batch: list[tuple[str, str]]) -> None:
        assert self.process.stdin is not None
        write_message(self.process.stdin, msgspec.msgpack.encode(batch))
        self.batches.append(batch)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process.wait()


class ParserPool:
    """Parser processes for the files below one root."""

    def __init__(self, root: Path, size: int | None = None) -> None:
        self.root = root
        self.size = size or usable_cores()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._decoder = msgspec.msgpack.Decoder(list[Parsed])
        atexit.register(self.close)

    def start(self) -> None:
        """Start the processes now, so they are ready when the first batch comes."""
        with self._lock:
            self._start(self.size)

    def parse(
        self,
        todo: Sequence[tuple[str, str]],
        deadline: float,
        stop: threading.Event | None = None,
    ) -> Iterator[list[Parsed]]:
        """Parse `(path, language)`s in the order given, yielding each batch's `Parsed` as it
        comes; no batch is sent after `deadline` (a `time.monotonic()` value) or once `stop`
        is set, and the files of batches never sent get no `Parsed`. A file whose process
        died comes back with a `problem`. One caller at a time."""
        with self._lock:
            queue = deque(list(todo[start : start + BATCH]) for start in range(0, len(todo), BATCH))
            workers = self._start(min(self.size, len(queue)))
            with selectors.DefaultSelector() as selector:
                try:
                    for worker in workers:
                        assert worker.process.stdout is not None
                        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
                        while queue and len(worker.batches) < _IN_FLIGHT:
                            worker.send(queue.popleft())
                    while any(worker.batches for worker in workers):
                        for key, _ in selector.select():
                            worker = key.data
                            yield self._answer(worker, selector)
                            more = time.monotonic() < deadline and not (stop and stop.is_set())
                            if worker in self._workers and queue and more:
                                worker.send(queue.popleft())
                finally:  # a caller that stopped reading: the answers on their way are dropped
                    for worker in workers:
                        while worker.batches and worker in self._workers:
                            self._answer(worker, selector)

    def _answer(self, worker: _Worker, selector: selectors.BaseSelector) -> list[Parsed]:
        assert worker.process.stdout is not None
        batch = worker.batches.popleft()
        message = read_message(worker.process.stdout)
        if message is not None:
            return self._decoder.decode(message)
        # The process died (a grammar crashed on some file): this batch is left out, and
        # the one it held next; the pool starts another process next time.
        selector.unregister(worker.process.stdout)
        lost = [batch, *worker.batches]
        worker.batches.clear()
        worker.stop()
        self._workers.remove(worker)
        return [
            Parsed(rel, language, problem="the parser process stopped on it or a neighbour")
            for files in lost
            for rel, language in files
        ]

    def _start(self, wanted: int) -> list[_Worker]:
        self._workers = [w for w in self._workers if w.process.poll() is None]
        while len(self._workers) < wanted:
            self._workers.append(_Worker(self.root))
        return self._workers[:wanted]

    def close(self) -> None:
        """End the parser processes."""
        atexit.unregister(self.close)
        for worker in self._workers:
            worker.stop()
        self._workers = []

"""What a repository index holds and how it parses: its files' facts, the cache's rows, the
parse here or in parser processes, and the background parse of what a look left
(`moot.repomap.index.RepoIndex` is made of this)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from moot.repomap.cache import CachedFile, TagCache, TagsKey
from moot.repomap.languages import Grammars, LanguageSpec
from moot.repomap.parallel import ParserPool
from moot.repomap.parse import Parsed, decode_tags, digest_of, parse_file, parse_source, read_source
from moot.repomap.rank import RankFacts, collector_paused, facts_of
from moot.repomap.saved_look import Stamp
from moot.repomap.sources import PENDING

IN_PROCESS_UP_TO = 150
"""Files to parse: this many or fewer are parsed here, more by parser processes (each takes
~0.2 s to start)."""
FLUSH_SECONDS = 1.0
"""The background parse writes what it parsed to the cache at most this often."""
_UNREADABLE = "unreadable"


class Known(NamedTuple):
    """What the index holds of one file: its stat and content when read, and its facts."""

    mtime_ns: int
    size: int
    language: str
    digest: bytes
    facts: RankFacts | None
    """None: left out (binary, too large)."""


class IndexedFiles:
    """The files an index holds, the cache it reads and writes, and its parsing."""

    def __init__(self, root: Path, cache_file: Path) -> None:
        """Args:
        root: The workspace root, free of symlinks.
        cache_file: The cache database.
        """
        self.root = root
        self._cache_file = cache_file
        self._cache: TagCache | None = None
        self._cache_lock = threading.Lock()
        """The cache is one connection, used by looks, the background parse and tag reads."""
        self._known: dict[str, Known] = {}
        self._rows: dict[str, CachedFile] | None = None
        """The cache's rows, read at the first look, kept as this index writes them."""
        self._unwritten: tuple[list[tuple[str, CachedFile]], list[tuple[TagsKey, bytes | None]]]
        self._unwritten = ([], [])
        self._problems: dict[str, str] = {}
        """Files not parsed for a reason to tell (a grammar missing), by path."""
        self._version = 0
        self._stamp: Stamp | None = None
        """The last look's sources, stats' digest and files, when it left nothing to parse."""
        self._grammars = Grammars()
        self._pool: ParserPool | None = None
        self._stop = threading.Event()
        self._continuing: threading.Thread | None = None

    def _take(self, rel: str, row: CachedFile, blob: bytes | None) -> bool:
        """Hold the cached tags of `rel`; False when they cannot be read (parse it again)."""
        try:
            facts = facts_of(decode_tags(blob)) if blob is not None else None
        except ValueError:
            return False
        self._known[rel] = Known(*row, facts)
        self._version += 1
        return True

    def _settle(self) -> dict[str, RankFacts]:
        """Decode the facts of the files taken from the cache undecoded (`PENDING`); one whose
        tags cannot be read any more defines nothing in this look and is parsed at the next.

        Returns:
            The facts decoded, by path.
        """
        assert self._rows is not None
        decoded: dict[str, RankFacts] = {}
        with self._cache_lock, collector_paused():
            pending = [(rel, k) for rel, k in list(self._known.items()) if k.facts is PENDING]
            blobs = self._cache_of().tags({(k.digest, k.language) for _, k in pending})
            for rel, known in pending:
                blob = blobs.get((known.digest, known.language))
                try:
                    facts = facts_of(decode_tags(blob if blob is not None else b""))
                except ValueError:  # gone from the cache, or damaged: the next look parses it
                    decoded[rel] = RankFacts(known.language, (), (), (), ())
                    self._known.pop(rel, None)
                    self._rows.pop(rel, None)
                    self._stamp, self._version = None, self._version + 1
                    continue
                decoded[rel] = facts
                self._known[rel] = known._replace(facts=facts)
        return decoded

    def _rehash(
        self, changed: list[tuple[str, LanguageSpec]], deadline: float, parsed: list[str]
    ) -> list[tuple[str, LanguageSpec, int]]:
        """Files whose stat changed: read and hashed, their tags taken from the cache when it
        knows the content; parsed here when few, else handed back to be parsed."""
        assert self._rows is not None
        todo: list[tuple[str, LanguageSpec, int]] = []
        for number, (rel, spec) in enumerate(changed):
            if time.monotonic() >= deadline:
                todo += [(r, s, 0) for r, s in changed[number:]]
                break
            try:
                info, source = read_source(self.root, rel)
            except OSError:
                continue  # unreadable now; not cached, so it is tried again next time
            row = CachedFile(info.st_mtime_ns, info.st_size, spec.name, digest_of(source))
            key = (row.digest, row.language)
            with self._cache_lock:
                blob = self._cache_of().tags([key])
            if blob and self._take(rel, row, blob[key]):
                self._rows[rel] = row
                self._unwritten[0].append((rel, row))
            elif len(changed) <= IN_PROCESS_UP_TO:
                self._apply([parse_source(rel, spec, self._grammars, info, source)], parsed)
            else:
                todo.append((rel, spec, info.st_mtime_ns))
        return todo

    def _parse(
        self, todo: list[tuple[str, LanguageSpec, int]], deadline: float, parsed: list[str]
    ) -> list[tuple[str, LanguageSpec, int]]:
        """Parse `todo` in order until `deadline` (the files parsed go to `parsed`).

        Returns:
            The files left, in order.
        """
        done: set[str] = set()
        if len(todo) <= IN_PROCESS_UP_TO:
            for rel, spec, _ in todo:
                if time.monotonic() >= deadline:
                    break
                self._apply([parse_file(self.root, rel, spec, self._grammars)], parsed)
                done.add(rel)
        else:
            for batch in self._pool_of().parse([(r, s.name) for r, s, _ in todo], deadline):
                self._apply(batch, parsed)
                done.update(item.path for item in batch)
        return [item for item in todo if item[0] not in done]

    def _pool_of(self) -> ParserPool:
        if self._pool is None:
            self._pool = ParserPool(self.root)
        return self._pool

    def _apply(self, batch: Sequence[Parsed], parsed: list[str]) -> None:
        """Hold what a batch of files gave; it is written to the cache with the next flush."""
        assert self._rows is not None
        stored, contents = self._unwritten
        for item in batch:
            if item.problem:
                if item.problem != _UNREADABLE:
                    self._problems[item.path] = item.problem
                continue  # not cached: tried again next time
            self._problems.pop(item.path, None)
            try:
                facts = facts_of(decode_tags(item.tags)) if item.tags is not None else None
            except ValueError:
                continue
            row = CachedFile(item.mtime_ns, item.size, item.language, item.digest)
            self._known[item.path] = Known(*row, facts)
            self._rows[item.path] = row
            stored.append((item.path, row))
            contents.append(((item.digest, item.language), item.tags))
            if facts is not None:
                parsed.append(item.path)
        self._version += 1

    def _cache_of(self) -> TagCache:
        """The open cache (hold `_cache_lock`)."""
        if self._cache is None:
            self._cache = TagCache(self._cache_file, threads=True)
        return self._cache

    def _flush(self) -> None:
        """Write what was parsed since the last flush (hold `_cache_lock`)."""
        stored, contents = self._unwritten
        if stored or contents:
            self._unwritten = ([], [])
            self._cache_of().update(stored, contents)

    def _continue(self, left: list[tuple[str, LanguageSpec, int]]) -> None:
        """Parse `left` in a thread of its own until done, the index closes or a look starts."""
        self._stop.clear()
        thread = threading.Thread(
            target=self._parse_left, args=(left,), name="moot-repomap", daemon=True
        )
        self._continuing = thread
        thread.start()

    def _parse_left(self, left: list[tuple[str, LanguageSpec, int]]) -> None:
        todo = [(rel, spec.name) for rel, spec, _ in left]
        flushed = time.monotonic()
        for batch in self._pool_of().parse(todo, float("inf"), self._stop):
            with collector_paused():
                self._apply(batch, [])
            if time.monotonic() - flushed >= FLUSH_SECONDS:
                with self._cache_lock:
                    self._flush()
                flushed = time.monotonic()
        with self._cache_lock:
            self._flush()

    def _halt(self) -> None:
        """Stop the background parse (it finishes its batches first)."""
        thread = self._continuing
        if thread is not None:
            self._stop.set()
            thread.join()
            self._continuing = None

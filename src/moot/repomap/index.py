"""The source files of a workspace and what they define: parsed once, kept for the session,
cached on disk by content.

Source files are the workspace's listed files (`moot.workspace.file_index`: `.gitignore`
honoured, `.git` skipped, symlinks never followed, what `Read(...)` deny rules hide left out)
in the map's languages, minus what is never worth mapping: anything below a hidden directory
(`.venv`, `.tox`), `node_modules`, `__pycache__` or `site-packages`.

`RepoIndex` keeps a workspace's files for its session, and each look stats every source
file: one whose stat is what it was is not read; one the cache has a row for with that stat
takes its tags from the cache; one whose content the cache knows (a `git checkout`, a
`touch`, or, when a look finds few new files, a copy) is read and hashed, not parsed; the rest
are parsed, by parser processes when there are many (`moot.repomap.parallel`). A look parses
for at most `PARSE_SECONDS`, the focused files first, then the shallowest, the newest first,
and says how many are left; a session's index goes on parsing those in the background, so a
later look maps the whole repository. Binary and very large files are remembered as such (a
warm look reads no file at all), and each look says how many it left out and names a few.

What a session holds of each file is what ranking reads (`RankFacts`: names, interned); the
full tags (declarations, lines) stay in the cache and are read for the few files a map shows or
a lookup finds (`SourceIndex.files`), so 60,000 source files take tens of MB, not hundreds.
The facts of files taken from the cache are decoded only when first asked for (`LazyFacts`):
a new session over unchanged files answers its first map from the map an earlier session
saved (`moot.repomap.map`), by a key naming every file's path and content (`content_key`),
and decodes none.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import msgspec

from moot.repomap import sources as source_files
from moot.repomap.cache import CachedFile, TagCache, TagsKey, cache_path
from moot.repomap.focus import resolve_focus
from moot.repomap.languages import Grammars, LanguageSpec
from moot.repomap.parallel import ParserPool
from moot.repomap.parse import (
    Parsed,
    decode_tags,
    digest_of,
    parse_file,
    parse_source,
    read_source,
)
from moot.repomap.rank import RankFacts, collector_paused, facts_of
from moot.repomap.sources import PARSE_SECONDS, PENDING, LazyFacts, LazyTags, SourceIndex
from moot.repomap.tags import FileTags
from moot.workspace.file_index import FileIndex
from moot.workspace.file_listing import FileListing
from moot.workspace.ignore import Hidden, HiddenInodes

IN_PROCESS_UP_TO = 150
"""Files to parse: this many or fewer are parsed here, more by parser processes (each takes
~0.2 s to start)."""
FLUSH_SECONDS = 1.0
"""The background parse writes what it parsed to the cache at most this often."""
_DECODED = 4_096
"""Full tags kept decoded (the files maps show, lookups find), most recently read."""
_UNREADABLE = "unreadable"


class _Known(NamedTuple):
    """What the index holds of one file: its stat and content when read, and its facts."""

    mtime_ns: int
    size: int
    language: str
    digest: bytes
    facts: RankFacts | None
    """None: left out (binary, too large)."""


class RepoIndex:
    """The parsed source files of one workspace; see the module docstring. Looks are
    serialised; the background parse stops while one runs."""

    def __init__(
        self,
        root: Path,
        *,
        cache_file: Path | None = None,
        files: FileIndex | None = None,
        background: bool = True,
    ) -> None:
        """Args:
        root: The workspace root, free of symlinks.
        cache_file: The cache database; None for this workspace's file in `cache_dir()`.
        files: The workspace's file index (`Workspace.file_index`); None makes one.
        background: Go on parsing what a look left, after it (a session's index); False
            leaves it to the next look (a one-off map).
        """
        self.root = root
        self._cache_file = cache_path(root) if cache_file is None else cache_file
        self._files = files if files is not None else FileIndex(root, shutil.which("rg"))
        self._background = background
        self._lock = threading.Lock()
        self._cache: TagCache | None = None
        self._cache_lock = threading.Lock()
        """The cache is one connection, used by looks, the background parse and tag reads."""
        self._known: dict[str, _Known] = {}
        self._rows: dict[str, CachedFile] | None = None
        """The cache's rows, read at the first look, kept as this index writes them."""
        self._unwritten: tuple[list[tuple[str, CachedFile]], list[tuple[TagsKey, bytes | None]]]
        self._unwritten = ([], [])
        self._problems: dict[str, str] = {}
        """Files not parsed for a reason to tell (a grammar missing), by path."""
        self._version = 0
        self._stamp: tuple[list[tuple[str, LanguageSpec]], int, set[str]] | None = None
        """The last look's sources, stats' digest and files, when it left nothing to parse."""
        self._last: tuple[tuple[int, tuple[str, ...], set[str]], SourceIndex] | None = None
        """The last look's answer and what it was made of (a look changing nothing reuses it)."""
        self._sources: tuple[FileListing, list[tuple[str, LanguageSpec]]] | None = None
        self._decoded: OrderedDict[bytes, FileTags] = OrderedDict()
        self._grammars = Grammars()
        self._pool: ParserPool | None = None
        self._stop = threading.Event()
        self._continuing: threading.Thread | None = None
        self._closed = False
        self.results: dict[object, object] = {}
        """What callers derived from a look, by a key holding its `version` (the map keeps
        its rendered maps here); emptied when it grows past a few."""

    def __enter__(self) -> RepoIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the background parse and the parser processes; write what is unwritten."""
        self._closed = True
        self._halt()
        if self._pool is not None:
            self._pool.close()
        with self._cache_lock:
            if self._cache is not None:
                self._flush()
                self._cache.close()
                self._cache = None

    def index(
        self,
        hidden: Hidden | None = None,
        inodes: HiddenInodes | None = None,
        *,
        focus: Sequence[str] = (),
        seconds: float = PARSE_SECONDS,
    ) -> SourceIndex:
        """The source files now, parsing what changed for at most `seconds`.

        Args:
            hidden: Paths no walk may show (`Read(...)` deny rules): never indexed.
            inodes: What those rules hide under another name (a hard link): never indexed.
            focus: Paths or names from the conversation: the files they name are parsed first
                (`moot.repomap.focus.resolve_focus`).
            seconds: How long this look may parse.
        """
        with self._lock, collector_paused():
            self._halt()
            deadline = time.monotonic() + seconds
            listing = self._files.listing(hidden)
            if self._rows is None:
                with self._cache_lock:
                    self._rows = self._cache_of().load()
            parsed: list[str] = []
            current, todo = self._look(listing, inodes, deadline, parsed)
            first = resolve_focus(self.root, current, focus)[0] if focus else set()
            todo.sort(key=lambda item: source_files.parse_order(item, first))
            left = self._parse(todo, deadline, parsed)
            same = (self._version, listing.notes, current)
            if not left and self._last is not None and self._last[0] == same:
                return msgspec.structs.replace(self._last[1], parsed=tuple(parsed))
            self._forget(current, complete=not listing.notes)
            with self._cache_lock:
                self._flush()
            facts = LazyFacts(
                {rel: known.facts for rel, known in self._known.items() if known.facts},
                self._settle,
            )
            notes = self._notes(listing, current, len(left))
            version = self._version
            found = SourceIndex(
                facts, LazyTags(self.tags, facts), tuple(parsed), notes, version, len(left)
            )
            self._last = ((self._version, listing.notes, current), found)
            if left or self._problems:  # the next look stats file by file, parses what is left
                self._stamp = None
            if left and self._background and not self._closed:
                self._continue(left)
        return found

    def content_key(self, found: SourceIndex) -> bytes:
        """A digest of every mapped file's path, language and content, and the notes: what a
        map of `found` is made from (`moot.repomap.sources.content_key`)."""
        return source_files.content_key(found, self._known)

    def saved_map(self, key: bytes, blob: bytes | None = None) -> bytes | None:
        """The map an earlier session saved under `key`, if the cache has it; given `blob`,
        save that there for later sessions over the same files."""
        with self._cache_lock:
            if blob is not None:
                self._cache_of().save_map(key, blob)
            return blob if blob is not None else self._cache_of().saved_map(key)

    def tags(self, rel: str) -> FileTags | None:
        """The full tags of a mapped file, read from the cache (None when it has none)."""
        known = self._known.get(rel)
        if known is None or known.facts is None:
            return None
        decoded = self._decoded.get(known.digest)
        if decoded is not None and decoded.language == known.language:
            self._decoded.move_to_end(known.digest)
            return decoded
        key = (known.digest, known.language)
        with self._cache_lock:
            self._flush()
            blob = self._cache_of().tags([key]).get(key)
        if blob is None:
            return None
        try:
            decoded = decode_tags(blob)
        except ValueError:
            return None
        self._decoded[known.digest] = decoded
        if len(self._decoded) > _DECODED:
            self._decoded.popitem(last=False)
        return decoded

    # ---- looking -------------------------------------------------------------------------------

    def _look(
        self,
        listing: FileListing,
        inodes: HiddenInodes | None,
        deadline: float,
        parsed: list[str],
    ) -> tuple[set[str], list[tuple[str, LanguageSpec, int]]]:
        """Stat every source file; take what is known or cached (a file parsed on the way
        goes to `parsed`).

        Returns:
            The source files there now, and those to parse (with their modification time).
        """
        assert self._rows is not None
        sources = self._sources_of(listing)
        current: set[str] = set()
        todo: list[tuple[str, LanguageSpec, int]] = []
        from_cache: dict[str, tuple[CachedFile, LanguageSpec]] = {}
        changed: list[tuple[str, LanguageSpec]] = []
        if len(sources) - len(self._rows) > IN_PROCESS_UP_TO:
            self._pool_of().start()  # the processes start while the files are looked at
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        is_file, known_of, add = stat.S_ISREG, self._known.get, current.add
        try:
            stats = source_files.stat_all(root_fd, sources)
            stamp = source_files.stamp_of(stats) if stats is not None and inodes is None else None
            last, self._stamp = self._stamp, None
            if stamp is not None and last is not None and last[:2] == (sources, stamp):
                self._stamp = last
                return last[2], []  # every file stats as at the last look, which left none
            if stamp is not None:
                self._stamp = (sources, stamp, current)
            for (rel, spec), info in source_files.stat_each(root_fd, sources, stats):
                if not is_file(info.st_mode) or (inodes is not None and inodes.covers(info)):
                    continue
                add(rel)
                known = known_of(rel)
                if (
                    known is not None
                    and known.mtime_ns == info.st_mtime_ns
                    and known.size == info.st_size
                    and known.language == spec.name
                ):
                    continue
                seen = (info.st_mtime_ns, info.st_size, spec.name)
                row = self._rows.get(rel)
                if row is not None and row[:3] == seen:
                    from_cache[rel] = (row, spec)
                elif row is not None:
                    changed.append((rel, spec))  # its content may be one the cache knows
                else:
                    todo.append((rel, spec, info.st_mtime_ns))
        finally:
            os.close(root_fd)
        if len(todo) <= IN_PROCESS_UP_TO:  # a few new files: maybe copies of known content
            changed += [(rel, spec) for rel, spec, _ in todo]
            todo = []
        with self._cache_lock:
            held = self._cache_of().held({(r.digest, r.language) for r, _ in from_cache.values()})
        for rel, (row, spec) in from_cache.items():
            key = (row.digest, row.language)
            if key in held:  # its facts are decoded when first asked for (`_settle`)
                self._known[rel] = _Known(*row, PENDING if held[key] else None)
                self._version += 1
            else:
                todo.append((rel, spec, row.mtime_ns))
        todo += self._rehash(changed, deadline, parsed)
        return current, todo

    def _sources_of(self, listing: FileListing) -> list[tuple[str, LanguageSpec]]:
        if self._sources is None or self._sources[0] is not listing:
            self._sources = (listing, source_files.mapped_sources(listing.files))
        return self._sources[1]

    def _take(self, rel: str, row: CachedFile, blob: bytes | None) -> bool:
        """Hold the cached tags of `rel`; False when they cannot be read (parse it again)."""
        try:
            facts = facts_of(decode_tags(blob)) if blob is not None else None
        except ValueError:
            return False
        self._known[rel] = _Known(*row, facts)
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

    def _forget(self, current: set[str], *, complete: bool) -> None:
        """Drop files no longer there (or now hidden); their cache rows too, unless the
        listing was cut short (then they were maybe not looked for)."""
        assert self._rows is not None
        gone = [rel for rel in self._known if rel not in current]
        for rel in gone:
            del self._known[rel]
        self._version += bool(gone)
        if complete:
            forgotten = [rel for rel in self._rows if rel not in current]
            for rel in forgotten:
                del self._rows[rel]
            if forgotten:
                with self._cache_lock:
                    self._flush()
                    self._cache_of().update((), (), forgotten)

    # ---- parsing -------------------------------------------------------------------------------

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
            self._known[item.path] = _Known(*row, facts)
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

    # ---- the background ------------------------------------------------------------------------

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

    def _notes(self, listing: FileListing, current: set[str], left: int) -> tuple[str, ...]:
        unmapped = ((r, k.size) for r, k in self._known.items() if k.facts is None and r in current)
        return source_files.look_notes(
            [problem for rel, problem in self._problems.items() if rel in current],
            unmapped,
            listing.notes,
            (left, len(current), self._background),
        )

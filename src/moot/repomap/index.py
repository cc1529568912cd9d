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
and decodes none. When its files all stat as a look an earlier session saved
(`moot.repomap.saved_look`), it reads no row of the cache either: the look is deferred
(`DeferredFacts`), and made in full from the rows when the facts are first needed (a focused
map, a lookup, a look that finds a change).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import msgspec

from moot.paths import host_program
from moot.repomap import saved_look
from moot.repomap import sources as source_files
from moot.repomap.cache import CachedFile, cache_path
from moot.repomap.focus import resolve_focus
from moot.repomap.languages import LanguageSpec
from moot.repomap.parse import decode_tags
from moot.repomap.parsing import IN_PROCESS_UP_TO, IndexedFiles, Known
from moot.repomap.rank import RankFacts, collector_paused
from moot.repomap.saved_look import CoveredInodes, DeferredFacts, DeferredLook, Stamp
from moot.repomap.sources import PARSE_SECONDS, PENDING, LazyFacts, LazyTags, SourceIndex
from moot.repomap.tags import FileTags
from moot.workspace.file_index import FileIndex
from moot.workspace.file_listing import FileListing
from moot.workspace.ignore import Hidden, HiddenInodes

__all__ = ["IN_PROCESS_UP_TO", "RepoIndex"]
_Source = tuple[str, LanguageSpec]
_Seen = dict[str, tuple[int, int]]
"""Files by path, with the modification time and size a look found them with."""
_DECODED = 4_096
"""Full tags kept decoded (the files maps show, lookups find), most recently read."""


class RepoIndex(IndexedFiles):
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
        super().__init__(root, cache_path(root) if cache_file is None else cache_file)
        self._files = files if files is not None else FileIndex(root, host_program("rg", (root,)))
        self._background = background
        self._lock = threading.RLock()
        """Held by looks, and by whatever makes a deferred look's facts (maybe inside one)."""
        self._deferred: DeferredLook | None = None
        """The last look, answered from a saved look, until its rows are read."""
        self._statted: tuple[list[_Source], list[os.stat_result] | None, bytes | None] | None
        self._statted = None
        """The sources `_saved_look` statted, for the look made in full after it."""
        self._saved_digest: bytes | None = None
        """The stats' digest of the look this index last saved (or was answered from)."""
        self._last: tuple[tuple[int, tuple[str, ...], set[str]], SourceIndex] | None = None
        """The last look's answer and what it was made of (a look changing nothing reuses it)."""
        self._sources: tuple[FileListing, list[tuple[str, LanguageSpec]]] | None = None
        self._decoded: OrderedDict[bytes, FileTags] = OrderedDict()
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
                saved = self._saved_look(listing, inodes)
                if saved is not None:
                    return saved
            if self._rows is None:  # (a deferred look made in full has read them)
                with self._cache_lock:
                    self._rows = self._cache_of().load()
            parsed: list[str] = []
            current, todo, seen = self._look(listing, inodes, deadline, parsed)
            first = resolve_focus(self.root, current, focus)[0] if focus else set()
            todo.sort(key=lambda item: source_files.parse_order(item, first))
            left = self._parse(todo, deadline, parsed)
            self._check_stamp(seen)
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
        map of `found` is made from (`moot.repomap.sources.content_key`). The look that
        found it is saved with it for later sessions (`moot.repomap.saved_look`)."""
        with self._lock:
            deferred = self._deferred
            if deferred is not None and deferred.found and found.facts is deferred.found.facts:
                return deferred.saved.key
            key = source_files.content_key(found, self._known)
            self._save_look(found, key)
            return key

    @property
    def rows_read(self) -> int:
        """Rows this index read from its cache's files and tags (a saved look reads none)."""
        with self._cache_lock:
            return self._cache.rows_read if self._cache is not None else 0

    def saved_map(self, key: bytes, blob: bytes | None = None) -> bytes | None:
        """The map an earlier session saved under `key`, if the cache has it; given `blob`,
        save that there for later sessions over the same files."""
        with self._cache_lock:
            if blob is not None:
                self._cache_of().save_map(key, blob)
            return blob if blob is not None else self._cache_of().saved_map(key)

    def tags(self, rel: str) -> FileTags | None:
        """The full tags of a mapped file, read from the cache (None when it has none)."""
        if self._deferred is not None:
            self._facts_of(self._deferred)
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
    ) -> tuple[set[str], list[tuple[str, LanguageSpec, int]], _Seen | None]:
        """Stat every source file; take what is known or cached (a file parsed on the way
        goes to `parsed`).

        Returns:
            The source files there now, those to parse (with their modification time), and
            the stat of each file not taken as known or from the cache (`_check_stamp`; None
            when every file stats as at the last look, which is answered again).
        """
        assert self._rows is not None
        sources = self._sources_of(listing)
        if len(sources) - len(self._rows) > IN_PROCESS_UP_TO:
            self._pool_of().start()  # the processes start while the files are looked at
        statted, self._statted = self._statted, None
        if statted is not None and statted[0] is sources:  # by `_saved_look`, just now
            stats, digest = statted[1:]
        else:
            stats, digest, _ = self._stat(sources, inodes)
        last, self._stamp = self._stamp, None
        if (
            digest is not None
            and last is not None
            and last.digest == digest
            and (last.sources is sources or last.sources == sources)
        ):
            self._stamp = last
            return last.current, [], None  # every file stats as at the last look, which left none
        current: set[str] = set()
        if digest is not None:
            self._stamp = Stamp(listing, sources, digest, current, exact=False)
        todo, changed, seen = self._examine(sources, stats, inodes, current)
        todo += self._rehash(changed, deadline, parsed)
        return current, todo, seen

    def _stat(
        self, sources: list[tuple[str, LanguageSpec]], inodes: HiddenInodes | None
    ) -> tuple[list[os.stat_result] | None, bytes | None, list[int]]:
        """Every source file's `lstat` (None when one failed), their `stats_digest`, and
        which of them `inodes` covers."""
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            stats = source_files.stat_all(root_fd, sources)
        finally:
            os.close(root_fd)
        if stats is None:
            return None, None, []
        hidden = saved_look.covered(stats, inodes)
        return stats, saved_look.stats_digest(stats, hidden), hidden

    def _examine(
        self,
        sources: list[tuple[str, LanguageSpec]],
        stats: list[os.stat_result] | None,
        inodes: HiddenInodes | None,
        current: set[str],
    ) -> tuple[list[tuple[str, LanguageSpec, int]], list[tuple[str, LanguageSpec]], _Seen]:
        """Take each file that is known, or cached with its stat, into the index (adding it
        to `current`).

        Returns:
            The files to parse (with their modification time); those to read and hash first
            (the cache may know their content); the stat (modification time, size) of both.
        """
        assert self._rows is not None
        todo: list[tuple[str, LanguageSpec, int]] = []
        changed: list[tuple[str, LanguageSpec]] = []
        from_cache: dict[str, tuple[CachedFile, LanguageSpec]] = {}
        seen: _Seen = {}
        is_file, known_of, add, rows = stat.S_ISREG, self._known.get, current.add, self._rows
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
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
                row = rows.get(rel)
                if row is not None and row[:3] == (info.st_mtime_ns, info.st_size, spec.name):
                    from_cache[rel] = (row, spec)
                    continue
                seen[rel] = (info.st_mtime_ns, info.st_size)
                if row is not None:
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
                self._known[rel] = Known(*row, PENDING if held[key] else None)
                self._version += 1
            else:
                seen[rel] = row[:2]
                todo.append((rel, spec, row.mtime_ns))
        return todo, changed, seen

    def _saved_look(self, listing: FileListing, inodes: HiddenInodes | None) -> SourceIndex | None:
        """A look answered from the look an earlier session saved for this listing, when every
        source file stats as saved; None: make the look in full (see `moot.repomap.saved_look`).
        """
        deferred = self._deferred
        key = (
            saved_look.listing_key(listing)
            if deferred is None or deferred.listing is not listing
            else deferred.listing_key
        )
        if deferred is not None:
            if key == deferred.listing_key:
                _, digest, _ = self._stat(deferred.sources, inodes)
                if digest == deferred.digest and deferred.found is not None:
                    return deferred.found
            self._make_deferred(deferred)  # its files changed: the look starts from it
            return None
        with self._cache_lock:
            loaded = saved_look.load(self._cache_of().saved_look(key), listing)
        if loaded is None:
            return None
        saved, sources = loaded
        self._sources = (listing, sources)  # what `mapped_sources` would find again
        stats, digest, hidden = self._stat(sources, inodes)
        if stats is None or digest != saved.stats:
            self._statted = (sources, stats, digest)
            return None
        deferred = DeferredLook(sources, (listing, key, stats, digest, hidden), saved)
        facts: DeferredFacts[RankFacts] = DeferredFacts(lambda: self._facts_of(deferred))
        self._version += 1
        deferred.found = SourceIndex(
            facts, LazyTags(self.tags, facts), (), saved.notes, self._version, 0
        )
        self._deferred, self._saved_digest = deferred, digest
        return deferred.found

    def _facts_of(self, deferred: DeferredLook) -> LazyFacts:
        """The facts of a deferred look, its rows read now if they were not."""
        with self._lock, collector_paused():
            self._make_deferred(deferred)
            assert deferred.facts is not None
            return deferred.facts

    def _make_deferred(self, deferred: DeferredLook) -> None:
        """Make a deferred look in full (hold `_lock`): read the rows and take each file from
        them at the stat the look had. A file the cache lost meanwhile is left out of this
        look (the next one parses it)."""
        if deferred.facts is not None:
            return
        self._deferred = None
        with self._cache_lock:
            self._rows = self._cache_of().load()
        stats, current, parsed = deferred.stats, set[str](), list[str]()
        covered = {(stats[n].st_dev, stats[n].st_ino) for n in deferred.hidden}
        hidden = CoveredInodes(covered) if covered else None
        todo, changed, _ = self._examine(deferred.sources, stats, hidden, current)
        deadline = time.monotonic() + PARSE_SECONDS
        if todo or self._rehash(changed, deadline, parsed) or parsed:
            self._stamp, self._last = None, None
        else:
            stamp = Stamp(deferred.listing, deferred.sources, deferred.digest, current, True)
            assert deferred.found is not None
            self._stamp = stamp
            self._last = ((self._version, deferred.listing.notes, current), deferred.found)
        self._sources = (deferred.listing, deferred.sources)
        deferred.facts = LazyFacts(
            {rel: known.facts for rel, known in self._known.items() if known.facts},
            self._settle,
        )
        deferred.stats = []  # ~650 bytes a file: no longer needed

    def _check_stamp(self, seen: _Seen | None) -> None:
        """Whether the look may be saved: every file not taken as known or from the cache at
        the look's stat (`seen`) was read at that stat too (a file may change while it is
        parsed, and then what was read is not what the stats' digest says)."""
        stamp, known_of = self._stamp, self._known.get
        if stamp is None or stamp.exact or seen is None:  # None: the last look's stamp, as it was
            return
        for rel, (mtime_ns, size) in seen.items():
            known = known_of(rel)
            if known is None or known.mtime_ns != mtime_ns or known.size != size:
                return
        self._stamp = stamp._replace(exact=True)

    def _save_look(self, found: SourceIndex, key: bytes) -> None:
        """Save the look that found `found` for later sessions, if it may be (`_check_stamp`)
        and is not saved already."""
        stamp, last = self._stamp, self._last
        if (
            stamp is None
            or not stamp.exact
            or found.pending
            or stamp.digest == self._saved_digest
            or last is None
            or last[0][2] is not stamp.current
            or last[1].facts is not found.facts
        ):
            return
        blob = saved_look.save(stamp.listing, stamp.sources, stamp.digest, key, found.notes)
        if blob is not None:
            with self._cache_lock:
                self._cache_of().save_look(saved_look.listing_key(stamp.listing), blob)
        self._saved_digest = stamp.digest

    def _sources_of(self, listing: FileListing) -> list[tuple[str, LanguageSpec]]:
        if self._sources is None or self._sources[0] is not listing:
            self._sources = (listing, source_files.mapped_sources(listing.files))
        return self._sources[1]

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

    def _notes(self, listing: FileListing, current: set[str], left: int) -> tuple[str, ...]:
        unmapped = ((r, k.size) for r, k in self._known.items() if k.facts is None and r in current)
        return source_files.look_notes(
            [problem for rel, problem in self._problems.items() if rel in current],
            unmapped,
            listing.notes,
            (left, len(current), self._background),
        )

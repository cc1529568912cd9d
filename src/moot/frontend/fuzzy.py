"""Fuzzy ranking of paths, for `@path` completion in the app and the REPL alike."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

FEW = 25_000
"""Paths that may match (they hold every character typed) checked one by one at most (about
1 µs each, in order, until enough are found); more, and the joined text is read in C."""


def fuzzy_match(needle: str, haystack: str) -> bool:
    """Every character of `needle`, in order, somewhere in `haystack` (case-insensitive)."""
    position = 0
    hay = haystack.lower()
    for char in needle.lower():
        position = hay.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def fuzzy_rank(needle: str, paths: Iterable[str], limit: int) -> list[str]:
    """The first `limit` paths that match `needle`, the best first: the needle whole in the
    file name, then spread over the file name, then whole in the path, then spread over it;
    shorter names and paths first."""
    name = needle.lower()

    def score(path: str) -> tuple[int, int, int]:
        base = path.rsplit("/", 1)[-1].lower()
        if name in base:
            rank = 0
        elif fuzzy_match(name, base):
            rank = 1
        else:
            rank = 2 if name in path.lower() else 3
        return (rank, len(base), len(path))

    return sorted((p for p in paths if fuzzy_match(needle, p)), key=score)[:limit]


class PathIndex:
    """The workspace's files made ready for `@path` ranking: `rank` answers what `fuzzy_rank`
    answers, in milliseconds over 100,000 paths (where `fuzzy_rank` takes a few hundred).

    `fuzzy_rank` orders the paths of one tier by their name's length, their length, then the
    order they were given in: none of that depends on what is typed, so the paths are sorted by
    it once, here. A tier is then found by searches, in C, over two strings that hold every
    name and every path (lower-cased, NUL between two), and the search stops once `limit` paths
    are found: a tier is looked at only when the tiers before it hold fewer.

    Reading a whole string (4.6 MB of paths in a 100,000-file repository) takes tens of
    milliseconds, so the paths that can match at all are narrowed first, when few: those
    holding every character typed (a bitset of lines per character, made with the
    index), or, when what is typed extends the last needle whose matches were all found,
    those matches. These few are checked one by one, in order, with the same tests.
    """

    def __init__(self, paths: Sequence[str], notes: Sequence[str] = ()) -> None:
        """Sort `paths` for ranking and index their characters (about 0.3 s for 100,000:
        build it off the UI thread).

        Args:
            paths: The files (`Client.files`).
            notes: What their listing left out, to show under the suggestions.
        """
        self.paths = tuple(paths)
        self.notes = tuple(notes)
        names = [path.rpartition("/")[2].lower() for path in self.paths]
        order = sorted(range(len(names)), key=lambda i: (len(names[i]), len(self.paths[i])))
        self._ordered = [self.paths[i] for i in order]
        self._names = _Lines([names[i] for i in order])
        self._full = _Lines([path.lower() for path in self._ordered])
        for lines in (self._names, self._full):
            lines.index_characters()
        self._every: tuple[str, list[int]] | None = None
        """The last needle whose matches were all found, and their lines in order: a needle
        typed on from it matches only among them."""
        self.checked: int | None = None
        """How many paths the last `rank` narrowed to, to check one by one in order until
        enough were found (None: it read the joined text, in C)."""

    def rank(self, needle: str, limit: int) -> list[str]:
        """The first `limit` paths matching `needle`, best first, as `fuzzy_rank` ranks them."""
        self.checked = None
        if not needle:
            return self._ordered[:limit]
        low = needle.lower()
        if "\0" in low or not all(char in self._full.text for char in set(low)):
            self._every = (low, [])
            return []
        names: list[int] | None
        paths: list[int] | None
        if self._every is not None and low.startswith(self._every[0]):
            names = paths = self._every[1]  # every match of what was typed before
        else:
            names, paths = self._names.narrowed(low), self._full.narrowed(low)
        if names is not None and paths is not None:
            self.checked = len(paths)
        found: list[int] = []
        seen: set[int] = set()
        complete = True
        subsequence = _subsequence(low)
        for lines, pool, spread in (
            (self._names, names, None),  # the needle whole in the name
            (self._names, names, subsequence),  # spread over the name
            (self._full, paths, None),  # whole in the path
            (self._full, paths, subsequence),  # spread over it
        ):
            if len(found) >= limit:
                complete = False
                break
            if pool is None:
                lines.collect(low, spread, limit, found, seen)
            else:
                lines.check(low, spread is not None, pool, limit, found, seen)
            complete = complete and len(found) < limit
        if complete:
            self._every = (low, sorted(found))
        return [self._ordered[line] for line in found[:limit]]


class _Lines:
    """Strings joined into one, each after a NUL, searched in C; a match's position gives its
    line."""

    def __init__(self, lines: list[str]) -> None:
        self.text = "".join(f"\0{line}" for line in lines)
        self.starts: list[int] = []
        """Where each line's first character is."""
        position = 1
        for line in lines:
            self.starts.append(position)
            position += len(line) + 1
        self.lines = lines
        self._bytes: bytes | None = None
        """`text` encoded, while characters' bitsets are made."""
        self._having: dict[str, int] = {}
        """Per ASCII character, a bitset of the lines holding it (bit n: line n)."""

    def index_characters(self) -> None:
        """Make the bitset of each printable character the lines hold now (a few ms each),
        so that no key waits for one."""
        for char in _PRINTABLE:
            if char in self.text:
                self._lines_having(char)
        self._bytes = None

    def narrowed(self, needle: str) -> list[int] | None:
        """The lines, in order, holding every (ASCII) character of `needle`; None when they
        are more than `FEW` (reading the text is then about as quick)."""
        bits = -1
        for char in set(needle):
            if " " <= char <= "~":  # printable ASCII: the others do not narrow
                bits &= self._lines_having(char)
        if bits < 0 or bits.bit_count() > FEW:
            return None
        return _members(bits)

    def check(
        self, needle: str, spread: bool, pool: list[int], limit: int, found: list[int],
        seen: set[int],
    ) -> None:  # fmt: skip
        """Add to `found` (and `seen`) the lines of `pool`, in order, that hold `needle` (or,
        given `spread`, its characters in order) and are not in `seen` yet, until `found`
        holds `limit`."""
        lines = self.lines
        for line in pool:
            if len(found) >= limit:
                return
            if line in seen:
                continue
            text = lines[line]
            if (spread and _spread_in(needle, text)) or (not spread and needle in text):
                seen.add(line)
                found.append(line)

    def _lines_having(self, char: str) -> int:
        """The bitset of the lines holding `char` (printable ASCII), made in C: the text less
        every byte but the NULs and `char`; each line's NUL followed by `char` made a 1, the
        other NULs a 0, the rest of `char` dropped: one digit a line."""
        bits = self._having.get(char)
        if bits is None:
            if self._bytes is None:
                self._bytes = self.text.encode()
            byte = ord(char)
            others = bytes(b for b in range(256) if b not in (0, byte))
            kept = self._bytes.translate(None, others)
            digits = kept.replace(bytes((0, byte)), b"\x01").translate(_DIGITS, bytes((byte,)))
            bits = self._having[char] = int(digits[::-1], 2) if digits else 0
        return bits

    def collect(
        self, needle: str, spread: re.Pattern[str] | None, limit: int, found: list[int],
        seen: set[int],
    ) -> None:  # fmt: skip
        """Add to `found` (and `seen`) the lines, in order, that hold `needle` (or, given
        `spread`, its characters in order) and are not in `seen` yet, until `found` holds
        `limit`."""
        text, starts = self.text, self.starts
        position, count = 0, len(starts)
        while len(found) < limit:
            if spread is None:
                at = text.find(needle, position)
            else:
                match = spread.search(text, position)
                at = -1 if match is None else match.start() + 1  # it starts at the NUL
            if at < 0:
                return
            line = bisect.bisect_right(starts, at) - 1
            if line not in seen:
                seen.add(line)
                found.append(line)
            if line + 1 >= count:
                return
            position = starts[line + 1] - 1


def _spread_in(needle: str, text: str) -> bool:
    """Every character of `needle`, in order, somewhere in `text` (both lower-cased)."""
    position = 0
    for char in needle:
        position = text.find(char, position) + 1
        if not position:
            return False
    return True


def _members(bits: int) -> list[int]:
    """The positions of the bits set in `bits`, lowest first: its zero bytes skipped in C."""
    data = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    members: list[int] = []
    for run in _SET_BYTES.finditer(data):
        first = run.start()
        for number, byte in enumerate(run.group(), first):
            members += [number * 8 + bit for bit in _BITS_OF[byte]]
    return members


_PRINTABLE = "".join(chr(code) for code in range(ord(" "), ord("~") + 1))
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_SET_BYTES = re.compile(rb"[^\x00]+")
_BITS_OF = tuple(tuple(bit for bit in range(8) if byte >> bit & 1) for byte in range(256))


def _subsequence(needle: str) -> re.Pattern[str]:
    """A line holding every character of `needle` in order: `\\0[^\\0a]*+a[^\\0b]*+b...`.
    It starts at the line's NUL and each gap runs to the first character wanted next and never
    gives it back (possessive), so a line is read once whether it matches or not, not once
    for every `a` in it."""
    parts = ["\\x00"]
    for char in needle:
        escaped = re.escape(char)
        parts.append(f"[^\\x00{escaped}]*+{escaped}")
    return re.compile("".join(parts))

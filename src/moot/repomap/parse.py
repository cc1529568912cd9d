"""Reading and parsing one source file, the same way in this process and in a parser process
(`moot.repomap.parse_worker`): what comes back is a `Parsed`, which crosses the pipe as
msgpack, its tags already encoded for the cache."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import IO

import msgspec

from moot.repomap.languages import GrammarMissing, Grammars, LanguageSpec
from moot.repomap.tags import FileTags, extract_tags
from moot.workspace.no_follow import PathRefused, open_read

MAX_FILE_BYTES = 512 * 1024
"""Larger files are left out: generated or bundled code, slow to parse and no help to read."""
DIGEST_BYTES = 16


class Parsed(msgspec.Struct, frozen=True, array_like=True):
    """One file read (and parsed, unless left out)."""

    path: str
    """Relative to the workspace root, `/`-joined."""
    language: str
    mtime_ns: int = 0
    size: int = 0
    """As `fstat` saw them on the descriptor read: what `digest` is the content of."""
    digest: bytes = b""
    tags: bytes | None = None
    """The tags (`encode_tags`); None when the file is left out (binary or too large)."""
    problem: str = ""
    """Why it was not read or parsed ("" when it was): "unreadable", or what the reader is
    told (a grammar not installed). Such a file is not cached: it is tried again next time."""


def digest_of(source: bytes) -> bytes:
    """What the cache keys a file's content by."""
    return hashlib.blake2b(source, digest_size=DIGEST_BYTES).digest()


def read_source(root: Path, rel: str) -> tuple[os.stat_result, bytes]:
    """The file's status and its first `MAX_FILE_BYTES + 1` bytes.

    Every component is opened with `O_NOFOLLOW`: a directory swapped for a symlink since the
    file was listed (by a command running meanwhile) must not lead outside the workspace.

    Raises:
        OSError: Unreadable, not a regular file, or a symlink on the way.
    """
    try:
        fd = open_read(root, root.joinpath(*rel.split("/")))
    except PathRefused as exc:
        raise OSError(f"{rel}: {exc}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{rel}: not a regular file")
        return info, file.read(MAX_FILE_BYTES + 1)


def parse_file(root: Path, rel: str, spec: LanguageSpec, grammars: Grammars) -> Parsed:
    """Read and parse the file at `rel` below `root`; never raises."""
    try:
        info, source = read_source(root, rel)
    except OSError:
        return Parsed(rel, spec.name, problem="unreadable")
    return parse_source(rel, spec, grammars, info, source)


def parse_source(
    rel: str, spec: LanguageSpec, grammars: Grammars, info: os.stat_result, source: bytes
) -> Parsed:
    """The `Parsed` of content already read (`read_source`); never raises."""
    found = Parsed(rel, spec.name, info.st_mtime_ns, info.st_size, digest_of(source))
    if len(source) > MAX_FILE_BYTES or b"\0" in source[:8192]:
        return found  # left out: no tags
    try:
        tags = extract_tags(source, grammars.get(spec))
    except GrammarMissing as exc:
        return msgspec.structs.replace(found, problem=str(exc))
    except Exception as exc:  # a grammar's own failure: this file only, not the map
        return msgspec.structs.replace(found, problem=f"not parsed: {type(exc).__name__}")
    return msgspec.structs.replace(found, tags=encode_tags(tags))


def encode_tags(tags: FileTags) -> bytes:
    return msgspec.msgpack.encode(tags)


_DECODER = msgspec.msgpack.Decoder(FileTags)


def decode_tags(blob: bytes) -> FileTags:
    """Tags back from `encode_tags`.

    Raises:
        ValueError: The bytes are not what `encode_tags` writes.
    """
    try:
        return _DECODER.decode(blob)
    except msgspec.DecodeError as exc:
        raise ValueError(f"bad cached tags: {exc}") from exc


_HEADER = 4


def read_message(stream: IO[bytes]) -> bytes | None:
    """One message between this process and a parser process (a 4-byte little-endian length,
    then that many bytes of msgpack); None at the end of the stream.

    `stream` may be unbuffered (the pool reads its processes' pipes so, since it waits on them
    with `select`, and a buffer could hold an answer `select` does not see): short reads are
    read on.
    """
    header = _read_exactly(stream, _HEADER)
    if header is None:
        return None
    return _read_exactly(stream, int.from_bytes(header, "little"))


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_message(stream: IO[bytes], body: bytes) -> None:
    view = memoryview(len(body).to_bytes(_HEADER, "little") + body)
    while view:
        written = stream.write(view)
        view = view[written or 0 :] if written is not None else view[len(view) :]
    stream.flush()

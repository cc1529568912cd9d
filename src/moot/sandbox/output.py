"""What a command printed, capped for the model, and all of it in a file when that was too much.

A command can print gigabytes; the model gets at most `MAX_OUTPUT_CHARS`, its head and tail
with the middle elided by a marker that says where the full output is. Memory stays bounded:
once a command has printed more than the cap, everything it printed (stdout and stderr in the
order they arrived) goes to a file and only the head and the tail stay in memory.

The file is written by moot, on the host, under `<data dir>/outputs/<session>/`: outside the
project (moot never writes into it uninvited), where a sandboxed command cannot tamper with it
(the root file system is read-only in bubblewrap; Docker does not mount it at all). The
session's `Workspace` lists the directory as a read-only root, so the `read` tool can open what
is saved there. Directories inside the
workspace, when a caller asks for one there, are opened with `O_NOFOLLOW`, so a symlink a
command planted cannot redirect the write.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import secrets
import time
from collections import deque
from pathlib import Path
from typing import BinaryIO, Literal

import msgspec

from moot.paths import PRIVATE_FILE, make_private_dir
from moot.sandbox.base import CommandResult, OutputCallback
from moot.workspace.no_follow import PathRefused, open_dir_chain

MAX_OUTPUT_CHARS = 30_000
"""What the model sees of one command's output (stdout and stderr together), at most."""
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

Stream = Literal["stdout", "stderr"]


class HeadTail:
    """One stream's text: all of it up to `limit` characters, then its head and its tail."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self.limit = limit
        self.total = 0
        """Characters added so far."""
        self._half = limit // 2
        self._head = ""
        self._tail: deque[str] = deque()
        self._tail_len = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if len(self._head) < self._half:
            room = self._half - len(self._head)
            self._head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        keep = self.limit - self._half
        while self._tail_len - len(self._tail[0]) >= keep:
            self._tail_len -= len(self._tail.popleft())

    def render(self, budget: int | None = None, *, where: str = "") -> str:
        """The text, or its head and tail around a marker when longer than `budget`.

        Args:
            budget: Characters to show at most (the marker aside); at most `limit`.
            where: The full output's file, named in the marker.
        """
        budget = self.limit if budget is None else min(budget, self.limit)
        tail = "".join(self._tail)
        if self.total <= budget:
            return self._head + tail
        if self.total <= self.limit:  # all of it is still here: cut it as one
            whole = self._head + tail
            head, tail = whole[: len(whole) // 2], whole[len(whole) // 2 :]
        else:
            head = self._head
        head = _cut_head(head, budget // 2)
        tail = _cut_tail(tail, budget - budget // 2)
        return head + elision_marker(self.total - len(head) - len(tail), where) + tail


def elision_marker(chars: int, where: str = "") -> str:
    """The line that stands for an elided middle."""
    place = f"; the full output is in {where}" if where else ""
    return f"\n[... {chars:,} characters elided{place} ...]\n"


def _cut_head(text: str, size: int) -> str:
    """The first `size` characters, ended at a line break when one is near the end."""
    cut = text[:size]
    newline = cut.rfind("\n")
    return cut[: newline + 1] if newline >= size * 3 // 4 else cut


def _cut_tail(text: str, size: int) -> str:
    """The last `size` characters, begun after a line break when one is near the start."""
    cut = text[len(text) - size :] if size else ""
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < size // 4 else cut


class CapturedOutput(msgspec.Struct, frozen=True):
    stdout: str
    stderr: str
    truncated: bool
    output_file: Path | None

    def result(self, exit_code: int | None, started: float, backend: str) -> CommandResult:
        """The command's result: `started` is its `time.perf_counter()` at launch."""
        return CommandResult(
            exit_code=exit_code,
            stdout=self.stdout,
            stderr=self.stderr,
            duration_ms=(time.perf_counter() - started) * 1000,
            backend=backend,
            truncated=self.truncated,
            timed_out=exit_code is None,
            output_file=self.output_file,
        )


class OutputDir:
    """Where one sandbox (one session) saves full outputs; the directory is made on first use.

    Outside the project by default (moot never writes into the project uninvited): the
    session's `Workspace` lists the directory as a read-only root, so the `read` tool can open
    what is saved here.
    """

    def __init__(self, workspace: Path, directory: Path | None = None) -> None:
        """Args:
        workspace: The workspace root (real path).
        directory: Where to save; default `<data dir>/outputs/<time>-<random>/`.
        """
        self.workspace = workspace
        if directory is None:
            from moot.paths import data_dir

            name = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
            directory = data_dir() / "outputs" / name
        self.directory = directory
        self._count = 0

    def next_name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}-{self._count:04d}.txt"

    def create(self, name: str) -> tuple[BinaryIO, Path]:
        """Create the file `name` (it must not exist) and return it open for writing."""
        mode = 0o644  # in the workspace: a file of the person's project
        if self.directory.is_relative_to(self.workspace):
            parts = self.directory.relative_to(self.workspace).parts
            dir_fd = open_dir_chain(self.workspace, parts, create=True)
        else:
            # Under moot's data directory: what a command printed is this user's only.
            make_private_dir(self.directory)
            dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            mode = PRIVATE_FILE
        try:
            fd = os.open(name, _FILE_FLAGS, mode, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        return os.fdopen(fd, "wb"), self.directory / name

    def display(self, path: Path) -> str:
        """`path` as the model should name it: relative to the workspace when inside."""
        return (
            path.relative_to(self.workspace).as_posix()
            if path.is_relative_to(self.workspace)
            else str(path)
        )


class OutputCapture:
    """Collects a command's output as it arrives: streams it on, caps it, spills it to a file."""

    def __init__(
        self,
        files: OutputDir | None,
        *,
        name: str = "cmd",
        limit: int = MAX_OUTPUT_CHARS,
        on_output: OutputCallback | None = None,
    ) -> None:
        """Args:
        files: Where to save the full output once it passes `limit`; None keeps only the
            head and tail.
        name: The file name's prefix.
        limit: Characters of stdout and stderr together that the model may see.
        on_output: Called with each piece of decoded text as it arrives.
        """
        self.limit = limit
        self._files = files
        self._name = name
        self._on_output = on_output
        self._streams = {"stdout": HeadTail(limit), "stderr": HeadTail(limit)}
        self._decoders = {
            s: codecs.getincrementaldecoder("utf-8")("replace") for s in self._streams
        }
        self._pending: list[str] = []
        self._file: BinaryIO | None = None
        self._closed = False
        self.output_file: Path | None = None
        """The file holding everything, once the output passed the limit."""
        self.spill_error = ""
        """Why the full output could not be saved, if it could not."""

    @property
    def total(self) -> int:
        return sum(s.total for s in self._streams.values())

    @property
    def where(self) -> str:
        """The full output's file as the model should name it; "" when there is none."""
        if self.output_file is None or self._files is None:
            return ""
        return self._files.display(self.output_file)

    def feed(self, stream: Stream, data: bytes, *, final: bool = False) -> None:
        """Add bytes from one stream; `final` flushes a partial character at its end."""
        text = self._decoders[stream].decode(data, final)
        if not text:
            return
        self._streams[stream].add(text)
        self._keep(text)
        if self._on_output is not None:
            self._on_output(text)

    def finish(self) -> CapturedOutput:
        """Flush the decoders, close the file and render both streams within the limit."""
        self.feed("stdout", b"", final=True)
        self.feed("stderr", b"", final=True)
        self.close()
        out, err = self._streams["stdout"], self._streams["stderr"]
        truncated = out.total + err.total > self.limit
        if not truncated:
            return CapturedOutput(out.render(), err.render(), False, None)
        small, large = sorted((out, err), key=lambda s: s.total)
        small_budget = min(small.total, self.limit // 2)
        budgets = {id(small): small_budget, id(large): self.limit - small_budget}
        where = self.where
        return CapturedOutput(
            out.render(budgets[id(out)], where=where),
            err.render(budgets[id(err)], where=where),
            True,
            self.output_file,
        )

    def close(self) -> None:
        """Close the file, if any; nothing more is saved (a command that failed or was cut off)."""
        self._closed = True
        if self._file is not None:
            self._file.close()
            self._file = None

    def _keep(self, text: str) -> None:
        if self._closed:
            return
        if self._file is None and not self.spill_error and self._files is not None:
            self._pending.append(text)
            if self.total <= self.limit:
                return
            try:
                self._file, self.output_file = self._files.create(self._files.next_name(self._name))
            except (OSError, PathRefused) as exc:  # a full disk or a planted symlink: go on
                self.spill_error = f"{type(exc).__name__}: {exc}"
                self._pending.clear()
                return
            text = "".join(self._pending)
            self._pending.clear()
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.write(text.encode("utf-8", "surrogateescape"))

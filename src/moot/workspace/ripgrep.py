"""The ripgrep backend of `grep`: the same `FileHits` as `search_python`, only faster.

ripgrep is told to behave like the Python walk: hidden files searched, `.git` skipped,
ignore files (`.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`) honoured whether or
not this is a git repository, and no global excludes or config files. It would also read
ignore files above the directory searched, all the way up past the workspace root; so it is
told not to, and the workspace's own ones above the search directory are handed to it as one
`--ignore-file`, rewritten relative to the root (ripgrep's working directory). Rules handed so
rank below the ignore files ripgrep finds itself: a search started below the root where an
ancestor's `.ignore` and a nearer `.gitignore` disagree may differ from the walk.

Its `--json` output is parsed rather than its text, so file names and lines with colons
cannot be misread; files ripgrep stops at as binary are dropped whole. Globs ripgrep can apply
on names alone narrow the search up front (`--type-add`, `-g !`); the request's own filter
then decides, so both backends keep exactly the same files.

It is bounded as the walk is (`moot.workspace.walk`): `--max-depth` keeps it to `MAX_DEPTH`
levels below the root, and it is killed at the request's deadline, the result then saying
so. ripgrep says nothing of what lay deeper than it went, so after the search a listing of
files (`--files`, no file read) looks for one more than `MAX_DEPTH` levels deep, and the result
says that directories that deep were not entered, as the walk's does. ripgrep
follows a symlink swapped in for a directory while it runs, so the files shown are read again
through `O_NOFOLLOW` descriptors and kept only when they hold the lines it reported
(`moot.workspace.search.confirmed`). Only directories are searched with it: a single file is
searched by `search_python`, which opens it without following links.
"""

from __future__ import annotations

import base64
import contextlib
import heapq
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO, Any

from moot.workspace.ignore import EXCLUDE, IGNORE_FILES, read_lines
from moot.workspace.search import (
    MAX_FILES,
    FileHits,
    Hit,
    SearchError,
    SearchRequest,
    confirmed,
    search_python,
)
from moot.workspace.special_files import SpecialFileWatch
from moot.workspace.walk import MAX_DEPTH, deadline_after, out_of_time, too_deep

WALK_ARGS = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--glob=!.git",
)
"""What makes ripgrep skip what a walk skips (`moot.workspace.walk`); the file index's
`rg --files` is told the same (`moot.workspace.file_index`)."""
_FIXED_ARGS = (
    "--json",
    *WALK_ARGS,
    "--crlf",
    "--no-mmap",  # with memory maps ripgrep checks only a file's head for NUL bytes
)
_TYPE = "moot"
_FILE_ERROR = re.compile(r".*: .*\(os error \d+\)")
"""How ripgrep reports a path it could not read (`a/b: Permission denied (os error 13)`)."""
SPECIAL_FILE_NOTE = (
    "an ignore file here is a FIFO or a device, which ripgrep waits on or reads without end: "
    "searched without ripgrep"
)


class MetSpecialFile(Exception):
    """ripgrep was killed opening a FIFO or reading a device among the ignore files
    (`special_files`)."""


def search_ripgrep(
    rg: str,
    request: SearchRequest,
    *,
    files: int = MAX_FILES + 1,
    notes: list[str] | None = None,
) -> Generator[FileHits, None, None]:
    """Run ripgrep for `request`, a search of a directory: the first `files` matching files in
    path order.

    ripgrep searches with all its threads (`--sort=path` would make it single-threaded, about
    1.7x slower on a large tree); the order the Python search gives is restored here by keeping
    only the `files` smallest paths as results stream in, so memory stays bounded.

    Args:
        rg: Path of the `rg` executable.
        request: The search.
        files: How many files (in path order) the caller can show at most. Every file is
            read to its end, as the Python search does: a NUL byte late in a file still
            makes it binary and drops it.
        notes: Gets what the search left out and why (out of time).

    Raises:
        SearchError: ripgrep refused the search (a bad regular expression, usually); raised
            while iterating, before anything is yielded.
    """
    root = request.root
    start = request.start.relative_to(root).as_posix()
    depth = max(1, MAX_DEPTH - len(request.start.relative_to(root).parts))
    args = [rg, *_FIXED_ARGS, f"--max-depth={depth}"]
    if request.ignore_case:
        args.append("--ignore-case")
    if request.context:
        args.append(f"--context={request.context}")
    if request.include is not None and request.include.basename_globs:
        args += [f"--type-add={_TYPE}:{glob}" for glob in request.include.basename_globs]
        args.append(f"--type={_TYPE}")
    if request.exclude is not None and request.exclude.basename_globs:
        args += [f"--glob=!{glob}" for glob in request.exclude.basename_globs]
    with contextlib.ExitStack() as cleanup:
        rules = _ancestor_rules(root, request.start)
        ignoring: list[str] = []
        if rules:
            scratch = cleanup.enter_context(tempfile.TemporaryDirectory(prefix="moot-rg-"))
            ignore_file = Path(scratch, "ignore")
            ignore_file.write_text("\n".join(rules) + "\n", encoding="utf-8")
            ignoring.append(f"--ignore-file={ignore_file}")
        args += [*ignoring, "--regexp", request.pattern, "--", start]
        # Path order compares component by component ("a/b" before "a-c"), as a walk does.
        stopped: list[str] = []
        deep_files = _DeepFiles(rg, ignoring, root, start)
        cleanup.callback(deep_files.stop)
        found = _run(args, root, request, stopped)
        try:
            first = heapq.nsmallest(files, found, key=lambda hit: hit[0].split("/"))
        except MetSpecialFile:  # nothing was yielded: `nsmallest` takes all before it answers
            if notes is not None:
                notes.append(SPECIAL_FILE_NOTE)
            yield from search_python(request, notes)
            return
        deadline = deadline_after() if request.deadline is None else request.deadline
        if not stopped and (deep := deep_files.first(deadline)):
            stopped.append(too_deep("/".join(deep.split("/")[:MAX_DEPTH])))
        if notes is not None:
            notes += stopped  # before the hits: a caller showing only some never ends this
        yield from confirmed(root, first, request.inodes)


def _run(
    args: list[str], root: Path, request: SearchRequest, stopped: list[str]
) -> Generator[FileHits, None, None]:
    deadline = deadline_after() if request.deadline is None else request.deadline
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            args,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,  # a file, not a pipe: a full stderr pipe would stall ripgrep
        )
        assert process.stdout is not None
        watch = SpecialFileWatch(process, deadline)  # killed, its output ends, and this loop
        yielded = False
        try:
            for rel, hits in _parse(process.stdout):
                if request.wants(rel):
                    yielded = True
                    yield rel, hits
        finally:
            watch.stop()
            if process.poll() is None:
                process.kill()
            process.stdout.close()
            code = process.wait()
        if watch.special:
            raise MetSpecialFile
        if time.monotonic() >= deadline:
            stopped.append(out_of_time())
            return
        if code == 2 and not yielded:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip()
            # Files or directories it could not read are skipped, as the Python search skips
            # them; anything else (a bad pattern, usually) is the search failing.
            if message and not all(_FILE_ERROR.fullmatch(line) for line in message.splitlines()):
                raise SearchError(f"ripgrep: {message[:500]}")


class _DeepFiles:
    """A listing of the files more than `MAX_DEPTH` levels below the root, which the search
    (`--max-depth`) leaves out, honouring the same ignore rules: ripgrep says nothing of what
    lay below its depth bound, and "No matches." must not hide that the search stopped there.

    It runs beside the search, reads no file and stops at the first one it lists: on 50,000
    files in 2,500 directories the listing alone took about 0.1 s, and a search finding
    nothing 30-130 ms more than without it (0.35-0.42 s), on a loaded 2-core machine.
    """

    def __init__(self, rg: str, ignoring: list[str], root: Path, start: str) -> None:
        deep = "*/" * MAX_DEPTH + "**"  # matched against the path from the root, as listed
        args = [rg, *WALK_ARGS, *ignoring, "--files", f"--glob={deep}", "--", start]
        self.process = subprocess.Popen(
            args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def first(self, deadline: float) -> str:
        """The first file listed ("" for none), waiting at most until `deadline`."""
        stdout = self.process.stdout
        assert stdout is not None
        watch = SpecialFileWatch(self.process, deadline)
        try:
            line = stdout.readline()
        finally:
            watch.stop()
            self.stop()
        return _relative(os.fsdecode(line.rstrip(b"\n"))) if line else ""

    def stop(self) -> None:
        self.process.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process.wait()


def _parse(stream: IO[bytes]) -> Generator[FileHits, None, None]:
    hits: list[Hit] = []
    for raw in stream:
        try:
            message: dict[str, Any] = json.loads(raw)
        except ValueError:
            return  # cut off mid-line: killed at the deadline

        kind, data = message.get("type"), message.get("data", {})
        if kind == "begin":
            hits = []
        elif kind in ("match", "context"):
            text = _line(data["lines"]).rstrip("\n")
            text = text[:-1] if text.endswith("\r") else text
            hits.append(Hit(data["line_number"], text, kind == "match"))
        elif kind == "end":
            if data.get("binary_offset") is None and any(hit.is_match for hit in hits):
                yield _relative(_text(data["path"])), hits
            hits = []


def _line(value: dict[str, str]) -> str:
    """A line as the Python search shows it: undecodable bytes as U+FFFD."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", "replace")


def _text(value: dict[str, str]) -> str:
    if "text" in value:
        return value["text"]
    return os.fsdecode(base64.b64decode(value["bytes"]))


def _relative(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def _ancestor_rules(root: Path, start: Path) -> list[str]:
    """The ignore rules of `start`'s ancestors up to the root (`IGNORE_FILES` and the root's
    `.git/info/exclude`), relative to the root.

    ripgrep reads the ignore files of `start` and of everything below it itself. Rules of
    deeper files come later, so they win, as they would in place; so do a directory's
    `.ignore` rules over its `.gitignore` rules.
    """
    if not start.is_dir():
        return []  # a file named explicitly is searched whatever the rules say
    parts = start.relative_to(root).parts
    rules: list[str] = []
    for depth in range(len(parts)):
        directory = parts[:depth]
        base = "/".join(directory)
        names = IGNORE_FILES if directory else (EXCLUDE, *IGNORE_FILES)
        for name in names:
            lines = read_lines(root, directory, name)  # as GitIgnore: symlinks are not read
            rules += [rewrite_rule(line, base) for line in lines]
    return [rule for rule in rules if rule]


def rewrite_rule(line: str, base: str) -> str:
    """A `.gitignore` line from directory `base` as a rule relative to the root.

    `name` (no inner `/`) matches at any depth below its file, so it becomes `/base/**/name`;
    a rule with an inner `/` is anchored at its file, so it becomes `/base/rule`.
    """
    if not base or not line.strip() or line.startswith("#"):
        return line
    negate = line.startswith("!")
    body = line[1:] if negate else line
    if "/" in body.rstrip("/").rstrip():
        rewritten = f"/{base}/{body.lstrip('/')}"
    else:
        rewritten = f"/{base}/**/{body}"
    return ("!" if negate else "") + rewritten


def list_files(rg: str, root: Path, deadline: float) -> tuple[list[str], bool] | None:
    """Every file `rg --files` lists below `root`, as a walk would list them (`WALK_ARGS`,
    `MAX_DEPTH`), relative and `/`-joined, in ripgrep's order.

    Returns:
        The files and whether ripgrep was stopped at `deadline` (then the list is cut short);
        None when ripgrep could not run or failed.
    """
    args = [rg, "--files", "--null", *WALK_ARGS, f"--max-depth={MAX_DEPTH}"]
    try:
        process = subprocess.Popen(
            args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:
        return None
    assert process.stdout is not None
    watch = SpecialFileWatch(process, deadline)
    try:
        output = process.stdout.read()
    finally:
        watch.stop()
        process.stdout.close()
        code = process.wait()
    if watch.special:
        return None  # the walk lists without waiting on it
    stopped = time.monotonic() >= deadline
    if not stopped and code not in (0, 1, 2):  # 2: a directory could not be read, the rest is
        return None
    names = os.fsdecode(output).split("\0")
    return names[:-1], stopped  # after the last NUL: nothing, or a name cut off at the deadline

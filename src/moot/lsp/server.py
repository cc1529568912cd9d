"""One running language server: its process, the documents it holds, what it published.

The process is started by the session's sandbox where the sandbox runs local processes
(bubblewrap, Landlock, or the host when the person chose no sandbox): the server then reads
the workspace as a shell command would, masks included. Killing it kills its process group
(bubblewrap's PID namespace and `--die-with-parent` take whatever it started with it;
under Landlock, `piped.PipedProcess.kill` takes every process below it too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from moot.lsp.report import Diagnostic, parse, parse_tsserver
from moot.lsp.rpc import Connection, ServerGone
from moot.lsp.servers import BY_SUFFIX, ServerSpec

STDERR_KEPT = 2000
"""Characters of a server's stderr kept to say why it stopped."""
SETTLE = 0.3
"""Seconds without a new publication after which a server that does not say which version it
checked is taken to have said all it will of a file (at least; see `_published`)."""
SETTLE_MAX = 1.0


class ServerProcess(Protocol):
    """A server's process: asyncio's, or one a sandbox started (`moot.lsp.piped`)."""

    @property
    def pid(self) -> int: ...
    @property
    def stdin(self) -> asyncio.StreamWriter | None: ...
    @property
    def stdout(self) -> asyncio.StreamReader | None: ...
    @property
    def stderr(self) -> asyncio.StreamReader | None: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...
    def kill(self) -> None: ...


Spawn = Callable[[ServerSpec, Path], Awaitable[ServerProcess]]
"""Starts a server's process with stdin and stdout piped (see `session.spawner`)."""


class _Document:
    __slots__ = ("diagnostics", "path", "published", "text", "version")

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text
        self.version = 1
        self.diagnostics: tuple[Diagnostic, ...] | None = None
        """None: nothing published for `version` yet."""
        self.published = asyncio.Event()


class LanguageServer:
    """A started server (see `start`)."""

    def __init__(self, spec: ServerSpec, root: Path, process: ServerProcess) -> None:
        self.spec, self.root, self.process = spec, root, process
        assert process.stdin is not None and process.stdout is not None
        reader = process.stdout
        self.connection = Connection(
            reader, process.stdin, on_notify=self._notified, on_request=self._asked
        )
        self._reader = asyncio.ensure_future(self.connection.run())
        self._stderr = asyncio.ensure_future(self._keep_stderr())
        self.stderr_tail = ""
        self.documents: dict[str, _Document] = {}
        self.versioned = False
        """It says which version of a file its diagnostics are about (pyright does)."""

    @classmethod
    async def start(
        cls, spec: ServerSpec, root: Path, spawn: Spawn, *, in_namespace: bool
    ) -> LanguageServer:
        """Start the server and finish its `initialize` handshake.

        Args:
            spec: What to run.
            root: The workspace, the server's root.
            spawn: Starts the process.
            in_namespace: It runs in a PID namespace of its own (bubblewrap), where moot's pid
                names nothing, or in a Landlock domain that may not signal moot (its
                `kill(pid, 0)` fails): it is then not told the pid, or it would exit at once.

        Raises:
            OSError: It could not be started.
            ServerGone: It stopped before it answered.
        """
        process = await spawn(spec, root)
        server = cls(spec, root, process)
        try:
            await server._initialize(None if in_namespace else os.getpid())
        except ServerGone:
            why = await server.ended()
            await server.kill()
            raise ServerGone(why) from None
        except BaseException:
            await server.kill()
            raise
        return server

    async def _initialize(self, pid: int | None) -> None:
        uri = self.root.as_uri()
        capabilities = {
            "textDocument": {
                "synchronization": {"didSave": False, "dynamicRegistration": False},
                "publishDiagnostics": {"relatedInformation": False, "versionSupport": True},
            },
            "workspace": {"configuration": True, "workspaceFolders": True},
            "window": {"workDoneProgress": False},
        }
        params: dict[str, Any] = {
            "processId": pid,
            "rootUri": uri,
            "rootPath": str(self.root),
            "capabilities": capabilities,
            "workspaceFolders": [{"uri": uri, "name": self.root.name}],
            "clientInfo": {"name": "moot"},
        }
        if self.spec.init_options is not None:
            params["initializationOptions"] = self.spec.init_options
        await self.connection.request("initialize", params)
        self.connection.notify("initialized", {})

    @property
    def alive(self) -> bool:
        return not self.connection.closed.is_set() and self.process.returncode is None

    async def ended(self) -> str:
        """`why_stopped`, once its exit and its last words are in (a second at most)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr), 1.0)
            await asyncio.wait_for(self.process.wait(), 1.0)
        return self.why_stopped()

    def why_stopped(self) -> str:
        """A line on how it ended: its exit code and the end of its stderr."""
        code = self.process.returncode
        tail = self.stderr_tail.strip().splitlines()[-1:] if self.stderr_tail.strip() else []
        said = f": {tail[0][:200]}" if tail else ""
        ended = f"exit code {code}" if code is not None else "its output closed"
        return f"{self.spec.label} stopped ({ended}){said}"

    async def sync(self, path: Path, text: str, wait: float) -> tuple[Diagnostic, ...] | None:
        """Make the server hold `text` for `path` and wait up to `wait` seconds for what it
        says of it; None when it said nothing in time.

        Raises:
            ServerGone: It stopped.
        """
        uri = path.as_uri()
        document = self.documents.get(uri)
        if document is None:
            document = self.documents[uri] = _Document(path, text)
            language_id = BY_SUFFIX[path.suffix].suffixes[path.suffix]
            item = {"uri": uri, "languageId": language_id, "version": 1, "text": text}
            self.connection.notify("textDocument/didOpen", {"textDocument": item})
        elif document.text != text:
            document.text, document.version = text, document.version + 1
            document.diagnostics = None
            document.published.clear()
            changed = {"uri": uri, "version": document.version}
            params = {"textDocument": changed, "contentChanges": [{"text": text}]}
            self.connection.notify("textDocument/didChange", params)
        if self.spec.language == "typescript":
            return await self._asked_typescript(uri, document, wait)
        return await self._published(document, wait)

    async def _asked_typescript(
        self, uri: str, document: _Document, wait: float
    ) -> tuple[Diagnostic, ...] | None:
        """typescript-language-server publishes each kind of diagnostic as tsserver finds it,
        merged with the other kinds as they were for the text before (an edit's first
        publication can hold the errors it removed): so tsserver is asked, in order after the
        change, for the file's syntax and semantic errors."""
        text = document.text
        found: list[Any] = []
        try:
            async with asyncio.timeout(wait):
                for command in ("syntacticDiagnosticsSync", "semanticDiagnosticsSync"):
                    params = {
                        "command": "typescript.tsserverRequest",
                        "arguments": [command, {"file": uri, "includeLinePosition": False}],
                    }
                    answer = await self.connection.request("workspace/executeCommand", params)
                    body = answer.get("body") if isinstance(answer, dict) else answer
                    found += body if isinstance(body, list) else []
        except TimeoutError:
            return None
        except ServerGone:
            raise ServerGone(await self.ended()) from None
        document.diagnostics = parse_tsserver(found, text)
        return document.diagnostics

    async def _published(self, document: _Document, wait: float) -> tuple[Diagnostic, ...] | None:
        if document.diagnostics is not None:
            return document.diagnostics
        asked = time.monotonic()
        gone = asyncio.ensure_future(self.connection.closed.wait())
        published = asyncio.ensure_future(document.published.wait())
        try:
            await asyncio.wait((gone, published), timeout=wait, return_when="FIRST_COMPLETED")
        finally:
            gone.cancel()
            published.cancel()
        if document.diagnostics is None:
            if self.connection.closed.is_set():
                raise ServerGone(await self.ended())
            return None
        if self.versioned:  # it names the text it checked: this is its answer for it
            return document.diagnostics
        # Otherwise more may follow (typescript-language-server publishes syntax, then
        # semantic errors): take the last before a quiet spell, longer on a slower server.
        quiet = min(SETTLE_MAX, max(SETTLE, (time.monotonic() - asked) / 2))
        with contextlib.suppress(TimeoutError):
            while True:
                document.published.clear()
                await asyncio.wait_for(document.published.wait(), quiet)
        return document.diagnostics

    def _notified(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics" or not isinstance(params, dict):
            return
        if self.spec.language == "typescript":
            return  # possibly stale: tsserver is asked instead (`_asked_typescript`)
        document = self.documents.get(str(params.get("uri")))
        if document is None:
            return
        version = params.get("version")
        if isinstance(version, int):
            self.versioned = True
            if version < document.version:
                return  # about text it no longer holds
        document.diagnostics = parse(params.get("diagnostics") or (), document.text)
        document.published.set()

    def _asked(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            return [self._setting(item) for item in items]
        if method == "workspace/workspaceFolders":
            return [{"uri": self.root.as_uri(), "name": self.root.name}]
        if method in ("client/registerCapability", "client/unregisterCapability"):
            return None
        if method in ("window/workDoneProgress/create", "window/showMessageRequest"):
            return None
        raise LookupError(method)

    def _setting(self, item: Any) -> Any:
        section = item.get("section") if isinstance(item, dict) else None
        return self.spec.configuration.get(section) if isinstance(section, str) else None

    async def _keep_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        with contextlib.suppress(Exception):
            while chunk := await stream.read(4096):
                self.stderr_tail = (self.stderr_tail + chunk.decode("utf-8", "replace"))[
                    -STDERR_KEPT:
                ]

    async def stop(self, grace: float = 1.0) -> None:
        """Ask it to shut down and exit; kill it (and what it started) after `grace` seconds."""
        if self.alive:
            with contextlib.suppress(ServerGone, TimeoutError, Exception):
                await asyncio.wait_for(self.connection.request("shutdown", None), grace)
                self.connection.notify("exit", None)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), grace)
        await self.kill()

    async def kill(self) -> None:
        """SIGKILL its process group; returns once it is reaped."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()
        for task in (self._reader, self._stderr):
            task.cancel()
        await asyncio.gather(self._reader, self._stderr, return_exceptions=True)

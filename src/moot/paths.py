"""Where moot keeps its files: the user data, config and cache directories.

`MOOT_HOME=<dir>` puts all three under one directory (`<dir>/data`, `<dir>/config`,
`<dir>/cache`), for tests and portable installs. Otherwise the platform's user directories are
used (platformdirs), e.g. `~/.local/share/moot`, `~/.config/moot`, `~/.cache/moot` on Linux.

Nothing here creates a directory on its own; the code that writes a file creates its parent,
under the data directory with `make_private_dir` (every directory it makes 0700) and its files
0600 (`PRIVATE_FILE`): what moot keeps there holds what the model read (transcripts, command
output, file snapshots), which is no other local user's to read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

APP_NAME = "moot"
HOME_VARIABLE = "MOOT_HOME"
PRIVATE_DIR = 0o700
"""A directory only its owner may list or enter (the XDG spec's mode for the ones it names)."""
PRIVATE_FILE = 0o600
"""A file only its owner may read or write."""


def make_private_dir(path: Path) -> Path:
    """Make `path` and whichever of its parents are missing, each `PRIVATE_DIR`; a directory
    that exists is left as it is (`keep_private` tightens one). Returns `path`.

    Raises:
        OSError: One cannot be made (a read-only file system, a file in the way).
    """
    missing = []
    for directory in (path, *path.parents):
        if os.path.isdir(directory):
            break
        missing.append(directory)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR)  # the umask can only take bits away
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
    return path


def keep_private(path: Path, mode: int = PRIVATE_FILE) -> None:
    """Take group and other permissions off `path`, a file or directory of moot's own that an
    older moot made with the umask's (0644, 0755); only one this user owns, never through a
    symlink, and one that cannot be changed (a read-only file system) is left as it is."""
    import stat

    try:
        found = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(found.st_mode) or found.st_uid != os.getuid() or not found.st_mode & 0o077:
        return
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IMODE(found.st_mode) & mode)


def private_opener(path: str, flags: int) -> int:
    """An `opener` for `open()` that creates a file `PRIVATE_FILE` (a log of moot's own)."""
    return os.open(path, flags | os.O_CLOEXEC, PRIVATE_FILE)


def _moot_home(environ: Mapping[str, str] | None) -> Path | None:
    env = os.environ if environ is None else environ
    home = env.get(HOME_VARIABLE, "")
    return Path(home).expanduser() if home else None


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user data directory: the sessions database and file snapshots live here.

    Args:
        environ: The environment to read `MOOT_HOME` from; `os.environ` when None.
    """
    if home := _moot_home(environ):
        return home / "data"
    # Imported here, not at the top: `moot --version` must start fast.
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user config directory: settings, skills, agents, commands and themes.

    Args:
        environ: The environment to read `MOOT_HOME` from; `os.environ` when None.
    """
    if home := _moot_home(environ):
        return home / "config"
    import platformdirs  # inside the function for start-up time, as in data_dir

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def key_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where `moot login` keeps API keys (mode 0600); the sandbox hides it from commands.

    Args:
        environ: The environment to read `MOOT_HOME` from; `os.environ` when None.
    """
    return config_dir(environ) / "keys.json"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user cache directory: things moot can rebuild, such as the repository map.

    Args:
        environ: The environment to read `MOOT_HOME` from; `os.environ` when None.
    """
    if home := _moot_home(environ):
        return home / "cache"
    import platformdirs  # inside the function for start-up time, as in data_dir

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """The sessions database: `sessions.db` in the data directory."""
    return data_dir(environ) / "sessions.db"


def workspace_root(cwd: Path) -> Path:
    """The workspace a front end opens from `cwd`: the root of the git work tree that holds
    it (the nearest directory with a `.git` entry: a directory, or a file for a linked work
    tree or submodule), else `cwd` itself. Found without running git, which a repository's
    config could make run anything; resolved, so every way of naming it is one workspace.

    The walk never widens the workspace to what the person did not choose: a `.git` owned by
    another user is passed over (as git's own ownership check does: anyone may plant one in
    `/tmp`), and it stops below the home directory, so a dotfiles repository in `~` does not
    turn a project folder under it into the whole home (unless moot starts in `~` itself).
    """
    here = Path(os.path.realpath(cwd))
    home = Path(os.path.realpath(Path.home()))
    for directory in (here, *here.parents):
        if directory == home and directory != here:
            break
        try:
            owner = os.lstat(directory / ".git").st_uid
        except OSError:
            owner = None
        if owner == os.getuid():
            return directory
        if directory == home:
            break
    return here


def host_search_path(roots: Iterable[str | os.PathLike[str]], path: str | None = None) -> str:
    """The PATH moot looks its own host programs up on (git, rg, bwrap, nice, clipboard tools,
    language servers): `path` (the process's PATH when None) without relative entries and
    without entries inside any of `roots` (the workspace, the repository's top).

    A relative entry (`.`, `node_modules/.bin`, `bin`) names the workspace when moot runs in
    it, and an entry inside it (an activated `.venv/bin`, direnv's `PATH_add bin`) holds what
    the repository ships: either would put a repository's `git` or `bwrap` on the host in
    place of the person's, run before anything was asked.
    """
    kept_roots = [real_if_there(os.fspath(r)) or os.path.realpath(r) for r in roots]
    kept = []
    for entry in (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = real_if_there(entry)  # None: nothing there to run (asked again at each lookup)
        if real is None or any(
            real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in kept_roots
        ):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def host_program(
    name: str, roots: Iterable[str | os.PathLike[str]], path: str | None = None
) -> str | None:
    """`name` found on `host_search_path(roots, path)`, as an absolute path; None when absent."""
    import shutil  # here: a session listing loads this module and nothing it does not need

    return shutil.which(name, path=host_search_path(roots, path))


def real_if_there(path: str) -> str | None:
    """The real path of `path` when what it leads to exists, else None.

    Where Linux's `/proc` is, the kernel says it: the name of an `O_PATH` descriptor (three
    system calls; `os.path.realpath` asks for every part of the path in Python, ~15 us each
    time, and each command asks for a score of paths); elsewhere `os.path.realpath`.
    """
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except AttributeError:  # no O_PATH: not Linux
        real = os.path.realpath(path)
        return real if os.path.exists(real) else None
    except (OSError, ValueError):
        return None  # gone, a dangling link, a loop, or out of reach: as `os.path.exists`
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc
        real = os.path.realpath(path)
    finally:
        os.close(fd)
    return real if real.startswith("/") else os.path.realpath(path)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """Up to `limit` bytes of `path`, a regular file. A repository's files may be links to
    `/dev/zero` (read whole, one took all the machine's memory) or FIFOs (a plain open waits
    for a writer for good): it is opened without waiting, and only a regular file is read.

    Raises:
        OSError: It cannot be opened or read.
        ValueError: It is not a regular file.
    """
    import stat  # here: most of moot never reads such a file

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{os.fspath(path)}: not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)

"""What of the home directory a command sees: nothing but the toolchains named here.

People keep credentials all over their home directory (`~/.pgpass`, `~/.vault-token`,
`~/.cargo/credentials.toml`, an agent's `~/.codex/auth.json`, `~/.bash_history`), and no
list of them is ever complete. So the home is hidden whole, and only `PASSES` come through,
read-only: toolchains and caches that hold no secret, so that a Python from pyenv, a `cargo`
from rustup or a `node` from nvm still runs. A pass names the part of a tool's directory
that holds no credentials (`.cargo/bin` and `.cargo/registry`, never `.cargo` with its
`credentials.toml`; `.m2/repository`, never `.m2/settings.xml`). Nothing of the person's
configuration comes through: a `~/.gitconfig` can hold tokens (`http.extraHeader`,
`url.<token>.insteadOf`), so commands get one of their own with only the identity and the
safe directories of the person's (`git_config`).

Each backend applies it as it can:

- bubblewrap shows the host's files, so each home directory (`$HOME`, and the account's own
  when it differs) is an empty tmpfs with the passes bound into it (`hidden_homes`). The
  tmpfs is writable, for tools that keep caches there, and new for every command. A
  workspace inside the home is bound on top, visible and writable as ever.
- Docker mounts only the workspace (and the session's outputs): nothing of the home is
  there, not even the passes, since the image brings its own toolchains; `HOME=/tmp`.
- A home the backend cannot hide whole (the workspace is the home, or holds it; the home is
  `/`) falls back to a list: the credential files of `moot.sandbox.private.HIDDEN_IN_HOME`
  are hidden where they exist, in both backends.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from moot.paths import host_search_path

PASSES = (
    # Python
    ".pyenv", ".local/bin", ".local/lib", ".local/share/uv", ".cache/pip", ".cache/uv",
    ".cache/pre-commit", ".conda", "miniconda3", "anaconda3", "miniforge3", "mambaforge",
    # Rust, Go
    ".rustup", ".cargo/bin", ".cargo/registry", ".cargo/git", "go/bin", "go/pkg/mod",
    ".cache/go-build",
    # JavaScript
    ".nvm", ".volta", ".bun/bin", ".bun/install/cache", ".deno", ".npm/_cacache",
    ".cache/yarn", ".local/share/pnpm",
    # JVM, Ruby, .NET, Haskell, OCaml, Lean, Julia
    ".sdkman/candidates", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".rbenv",
    ".gem/ruby", ".dotnet", ".nuget/packages", ".ghcup", ".cabal/bin", ".cabal/packages",
    ".opam", ".elan", ".juliaup", ".julia/packages", ".julia/artifacts", ".julia/compiled",
    # version managers
    ".asdf", ".tool-versions", ".local/share/mise",
    # git's global ignore file (its config is made anew: see `git_config`)
    ".config/git/ignore",
)  # fmt: skip
"""Paths below the home directory that commands see, read-only, when they exist."""

HOME_TMPFS_SIZE = 512 * 1024 * 1024
"""Bytes a command may write into its home directory (a tmpfs: memory) where bubblewrap can
bound it."""

_NOT_THE_HOSTS = ("/tmp", "/run", "/var/run", "/dev", "/proc")
"""Where bubblewrap shows something else than the host already."""
_GIT_KEYS = ("user.name", "user.email", "init.defaultbranch", "safe.directory")
"""What of the person's global git config commands get: who commits, the first branch's
name, and the directories git may work in though another user owns them."""


class HiddenHome(msgspec.Struct, frozen=True):
    """A home directory shown as an empty tmpfs, with what passes bound into it read-only."""

    path: str
    """Its real path."""
    binds: tuple[tuple[str, str], ...] = ()
    """(host path, path in the sandbox) pairs: the passes that exist (each onto itself)."""


def home_dirs(environ: Mapping[str, str] | None = None) -> list[str]:
    """The real paths of `$HOME` and of the account's home directory (when it differs), those
    that are directories other than `/`."""
    env = os.environ if environ is None else environ
    found: list[str] = []
    candidates = [env.get("HOME", "")]
    with contextlib.suppress(KeyError):  # no passwd entry: a container's arbitrary uid
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    for candidate in candidates:
        if not candidate:
            continue
        real = os.path.realpath(candidate)
        if real != "/" and os.path.isdir(real) and real not in found:
            found.append(real)
    return found


def hidden_homes(
    homes: Iterable[str], workspace: Path, passes: Iterable[str] = PASSES
) -> list[HiddenHome]:
    """The home directories of `homes` (real paths) that bubblewrap hides, outermost first,
    each with the `passes` below it that exist.

    A home that is the workspace or lies inside it is left out (the workspace must stay
    whole; `private.HIDDEN_IN_HOME` covers it), and so is one where the sandbox shows
    something else than the host anyway (`/tmp`). A workspace inside a home is bound on top
    of it by the backend.
    """
    root = str(workspace)
    hidden: list[HiddenHome] = []
    for home in sorted(set(homes), key=len):
        if home == root or _below(home, root) or _below_any(home, _NOT_THE_HOSTS):
            continue
        # Through a link too (a bind follows it): `present` lists, then each is checked.
        binds = [(path, path) for path in present(home, passes) if os.path.exists(path)]
        hidden.append(HiddenHome(home, tuple(binds)))
    return hidden


def present(base: str, rels: Iterable[str]) -> list[str]:
    """The paths `base/rel` of `rels` that exist (a dangling link too: `os.path.lexists`), in
    the order of `rels`.

    Each command asks about dozens of paths of which few exist: a directory's listing (one
    per directory that holds a candidate, kept for this call) answers for all its names, a
    `lstat` each where a directory cannot be listed though it can be searched. Names are
    compared without case, and what a listing finds is asked for once more: on a file system
    that ignores case (macOS's, by default) `~/.SSH` is `~/.ssh`, and must stay hidden.
    """
    listings: dict[str, frozenset[str] | None] = {}

    def listed(directory: str) -> frozenset[str] | None:
        if directory not in listings:
            try:
                listings[directory] = frozenset(name.lower() for name in os.listdir(directory))
            except OSError:
                listings[directory] = None
        return listings[directory]

    found: list[str] = []
    top = base.rstrip("/")
    for rel in rels:
        path = top or "/"
        for part in rel.split("/"):
            names = listed(path)
            path = f"{path.rstrip('/')}/{part}"
            if names is None:  # not listable (searchable perhaps): ask for the path itself
                if not os.path.lexists(path):
                    break
            elif part.lower() not in names:
                break
        else:
            if names is None or os.path.lexists(path):
                found.append(path)
    return found


def covered(path: str, homes: Iterable[HiddenHome]) -> bool:
    """Whether `path` (real) is out of sight already: below a hidden home and none of its
    passes."""
    homes = list(homes)
    if not any(path == home.path or _below(path, home.path) for home in homes):
        return False
    return not any(path == dest or _below(path, dest) for home in homes for _, dest in home.binds)


def git_config(environ: Mapping[str, str] | None = None) -> str:
    """A global git config for commands: only `_GIT_KEYS` of the person's (read with git on
    the host, once per sandbox); "" when git is missing or sets none of them."""
    env = dict(os.environ if environ is None else environ)
    env.pop("GIT_CONFIG_GLOBAL", None)
    # The person's git, never one the workspace (the current directory) puts on PATH.
    env["PATH"] = host_search_path((os.getcwd(),), env.get("PATH", os.defpath))
    pattern = "^(" + "|".join(key.replace(".", r"\.") for key in _GIT_KEYS) + ")$"
    try:
        done = subprocess.run(
            ["git", "config", "--global", "--null", "--get-regexp", pattern],
            capture_output=True,
            env=env,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    sections: dict[str, list[str]] = {}
    for entry in done.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        section, _, name = key.rpartition(".")
        if not section or not value or "\n" in value:
            continue
        quoted = value.replace("\\", "\\\\").replace('"', '\\"')
        sections.setdefault(section, []).append(f'\t{name} = "{quoted}"')
    return "".join(f"[{name}]\n" + "\n".join(lines) + "\n" for name, lines in sections.items())


def _below(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")


def _below_any(path: str, directories: Iterable[str]) -> bool:
    return any(path == d or _below(path, d) for d in directories)

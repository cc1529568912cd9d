"""What of the host no command may see: moot's own directories and the user's credentials.

moot's data directory holds `sessions.db` (every session's transcript, and what files held
before a tool changed them, denied ones included) and every session's saved outputs; its
config directory the user's settings (whose `env` may hold keys) and saved keys; its cache
the repo map. None of it belongs to the project a command runs in, and a command in any
project could read all of it. So the three (`moot_dirs`, and `MOOT_HOME`, which holds them
when set) are hidden, as are the credential files people keep in their home directory
(`HIDDEN_IN_HOME`), where the home directory is not hidden whole (`moot.sandbox.home`).

`private_paths` finds those that exist, as real paths (a `~/.aws` that a dotfiles manager
made a symlink is hidden where it leads), and `place` sorts them for a backend:

- outside the workspace: bubblewrap covers each (an empty read-only tmpfs or file); Docker
  mounts nothing outside the workspace, so they need nothing there;
- inside it (`MOOT_HOME=.moot-home`, a workspace that is the home directory): hidden like a
  path a `Read(...)` deny rule covers (`with_private`), by both backends, with the directories
  above them guarded against renames (`base.rename_guards`);
- holding it (`MOOT_HOME=/work` and the workspace `/work/app`): everything in it is hidden but
  the directories that lead to the workspace.

The one part a command does see is its own session's outputs directory, read-only
(`reveal`), so that `grep` in the shell reaches the full output a result names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from moot.paths import real_if_there
from moot.sandbox.base import SandboxMasks
from moot.sandbox.home import present

HIDDEN_IN_HOME = (
    # keys, agents, keyrings
    ".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".age", ".config/age",
    ".config/sops",
    # clouds and clusters
    ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci", ".boto", ".s3cfg",
    ".config/rclone", ".config/doctl", ".terraform.d", ".terraformrc", ".vault-token",
    ".fly", ".config/heroku", ".netlify", ".config/netlify", ".vercel", ".wrangler",
    # code hosts, registries and package managers
    ".config/gh", ".config/hub", ".config/glab-cli", ".netrc", ".authinfo", ".authinfo.gpg",
    ".git-credentials", ".config/git/credentials", ".npmrc", ".yarnrc", ".yarnrc.yml",
    ".pypirc", ".config/pip", ".condarc", ".cargo/credentials", ".cargo/credentials.toml",
    ".cargo/config", ".cargo/config.toml", ".m2/settings.xml", ".m2/settings-security.xml",
    ".gradle/gradle.properties", ".gem/credentials", ".bundle/config", ".composer/auth.json",
    ".config/composer/auth.json", ".nuget/NuGet", ".config/NuGet", ".cabal/config",
    ".stack/config.yaml", ".julia/servers", ".config/configstore",
    # databases
    ".pgpass", ".my.cnf", ".mylogin.cnf",
    # tokens of tools and agents
    ".huggingface", ".cache/huggingface/token", ".config/huggingface", ".claude",
    ".claude.json", ".codex", ".config/op", ".op", ".config/mise", ".wakatime.cfg",
    # the environment, histories and browsers: anything typed or kept
    ".env", ".bash_history", ".zsh_history", ".history", ".sh_history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history",
    ".rediscli_history", ".lesshst", ".viminfo", ".local/share/fish", ".local/state",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".thunderbird",
)  # fmt: skip
"""Where people keep credentials, relative to the home directory; hidden when they exist.
Only where the home cannot be hidden whole (`moot.sandbox.home`): a workspace that is the
home directory, or a home directory inside the workspace; a list is never complete."""


SYSTEM_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/letsencrypt", "/etc/wireguard",
    "/etc/NetworkManager/system-connections", "/etc/kubernetes", "/var/lib/kubelet",
    "/etc/docker", "/var/lib/docker", "/var/lib/containerd", "/var/backups",
)  # fmt: skip
"""The host's own secrets, outside any home directory (globs allowed): root owns them, so a
command moot runs as root reads them with no capability at all (password hashes, the host's
ssh keys, a cluster's admin credentials, other containers' files). Bubblewrap and Landlock
hide those that exist and that moot's user could read (`system_secrets`); Docker mounts none
of them. A list: what root owns elsewhere stays readable."""


def system_secrets() -> list[Path]:
    """The paths of `SYSTEM_SECRETS` that exist here and that this process could read (a
    directory: list or enter).

    One it cannot read, no command can: a command runs as this user with no capability, and
    no set-id program gives one back (bubblewrap and Landlock set no-new-privileges). So it
    needs no mask, and bubblewrap is spared a mount for it (each costs a read of the whole
    mount table): most of the list for a user other than root. Asked before every command.
    """
    import glob  # only bubblewrap and Landlock ask, once per command

    found: list[Path] = []
    for pattern in SYSTEM_SECRETS:
        if glob.has_magic(pattern):
            found += [Path(path) for path in sorted(glob.glob(pattern))]
        elif os.path.lexists(pattern):  # what `glob` asks of a plain path, without its cost
            found.append(Path(pattern))
    return [path for path in found if _readable(path)]


def _readable(path: Path) -> bool:
    """Whether this process may read `path` (its effective ids, as the kernel checks a
    command's), or for a directory list or enter it. Root may read anything: all stay."""
    effective = os.access in os.supports_effective_ids
    if os.access(path, os.R_OK, effective_ids=effective):
        return True
    return os.path.isdir(path) and os.access(path, os.X_OK, effective_ids=effective)


def moot_dirs(
    environ: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    added: Iterable[Path] = (),
) -> list[Path]:
    """moot's data, config and cache directories, `MOOT_HOME` when it is set, and the
    resident moot's socket directories that lie inside `workspace` or an `added` directory
    (`resident_dirs`)."""
    from moot.paths import HOME_VARIABLE, cache_dir, config_dir, data_dir

    env = os.environ if environ is None else environ
    dirs = [data_dir(env), config_dir(env), cache_dir(env)]
    if env.get(HOME_VARIABLE):
        dirs.append(Path(env[HOME_VARIABLE]).expanduser())
    if workspace is not None:
        roots = [os.path.realpath(root) for root in (workspace, *added)]
        dirs += [
            d
            for d in resident_dirs(env)
            if any(_below(os.path.realpath(d), root) for root in roots)
        ]
    return [Path(os.path.abspath(path)) for path in dirs]


def resident_dirs(environ: Mapping[str, str]) -> list[Path]:
    """Where a resident moot's socket may lie (`moot.cli.resident.place.directory`, which
    loads nothing of moot's to say so): `$XDG_RUNTIME_DIR/moot` and `/tmp/moot-<uid>`.

    Hidden only where a workspace holds one (moot run in `/tmp`, a runtime directory in the
    project): elsewhere bubblewrap's own `/tmp` and `/run` hide them, Docker mounts nothing
    else and Landlock's filter refuses Unix sockets. A command that could list that directory
    could listen there in the resident process's place; the `moot` asking would refuse it
    (`peer.check`), and this keeps it from even trying."""
    dirs = [Path(f"/tmp/moot-{os.getuid()}")]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        dirs.insert(0, Path(runtime) / "moot")
    return dirs


def private_paths(home: Path, more: Iterable[Path] = ()) -> list[str]:
    """The real paths of the credential files under `home` and of `more` that exist."""
    found: list[str] = []
    there = present(str(home), HIDDEN_IN_HOME)  # a hundred names, a few listings
    for path in [*there, *(os.fspath(path) for path in more if os.path.lexists(path))]:
        real = real_if_there(path)
        if real is not None and real != "/" and real not in found:
            found.append(real)
    return found


class Placed(msgspec.Struct, frozen=True):
    """Private paths as a backend treats them (see the module docstring)."""

    outside: tuple[str, ...] = ()
    """Absolute real paths outside the workspace, none inside another."""
    files: tuple[str, ...] = ()
    """Workspace-relative files to hide."""
    dirs: tuple[str, ...] = ()
    """Workspace-relative directories to hide."""


def place(paths: Iterable[str], workspace: Path) -> Placed:
    """Sort real `paths` by where they lie from the workspace (a real path)."""
    root = str(workspace)
    outside: set[str] = set()
    files: set[str] = set()
    dirs: set[str] = set()
    for path in paths:
        if path == root:
            continue  # `MOOT_HOME=.`: its data, config and cache directories are hidden instead
        if _below(root, path):
            outside.update(_around(path, root))
        elif _below(path, root):
            rel = path[len(root) + 1 :]
            (dirs if os.path.isdir(path) else files).add(rel)
        else:
            outside.add(path)
    outside = {p for p in outside if not any(_below(p, other) for other in outside)}
    dirs = {d for d in dirs if not any(_below(d, other) for other in dirs)}
    files = {f for f in files if not any(_below(f, d) for d in dirs)}
    return Placed(tuple(sorted(outside)), tuple(sorted(files)), tuple(sorted(dirs)))


def with_private(masks: SandboxMasks | None, placed: Placed) -> SandboxMasks | None:
    """`masks` with the private paths inside the workspace hidden too (and nothing left
    masked inside a directory hidden now); `masks` itself when there are none."""
    if not placed.files and not placed.dirs:
        return masks
    masks = masks or SandboxMasks()
    dirs = {*masks.hidden_dirs, *placed.dirs}
    dirs = {d for d in dirs if not any(_below(d, other) for other in dirs)}

    def visible(path: str) -> bool:
        return path not in dirs and not any(_below(path, d) for d in dirs)

    files = {f for f in (*masks.hidden_files, *placed.files) if visible(f)}
    read_only = tuple(p for p in masks.read_only if visible(p) and p not in files)
    return SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)), read_only)


def with_added(
    masks: SandboxMasks | None, outside: Iterable[str], added: Iterable[Path]
) -> SandboxMasks | None:
    """`masks` with the private paths `outside` the workspace that lie in an added directory
    (`--add-dir`) hidden there too, as absolute paths: binding the added directory shows the
    host's again over what hid them (`--add-dir ~` showed the home's credentials and moot's
    own directories, writable). As masks they are hidden after the binds, and the directories
    above them in the added directory are guarded against renames."""
    roots = [str(root).rstrip("/") + "/" for root in added]
    below = [path for path in outside if any(path.startswith(root) for root in roots)]
    if not below:
        return masks
    masks = masks or SandboxMasks()
    dirs = {*masks.hidden_dirs, *(p for p in below if os.path.isdir(p))}
    files = {*masks.hidden_files, *(p for p in below if not os.path.isdir(p))}
    return SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)), masks.read_only)


def reveal(outputs: Path, hidden_dir: str) -> str | None:
    """`outputs` (the session's outputs directory) as a real path when it lies below
    `hidden_dir`, to be bound read-only there; else None."""
    real = os.path.realpath(outputs)
    return real if _below(real, hidden_dir) else None


def _around(directory: str, workspace: str) -> list[str]:
    """Everything in `directory` (which holds `workspace`) but the way to the workspace. A
    symlink there is left alone: what it leads to is not moot's (a mount would follow it)."""
    hidden: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []  # root lists anything; another user could not read in it either
    for entry in entries:
        if entry.path == workspace:
            continue
        if entry.is_symlink():
            continue
        if _below(workspace, entry.path) and entry.is_dir(follow_symlinks=False):
            hidden += _around(entry.path, workspace)
        else:
            hidden.append(entry.path)
    return hidden


def _below(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")

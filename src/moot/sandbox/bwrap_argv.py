"""The `bwrap` command line for one command: the mounts (a read-only root, the workspace
writable, the homes and private paths hidden, the masks of deny rules, the guards against
renames), the namespaces and the isolation (`bubblewrap`'s docstring says what each is for).
It runs nothing: it looks at the file system, and `open_guards` opens the guards' descriptors
that bwrap binds from."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from moot.sandbox.base import SandboxMasks, masks_below, protected_in, rename_guards
from moot.sandbox.home import HiddenHome, covered
from moot.sandbox.net_relay import SOCKET_INSIDE

NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
DROP_ALL = ("--cap-drop", "ALL")
"""No capability at all for the command, whoever runs moot (bwrap keeps every one for root)."""

PROC_READ_ONLY = ("/proc/sys", "/proc/fs")
"""Bound read-only over the sandbox's own `/proc`: the kernel lets uid 0 write sysctls such
as `kernel.core_pattern` (a program it runs as root on the host) with no capability at all.
Of Docker's list (these, `sysrq-trigger`, `irq`, `bus`) bubblewrap itself binds the last
three read-only wherever its setup can write them (every release; where it cannot, neither
can a command, which has fewer rights), so binding them again only cost a mount each; it
leaves `/proc/sys` writable, its directory not being so, and has no `/proc/fs`."""


_NOT_THE_HOSTS = ("/tmp", "/run", "/var/run", "/dev", "/proc")
"""Where the sandbox shows something else than the host: a denied symlink's target there
needs no mask (and bwrap would create one, in the private `/tmp` say)."""


def bwrap_args(
    bwrap: str,
    *,
    workspace: Path,
    protected: tuple[str, ...],
    network: bool,
    tmp: Path,
    cwd: Path,
    hidden: list[Path],
    masks: SandboxMasks | None = None,
    empty_file: Path | None = None,
    guard_fds: Mapping[str, int] | None = None,
    isolation: Sequence[str] = DROP_ALL,
    reveal: Path | None = None,
    homes: Sequence[HiddenHome] = (),
    gitconfig: tuple[int, str] | None = None,
    home_size: int | None = None,
    file_perms: bool = False,
    seccomp_fd: int | None = None,
    added: Sequence[Path] = (),
    proxy_socket: Path | None = None,
) -> list[str]:
    """The `bwrap` arguments before `--` for one command (see the module docstring).

    `homes` are the home directories to show as empty tmpfs with their passes bound in
    (`home.hidden_homes`), each `home_size` bytes at most (None: no `--size`, an older
    bwrap); `gitconfig` is a (descriptor, path in the sandbox) pair: bwrap copies what the
    descriptor reads into a file of that home (mode 0644 with `file_perms`: `--perms`).
    `hidden` are real paths outside the workspace to hide (`private.place`), those the homes
    cover skipped; `reveal` (the session's outputs directory, a real path) is bound read-only
    inside the one that holds it.
    `masks` needs `empty_file`: an empty read-only file on the host, bound over hidden files.
    `guard_fds` holds a descriptor of each directory of `rename_guards` that `open_guards`
    could open; None binds them by path instead (a bwrap without `--bind-fd`).
    `isolation` is one of `ISOLATIONS` (`isolation_args` says which works here).
    `seccomp_fd` is a descriptor bwrap reads the set-id filter from (`seccomp`), if any.
    `added` are more directories bound writable (`--add-dir`), with their own `.git` and
    `.moot` and the absolute paths of `protected` in them read-only, and their rename guards
    (`guard_fds` keys them by absolute path), before the workspace: its binds and masks win
    where they meet. Masks in them are absolute paths.
    `proxy_socket` (the network proxy's, `net_proxy`) is bound at `net_relay.SOCKET_INSIDE`.
    """
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for proc_path in PROC_READ_ONLY:
        args += ["--ro-bind-try", proc_path, proc_path]
    args += ["--tmpfs", "/run", *_run_binds(network, proxy_socket)]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        args += ["--tmpfs", "/var/run"]
    args += home_args(homes, gitconfig, home_size, file_perms)
    if reveal is not None and covered(str(reveal), homes):
        args += ["--ro-bind-try", str(reveal), str(reveal)]
    args += hidden_args(hidden, homes, reveal)
    args += ["--bind", str(tmp), "/tmp"]
    for root in added:
        args += ["--bind", str(root), str(root)]
        own = protected_in(protected, root)
        guards = rename_guards(masks_below(masks, root), own)
        args += guard_args(root, guards, None if guard_fds is None else _fds_below(guard_fds, root))
        args += protected_args(root, own)
    args += ["--bind", str(workspace), str(workspace)]
    args += guard_args(workspace, rename_guards(masks, protected), guard_fds)
    args += protected_args(workspace, protected)
    if masks:
        assert empty_file is not None, "hidden files are bound from an empty file"
        args += mask_args(workspace, masks, empty_file, hidden, added)
    args += [*NAMESPACES, *(() if network else ("--unshare-net",)), *isolation]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--die-with-parent", "--new-session", "--chdir", str(cwd)]
    return args


def hidden_args(
    hidden: Sequence[Path], homes: Sequence[HiddenHome], reveal: Path | None
) -> list[str]:
    """Each private path outside the workspace as an empty read-only directory or file (the
    session's outputs directory, `reveal`, bound read-only again inside the one holding it),
    but where the sandbox shows something else than the host anyway."""
    args: list[str] = []
    for hidden_path in hidden:
        path = str(hidden_path)
        if _within(path, _NOT_THE_HOSTS):
            continue  # not the host's there: nothing to hide (and no mount point to make)
        if covered(path, homes):
            continue  # out of sight with the home that holds it
        mode = _lstat_mode(path)
        if stat.S_ISDIR(mode):
            args += ["--tmpfs", path]
            if reveal is not None and _below(str(reveal), path):
                args += ["--ro-bind-try", str(reveal), str(reveal)]
            args += ["--remount-ro", path]
        elif stat.S_ISREG(mode):
            args += ["--ro-bind", "/dev/null", path]
    return args


def _run_binds(network: bool, proxy_socket: Path | None) -> list[str]:
    """What is bound into the sandbox's own `/run`: with the network, the resolvers' stubs
    (name resolution may go through systemd-resolved's, under `/run`); with a proxy, its
    socket (a read-only bind still lets the relay `connect()`)."""
    args: list[str] = []
    if network:
        for resolver in ("/run/systemd/resolve", "/run/resolvconf"):
            args += ["--ro-bind-try", resolver, resolver]
    if proxy_socket is not None:
        args += ["--ro-bind", str(proxy_socket), SOCKET_INSIDE]
    return args


def protected_args(root: Path, protected: Sequence[str]) -> list[str]:
    """`protected` paths below `root` bound read-only onto themselves, where they exist."""
    args: list[str] = []
    for rel in protected:
        path = root / rel
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue  # missing: nothing to protect (see the module docstring)
        # A symlink is left alone: binding would follow it, perhaps over the workspace itself.
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            args += ["--ro-bind", str(path), str(path)]
    return args


def home_args(
    homes: Sequence[HiddenHome],
    gitconfig: tuple[int, str] | None,
    size: int | None,
    file_perms: bool = False,
) -> list[str]:
    """Each home directory as an empty tmpfs (writable, new for each command, `size` bytes at
    most), with its passes bound in read-only (`-try`: one may go before bwrap runs), then
    the commands' own git config: a file bwrap writes into the home from a descriptor, the
    command's own copy like all else there (a bind would cost a mount, and each mount a read
    of the whole mount table)."""
    args: list[str] = []
    for home in homes:
        args += [*(("--size", str(size)) if size else ()), "--tmpfs", home.path]
        for source, dest in home.binds:
            args += ["--ro-bind-try", source, dest]
    if gitconfig is not None:
        fd, dest = gitconfig
        args += [*(("--perms", "0644") if file_perms else ()), "--file", str(fd), dest]
    return args


def guard_args(workspace: Path, guards: list[str], fds: Mapping[str, int] | None) -> list[str]:
    """The writable binds of each guarded directory onto itself, parents first: from its
    descriptor in `fds`, or when `fds` is None by path if it is a directory, not a link."""
    args: list[str] = []
    for rel in guards:
        path = str(workspace / rel)
        if fds is not None:
            if rel in fds:
                args += ["--bind-fd", str(fds[rel]), path]
        elif stat.S_ISDIR(_lstat_mode(path)):
            args += ["--bind", path, path]
    return args


def open_guards(workspace: Path, guards: list[str]) -> dict[str, int]:
    """An `O_PATH` descriptor of each directory in `guards` (parents first), each opened from
    its parent's without following a link; one that is gone, or a link now, is left out,
    with what lies below it. The caller closes them."""
    fds: dict[str, int] = {}
    root = os.open(workspace, os.O_PATH | os.O_DIRECTORY)
    try:
        for rel in guards:
            parent, _, name = rel.rpartition("/")
            at = fds.get(parent) if parent else root
            if at is None:
                continue  # its parent could not be opened
            try:
                fds[rel] = os.open(
                    name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at
                )
            except OSError:
                continue
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    finally:
        os.close(root)
    return fds


def _fds_below(fds: Mapping[str, int], root: Path) -> dict[str, int]:
    """The descriptors of `fds` (keyed by absolute path) below `root`, keyed relative to it."""
    prefix = str(root).rstrip("/") + "/"
    return {key[len(prefix) :]: fd for key, fd in fds.items() if key.startswith(prefix)}


def _below(path: str, directory: str) -> bool:
    """Whether `path` lies below `directory` (both absolute and normal: real paths)."""
    return path.startswith(directory.rstrip("/") + "/")


def _within(path: str, directories: Iterable[str]) -> bool:
    """Whether `path` is one of `directories` or lies below one (strings: `Path.relative_to`
    costs microseconds a call, and each command asks hundreds of times in a big workspace)."""
    return any(path == directory or _below(path, directory) for directory in directories)


def _lstat_mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def mask_args(
    workspace: Path,
    masks: SandboxMasks,
    empty_file: Path,
    hidden: list[Path],
    added: Sequence[Path] = (),
    proxy_socket: Path | None = None,
) -> list[str]:
    """The mounts that mask what deny rules cover; parents before what lies below them. An
    absolute path is masked where the sandbox shows the host's file: in an added directory
    (bound at its own path, even in `/tmp`), or elsewhere but the sandbox's own places."""
    kinds = [(rel, "read_only") for rel in masks.read_only]
    kinds += [(rel, "file") for rel in masks.hidden_files]
    kinds += [(rel, "dir") for rel in masks.hidden_dirs]
    root = str(workspace)
    places = [str(a) for a in added]
    elsewhere = [*_NOT_THE_HOSTS, *(str(p) for p in hidden)]
    args: list[str] = []
    for rel, kind in sorted(kinds):
        # An absolute path (a link's target outside) stays as it is; a relative one is
        # clean (a walk's, or a real path's tail), so joining needs no `Path`.
        path = rel if rel.startswith("/") else f"{root}/{rel}" if rel else root
        if not _within(path, [root, *places]) and _within(path, elsewhere):
            continue
        if kind == "read_only":  # -try: it may have gone since the masks were worked out
            args += ["--ro-bind-try", path, path]
        elif kind == "file":
            args += ["--ro-bind", str(empty_file), path]
        else:
            args += ["--tmpfs", path, "--remount-ro", path]
    return args

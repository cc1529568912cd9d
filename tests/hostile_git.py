"""A hostile repository for moot's git on the host: each way a repository, the person's config
or a session's writes can make git run a program, planted with a command that leaves a marker.

A `Vector` plants in two steps: `before`, what was there when the session began (the person's
`.git/config`, files the repository came with), and `after`, what the session writes once it
runs (it can write any workspace file that is not protected). Every planted command runs
`touch <markers>/<vector name>`, so `ran(markers)` lists the vectors that ran something.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from moot.workspace.host_git import HOOK_NAMES

Plant = Callable[[Path, str], None]
"""Plants into a repository (its top) a vector whose commands run the shell text given."""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def config(root: Path, **values: str) -> None:
    """`git config` of the repository; `__` in a name stands for a dot."""
    for key, value in values.items():
        git(root, "config", "--add", key.replace("__", "."), value)


def program(root: Path, command: str) -> str:
    """An executable that runs `command`, for the keys git runs without a shell (`gpg.program`
    and the like take a program, not a command line)."""
    handle, path = tempfile.mkstemp(dir=root.parent, prefix="program-")
    with open(handle, "w") as file:
        file.write(f"#!/bin/sh\n{command}\nexit 1\n")
    Path(path).chmod(0o755)
    return path


def hook_scripts(directory: Path, command: str, names: tuple[str, ...] = HOOK_NAMES) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        hook = directory / name
        hook.write_text(f"#!/bin/sh\n{command}\n")
        hook.chmod(0o755)


def attributes(root: Path, *lines: str) -> None:
    with (root / ".gitattributes").open("a") as file:
        file.write("".join(f"{line}\n" for line in lines))


def nothing(root: Path, command: str) -> None:
    pass


@dataclass(frozen=True)
class Vector:
    """One way to make git run a program."""

    name: str
    before: Plant
    after: Plant = nothing


def _filter_driver(root: Path, command: str) -> None:
    config(
        root, **{"filter.evil.clean": f"{command}; cat", "filter.evil.smudge": f"{command}; cat"}
    )
    config(root, **{"filter.evil.required": "true"})


def _include_of(path: str) -> Plant:
    return lambda root, command: config(root, **{"include.path": path})


def _evil_config(command: str) -> str:
    return (
        f'[core]\n\tfsmonitor = "{command}; false"\n\thooksPath = .husky\n'
        f'[filter "sneaky"]\n\tclean = "{command}; cat"\n\tsmudge = "{command}; cat"\n'
        f'[diff "sneaky"]\n\ttextconv = "{command}; cat"\n\tcommand = "{command}; true"\n'
        f"[commit]\n\tgpgSign = true\n[log]\n\tshowSignature = true\n"
    )


def _sneaky_attributes(root: Path, command: str) -> None:
    attributes(root, "* filter=sneaky diff=sneaky")
    hook_scripts(root / ".husky", command)


def _rewrite(name: str) -> Plant:
    def plant(root: Path, command: str) -> None:
        (root / name).write_text(_evil_config(command))
        _sneaky_attributes(root, command)

    return plant


def _pinned_evil(root: Path, command: str) -> None:
    (root / ".gitconfig").write_text(_evil_config(command))
    config(root, **{"include.path": "../.gitconfig"})


def _husky9(root: Path, command: str) -> None:
    """husky 9: git runs `.husky/_/<hook>`, which runs the `.husky/<hook>` a person writes."""
    config(root, core__hooksPath=".husky/_")
    hook_scripts(root / ".husky" / "_", 'sh "$(dirname "$0")/../$(basename "$0")"')


def _workspace_include(root: Path, command: str) -> None:
    (root / ".gitconfig").write_text("[user]\n\tname = Test Person\n")
    config(root, **{"include.path": "../.gitconfig"})


VECTORS = [
    Vector(
        "hooks_in_git_dir", lambda root, command: hook_scripts(root / ".git" / "hooks", command)
    ),
    Vector(
        "hooks_path_in_workspace",
        lambda root, command: config(root, core__hooksPath=".husky"),
        lambda root, command: hook_scripts(root / ".husky", command),
    ),
    Vector("husky9_hooks", _husky9, lambda root, command: hook_scripts(root / ".husky", command)),
    Vector("fsmonitor", lambda root, command: config(root, core__fsmonitor=f"{command}; false")),
    Vector("filter", _filter_driver, lambda root, command: attributes(root, "* filter=evil")),
    Vector(
        "filter_process",
        lambda root, command: config(root, **{"filter.evil.process": f"{command}; false"}),
        lambda root, command: attributes(root, "* filter=evil"),
    ),
    Vector(
        "textconv",
        lambda root, command: config(root, **{"diff.evil.textconv": f"{command}; cat"}),
        lambda root, command: attributes(root, "* diff=evil"),
    ),
    Vector(
        "diff_command",
        lambda root, command: config(root, **{"diff.evil.command": f"{command}; true"}),
        lambda root, command: attributes(root, "* diff=evil"),
    ),
    Vector("diff_external", lambda root, command: config(root, diff__external=f"{command}; true")),
    Vector(
        "merge_driver",
        lambda root, command: config(root, **{"merge.evil.driver": f"{command}; false"}),
        lambda root, command: attributes(root, "* merge=evil"),
    ),
    Vector(
        "pager",
        lambda root, command: config(
            root,
            core__pager=f"{command}; cat",
            **{f"pager.{name}": f"{command}; cat" for name in ("status", "diff", "log", "show")},
        ),
    ),
    Vector(
        "editor",
        lambda root, command: config(
            root, core__editor=f"{command}; true", sequence__editor=f"{command}; true"
        ),
    ),
    Vector(
        "signing",
        lambda root, command: config(
            root,
            commit__gpgSign="true",
            gpg__program=program(root, command),
            log__showSignature="true",
        ),
    ),
    Vector(
        "ssh_signing",
        lambda root, command: config(
            root,
            commit__gpgSign="true",
            gpg__format="ssh",
            user__signingKey="key::ssh-ed25519 AAAA",
            **{"gpg.ssh.program": program(root, command)},
            **{"gpg.ssh.defaultKeyCommand": program(root, command)},
        ),
    ),
    Vector(
        "aliases",
        lambda root, command: config(
            root,
            **{
                f"alias.{name}": f"!{command}"
                for name in ("status", "diff", "log", "show", "commit", "add", "switch", "reset")
            },
        ),
    ),
    Vector(
        "transports_unreached",
        lambda root, command: config(
            root,
            core__sshCommand=f"{command}; false",
            core__askPass=program(root, command),
            core__gitProxy=program(root, command),
            core__alternateRefsCommand=f"{command}; false",
            credential__helper=f"!{command}; false",
            uploadpack__packObjectsHook=f"{command}; false",
            protocol__allow="always",
            **{"remote.origin.url": f"ext::sh -c {command.replace(' ', '% ')}"},
            **{"remote.origin.uploadpack": f"{command}; false"},
            **{"trailer.sign.command": f"{command}; echo x"},
            **{"trailer.sign.ifmissing": "add"},
        ),
    ),
    Vector("workspace_include_changed", _workspace_include, _rewrite(".gitconfig")),
    Vector("workspace_include_missing", _include_of("../.gitlocal"), _rewrite(".gitlocal")),
    Vector(
        "workspace_include_if_on_branch",
        lambda root, command: config(root, **{"includeIf.onbranch:main.path": "../.branch"}),
        _rewrite(".branch"),
    ),
    Vector("workspace_include_pinned", _pinned_evil, _sneaky_attributes),
]
"""Every vector, by name."""


def ran(markers: Path) -> list[str]:
    """The vectors whose planted command ran."""
    return sorted(path.name for path in markers.iterdir())


def command_for(vector: Vector, markers: Path) -> str:
    # Unquoted: an `ext::` URL takes no quotes (the test directories hold no spaces).
    return f"touch {markers / vector.name}"

"""Where skills, commands, agent definitions and memory are looked for, closest first.

The project is the git repository the working directory is in (its top, found without running
git), or the working directory alone outside a repository. Every directory from the working
directory up to the project's top may hold `.moot/skills/`, `.agents/skills/` and
`.claude/skills/` (and `.moot/commands/`, `.moot/agents/`); a closer directory wins over one
further up, and in one directory `.moot` wins over `.agents` over `.claude`. After the project
come the user's config dir (`~/.config/moot/skills/`, ...) and last what moot ships.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from moot.skills.files import Denied, real_root
from moot.skills.values import Source

SKILL_FOLDERS = (".moot/skills", ".agents/skills", ".claude/skills")
"""Project skill folders in one directory, the first winning."""


class Place(msgspec.Struct, frozen=True):
    """One folder to look in, the root its files must stay inside, and where it counts from."""

    folder: Path
    root: Path
    source: Source


class Places(msgspec.Struct, frozen=True):
    """The directories of one session, real paths."""

    cwd: Path
    project: Path
    """The repository's top (or `cwd` outside one): project files must stay inside it."""
    user: Path | None
    """The user's config dir, when it exists."""
    shipped_skills: Path | None = None
    shipped_agents: Path | None = None
    denied: Denied | None = None
    """The person's `Read(...)` deny rules: what they cover is never read (`files.Denied`)."""

    def project_dirs(self) -> list[Path]:
        """From the working directory up to the project's top, closest first."""
        dirs = [self.cwd]
        while dirs[-1] != self.project and dirs[-1].parent != dirs[-1]:
            dirs.append(dirs[-1].parent)
        return dirs

    def skill_folders(self) -> Iterator[Place]:
        for directory in self.project_dirs():
            for folder in SKILL_FOLDERS:
                yield Place(directory / folder, self.project, "project")
        if self.user is not None:
            yield Place(self.user / "skills", self.user, "user")
        if self.shipped_skills is not None:
            yield Place(self.shipped_skills, self.shipped_skills, "shipped")

    def folders(self, kind: str) -> Iterator[Place]:
        """`.moot/<kind>` of each project directory, then the user's `<kind>`, closest first
        (`commands`, `agents`; moot's shipped agents come last)."""
        for directory in self.project_dirs():
            yield Place(directory / ".moot" / kind, self.project, "project")
        if self.user is not None:
            yield Place(self.user / kind, self.user, "user")
        if kind == "agents" and self.shipped_agents is not None:
            yield Place(self.shipped_agents, self.shipped_agents, "shipped")


def find_places(
    cwd: Path, config_dir: Path | None, *, shipped: bool = True, denied: Denied | None = None
) -> Places:
    """The places of a session started in `cwd`.

    Args:
        cwd: The working directory (the workspace root).
        config_dir: The user's config dir (`moot.paths.config_dir()`); None leaves it out.
        shipped: Include moot's shipped skills and agents.
        denied: The person's `Read(...)` deny rules (see `Places.denied`).
    """
    from moot.workspace.git_config import find_repository  # no git runs: it reads `.git`

    here = real_root(cwd)
    repo = find_repository(str(here))
    project = Path(repo.top) if repo is not None and here.is_relative_to(repo.top) else here
    user = real_root(config_dir) if config_dir is not None and config_dir.is_dir() else None
    skills = agents = None
    if shipped:
        from moot.shipped import shipped_dir

        found = shipped_dir("skills")
        skills = real_root(found) if found else None
        found = shipped_dir("agents")
        agents = real_root(found) if found else None
    return Places(here, project, user, skills, agents, denied)

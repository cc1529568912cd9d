"""What a remote Docker engine's pull leaves in the volume: the protected and masked paths,
whatever case or Unicode form a command in the container spells them in (a case-insensitive
file system here, macOS's or Windows', would take `.GIT/hooks/x` as `.git/hooks/x`)."""

from __future__ import annotations

import unicodedata

from moot.sandbox.base import SandboxMasks
from moot.sandbox.docker_remote import skips


def test_a_pull_leaves_protected_paths_in_any_spelling() -> None:
    masks = SandboxMasks(read_only=("café/locked",), hidden_files=(".env",))
    push_skip, pull_skip = skips(masks, (".git", ".moot"))
    for rel in (".GIT/hooks/pre-commit", ".Moot/settings.json", ".git", "CAFÉ/locked/x"):
        assert pull_skip(rel), rel
    assert pull_skip(unicodedata.normalize("NFD", "café/locked/x"))
    assert push_skip(".ENV") and pull_skip(".Env")
    assert not pull_skip("src/.git-notes") and not pull_skip(".gitignore")

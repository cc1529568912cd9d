"""A session's permission rules and what they hide: the one way they are made, at assembly
(`client/assemble.py::open_session`) and again when the person changes them
(`client/session_rules.py::SessionRules.reload`).

Its own module so that both import it from below: `session_rules.py` reached into
`assemble.py` for these from inside a function, a cycle the imports at the top did not show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from moot.client.errors import SetupError
from moot.permissions.rules import RuleSet, read_denied
from moot.settings import Settings

if TYPE_CHECKING:
    from moot.sandbox.base import MaskSource
    from moot.workspace.ignore import HiddenInodes
    from moot.workspace.paths import Workspace


def session_rules(
    settings: Settings, allow: Sequence[str] = (), deny: Sequence[str] = ()
) -> RuleSet:
    """The settings' permission rules plus the front end's own.

    Raises:
        SetupError: A malformed rule.
    """
    try:
        return RuleSet(
            allow=[*settings.permissions.allow, *allow],
            ask=settings.permissions.ask,
            deny=[*settings.permissions.deny, *deny],
        )
    except ValueError as exc:
        raise SetupError(f"permission rules: {exc}") from None


def hide_read_denied(workspace: Workspace, rules: RuleSet) -> None:
    """Hide from walks (`ls`, `glob`, `grep`) what `Read(...)` deny rules cover, in the
    workspace and in each added directory."""
    workspace.hidden = read_denied(rules, workspace.root)
    workspace.added_hidden = {
        root: hidden
        for root in workspace.added_roots
        if (hidden := read_denied(rules, root, workspace.root)) is not None
    }


def masks_for(rules: RuleSet, root: Path, added: Sequence[Path] = ()) -> MaskSource | None:
    """`mask_source(rules, root)`, whose module loads only when a deny rule names a path, with
    the masks in the `added` directories (`--add-dir`) joined to it."""
    if not any(rule.path is not None for rule in rules.deny):
        return None
    from moot.permissions.masks import mask_source  # its walk is only needed with such rules

    source = mask_source(rules, root)
    if added:
        from moot.permissions.added_masks import with_added_roots

        source = with_added_roots(source, rules, root, added)
    return source


def inode_check(
    rules: RuleSet, root: Path, masks: MaskSource | None = None, added: Sequence[Path] = ()
) -> Callable[[], HiddenInodes] | None:
    """The workspace's `hidden_inodes`: the file tools refuse another name (a hard link) of a
    file a `Read(...)` deny rule hides, in the workspace or an `added` directory. `masks`, the
    sandbox's source, is shared when given."""
    masks = masks if masks is not None else masks_for(rules, root, added)
    if masks is None:
        return None
    from moot.permissions.links import denied_inodes  # only with deny rules that name paths

    return denied_inodes(masks, root)

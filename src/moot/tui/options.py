"""`AppOptions`: how the app is started, one value instead of fourteen keyword arguments."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.protocol.client import Client

if TYPE_CHECKING:
    from moot.commands.registry import Registry
    from moot.frontend.heap import HeldCollector
    from moot.frontend.history import PromptHistory
    from moot.settings.review import HeldSettings
    from moot.tui.screens.setup import FirstRun

OpenClient = Callable[[], Client]
"""Opens a session's client: a new one (`/new`), or the one the app starts with (`connect`)."""
OpenSession = Callable[[str], Client]
"""Opens a stored session's client by id (the palette's sessions), in its own workspace."""


class AppOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How `MootApp` starts and what it may open. Every field has a default: a test gives the
    app a client and what it needs besides; `run_app` gives `connect` and the rest."""

    connect: OpenClient | None = None
    """Opens the session when the app has no client yet (blocking: called in a thread once the
    prompt shows). None with no client: the first-run screen (`first_run`) opens one."""
    workspace: Path | None = None
    """The workspace `connect` opens (its prompt history shows before the session is open)."""
    model: str | None = None
    """The model asked for, shown while the session opens (None: the settings')."""
    task: str | None = None
    """A first message, sent once the session is shown."""
    show_history: bool = False
    """Show the tail of the session's stored events first (a resumed session)."""
    open_client: OpenClient | None = None
    """Opens a new session, for `/new` (None: the app cannot)."""
    open_session: OpenSession | None = None
    """Opens a stored session by id, for `/resume`, `/fork` and the palette (None: it cannot)."""
    first_run: FirstRun | None = None
    """How the first-run screen opens a session with a model, or the demo."""
    registry: Registry | None = None
    """The slash commands; the built-in ones, made when first asked for, when None."""
    history: PromptHistory | None = None
    """The prompt history; the workspace's file when None."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds (approvals' grace period, ctrl+c twice, the working line)."""
    mouse: bool = True
    """Capture the mouse from the start (`f4` switches it either way)."""
    thumbnails: bool = False
    """Draw a thumbnail (half cells) under each image line of a message (`ui.imageThumbnails`)."""
    own_heap: bool = False
    """The process is the app's alone (`moot`): its heap is frozen once a session shows
    (`tui/heap.py`), and SIGTERM and SIGHUP (the terminal went away) end the app as quitting
    does, so a running turn records its end and its open calls'. Tests, which run many apps in
    one process, leave it off."""
    collector: HeldCollector | None = None
    """Held off while the app starts (`moot.frontend.heap`), let go once the session is open
    or could not be; None in tests, which run many apps in one process."""
    held: Sequence[HeldSettings] = ()
    """The workspace's settings files whose grants wait for the person's approval: asked about
    (`tui/trust.py`) before `connect` opens the session."""

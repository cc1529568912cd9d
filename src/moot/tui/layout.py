"""The side panes' layout: which of the tools and run-trace panes show, how wide their column
is and how they share its height, on a wide terminal and on a narrow one.

Wide (`NARROW` columns or more), the side column stands right of the chat; with both panes
hidden it goes, and the chat takes the whole width. Narrow (80x24), the panes fold away: `f2`
or `f3` brings one up in the chat's place, full width, with the approvals and the prompt still
below it, and the same key folds it again (the chat comes back once neither shows). What the
person sets for a wide terminal is kept in the app's prefs (`tui.json`, under `panes`); what is
brought up on a narrow one lasts while the terminal stays narrow.

`app.tcss` says how each arrangement looks; this module picks the arrangement (classes on
`#body`) and sets the sizes that are numbers (the column's width, the panes' heights).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from moot.commands.registry import PaneName

if TYPE_CHECKING:
    from textual.dom import DOMNode

NARROW = 110
"""Below this many columns the side panes fold away."""
CHAT_MIN = 40
"""Columns the side column always leaves the chat."""
MIN_WIDTH = 24
"""The side column's narrowest (a tiny terminal may show less of it)."""
DEFAULT_WIDTH = 48
WIDTH_STEP = 8
"""Columns one `ctrl+left`/`ctrl+right` (`/panes wider`) moves the column's edge."""
DEFAULT_SPLIT = 50
SPLIT_STEP = 10
"""Percent of the column's height one `ctrl+up`/`ctrl+down` moves between the panes."""
MIN_SPLIT, MAX_SPLIT = 10, 90
"""Each pane keeps at least a tenth of the column when both show."""


class PaneSizes(msgspec.Struct, frozen=True):
    """What the person chose for the side panes of a wide terminal (kept in `tui.json`)."""

    tools: bool = True
    """The tools pane shows."""
    trace: bool = True
    """The run-trace pane shows."""
    width: int = DEFAULT_WIDTH
    """The side column's width in columns (on a small terminal, less: the chat keeps
    `CHAT_MIN`)."""
    split: int = DEFAULT_SPLIT
    """The tools pane's share of the column's height, in percent, when both panes show."""

    @classmethod
    def from_prefs(cls, saved: object) -> PaneSizes:
        """The sizes a prefs file kept; the defaults for what is missing or not understood."""
        try:
            sizes = msgspec.convert(saved, cls)
        except msgspec.ValidationError:  # hand-edited or from another version: start afresh
            return cls()
        return msgspec.structs.replace(
            sizes,
            width=max(MIN_WIDTH, sizes.width),
            split=min(MAX_SPLIT, max(MIN_SPLIT, sizes.split)),
        )


class SidePanes:
    """The app's side panes as the person arranged them: the keys, `/panes` (through
    `moot.commands.registry.Panes`, which this implements) and the terminal's size change them
    here, and `apply` lays the widgets out to match.

    Args:
        root: Where `#body`, `#side` and the panes are found (the app: its default screen).
        sizes: As the prefs kept them.
        save: Keeps the sizes after each change the person makes (the prefs file).
    """

    def __init__(self, root: DOMNode, sizes: PaneSizes, save: Callable[[PaneSizes], None]) -> None:
        self._root = root
        self.sizes = sizes
        self._save = save
        self.narrow = False
        self.brought_up: frozenset[PaneName] = frozenset()
        """On a narrow terminal, the panes shown over the chat."""
        self._columns = NARROW
        """The terminal's width, as last fitted."""

    # ---- what shows ------------------------------------------------------------------------

    def shows(self, pane: PaneName) -> bool:
        """Whether `pane` is on screen (given the terminal's width)."""
        if self.narrow:
            return pane in self.brought_up
        return self.sizes.tools if pane == "tools" else self.sizes.trace

    @property
    def over_chat(self) -> bool:
        """A narrow terminal with a pane brought up: the panes stand in the chat's place."""
        return self.narrow and bool(self.brought_up)

    @property
    def width(self) -> int:
        """The side column's width on this terminal: the person's, leaving the chat its room."""
        return max(MIN_WIDTH, min(self.sizes.width, self._widest))

    @property
    def _widest(self) -> int:
        # On a narrow terminal no column shows: the width is for when it is wide again, fitted
        # to the narrowest wide one.
        return max(self._columns, NARROW) - CHAT_MIN

    def heights(self) -> dict[str, str]:
        """The panes' heights by id, as fractions of the column (one alone takes all of it)."""
        return {"tools": f"{self.sizes.split}fr", "trace": f"{100 - self.sizes.split}fr"}

    # ---- what changes it --------------------------------------------------------------------

    def fit(self, columns: int) -> None:
        """The terminal is `columns` wide (at the start and on each resize)."""
        self._columns = columns
        narrow = columns < NARROW
        if narrow != self.narrow:
            # Each side of the line starts as it should look: narrow folded, wide as chosen.
            self.narrow = narrow
            self.brought_up = frozenset()
        self.apply()

    def show(self, pane: PaneName, shown: bool | None = None) -> None:
        if shown is None:
            shown = not self.shows(pane)
        if self.narrow:  # for now only: a narrow terminal starts folded again
            self.brought_up = self.brought_up | {pane} if shown else self.brought_up - {pane}
        else:
            self._change(msgspec.structs.replace(self.sizes, **{pane: shown}))
        self.apply()

    def widen(self, steps: int) -> None:
        self.set_width(self.width + steps * WIDTH_STEP)

    def set_width(self, columns: int) -> None:
        width = max(MIN_WIDTH, min(self._widest, columns))
        self._change(msgspec.structs.replace(self.sizes, width=width))

    def move_split(self, steps: int) -> None:
        """Give the tools pane `steps` more of the column (negative: the trace pane)."""
        self.set_split(self.sizes.split + steps * SPLIT_STEP)

    def set_split(self, tools_percent: int) -> None:
        split = min(MAX_SPLIT, max(MIN_SPLIT, tools_percent))
        self._change(msgspec.structs.replace(self.sizes, split=split))

    def reset(self) -> None:
        self.brought_up = frozenset()
        self._change(PaneSizes())

    def _change(self, sizes: PaneSizes) -> None:
        if sizes != self.sizes:
            self.sizes = sizes
            self._save(sizes)
        self.apply()

    # ---- on screen --------------------------------------------------------------------------

    def apply(self) -> None:
        """Lay the panes out as they stand (nothing to do before the layout is composed)."""
        from textual.css.query import NoMatches  # textual is loaded by now: the app runs

        try:
            body = self._root.query_one("#body")
            side = body.query_one("#side")
        except NoMatches:  # the first-run screen: the layout comes with the first session
            return
        tools, trace = self.shows("tools"), self.shows("trace")
        body.set_class(not tools, "-hide-tools")
        body.set_class(not trace, "-hide-trace")
        body.set_class(not (tools or trace), "-no-side")
        body.set_class(self.over_chat, "-over-chat")
        side.styles.width = "1fr" if self.over_chat else self.width
        heights = self.heights()
        for pane in side.children:  # none until they are mounted (after the first paint)
            if pane.id in heights:
                pane.styles.height = heights[pane.id]

    def describe(self) -> str:
        def state(pane: PaneName) -> str:
            return f"{pane} {'shown' if self.shows(pane) else 'hidden'}"

        sizes = f"side column {self.width} columns wide, tools {self.sizes.split}% of its height"
        if not self.narrow:
            return f"{state('tools')}, {state('trace')}; {sizes}"
        wide = ", ".join(p for p in ("tools", "trace") if getattr(self.sizes, p)) or "no panes"
        return (
            f"a narrow terminal ({self._columns} < {NARROW} columns): {state('tools')}, "
            f"{state('trace')} (over the chat: f2, f3 bring one up and fold it again); "
            f"on a wide one: {wide}, {sizes}"
        )

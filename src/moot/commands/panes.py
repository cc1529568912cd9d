"""`/panes`: show, hide and size the app's side panes (the tools pane, the run-trace pane) by
name, as `f2`, `f3`, `ctrl+left`/`ctrl+right` and `ctrl+up`/`ctrl+down` do by key.

The front end does the work (`CommandContext.panes()`); one without panes (the plain REPL, an
editor) says so, as `/theme` does where there are no themes (an editor).
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.commands.registry import CommandContext, CommandError, PaneName, Registry

PANES: tuple[PaneName, ...] = ("tools", "trace")
BY_NAME: dict[str, PaneName] = {pane: pane for pane in PANES}
ARGUMENTS = "[tools|trace [on|off] | wider | narrower | width N | split N | reset]"
CHOICES = (
    *(f"{pane}{state}" for pane in PANES for state in ("", " on", " off")),
    "wider",
    "narrower",
    "width",
    "split",
    "reset",
)
"""What completion offers (`width` and `split` then take a number)."""


def _complete(context: CommandContext, typed: str) -> Sequence[str]:
    return [c for c in CHOICES if c.startswith(typed)]


def _number(word: str, what: str) -> int:
    try:
        return int(word.rstrip("%"))
    except ValueError:
        raise CommandError(f"/panes {what} takes a whole number, not {word!r}") from None


def register(registry: Registry) -> None:
    """Add `/panes` to `registry`."""

    @registry.command(
        "panes",
        "Show, hide or size the app's side panes (no argument: how they stand)",
        arguments=ARGUMENTS,
        complete=_complete,
    )
    async def panes(context: CommandContext, args: str) -> None:
        layout = context.panes()  # before the arguments: the REPL says where panes are
        match args.lower().split():
            case []:
                pass  # no argument: only how they stand (said below)
            case [pane] if pane in BY_NAME:
                layout.show(BY_NAME[pane])
            case [pane, "on" | "off" as state] if pane in BY_NAME:
                layout.show(BY_NAME[pane], state == "on")
            case ["wider"]:
                layout.widen(1)
            case ["narrower"]:
                layout.widen(-1)
            case ["width", columns]:
                layout.set_width(_number(columns, "width"))
            case ["split", percent]:
                layout.set_split(_number(percent, "split"))
            case ["reset"]:
                layout.reset()
            case _:
                raise CommandError(f"/panes {args}: not understood; /panes {ARGUMENTS}")
        context.say(layout.describe())

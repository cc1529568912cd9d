"""The `todo` tool: the model keeps a visible task list for the work of a session.

Each call replaces the whole list. The model gets a compact rendering back; front ends get the
items in the result's `display` (`{"todos": [...]}`), which the runtime copies into the
`tool_finished` event, so the list can also be rebuilt from the log (`TodoList.from_events`).
The list is read-only as far as the workspace goes: it touches no files.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool

if TYPE_CHECKING:
    from moot.protocol.events import Event

TodoStatus = Literal["pending", "in_progress", "done"]
MAX_ITEMS = 100
"""More than this is not a task list any more; the model is told to group tasks."""
_MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}


class TodoItem(BaseModel):
    """One task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: Annotated[str, Field(min_length=1, max_length=500)]
    """What to do, in a few words."""
    status: TodoStatus = "pending"
    """pending, in_progress (what is being worked on now) or done."""


class TodoList:
    """A session's task list; one per session, passed to `todo_tool`. Thread-safe."""

    def __init__(self, items: Iterable[TodoItem] = ()) -> None:
        self._items = tuple(items)
        self._lock = threading.Lock()

    @property
    def items(self) -> tuple[TodoItem, ...]:
        """The tasks, in the model's order."""
        with self._lock:
            return self._items

    def replace(self, items: Iterable[TodoItem]) -> None:
        """Make `items` the whole list."""
        new = tuple(items)
        with self._lock:
            self._items = new

    @classmethod
    def from_events(cls, events: Iterable[Event], tool_name: str = "todo") -> TodoList:
        """The list as the last successful `todo` call in `events` left it (for resume, rewind).

        Args:
            events: A session's events, oldest first.
            tool_name: The name the tool was registered under.
        """
        from moot.protocol.events import ToolFinished  # deferred: no import cycle

        items: Sequence[TodoItem] = ()
        for event in events:
            if not isinstance(event, ToolFinished) or event.tool != tool_name or event.is_error:
                continue
            try:
                items = [TodoItem.model_validate(raw) for raw in event.display.get("todos", ())]
            except (ValidationError, TypeError):
                continue  # a display written by some other tool of that name
        return cls(items)


def render(items: Sequence[TodoItem]) -> str:
    """The list as the model sees it: a count by status, then one line per task."""
    if not items:
        return "Todo list cleared."
    counts = {status: sum(item.status == status for item in items) for status in _MARKS}
    head = (
        f"Todo list ({len(items)}): {counts['done']} done, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending"
    )
    return "\n".join([head, *(f"{_MARKS[item.status]} {item.text}" for item in items)])


def todo_tool(todos: TodoList) -> FunctionTool:
    """The `todo` tool, keeping its list in `todos` (one per session)."""

    @tool(
        name="todo",
        side_effect=SideEffect.READ_ONLY,
        description=(
            "Keep a visible task list for multi-step work. Send the whole list each time; it "
            "replaces the last one. Mark one task in_progress while working on it, done when "
            "finished."
        ),
    )
    def todo(
        items: Annotated[list[TodoItem], Field(max_length=MAX_ITEMS)],
    ) -> ToolResult:
        todos.replace(items)
        return ToolResult(render(items), display={"todos": [item.model_dump() for item in items]})

    return todo

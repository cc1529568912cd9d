"""The `todo` tool: a per-session task list the model replaces whole and front ends display."""

from __future__ import annotations

from moot.protocol.events import TextDelta, ToolFinished
from moot.tools.base import SideEffect, ToolContext
from moot.tools.todo import TodoItem, TodoList, todo_tool

CTX = ToolContext("ses_1", "run_1", "call_1", "main", "tc_1")
ITEMS = [
    {"text": "Read the failing test", "status": "done"},
    {"text": "Fix the parser", "status": "in_progress"},
    {"text": "Run the suite"},
]


async def test_a_call_replaces_the_list_and_renders_it_compactly() -> None:
    todos = TodoList()
    tool = todo_tool(todos)

    result = await tool.invoke({"items": ITEMS}, CTX)

    assert not result.is_error
    assert result.content == (
        "Todo list (3): 1 done, 1 in progress, 1 pending\n"
        "[x] Read the failing test\n"
        "[~] Fix the parser\n"
        "[ ] Run the suite"
    )
    assert [item.status for item in todos.items] == ["done", "in_progress", "pending"]

    again = await tool.invoke({"items": [{"text": "Ship it", "status": "pending"}]}, CTX)

    assert again.content == "Todo list (1): 0 done, 0 in progress, 1 pending\n[ ] Ship it"
    assert todos.items == (TodoItem(text="Ship it"),)


async def test_front_ends_get_the_items_in_display() -> None:
    result = await todo_tool(TodoList()).invoke({"items": ITEMS}, CTX)
    assert result.display == {
        "todos": [
            {"text": "Read the failing test", "status": "done"},
            {"text": "Fix the parser", "status": "in_progress"},
            {"text": "Run the suite", "status": "pending"},
        ]
    }


async def test_an_empty_list_clears_it() -> None:
    todos = TodoList([TodoItem(text="old")])
    result = await todo_tool(todos).invoke({"items": []}, CTX)
    assert result.content == "Todo list cleared."
    assert result.display == {"todos": []}
    assert todos.items == ()


async def test_bad_items_are_refused_and_the_list_is_kept() -> None:
    todos = TodoList([TodoItem(text="keep me")])
    tool = todo_tool(todos)
    for items in (
        [{"text": "x", "status": "blocked"}],
        [{"text": ""}],
        [{"status": "done"}],
        [{"text": "x", "extra": 1}],
        [{"text": "x"}] * 101,
    ):
        result = await tool.invoke({"items": items}, CTX)
        assert result.is_error and "Invalid arguments for todo" in result.content, items
    assert todos.items == (TodoItem(text="keep me"),)


def test_it_is_read_only_and_each_session_has_its_own_list() -> None:
    first, second = TodoList(), TodoList()
    tool_a, tool_b = todo_tool(first), todo_tool(second)
    assert tool_a.side_effect is SideEffect.READ_ONLY
    tool_a(items=[TodoItem(text="a")])
    assert first.items == (TodoItem(text="a"),)
    assert second.items == ()
    assert tool_b.parameters["properties"]["items"]["items"]["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "done",
    ]


def test_the_list_is_rebuilt_from_the_last_successful_call_in_the_log() -> None:
    def finished(display: dict, *, tool: str = "todo", is_error: bool = False) -> ToolFinished:
        return ToolFinished(
            tool_call_id="tc", tool=tool, content="", is_error=is_error, display=display
        )

    events = [
        finished({"todos": [{"text": "first", "status": "done"}]}),
        TextDelta(text="thinking about it"),
        finished({"todos": [{"text": "second", "status": "in_progress"}]}),
        finished({"todos": [{"text": "not a todo"}]}, tool="other"),
        finished({}, is_error=True),
        finished({"todos": [{"text": "", "status": "weird"}]}),
    ]

    assert TodoList.from_events(events).items == (TodoItem(text="second", status="in_progress"),)
    assert TodoList.from_events([]).items == ()

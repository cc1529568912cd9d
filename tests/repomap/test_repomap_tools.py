"""The `repo_map` and `symbols` tools: what the model reads back, through `invoke`."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.repomap.render import estimate_tokens
from moot.tools.base import SideEffect, ToolContext
from moot.tools.repo_map import repo_map_tool, session_index
from moot.tools.symbols import MAX_SYMBOLS, symbols_tool
from moot.workspace import Workspace

CTX = ToolContext("session", "run", "call", "agent", "tool-call")
FILES = {
    "app/models.py": (
        "class Order:\n"
        "    def total(self) -> int:\n"
        "        return 0\n"
        "\n"
        "\n"
        "class Invoice:\n"
        "    def total(self) -> int:\n"
        "        return 1\n"
    ),
    "app/views.py": (
        "from app.models import Invoice, Order\n"
        "\n"
        "\n"
        "def show(order: Order) -> int:\n"
        "    return order.total() + Invoice().total()\n"
    ),
    "app/jobs.py": "from app.models import Order\n\n\ndef nightly():\n    return Order()\n",
    "web/cart.ts": "export function total(items: number[]): number {\n  return 0;\n}\n",
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root)


async def test_repo_map_lists_the_most_used_file_first(ws: Workspace) -> None:
    tool = repo_map_tool(ws)

    result = await tool.invoke({}, CTX)

    assert (tool.name, tool.side_effect) == ("repo_map", SideEffect.READ_ONLY)
    assert not result.is_error
    assert result.content.startswith(
        "app/models.py:\n│class Order:\n│    def total(self) -> int:\n"
    )
    assert result.display["files"] == 4


async def test_repo_map_focus_and_budget(ws: Workspace) -> None:
    tool = repo_map_tool(ws)

    focused = await tool.invoke({"focus": ["web/cart.ts"]}, CTX)
    small = await tool.invoke({"tokens": 64}, CTX)

    assert focused.content.startswith("web/cart.ts:\n")
    assert estimate_tokens(small.content) <= 64
    assert small.content.endswith("more tokens or a focus show others]")


async def test_repo_map_rejects_a_budget_out_of_range(ws: Workspace) -> None:
    result = await repo_map_tool(ws).invoke({"tokens": 10}, CTX)

    assert result.is_error
    assert "tokens" in result.content


async def test_repo_map_of_a_workspace_without_source_files(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# hi\n")

    result = await repo_map_tool(Workspace(tmp_path)).invoke({}, CTX)

    assert result.content == "No Python, JavaScript, TypeScript, Go or Rust source files found."


async def test_symbols_lists_every_definition_with_its_declaration(ws: Workspace) -> None:
    tool = symbols_tool(ws)

    everywhere = await tool.invoke({"name": "total"}, CTX)
    qualified = await tool.invoke({"name": "Invoice.total"}, CTX)

    assert (tool.name, tool.side_effect) == ("symbols", SideEffect.READ_ONLY)
    assert everywhere.content == (
        "app/models.py:2: def total(self) -> int:\n"
        "app/models.py:7: def total(self) -> int:\n"
        "web/cart.ts:1: export function total(items: number[]): number"
    )
    assert qualified.content == "app/models.py:7: def total(self) -> int:"


async def test_symbols_suggests_similar_names_when_nothing_matches(ws: Workspace) -> None:
    tool = symbols_tool(ws)

    missing = await tool.invoke({"name": "order"}, CTX)
    blank = await tool.invoke({"name": " . "}, CTX)

    assert missing.content == "No definition of 'order' found. Similar names: Order."
    assert not missing.is_error
    assert blank.is_error


async def test_symbols_caps_long_answers(ws: Workspace) -> None:
    many = "".join("def run():\n    pass\n\n\n" for _ in range(MAX_SYMBOLS + 5))
    (ws.root / "many.py").write_text(many)

    result = await symbols_tool(ws).invoke({"name": "run"}, CTX)

    lines = result.content.splitlines()
    assert len(lines) == MAX_SYMBOLS + 1
    assert (
        lines[-1]
        == f"[the first {MAX_SYMBOLS} of {MAX_SYMBOLS + 5}; qualify it, e.g. Class.method]"
    )


async def test_a_new_session_maps_from_the_saved_look_and_its_lookups_still_answer(
    ws: Workspace,
) -> None:
    """The second session's first map reads no row of the cache; `symbols` then reads them,
    and both answer as in the first session, an edit made since included."""
    first = await repo_map_tool(ws).invoke({}, CTX)
    ws.close()
    again = Workspace(ws.root)
    try:
        mapped = await repo_map_tool(again).invoke({}, CTX)
        assert mapped.content == first.content
        assert session_index(again).rows_read == 0
        found = await symbols_tool(again).invoke({"name": "Invoice.total"}, CTX)
        assert found.content == "app/models.py:7: def total(self) -> int:"
        assert session_index(again).rows_read > 0
    finally:
        again.close()
    (ws.root / "app" / "models.py").write_text(
        "class Invoice:\n    def total(self) -> int:\n        return 1\n"
    )
    third = Workspace(ws.root)
    try:
        orders = await symbols_tool(third).invoke({"name": "Order"}, CTX)
        assert orders.content.startswith("No definition of 'Order' found.")
        edited = (await repo_map_tool(third).invoke({}, CTX)).content
        assert edited.startswith("app/models.py:\n│class Invoice:\n") and "Order:" not in edited
    finally:
        third.close()

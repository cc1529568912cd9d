"""`/lint` and `/test`: the tool each runs as the person, what it shows, and the failures it
offers for the next message; in the REPL and in the app, Enter then sends them."""

from __future__ import annotations

from typing import Any

import pytest

from command_recorder import Recorder
from moot.commands.builtin import builtin_commands
from moot.commands.registry import CommandError
from moot.commands.verify import arguments
from moot.protocol import ops
from moot.testing import FakeClient

FAILURES = "The project's test run failed. Please fix it:\n\nFAILED tests/test_x.py::test_a"
RESULT = "$ pytest -q\npytest: exit 1; 1 passed, 1 failed\nFAILED tests/test_x.py::test_a"


def failing(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": RESULT, "display": {"failures": FAILURES, "ok": False}}


@pytest.mark.parametrize(
    ("kind", "line", "expected"),
    [
        ("lint", "", {"path": None}),
        ("lint", "src", {"path": "src"}),
        ("test", "", {"path": None, "filter": None}),
        ("test", "tests/test_x.py -k 'adds and not slow'",
         {"path": "tests/test_x.py", "filter": "adds and not slow"}),
        ("test", "-k adds", {"path": None, "filter": "adds"}),
    ],
)  # fmt: skip
def test_the_arguments_are_a_path_and_for_tests_a_name_pattern(
    kind: str, line: str, expected: dict[str, str | None]
) -> None:
    assert arguments(kind, line) == expected


def test_more_than_a_path_is_refused_saying_what_would_do() -> None:
    with pytest.raises(CommandError, match=r"/test \[path\] \[-k pattern\]"):
        arguments("test", "a b")
    with pytest.raises(CommandError, match="needs a test-name pattern"):
        arguments("test", "-k")


async def test_test_runs_the_tool_as_the_person_shows_it_and_offers_the_failures() -> None:
    client = FakeClient([], tool_results={"test": failing})
    context = Recorder(client)
    await builtin_commands().run(context, "/test tests/test_x.py")
    assert client.ops == [ops.RunTool(tool="test", arguments={"path": "tests/test_x.py",
                                                              "filter": None})]  # fmt: skip
    assert "1 passed, 1 failed" in "\n".join(text for text, _ in context.said)
    assert context.offered == [(FAILURES, "output of /test")]


async def test_a_clean_run_offers_nothing() -> None:
    clean = {"content": "$ ruff check\nruff: exit 0; 0 findings", "display": {"failures": ""}}
    client = FakeClient([], tool_results={"lint": clean})
    context = Recorder(client)
    await builtin_commands().run(context, "/lint")
    assert context.offered == []
    assert context.said[-1] == ("/lint: all clear", False)

"""The Python API's options: one definition (`RunOptions`) for `run`, `async_run`, `stream` and
`run_background`; one options value for the runtime (`RuntimeOptions`)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import moot
from moot import (
    Agent,
    FunctionProvider,
    RunOptions,
    Runtime,
    RuntimeOptions,
    ScriptedProvider,
    async_run,
    run,
    run_background,
    stream,
    tool,
)
from moot.protocol import events as ev
from moot.providers.base import ModelRequest
from moot.store.memory import MemoryStore
from moot.tools.base import SideEffect

SOURCE = Path(moot.__file__).parent


@tool(side_effect=SideEffect.READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_run_async_run_stream_and_run_background_take_the_options_of_one_definition() -> None:
    """Their keyword arguments are `RunOptions`' fields, with its defaults; before, `async_run`
    and `stream` each wrote out the same 17 parameters and `run` took `**options`."""
    fields = list(RunOptions.__struct_fields__)
    defaults = dict(zip(fields, RunOptions.__struct_defaults__, strict=True))

    for entry in (run, async_run, stream, run_background):
        parameters = inspect.signature(entry).parameters
        assert list(parameters) == ["message", "agents", "options", *fields], entry.__name__
        assert {name: parameters[name].default for name in fields} == defaults


def test_the_readme_example_runs_with_keywords_as_before() -> None:
    model = ScriptedProvider(
        [{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "The sum is 5."]
    )
    result = run("What is 2 + 3?", Agent("main", model=model), tools=[add])

    assert result.output == "The sum is 5."
    assert [e.content for e in result.events if isinstance(e, ev.ToolFinished)] == ["5"]


async def test_options_given_as_a_value_take_keywords_beside_it_and_the_keywords_win() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        seen.append(request)
        return "done"

    options = RunOptions(tools=[add], extra_instructions="Answer in French.")
    agent = Agent("main", model=FunctionProvider(model))

    await async_run("hi", agent, options=options)
    await async_run("hi", agent, options=options, extra_instructions="Answer in Welsh.")

    assert [t.name for t in seen[0].tools][:1] == ["add"]
    assert "Answer in French." in seen[0].system and "French" not in seen[1].system
    assert "Answer in Welsh." in seen[1].system and [t.name for t in seen[1].tools][:1] == ["add"]


async def test_an_unknown_option_is_a_type_error_before_any_session_opens() -> None:
    """`run_background` used to open the session (and claim it) before it looked at its
    options, leaving a session behind a `TypeError`."""
    store = MemoryStore()
    agent = Agent("main", model=ScriptedProvider(["done"]))

    with pytest.raises(TypeError, match=r"unknown options: \['colour'\]"):
        await run_background("hi", agent, store=store, colour="red")
    with pytest.raises(TypeError, match=r"unknown options: \['colour'\]"):
        await async_run("hi", agent, store=store, colour="red")

    assert store.sessions() == []


async def test_a_runtime_takes_its_options_as_one_value() -> None:
    options = RuntimeOptions(tools=[add], title="sums")
    agent = Agent("main", model=ScriptedProvider(["done"]))

    runtime = Runtime([agent], store=MemoryStore(), options=options)

    assert runtime.options is options and list(runtime.tools) == ["add"]
    assert runtime.store.session(runtime.session_id).title == "sums"  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        Runtime([agent], store=MemoryStore(), tools=[add])  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("core/run.py", "RunSettings"),
        ("core/options.py", "RuntimeOptions"),
        ("core/api.py", "RunOptions"),
    ],
)
def test_every_option_says_what_it_does_and_its_default(module: str, name: str) -> None:
    """STYLE.md: a frozen settings object with a docstring per field (defaults documented)."""
    tree = ast.parse((SOURCE / module).read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    body = cls.body
    undocumented = [
        node.target.id
        for i, node in enumerate(body)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if not (
            i + 1 < len(body)
            and isinstance(doc := body[i + 1], ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
            and "default" in doc.value.value
        )
    ]

    assert undocumented == []

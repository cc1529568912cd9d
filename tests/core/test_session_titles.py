"""Titles a session's model writes (`modelTitles`, off by default): one tiny request after the
first turn, outside the conversation fold, recorded as `session_renamed` with its cost in the
ledger; never over a title the person chose. Function and scripted providers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from moot.client.ledger import KINDS, ledger_lines
from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.core.titling import tidy_title
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Usage
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider, ScriptedTurn
from moot.store.memory import MemoryStore
from runtime_helpers import run_turn

TITLE_USAGE = Usage(input_tokens=40, output_tokens=4)


class Model:
    """A function model that notes every request; a title request may be held at a barrier."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self.hold: asyncio.Event | None = None
        self.asked = asyncio.Event()
        """Set when the title request arrives."""

    async def __call__(self, request: ModelRequest) -> ScriptedTurn | str:
        self.requests.append(request)
        if request.purpose != "title":
            return f"answer {len(self.requests)}"
        self.asked.set()
        if self.hold is not None:
            await self.hold.wait()
        return ScriptedTurn(text='Title: "Fix the parser."', usage=TITLE_USAGE, cost_usd=0.0002)

    def of(self, purpose: str) -> list[ModelRequest]:
        return [r for r in self.requests if r.purpose == purpose]


def runtime(model: Model, **kwargs: Any) -> Runtime:
    provider = FunctionProvider(model, name="fn")
    options = RuntimeOptions(**kwargs)
    return Runtime([Agent("main", model=provider)], store=MemoryStore(), options=options)


async def test_the_first_turn_is_followed_by_one_title_request_outside_the_conversation() -> None:
    model = Model()
    titled = runtime(model, model_titles=True)
    sid, store = titled.session_id, titled.store

    await run_turn(titled, "please fix the parser in p.py")
    await titled.title_written(5)
    await run_turn(titled, "and the tests")
    await titled.title_written(5)
    titled.submit(ops.Shutdown())

    (asked,) = model.of("title")
    assert "please fix the parser in p.py" in asked.messages[0].content
    assert "answer 1" in asked.messages[0].content  # the first answer's beginning
    assert asked.max_output_tokens is not None and asked.max_output_tokens <= 32
    (renamed,) = store.events(sid, kinds=("session_renamed",))
    assert isinstance(renamed, ev.SessionRenamed)
    assert (renamed.title, renamed.previous, renamed.by, renamed.model) == (
        "Fix the parser",
        "please fix the parser in p.py",
        "model",
        "fn",
    )
    assert (renamed.run_id, renamed.usage, renamed.cost_usd) == ("", TITLE_USAGE, 0.0002)
    assert store.session(sid).title == "Fix the parser"
    # No fold took it: the second turn reads prompt, answer, prompt and nothing of the title.
    second = model.of("turn")[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert "Fix the parser" not in json.dumps([m.content for m in second.messages])
    assert [m.role for m in titled.conversation()] == ["user", "assistant"] * 2
    # The ledger counts it: two turns and the title, its tokens and cost among them.
    (line,) = ledger_lines(sid, store.events(sid, kinds=KINDS))
    assert line.model == "fn" and line.calls == 3
    assert line.input_tokens >= TITLE_USAGE.input_tokens


async def test_without_the_setting_no_model_is_asked_for_a_title() -> None:
    model = Model()
    plain = runtime(model)
    await run_turn(plain, "please fix the parser in p.py")
    await plain.title_written(5)
    plain.submit(ops.Shutdown())

    assert model.of("title") == []
    assert plain.store.events(plain.session_id, kinds=("session_renamed",)) == []
    assert plain.store.session(plain.session_id).title == "please fix the parser in p.py"


async def test_a_title_the_person_chose_is_never_replaced() -> None:
    before = Model()
    named_first = runtime(before, model_titles=True)
    named_first.submit(ops.Rename(title="parser work"))
    await run_turn(named_first, "please fix the parser")
    await named_first.title_written(5)
    named_first.submit(ops.Shutdown())
    assert before.of("title") == []  # chosen before the first turn ended: nothing is asked

    meanwhile = Model()
    meanwhile.hold = asyncio.Event()
    named_later = runtime(meanwhile, model_titles=True)
    await run_turn(named_later, "please fix the parser")
    await asyncio.wait_for(meanwhile.asked.wait(), 5)  # under way, held at the barrier
    named_later.submit(ops.Rename(title="parser work"))
    meanwhile.hold.set()
    await named_later.title_written(5)
    named_later.submit(ops.Shutdown())

    store, sid = named_later.store, named_later.session_id
    assert [e.title for e in store.events(sid, kinds=("session_renamed",))] == ["parser work"]
    assert store.session(sid).title == "parser work"


async def test_closing_waits_for_the_title_and_the_setting_reaches_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.client.local import SessionOptions, open_client
    from moot.store.sqlite import SQLiteStore
    from moot.testing import drive_turn

    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / ".moot/settings.json").write_text('{"modelTitles": true}')
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": ["done"], "titles": [{"text": "Parser work"}]}))
    db = tmp_path / "s.db"

    client = open_client(
        SessionOptions(cwd=work, model=f"scripted:{script}"), store=SQLiteStore(db)
    )
    await drive_turn(client, "please fix the parser")
    await client.close()  # as `moot -p` does, at once

    with SQLiteStore(db) as store:
        assert store.session(client.session_id).title == "Parser work"


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ('"Fix the parser."', "Fix the parser"),
        ("Title: Parser work\n\nI chose this because", "Parser work"),
        ("\n  *Speed   up the tests*  \n", "Speed up the tests"),
        ("", ""),
    ],
)
def test_an_answer_is_tidied_to_a_title(answer: str, title: str) -> None:
    assert tidy_title(answer) == title

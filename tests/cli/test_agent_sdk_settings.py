"""The real Claude Agent SDK (Python) chooses moot's settings layers as it chooses Claude
Code's: `settings` (JSON or a file, over the files) and `setting_sources` (which files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import UserMessage
from claude_agent_sdk._errors import ProcessError

from agent_sdk_options import collect, sdk_options

ECHO = [
    {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > said.txt"}}]},
    {"text": "done"},
]
ALLOW_ECHO = {"permissions": {"allow": ["Bash(echo hi:*)", "Edit(./said.txt)"]}}


def _results(messages: list[Any]) -> list[bool]:
    """Whether each tool result was an error."""
    return [bool(b.is_error) for m in messages if isinstance(m, UserMessage) for b in m.content]


async def test_settings_json_allows_what_nobody_could_approve(tmp_path: Path) -> None:
    plain = await collect(query_in(tmp_path / "plain", ECHO))
    given = await collect(query_in(tmp_path / "given", ECHO, settings=json.dumps(ALLOW_ECHO)))

    assert _results(plain) == [True] and not (tmp_path / "plain" / "said.txt").exists()
    assert _results(given) == [False]
    assert (tmp_path / "given" / "said.txt").read_text() == "hi\n"


async def test_a_settings_file_is_read_from_the_working_directory(tmp_path: Path) -> None:
    tmp_path.joinpath("mine.json").write_text(json.dumps(ALLOW_ECHO))

    messages = await collect(query_in(tmp_path, ECHO, settings="mine.json"))

    assert _results(messages) == [False] and (tmp_path / "said.txt").exists()


async def test_setting_sources_leave_out_the_files_not_named(tmp_path: Path) -> None:
    for name in ("all", "chosen"):
        local = tmp_path / name / ".moot" / "settings.local.json"
        local.parent.mkdir(parents=True)
        local.write_text(json.dumps({"permissions": {"deny": ["Edit(./said.txt)"]}}))
    allow = json.dumps(ALLOW_ECHO)

    every = await collect(query_in(tmp_path / "all", ECHO, settings=allow))
    chosen = await collect(
        query_in(tmp_path / "chosen", ECHO, settings=allow, setting_sources=["user", "project"])
    )

    assert _results(every) == [True]  # the local file's deny wins over an allow
    assert _results(chosen) == [False]


async def test_settings_that_do_not_fit_the_schema_stop_moot(tmp_path: Path) -> None:
    wrong = json.dumps({"permissions": {"allow": "Bash"}})
    said: list[str] = []

    with pytest.raises(ProcessError) as raised:
        await collect(query_in(tmp_path, ECHO, settings=wrong, stderr=said.append))

    assert raised.value.exit_code == 2
    assert "--settings" in "\n".join(said) and "permissions.allow" in "\n".join(said)


def query_in(where: Path, turns: list[dict[str, Any]], **more: Any) -> Any:
    from claude_agent_sdk import query

    where.mkdir(parents=True, exist_ok=True)
    return query(prompt="say hi", options=sdk_options(where, turns, **more))

"""The real Claude Agent SDK (`claude_agent_sdk`, Python) drives `moot` as it drives Claude
Code: `cli_path` points at a two-line shim that runs `python -m moot.cli`, and a scripted model
(`MOOT_MODEL`) answers, so nothing leaves the machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from agent_sdk_options import collect, sdk_options


async def test_a_one_shot_query(tmp_path: Path) -> None:
    options = sdk_options(tmp_path, [{"text": "Hello from moot."}])

    messages = await collect(query(prompt="say hello", options=options))

    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert isinstance(answer, AssistantMessage) and answer.content == [
        TextBlock("Hello from moot.")
    ]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == (
        "success",
        False,
        "Hello from moot.",
    )
    assert result.session_id == init.data["session_id"]


async def test_a_multi_turn_client_with_an_interrupt(tmp_path: Path) -> None:
    turns = [{"text": "first"}, {"text": "never said", "delay": 60}, {"text": "third"}]
    async with ClaudeSDKClient(sdk_options(tmp_path, turns)) as client:
        await client.query("one")
        first = await collect(client.receive_response())
        await client.query("two")
        await client.interrupt()
        second = await collect(client.receive_response())
        await client.query("three")
        third = await collect(client.receive_response())

    assert first[-1].result == "first" and not first[-1].is_error
    assert second[-1].is_error and second[-1].subtype == "error_during_execution"
    assert second[-1].stop_reason == "user_cancelled"
    assert third[-1].result == "third" and not third[-1].is_error
    assert first[-1].session_id == third[-1].session_id


async def test_can_use_tool_allows_one_bash_call_and_denies_another(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch allowed.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch denied.txt"}}]},
        {"text": "done"},
    ]
    asked: list[tuple[str, str]] = []

    async def can_use_tool(
        tool: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool, arguments["command"]))
        if "allowed" in arguments["command"]:
            return PermissionResultAllow()
        return PermissionResultDeny(message="not that file")

    options = sdk_options(tmp_path, turns, can_use_tool=can_use_tool)
    async with ClaudeSDKClient(options) as client:
        await client.query("make two files")
        messages = await collect(client.receive_response())

    assert asked == [("bash", "touch allowed.txt"), ("bash", "touch denied.txt")]
    assert (tmp_path / "allowed.txt").exists() and not (tmp_path / "denied.txt").exists()
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert [isinstance(b, ToolResultBlock) and b.is_error for b in results] == [False, True]
    assert "not that file" in str(results[1].content)
    end = messages[-1]
    assert isinstance(end, ResultMessage) and end.result == "done"
    assert [d["tool_name"] for d in end.permission_denials or []] == ["bash"]


async def test_can_use_tool_changes_the_input_and_a_deny_rule_still_holds(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch asked.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch again.txt"}}]},
        {"text": "done"},
    ]
    changes = iter(["touch changed.txt", "rm -f keep.txt"])

    async def can_use_tool(
        tool: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={"command": next(changes)})

    (tmp_path / "keep.txt").write_text("kept")
    options = sdk_options(
        tmp_path, turns, can_use_tool=can_use_tool, disallowed_tools=["Bash(rm:*)"]
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("make files")
        messages = await collect(client.receive_response())

    assert (tmp_path / "changed.txt").exists() and not (tmp_path / "asked.txt").exists()
    assert (tmp_path / "keep.txt").exists()  # the changed input a rule denies never ran
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert [isinstance(b, ToolResultBlock) and b.is_error for b in results] == [False, True]
    assert "changed input is refused" in str(results[1].content)


async def test_an_allow_that_keeps_the_suggested_rule_is_not_asked_again(tmp_path: Path) -> None:
    command = {"name": "bash", "arguments": {"command": "touch kept.txt"}}
    turns = [{"tool_calls": [command]}, {"tool_calls": [command]}, {"text": "done"}]
    asked: list[list[Any]] = []

    async def can_use_tool(
        tool: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(context.suggestions)
        return PermissionResultAllow(updated_permissions=context.suggestions)

    async with ClaudeSDKClient(sdk_options(tmp_path, turns, can_use_tool=can_use_tool)) as client:
        await client.query("twice")
        messages = await collect(client.receive_response())

    assert len(asked) == 1 and asked[0]  # the second call is allowed by the rule kept
    assert messages[-1].result == "done"


async def test_a_deny_that_interrupts_ends_the_turn(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch no.txt"}}]},
        {"text": "never"},
    ]

    async def can_use_tool(
        tool: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        return PermissionResultDeny(message="stop here", interrupt=True)

    async with ClaudeSDKClient(sdk_options(tmp_path, turns, can_use_tool=can_use_tool)) as client:
        await client.query("go")
        messages = await collect(client.receive_response())

    end = messages[-1]
    assert end.is_error and end.stop_reason == "user_cancelled"
    assert not (tmp_path / "no.txt").exists()


async def test_the_permission_mode_and_the_model_change_between_turns(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"text": "from the other model"}]))
    turns = [{"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
             {"text": "written"}]  # fmt: skip
    async with ClaudeSDKClient(sdk_options(tmp_path, turns)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("write it")
        first = await collect(client.receive_response())
        await client.set_model(f"scripted:{other}")
        await client.query("again")
        second = await collect(client.receive_response())

    assert (tmp_path / "a.txt").read_text() == "x" and first[-1].result == "written"
    assert second[-1].result == "from the other model"


async def test_a_resume_goes_on_with_the_session(tmp_path: Path) -> None:
    turns = [{"text": "first answer"}, {"text": "second answer"}]
    first = await collect(query(prompt="one", options=sdk_options(tmp_path, turns)))
    session = first[-1].session_id

    options = sdk_options(tmp_path, turns, resume=session)
    second = await collect(query(prompt="two", options=options))

    assert second[-1].session_id == session
    assert second[-1].result == "second answer"  # the script goes on where the log left it


async def test_a_session_id_the_sdk_chooses_names_the_session(tmp_path: Path) -> None:
    chosen = "0b9f7e2a-5e8f-4e8b-9c1e-3c2f8d7a6b5c"
    turns = [{"text": "first answer"}, {"text": "second answer"}]
    first = await collect(
        query(prompt="one", options=sdk_options(tmp_path, turns, session_id=chosen))
    )
    again = await collect(query(prompt="two", options=sdk_options(tmp_path, turns, resume=chosen)))

    assert first[-1].session_id == again[-1].session_id == chosen
    assert again[-1].result == "second answer"


async def test_a_forked_resume_leaves_the_original_as_it_was(tmp_path: Path) -> None:
    turns = [{"text": "first answer"}, {"text": "second answer"}]
    first = await collect(query(prompt="one", options=sdk_options(tmp_path, turns)))
    session = first[-1].session_id

    options = sdk_options(tmp_path, turns, resume=session, fork_session=True)
    forked = await collect(query(prompt="two", options=options))
    again = await collect(query(prompt="two", options=sdk_options(tmp_path, turns, resume=session)))

    assert forked[-1].session_id != session and forked[-1].result == "second answer"
    assert again[-1].session_id == session and again[-1].result == "second answer"


async def test_a_pre_tool_use_hook_callback_refuses_one_call_and_changes_another(
    tmp_path: Path,
) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch blocked.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch asked.txt"}}]},
        {"text": "done"},
    ]
    seen: list[dict[str, Any]] = []

    async def pre_tool_use(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(data)
        command = data["tool_input"]["command"]
        if "blocked" in command:
            decision = {"permissionDecision": "deny", "permissionDecisionReason": "no blocks"}
        else:
            updated = {"command": "touch changed.txt"}
            decision = {"permissionDecision": "allow", "updatedInput": updated}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre_tool_use])]}
    messages = await collect(query(prompt="go", options=sdk_options(tmp_path, turns, hooks=hooks)))

    assert [d["hook_event_name"] for d in seen] == ["PreToolUse", "PreToolUse"]
    assert seen[0]["tool_name"] == "bash" and seen[0]["tool_use_id"]
    assert not (tmp_path / "blocked.txt").exists() and not (tmp_path / "asked.txt").exists()
    assert (tmp_path / "changed.txt").exists()
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert "no blocks" in str(results[0].content) and results[0].is_error
    assert messages[-1].result == "done"


async def test_a_json_schema_answer_is_retried_until_it_fits_and_given_structured(
    tmp_path: Path,
) -> None:
    schema = {
        "type": "object",
        "properties": {"files": {"type": "integer"}},
        "required": ["files"],
    }
    turns = [
        {"text": "There are 3 files."},
        {"text": '```json\n{"files": "three"}\n```'},
        {"tool_calls": [{"name": "finish", "arguments": {"message": '{"files": 3}'}}]},
    ]
    output_format = {"type": "json_schema", "schema": schema}
    options = sdk_options(tmp_path, turns, output_format=output_format)

    messages = await collect(query(prompt="count the files", options=options))

    end = messages[-1]
    assert isinstance(end, ResultMessage)
    assert (end.subtype, end.is_error, end.num_turns) == ("success", False, 3)
    assert end.structured_output == {"files": 3}


async def test_an_answer_that_never_fits_the_schema_is_its_own_error(tmp_path: Path) -> None:
    schema = {"type": "object", "required": ["files"]}
    turns = [{"text": "three"}, {"text": "3"}, {"text": "[3]"}, {"text": "never asked"}]
    output_format = {"type": "json_schema", "schema": schema}
    options = sdk_options(tmp_path, turns, output_format=output_format)

    messages = await collect(query(prompt="count the files", options=options))

    end = messages[-1]
    assert isinstance(end, ResultMessage)
    assert (end.subtype, end.is_error) == ("error_max_structured_output_retries", True)
    assert end.structured_output is None


async def test_the_model_calls_an_in_process_sdk_tool(tmp_path: Path) -> None:
    added: list[tuple[int, int]] = []

    @tool("add", "Add two integers", {"a": int, "b": int})
    async def add(arguments: dict[str, Any]) -> dict[str, Any]:
        added.append((arguments["a"], arguments["b"]))
        return {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}

    calc = create_sdk_mcp_server("calc", tools=[add])
    turns = [
        {"tool_calls": [{"name": "mcp__calc__add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "The sum is 5."},
    ]
    options = sdk_options(
        tmp_path, turns, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"]
    )

    messages = await collect(query(prompt="what is 2 + 3?", options=options))

    assert added == [(2, 3)]
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert [(b.content, b.is_error) for b in results] == [("5", False)]
    assert messages[-1].result == "The sum is 5."
    assert {"name": "calc", "status": "connected"} in messages[0].data["mcp_servers"]
    assert "mcp__calc__add" in messages[0].data["tools"]

"""The slash commands of the shared registry, each against the `FakeClient` and a recording
`CommandContext`: the ops each sends, what it says, and that bad input sends nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from command_recorder import PanesRecorder, Recorder
from moot.commands.builtin import builtin_commands
from moot.commands.registry import (
    Command,
    CommandContext,
    Registry,
)
from moot.commands.shell import is_shell, run_shell
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import (
    AgentStatus,
    ContextPart,
    ContextReport,
    ModelChoice,
    PermissionsReport,
    RuleEntry,
    SandboxStatus,
    SessionStatus,
    SessionSummary,
)
from moot.protocol.messages import Usage
from moot.protocol.states import RunState, StopReason
from moot.testing import FakeClient


def turn(run_id: str, prompt: str, output: str) -> list[ev.Event]:
    ids: dict[str, Any] = {"run_id": run_id, "call_id": run_id, "agent": "moot"}
    return [
        ev.TurnStarted(**ids, prompt=prompt),
        ev.ModelResponded(**ids, model="m", text=output),
        ev.TurnFinished(
            **ids,
            state=RunState.COMPLETED,
            stop_reason=StopReason.COMPLETED,
            output=output,
            turns=1,
            usage=Usage(),
            cost_usd=0.0,
            duration_ms=1.0,
        ),
    ]


def status(workspace: str = "/workspace") -> SessionStatus:
    return SessionStatus(
        session_id="ses_fake",
        workspace=workspace,
        mode="default",
        model="anthropic/claude-sonnet-4-5",
        agents=(AgentStatus("moot", "coding agent", "anthropic/claude-sonnet-4-5"),),
        tools=("read", "grep", "glob", "bash", "git_diff", "git_log"),
        sandbox=SandboxStatus("bubblewrap", "bwrap works here"),
        open_run=None,
        running=False,
    )


MODELS = [
    ModelChoice("anthropic/claude-sonnet-4-5", True, 200_000),
    ModelChoice("openai/gpt-5", True, 400_000),
    ModelChoice("gemini/gemini-2.5-pro", False, 1_048_576, "no key: set GEMINI_API_KEY"),
]


def every_tool(arguments: dict[str, Any]) -> str:
    return "ran with " + json.dumps(arguments, sort_keys=True)


TOOLS = [
    "grep", "glob", "git_log", "git_branch", "git_commit", "repo_map", "symbols", "outline",
    "jobs", "kill_shell", "undo", "doctor", "sandbox", "permission_rule", "bash", "diagnostics",
]  # fmt: skip


def client_for(workspace: str = "/workspace", **kw: Any) -> FakeClient:
    results: dict[str, Any] = {name: every_tool for name in TOOLS}
    results.update(kw.pop("tool_results", {}))
    return FakeClient(
        kw.pop("script", ()), status=status(workspace), tool_results=results, models=MODELS, **kw
    )


@pytest.fixture
def registry() -> Registry:
    return builtin_commands()


# ---- every command once: the op it sends ---------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "tool", "arguments"),
    [
        ("/grep TODO", "grep", {"pattern": "TODO", "path": "."}),
        ("/grep 'two words' src", "grep", {"pattern": "two words", "path": "src"}),
        ("/find '**/*.py' src", "glob", {"pattern": "**/*.py", "path": "src"}),
        ("/log", "git_log", {"limit": 10, "path": None}),
        ("/log 3 README.md", "git_log", {"limit": 3, "path": "README.md"}),
        ("/branch", "git_branch", {"name": None, "create": False}),
        ("/branch -c topic", "git_branch", {"name": "topic", "create": True}),
        ("/commit fix the typo", "git_commit", {"message": "fix the typo"}),
        ("/map", "repo_map", {"tokens": 1024}),
        ("/map 4096", "repo_map", {"tokens": 4096}),
        ("/symbols src/greet.py", "outline", {"path": "src/greet.py"}),
        ("/symbols Door.open", "symbols", {"name": "Door.open"}),
        ("/jobs", "jobs", {}),
        ("/diagnostics", "diagnostics", {}),
        ("/diagnostics src/greet.py", "diagnostics", {"path": "src/greet.py"}),
        ("/cancel bg_1", "kill_shell", {"shell_id": "bg_1"}),
        ("/undo", "undo", {}),
        ("/doctor", "doctor", {}),
        ("/sandbox", "sandbox", {}),
        (
            "/permissions deny Read(.env)",
            "permission_rule",
            {"action": "add", "kind": "deny", "rule": "Read(.env)"},
        ),
        (
            "/permissions remove ask Bash(rm:*)",
            "permission_rule",
            {"action": "remove", "kind": "ask", "rule": "Bash(rm:*)"},
        ),
    ],
)
async def test_a_command_runs_its_tool_as_the_person_and_shows_the_result(
    registry: Registry, line: str, tool: str, arguments: dict[str, Any]
) -> None:
    client = client_for()
    context = Recorder(client)
    await registry.run(context, line)
    assert client.ops == [ops.RunTool(tool=tool, arguments=arguments)]
    assert not context.warned and "ran with" in context.last


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/grep", "/grep PATTERN [path]"),
        ("/grep 'open quote", "cannot read the arguments"),
        ("/find", "/find PATTERN"),
        ("/log a b c", "/log [count] [path]"),
        ("/log 500", "number of commits is a number from 1 to 200"),
        ("/map lots", "not 'lots'"),
        ("/map 10", "from 64 to 8192"),
        ("/branch -c", "/branch -c NAME"),
        ("/commit", "/commit MESSAGE"),
        ("/cancel", "/cancel ID"),
        ("/symbols", "/symbols PATH"),
        ("/permissions grant Bash", "/permissions allow|ask|deny RULE"),
        ("/permissions remove Bash(nosuch)", "no rule Bash(nosuch)"),
        ("/export pdf a b", "/export [md|json|html] [path]"),
        ("/export pdf", "'pdf' is no format (md, json, html)"),
        ("/inspect run_nosuch", "no run 'run_nosuch'"),
        ("/nosuch", "no command /nosuch"),
        ("/modle x", "did you mean /mode, /model"),
    ],
)
async def test_bad_input_says_what_would_work_and_sends_nothing(
    registry: Registry, line: str, says: str
) -> None:
    client = client_for(script=turn("run_1", "hi", "hello"))
    client.play()
    context = Recorder(client)
    await registry.run(context, line)
    assert client.ops == []
    assert context.warned and says in context.last


async def test_a_refused_tool_call_is_told_not_raised(registry: Registry) -> None:
    client = client_for(tool_results={"undo": ("HEAD abc is not a moot commit", True)})
    context = Recorder(client)
    await registry.run(context, "/undo")
    assert context.warned and "not a moot commit" in context.last
    del client.tool_results["doctor"]
    await registry.run(context, "/doctor")
    assert context.warned and "no tool 'doctor'" in context.last


async def test_a_command_that_breaks_is_told_not_raised(registry: Registry) -> None:
    def broken(arguments: dict[str, Any]) -> str:
        raise RuntimeError("the fake broke")

    client = client_for(tool_results={"jobs": broken})
    context = Recorder(client)
    await registry.run(context, "/jobs")
    assert context.warned and "/jobs failed: RuntimeError: the fake broke" in context.last


async def test_mode_without_a_name_cycles_as_shift_tab_does(registry: Registry) -> None:
    client = client_for()
    context = Recorder(client)
    for _ in range(3):
        await registry.run(context, "/mode")
    assert [op.mode for op in client.ops] == ["acceptEdits", "plan", "default"]  # type: ignore[attr-defined]
    assert context.said == []  # each switch shows once, as its mode_changed
    await registry.run(context, "/mode dontAsk")
    assert client.status().mode == "dontAsk"


# ---- /model --------------------------------------------------------------------------------------


async def test_model_with_a_name_switches_and_an_unknown_one_lists_the_models(
    registry: Registry,
) -> None:
    client = client_for()
    context = Recorder(client)
    await registry.run(context, "/model openai/gpt-5")
    assert client.ops == [ops.SetModel(model="openai/gpt-5")]
    assert (
        context.last
        == "model: openai/gpt-5 (was anthropic/claude-sonnet-4-5) from the next turn on"
    )
    assert client.status().model == "openai/gpt-5"
    await registry.run(context, "/model nosuch/model")
    assert context.warned and "unknown model 'nosuch/model'; models: anthropic/" in context.last
    await registry.run(context, "/model openai/gpt-5")
    assert context.last == "model: openai/gpt-5 already" and len(client.ops) == 2


async def test_model_without_a_name_offers_the_catalog(registry: Registry) -> None:
    client = client_for()
    context = Recorder(client, picks=["openai/gpt-5", None])
    await registry.run(context, "/model")
    labels = dict(context.choices[0])
    assert labels["anthropic/claude-sonnet-4-5"] == "anthropic/claude-sonnet-4-5  200k  (now)"
    assert labels["gemini/gemini-2.5-pro"].endswith("(no key: set GEMINI_API_KEY)")
    assert client.ops == [ops.SetModel(model="openai/gpt-5")]
    await registry.run(context, "/model")  # cancelled: nothing sent
    assert len(client.ops) == 1


def test_model_and_permissions_complete(registry: Registry) -> None:
    context = Recorder(client_for())
    model = registry.get("model")
    assert model is not None and model.complete is not None
    assert model.complete(context, "open") == ["openai/gpt-5"]
    permissions = registry.get("permissions")
    assert permissions is not None and permissions.complete is not None
    assert permissions.complete(context, "") == ["allow", "ask", "deny", "remove"]
    assert permissions.complete(context, "re") == ["remove"]


# ---- /permissions, /context, /diff ---------------------------------------------------------------


async def test_permissions_lists_each_rule_with_its_source(registry: Registry) -> None:
    report = PermissionsReport(
        mode="acceptEdits",
        rules=(
            RuleEntry("deny", "Read(./.env)", "/workspace/.moot/settings.json"),
            RuleEntry("allow", "Bash(npm test:*)", "/home/me/.config/moot/settings.json"),
            RuleEntry("allow", "Edit(src/**)", "this session"),
        ),
        local_file="/workspace/.moot/settings.local.json",
    )
    client = client_for(permissions=report)
    context = Recorder(client)
    await registry.run(context, "/permissions")
    assert context.last.splitlines() == [
        "mode: acceptEdits",
        "deny:",
        "  Read(./.env)  .moot/settings.json",
        "allow:",
        "  Bash(npm test:*)  /home/me/.config/moot/settings.json",
        "  Edit(src/**)      this session",
        "/permissions allow|ask|deny RULE adds to .moot/settings.local.json",
    ]
    await registry.run(context, "/permissions remove Edit(src/**)")  # the kind, from the report
    assert client.ops == [
        ops.RunTool(
            tool="permission_rule",
            arguments={"action": "remove", "kind": "allow", "rule": "Edit(src/**)"},
        )
    ]


async def test_context_shows_each_part_and_the_total(registry: Registry) -> None:
    report = ContextReport(
        agent="moot",
        model="openai/gpt-5",
        parts=(
            ContextPart("system prompt", 150, "instructions and the peers"),
            ContextPart("memory", 0, "none"),
            ContextPart("tools", 1_850, "20 tool schemas"),
            ContextPart("messages", 38_000, "40 messages, 12 tool results"),
        ),
        context_window=400_000,
        last_input_tokens=39_900,
    )
    context = Recorder(client_for(context=report))
    await registry.run(context, "/context")
    lines = context.last.splitlines()
    assert lines[0] == "moot on openai/gpt-5 (estimates: about 4 characters a token)"
    assert lines[4] == "  messages          38,000  40 messages, 12 tool results"
    assert lines[5] == "  total             40,000  of 400,000 (10%)"
    assert lines[6] == "the last request counted 39,900 input tokens"


async def test_diff_shows_what_is_staged_and_what_is_not(registry: Registry) -> None:
    def git_diff(arguments: dict[str, Any]) -> dict[str, Any]:
        if arguments["staged"]:
            return {"content": "No staged changes."}
        text = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        return {"content": text + "[hint]", "display": {"diff": text}}

    def git_status(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": "untracked: new.py", "display": {"untracked": ["new.py", "src/n.py"]}}

    client = client_for(tool_results={"git_diff": git_diff, "git_status": git_status})
    context = Recorder(client)
    await registry.run(context, "/diff")
    assert [o.arguments for o in client.ops] == [  # type: ignore[union-attr]
        {"path": None, "staged": False},
        {"path": None, "staged": True},
        {},
    ]
    said = [text for text, _ in context.said]
    assert said[0] == "not staged:\n```diff\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n```"
    assert said[1] == "untracked (new, not in git yet): new.py, src/n.py"  # git diff omits them
    context.said.clear()
    await registry.run(context, "/diff src")
    assert context.last == "untracked (new, not in git yet): src/n.py"


# ---- the transcript: /export, /copy, /search, /inspect -------------------------------------------


async def test_cost_shows_the_sessions_ledger_per_model(registry: Registry) -> None:
    ids: dict[str, Any] = {"run_id": "run_1", "call_id": "run_1", "agent": "moot"}
    spent = [
        ev.UsageRecorded(**ids, model="a/one", usage=Usage(input_tokens=1_200), cost_usd=0.5),
        ev.UsageRecorded(**ids, model="a/one", usage=Usage(output_tokens=30), cost_usd=0.25),
        ev.UsageRecorded(**ids, model="b/two", usage=Usage(cache_read_tokens=7), cost_usd=1.0),
    ]
    client = client_for(script=[*turn("run_1", "hi", "hello")[:2], *spent])
    client.play()
    context = Recorder(client)
    await registry.run(context, "/cost")
    lines = context.last.splitlines()
    assert lines[0].split() == ["model", "calls", "input", "output", "cache", "read", "cache",
                                "write", "cost"]  # fmt: skip
    assert lines[1].split() == ["a/one", "2", "1,200", "30", "0", "0", "$0.7500"]
    assert lines[2].split() == ["b/two", "1", "0", "0", "7", "0", "$1.0000"]
    assert lines[3].split() == ["total", "3", "1,200", "30", "7", "0", "$1.7500"]


async def test_export_writes_markdown_or_json_and_never_over_a_file(
    registry: Registry, tmp_path: Path
) -> None:
    client = client_for(str(tmp_path), script=turn("run_1", "say hi", "hello **there**"))
    client.submit(ops.UserTurn(text="say hi"))
    context = Recorder(client)
    await registry.run(context, "/export")
    written = tmp_path / "moot-ses_fake.md"
    assert context.last == f"wrote 3 events as md to {written}"
    text = written.read_text()
    assert "### user → moot\n\n> say hi" in text and "hello **there**" in text
    await registry.run(context, "/export")
    assert context.warned and "exists; name another file" in context.last
    await registry.run(context, "/export json out/session.json")
    again = FakeClient.from_export(tmp_path / "out" / "session.json")
    assert [e.kind for e in again.script] == [e.kind for e in client.log]
    await registry.run(context, "/export html page.html")
    page = (tmp_path / "page.html").read_text()
    assert page.startswith("<!doctype html>") and "hello **there**" in page


async def test_copy_puts_the_last_answer_on_the_clipboard(registry: Registry) -> None:
    client = client_for(script=[*turn("run_1", "a", "first"), *turn("run_2", "b", "second")])
    context = Recorder(client)
    await registry.run(context, "/copy")
    assert context.warned and context.last == "no answer to copy yet"
    client.play()
    await registry.run(context, "/copy")
    assert context.copied == ["second"]
    assert context.last == "copied the last answer (6 characters; the test's clipboard)"


async def test_search_marks_matches_and_counts_those_in_earlier_history(
    registry: Registry,
) -> None:
    client = client_for(script=[*turn("run_1", "milk?", "buy milk"), *turn("run_2", "b", "x")])
    client.play()
    context = Recorder(client)
    context.matches = 1
    await registry.run(context, "/search MILK")
    assert context.searched == ["MILK"]
    assert context.last == "1 match on screen for 'MILK'; 1 more in earlier history (load earlier)"
    await registry.run(context, "/search")
    assert context.searched == ["MILK", ""] and len(context.said) == 1


async def test_inspect_opens_a_runs_events(registry: Registry) -> None:
    client = client_for(script=[*turn("run_a1", "a", "x"), *turn("run_b2", "b", "y")])
    client.play()
    context = Recorder(client)
    await registry.run(context, "/inspect")
    title, events = context.inspected[-1]
    assert title == "run run_b2" and {e.run_id for e in events} == {"run_b2"} and len(events) == 3
    await registry.run(context, "/inspect run_a")
    assert context.inspected[-1][0] == "run run_a1"
    inspect = registry.get("inspect")
    assert inspect is not None and inspect.complete is not None
    assert inspect.complete(context, "run_") == ["run_b2", "run_a1"]


def recorded_reads(client: FakeClient) -> list[dict[str, object]]:
    """What the client's `events` query is asked from now on (its keyword arguments)."""
    reads: list[dict[str, object]] = []
    real_events = client.query.events

    def events(session_id: str, **kw: Any) -> list[ev.Event]:
        reads.append(kw)
        return real_events(session_id, **kw)

    client.query.events = events  # type: ignore[method-assign]
    return reads


async def test_inspect_finds_a_run_older_than_the_recent_ones_without_reading_the_log(
    registry: Registry,
) -> None:
    """30 runs: an old one is found by its id or a prefix of it (the recent 20 first, then a
    page at a time); an id that matches none names the recent runs; every read is bounded."""
    ids = [f"run_{i:02}_{chr(97 + i % 26)}" for i in range(30)]
    client = client_for(script=[e for i, r in enumerate(ids) for e in turn(r, f"q{i}", "a")])
    client.play()
    reads = recorded_reads(client)
    context = Recorder(client)
    for typed in ("run_03_d", "run_03"):
        await registry.run(context, f"/inspect {typed}")
        title, events = context.inspected[-1]
        assert title == "run run_03_d" and [e.prompt for e in events[:1]] == ["q3"]  # type: ignore[attr-defined]
        assert len(events) == 3 and context.notes[-1].startswith("text and thinking deltas")
    await registry.run(context, "/inspect run_0")
    assert context.last == "several runs begin with 'run_0': run_09_j, run_08_i, run_07_h, …"
    await registry.run(context, "/inspect run_nosuch")
    recent = ", ".join(ids[-5:])
    assert context.warned and context.last == f"no run 'run_nosuch'; recent runs: {recent}"
    assert all(r.get("limit") or (r.get("run_id") and r.get("before_seq")) for r in reads)


async def test_inspect_shows_the_first_events_of_a_long_run_and_says_where_it_stopped(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.commands import run_events

    monkeypatch.setattr(run_events, "MAX_SHOWN", 5)
    monkeypatch.setattr(run_events, "WINDOW", 3)
    ids: dict[str, Any] = {"run_id": "run_1", "call_id": "run_1", "agent": "moot"}
    deltas = [ev.TextDelta(**ids, text=f"{i} ") for i in range(4)]
    answers = [ev.ModelResponded(**ids, model="m", text=f"answer {i}") for i in range(6)]
    client = client_for(script=[*turn("run_1", "go", "done")[:1], *deltas, *answers])
    client.play()  # still running: 11 events so far
    context = Recorder(client)
    await registry.run(context, "/inspect")
    _, events = context.inspected[-1]
    assert [e.kind for e in events] == ["turn_started"] + ["model_responded"] * 4
    assert [e.seq for e in events] == [1, 6, 7, 8, 9]
    assert context.notes[-1] == (
        "the first 5 events of the run, to seq 9; it goes on to seq 11 (/export json has every "
        "event); text and thinking deltas left out (each model_responded holds the whole text)"
    )


# ---- !command ------------------------------------------------------------------------------------


def test_what_counts_as_a_shell_line() -> None:
    assert is_shell("!ls -la") and is_shell("  ! git status")
    assert not is_shell("!") and not is_shell("! ") and not is_shell("hi!")


async def test_a_shell_line_runs_bash_as_the_person_and_offers_its_output() -> None:
    client = client_for(tool_results={"bash": "a.txt\nb.txt\n"})
    context = Recorder(client)
    await run_shell(context, "!ls")
    assert client.ops == [ops.RunTool(tool="bash", arguments={"command": "ls"})]
    assert context.last == "```\na.txt\nb.txt\n```"
    ((text, label),) = context.offered
    assert label == "output of !ls"
    assert text == "I ran `ls`:\n```\na.txt\nb.txt\n```"


async def test_a_refused_shell_line_is_told_and_offers_nothing() -> None:
    client = client_for()
    del client.tool_results["bash"]
    context = Recorder(client)
    await run_shell(context, "!cat .env")
    assert context.warned and context.last.startswith("!cat .env: no tool 'bash'")
    assert context.offered == []


def test_completion_offers_the_sources_commands_too(registry: Registry) -> None:
    """An MCP server's prompts complete as moot's own commands do (in the app and the REPL)."""

    async def run(context: CommandContext, args: str) -> None: ...

    review = Command("mcp__good__review", "Review the code (MCP prompt)", run)

    class Prompts:
        def find(self, context: CommandContext, name: str) -> Command | None:
            return review if name == review.name else None

        def commands(self, context: CommandContext) -> list[Command]:
            return [review]

    registry.add_source(Prompts())
    context = Recorder(client_for())
    assert [c.name for c in registry.completions("mcp", context)] == ["mcp", "mcp__good__review"]
    assert [c.name for c in registry.completions("mcp")] == ["mcp"]  # no context: no sources


# ---- /panes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "asked"),
    [
        ("", []),
        ("trace", [("show", "trace", None)]),
        ("tools off", [("show", "tools", False)]),
        ("Trace ON", [("show", "trace", True)]),
        ("wider", [("widen", 1)]),
        ("narrower", [("widen", -1)]),
        ("width 60", [("width", 60)]),
        ("split 30%", [("split", 30)]),
        ("reset", [("reset",)]),
    ],
)
async def test_panes_asks_the_front_ends_panes_and_says_how_they_stand(
    registry: Registry, arguments: str, asked: list[tuple[object, ...]]
) -> None:
    context = Recorder(client_for())
    context.layout = PanesRecorder()
    await registry.run(context, f"/panes {arguments}")
    assert context.layout.asked == asked
    assert context.said == [("as they stand", False)]


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ("chat", "not understood; /panes [tools|trace [on|off] | wider | narrower | width N"),
        ("tools maybe", "not understood"),
        ("split", "not understood"),
        ("wider 3", "not understood"),
        ("width wide", "/panes width takes a whole number, not 'wide'"),
    ],
)
async def test_panes_with_what_it_does_not_take_says_what_would_work(
    registry: Registry, arguments: str, says: str
) -> None:
    context = Recorder(client_for())
    context.layout = PanesRecorder()
    await registry.run(context, f"/panes {arguments}")
    assert context.warned and says in context.last
    assert context.layout.asked == []


async def test_panes_where_there_are_none_says_so_and_completes_its_words(
    registry: Registry,
) -> None:
    """The plain REPL and editors have no panes: the front end's own words say where they
    are (`CommandContext.panes` raises), as `/theme` does without themes."""
    context = Recorder(client_for())
    await registry.run(context, "/panes trace on")
    assert context.said == [("no panes here", True)]
    command = registry.get("panes")
    assert command is not None and command.complete is not None
    assert command.complete(context, "tr") == ["trace", "trace on", "trace off"]
    assert command.complete(context, "w") == ["wider", "width"]
    assert command.complete(context, "tools o") == ["tools on", "tools off"]


# ---- /resume and /fork ---------------------------------------------------------------------------


def other_session(session_id: str, title: str, workspace: str = "/workspace") -> SessionSummary:
    from datetime import UTC, datetime

    when = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    return SessionSummary(id=session_id, title=title, workspace=workspace, created_at=when,
                          updated_at=when, turns=3, cost_usd=0.25, state="completed",
                          event_count=30)  # fmt: skip


async def test_resume_picks_among_this_workspaces_other_sessions(registry: Registry) -> None:
    others = [other_session("ses_a", "fix the parser"), other_session("ses_b", "write docs"),
              other_session("ses_c", "elsewhere", workspace="/other")]  # fmt: skip
    client = client_for(sessions=others)
    context = Recorder(client, picks=["ses_b", None])
    await registry.run(context, "/resume")
    labels = dict(context.choices[0])
    assert set(labels) == {"ses_a", "ses_b"}  # not this session, not another workspace's
    assert labels["ses_a"].startswith("fix the parser  ·  ")
    assert labels["ses_a"].endswith("3 turns  ·  $0.2500  ·  completed")
    assert context.opened == ["ses_b"]
    await registry.run(context, "/resume")  # cancelled: nothing opened
    assert context.opened == ["ses_b"]
    await registry.run(context, "/resume parser")  # one match: no picker
    assert context.opened == ["ses_b", "ses_a"]
    await registry.run(context, "/resume nothing like it")
    assert context.warned and "no other session here matches" in context.last


async def test_fork_asks_the_session_and_goes_on_in_the_fork(registry: Registry) -> None:
    client = client_for()
    context = Recorder(client)
    await registry.run(context, "/fork 12")
    assert client.forks == [12]
    assert context.opened == [f"{client.session_id}_fork1"]
    await registry.run(context, "/fork twelve")
    assert context.warned and client.forks == [12]


# ---- /msg ----------------------------------------------------------------------------------------


async def test_msg_sends_the_person_s_message_to_a_running_agent(registry: Registry) -> None:
    started = ev.TurnStarted(run_id="run_1", call_id="run_1", agent="moot", prompt="go")
    client = client_for(script=[started])
    client.play()  # the turn is open
    context = Recorder(client)
    await registry.run(context, "/msg moot also check the tests")
    assert client.ops == [ops.SendMessage(to="moot", text="also check the tests")]
    assert context.last == "message to moot (run_1): read at its next step"
    await registry.run(context, "/msg ghost hello")
    assert context.warned and "no running agent 'ghost'" in context.last
    await registry.run(context, "/msg moot")
    assert context.warned and "/msg AGENT TEXT" in context.last and len(client.ops) == 2


def test_the_readmes_table_names_every_built_in_command_and_only_those() -> None:
    """The README says its slash-command table is what the registry holds: keep it so."""
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Slash commands", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `/([a-z]+)`", table, flags=re.MULTILINE))
    assert listed == {c.name for c in builtin_commands().completions("")}


def test_a_table_wider_than_the_front_end_is_laid_out_as_a_list() -> None:
    """Issue 29, item 7: `/cost` and `/context` wrapped mid-row in a 72-column chat pane."""
    from moot.commands.cost import ledger_text
    from moot.frontend.table import fitted
    from moot.protocol.client import CostLine

    rows = [["model", "calls", "cost"], ["a/b", "3", "$0.0100"], ["total", "3", "$0.0100"]]
    assert (
        fitted(rows, width=80)
        == "model  calls     cost\na/b        3  $0.0100\ntotal      3  $0.0100"
    )
    line = CostLine(
        session_id="ses_1", model="anthropic/claude-sonnet-4-5", calls=12,
        input_tokens=1_234_567, output_tokens=45_678, cache_read_tokens=890_123,
        cache_write_tokens=4_567, cost_usd=12.3456,
    )  # fmt: skip
    wide = ledger_text([line], per_session=False)
    assert max(len(row) for row in wide.splitlines()) > 72
    narrow = ledger_text([line], per_session=False, width=72)
    assert all(len(row) <= 72 for row in narrow.splitlines()), narrow
    assert narrow.splitlines()[0] == "anthropic/claude-sonnet-4-5"
    assert "calls 12 · input 1,234,567 · output 45,678" in narrow
    assert "total" in narrow.splitlines()


async def test_context_wraps_a_details_words_under_its_row_when_narrow(
    registry: Registry,
) -> None:
    from moot.protocol.client import ContextPart, ContextReport

    detail = ", ".join(f"skill-number-{i}" for i in range(12))
    report = ContextReport(
        agent="moot", model="m", context_window=200_000,
        parts=(ContextPart("system prompt", 1000, detail), ContextPart("tools", 200, "")),
    )  # fmt: skip
    context = Recorder(client_for(context=report))
    context.columns = 60
    await registry.run(context, "/context")
    shown = context.said[-1][0].splitlines()
    assert all(len(line) <= 60 for line in shown), shown
    assert shown[1].strip().startswith("system prompt") and "skill-number-0" in shown[2]


async def test_a_unique_beginning_runs_its_command_and_a_shared_one_runs_none(
    registry: Registry,
) -> None:
    """Issue 29, item 8 (the REPL and every front end that sends what was typed): `/stat`
    runs `/status`; `/mod` (`/mode` or `/model`) runs neither and says so."""
    assert registry.resolve("/stat")[0].name == "status"
    client = client_for()
    context = Recorder(client)
    await registry.run(context, "/mod")
    assert context.said[-1] == ("/mod is the start of several commands: /mode, /model", True)
    assert client.ops == []


async def test_theme_marks_the_theme_in_use(registry: Registry) -> None:
    """Issue 29, item 10: `/theme` did not say which theme was in use."""
    context = Recorder(client_for(), picks=[None])
    await registry.run(context, "/theme")
    assert context.choices[-1] == [("dark", "dark  (now)")]

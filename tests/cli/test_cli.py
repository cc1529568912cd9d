"""`moot` end to end: real subprocesses, scripted models, a private MOOT_HOME per test.

What a script or CI job relies on: the answer on stdout, one JSON object or one event per line,
exit codes (0 completed, 1 stopped or failed, 2 usage error, 130 interrupted), and sessions that
can be continued, listed, shown and exported afterwards.
"""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from model_server import ModelServer, Reply
from moot._version import __version__
from moot.protocol import events as ev
from moot.protocol.states import RunState, StopReason
from moot_cli import TIMEOUT, RunMoot, moot_command, moot_env

FIXTURES = Path(__file__).parents[1] / "fixtures"
THREE_TURNS = FIXTURES / "three_turns.yaml"
ANSWER = "The repository has 3 files."


def script(tmp_path: Path, turns: list[object], name: str = "script.json") -> str:
    """Write a bare-list script and return its `--model` value."""
    path = tmp_path / name
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def parse_stream(stdout: str) -> list[ev.Event]:
    return [ev.event_from_json(line) for line in stdout.splitlines()]


def assert_usage_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("moot: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


# ---- one scripted three-turn task, in each output format ------------------------------------


@dataclass(frozen=True)
class FinishedSession:
    """The three-turn task run once with `--output-format events`, shared by the read-only
    tests below."""

    home: Path
    stdout: str
    session_id: str

    def moot(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            moot_command(*args),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=moot_env(self.home),
            timeout=TIMEOUT,
        )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> FinishedSession:
    home = tmp_path_factory.mktemp("home")
    result = subprocess.run(
        moot_command(
            "-p",
            "how many files?",
            "--model",
            f"scripted:{THREE_TURNS}",
            "--output-format",
            "events",
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=moot_env(home),
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout.splitlines()[0])["session_id"]
    return FinishedSession(home, result.stdout, session_id)


def test_text_prints_only_the_answer(moot: RunMoot) -> None:
    result = moot("-p", "how many files?", "--model", f"scripted:{THREE_TURNS}")

    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    assert result.stderr == ""


def test_json_prints_one_result_object(moot: RunMoot) -> None:
    result = moot(
        "-p", "how many files?", "--model", f"scripted:{THREE_TURNS}", "--output-format", "json"
    )

    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    moots_own = {"run_id", "state", "stop_reason", "output", "turns", "cost_usd", "error"}
    claude_codes = {"type", "subtype", "is_error", "num_turns", "duration_ms", "duration_api_ms"}
    claude_codes |= {"total_cost_usd", "usage", "result", "session_id", "structured_output"}
    claude_codes |= {"permission_denials", "errors", "uuid", "modelUsage"}
    assert set(body) == moots_own | claude_codes
    assert (body["type"], body["subtype"], body["is_error"]) == ("result", "success", False)
    assert (body["result"], body["num_turns"]) == (ANSWER, 3)
    assert body["total_cost_usd"] == pytest.approx(0.003)
    assert body["usage"]["cache_read_input_tokens"] == 0
    assert 0 <= body["duration_api_ms"] <= body["duration_ms"]
    assert body["structured_output"] is None
    assert body["session_id"].startswith("ses_")
    assert body["run_id"].startswith("run_")
    assert (body["state"], body["stop_reason"]) == ("completed", "completed")
    assert body["output"] == ANSWER
    assert body["turns"] == 3
    assert body["usage"]["input_tokens"] == 300
    assert body["usage"]["output_tokens"] == 35
    assert body["cost_usd"] == pytest.approx(0.003)
    assert isinstance(body["duration_ms"], float)
    assert body["duration_ms"] >= 0
    assert body["error"] is None


def test_events_is_the_session_log_one_event_per_line(finished: FinishedSession) -> None:
    events = parse_stream(finished.stdout)

    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[0], ev.TurnStarted)
    assert events[0].prompt == "how many files?"
    assert isinstance(events[-1], ev.TurnFinished)
    assert events[-1].state is RunState.COMPLETED
    assert events[-1].output == ANSWER
    assert {e.session_id for e in events} == {finished.session_id}
    kinds = [e.kind for e in events]
    assert kinds.count("model_responded") == 3
    for kind in ("thinking_delta", "agent_called", "agent_returned", "tool_finished"):
        assert kind in kinds
    # Events are stored before they are delivered: what streamed is exactly what was logged.
    exported = json.loads(
        finished.moot("sessions", "export", finished.session_id, "--format", "json").stdout
    )
    assert [ev.event_from_dict(e) for e in exported["events"]] == events


# ---- runs that do not complete ----------------------------------------------------------------


def test_max_turns_stops_the_run_with_exit_1(moot: RunMoot) -> None:
    result = moot(
        "-p",
        "how many files?",
        "--model",
        f"scripted:{THREE_TURNS}",
        "--max-turns",
        "1",
        "--output-format",
        "json",
    )

    assert result.returncode == 1
    body = json.loads(result.stdout)
    assert (body["state"], body["stop_reason"]) == ("stopped", "max_turns")
    assert body["error"] == "took 1 of 1 turns"
    assert body["turns"] == 1
    assert "max_turns" in result.stderr
    assert body["session_id"] in result.stderr


@pytest.mark.parametrize(
    ("turn", "stdout"),
    [
        pytest.param({"error": "boom"}, "", id="before any text"),
        pytest.param(
            {"text": "half an answer", "error": "boom"}, "half an answer\n", id="mid-text"
        ),
    ],
)
def test_provider_error_fails_the_run_with_exit_1(
    moot: RunMoot, tmp_path: Path, turn: dict[str, str], stdout: str
) -> None:
    result = moot("-p", "go", "--model", script(tmp_path, [turn]))

    assert result.returncode == 1
    assert result.stdout == stdout
    assert "failed" in result.stderr
    assert "provider_error" in result.stderr
    assert "boom" in result.stderr


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_provider_that_gives_up_fails_the_run_with_its_message(
    moot: RunMoot, output_format: str
) -> None:
    key = "sk-ant-api03-cli-test-Zx9vK2mQ7pL4nR8sT1wY6uE3oI5aS0dFgH2jK4lM6nP8"
    overloaded = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    # The server stays overloaded; `retry-after-ms` keeps the provider's waits short.
    reply = Reply(529, overloaded, headers={"retry-after-ms": "1"}, content_type="application/json")
    with ModelServer() as server:
        server.reply(*[reply] * 20)
        result = moot(
            "-p", "go", "--model", "anthropic/claude-haiku-4-5", "--output-format", output_format,
            env={"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": key},
        )  # fmt: skip
        requests = len(server.requests)

    message = "anthropic/claude-haiku-4-5 (HTTP 529): Overloaded (after 4 tries)"
    assert result.returncode == 1
    assert requests == 4  # the provider's own tries; the loop does not ask again
    assert f"moot: run failed (provider_error: {message}); session ses_" in result.stderr
    if output_format == "json":
        body = json.loads(result.stdout)
        assert (body["state"], body["stop_reason"]) == ("failed", "provider_error")
        assert body["error"] == message
    else:
        assert result.stdout == ""
    assert key not in result.stdout + result.stderr
    assert key[: len(key) // 2] not in result.stdout + result.stderr


# ---- usage errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        pytest.param(["--bogus"], ["unrecognized arguments: --bogus"], id="unknown option"),
        pytest.param(
            ["-p", "go", "--model", "MODEL", "--output-format", "xml"],
            ["--output-format", "invalid choice: 'xml'"],
            id="bad output format",
        ),
        pytest.param(
            ["-p", "go", "--model", "MODEL", "--max-turns", "0"],
            ["--max-turns", "at least 1"],
            id="max-turns 0",
        ),
        pytest.param(
            ["-p", "go", "--model", "MODEL", "--max-turns", "abc"],
            ["--max-turns", "'abc' is not a whole number"],
            id="max-turns abc",
        ),
        pytest.param(["-p", "go"], ["no model", "--model", "MOOT_MODEL"], id="no model"),
        pytest.param(
            ["-p", "go", "--model", "gpt-5"],
            ["model 'gpt-5' should look like provider/model"],
            id="unknown model",
        ),
        pytest.param(
            ["-p", "go", "--model", "scripted:missing.yaml"],
            ["cannot read script missing.yaml"],
            id="missing script",
        ),
        pytest.param(["-p", "  ", "--model", "MODEL"], ["empty"], id="empty task"),
        pytest.param(
            ["-p", "go", "--model", "MODEL", "--resume", "ses_unknown"],
            ["no session 'ses_unknown'"],
            id="resume unknown session with -p",
        ),
        pytest.param(
            ["--resume", "ses_unknown", "--model", "MODEL"],
            ["no session 'ses_unknown'"],
            id="resume unknown session",
        ),
        pytest.param(["--resume", ""], ["no model"], id="resume empty id, no model"),
        pytest.param(["--resume", "", "--model", "MODEL"], ["no session ''"], id="resume empty id"),
        pytest.param(["sessions", "show", "ses_unknown"], ["no session 'ses_unknown'"], id="show"),
        pytest.param(["sessions", "export", "ses_x", "--format", "pdf"], ["pdf"], id="format"),
        pytest.param([], ["moot -p"], id="no task"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    moot: RunMoot, tmp_path: Path, args: list[str], fragments: list[str]
) -> None:
    model = script(tmp_path, ["unused"])
    result = moot(*(model if a == "MODEL" else a for a in args))

    assert_usage_error(result, *fragments)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param("a: [b\n", "not valid YAML", id="yaml syntax"),
        pytest.param("foo: 1\n", "needs a list of turns", id="no turns"),
        pytest.param("turns: hello\n", "`turns:` must be a list", id="turns not a list"),
        pytest.param("[{text: hi, bogus: 1}]\n", "bogus", id="unknown turn field"),
    ],
)
def test_a_broken_script_is_a_usage_error_naming_the_file(
    moot: RunMoot, tmp_path: Path, content: str, fragment: str
) -> None:
    (tmp_path / "broken.yaml").write_text(content, encoding="utf-8")

    result = moot("-p", "go", "--model", "scripted:broken.yaml")

    assert_usage_error(result, "script broken.yaml", fragment)
    assert not (tmp_path / "home" / "data" / "sessions.db").exists()


def test_moot_model_is_the_default_model(moot: RunMoot, tmp_path: Path) -> None:
    result = moot("-p", "go", env={"MOOT_MODEL": script(tmp_path, ["from the env"])})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "from the env\n"


# ---- version, help, stdin ------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(moot: RunMoot, flag: str) -> None:
    result = moot(flag)

    assert (result.returncode, result.stdout, result.stderr) == (0, f"moot {__version__}\n", "")


def test_version_through_the_installed_script(tmp_path: Path) -> None:
    executable = Path(sys.executable).with_name("moot")
    if not executable.exists():
        pytest.skip("no `moot` script next to this interpreter")

    result = subprocess.run(
        [str(executable), "--version"],
        capture_output=True,
        text=True,
        env=moot_env(tmp_path),
        timeout=TIMEOUT,
    )

    assert (result.returncode, result.stdout) == (0, f"moot {__version__}\n")


def test_help_mentions_the_headless_flag(moot: RunMoot) -> None:
    result = moot("--help")

    assert result.returncode == 0
    for text in ("-p [TASK]", "--output-format", "--resume", "sessions"):
        assert text in result.stdout


def test_dash_reads_the_task_from_stdin(moot: RunMoot, tmp_path: Path) -> None:
    task = "fix the failing test\nin tests/test_x.py\n"

    result = moot(
        "-p", "-", "--model", script(tmp_path, ["ok"]), "--output-format", "events", stdin=task
    )

    assert result.returncode == 0, result.stderr
    first = parse_stream(result.stdout)[0]
    assert isinstance(first, ev.TurnStarted)
    assert first.prompt == task


# ---- continuing a session --------------------------------------------------------------------


def test_resume_with_a_task_adds_a_turn_to_the_same_session(moot: RunMoot, tmp_path: Path) -> None:
    model = script(tmp_path, ["first answer", "second answer"])
    first = moot("-p", "first task", "--model", model, "--output-format", "events")
    first_events = parse_stream(first.stdout)
    session_id = first_events[0].session_id

    second = moot(
        "-p",
        "second task",
        "--model",
        model,
        "--resume",
        session_id,
        "--output-format",
        "events",
    )

    assert second.returncode == 0, second.stderr
    events = parse_stream(second.stdout)
    assert {e.session_id for e in events} == {session_id}
    # Right after the first sitting's events and this one's `session_resumed`.
    assert events[0].seq == first_events[-1].seq + 2
    assert isinstance(events[-1], ev.TurnFinished)
    # The script continues where the log ends instead of replaying its first turn.
    assert events[-1].output == "second answer"
    exported = json.loads(moot("sessions", "export", session_id, "--format", "json").stdout)
    starts = [e for e in exported["events"] if e["kind"] == "turn_started"]
    assert [e["prompt"] for e in starts] == ["first task", "second task"]
    assert len({e["run_id"] for e in starts}) == 2


def test_resume_without_a_task_needs_an_unfinished_run(moot: RunMoot, tmp_path: Path) -> None:
    model = script(tmp_path, ["done"])
    first = moot("-p", "go", "--model", model, "--output-format", "json")
    session_id = json.loads(first.stdout)["session_id"]

    result = moot("--resume", session_id, "--model", model)

    assert_usage_error(result, "no unfinished run", session_id)


# ---- processes that are interrupted or killed -------------------------------------------------


class LineReader:
    """Reads a pipe on a thread so the test can wait for a line with a timeout."""

    def __init__(self, pipe: IO[str] | None) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self._thread.start()

    def _pump(self, pipe: IO[str] | None) -> None:
        assert pipe is not None
        for line in pipe:
            self._lines.put(line)

    def next_line(self, timeout: float = TIMEOUT) -> str:
        return self._lines.get(timeout=timeout)

    def rest(self) -> list[str]:
        self._thread.join(TIMEOUT)
        lines = []
        while not self._lines.empty():
            lines.append(self._lines.get_nowait())
        return lines


def slow_run(
    tmp_path: Path, *, delay: float
) -> AbstractContextManager[tuple[subprocess.Popen[str], LineReader]]:
    """A headless `events` run whose one model turn waits `delay` seconds first."""
    return streaming_run(tmp_path, [{"text": "slow answer", "delay": delay}], name="slow.json")


@contextmanager
def streaming_run(
    tmp_path: Path, turns: list[object], *, name: str
) -> Iterator[tuple[subprocess.Popen[str], LineReader]]:
    """A headless `events` run of the scripted `turns`; killed when the block ends."""
    model = script(tmp_path, turns, name=name)
    process = subprocess.Popen(
        moot_command("-p", "go", "--model", model, "--output-format", "events"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=moot_env(tmp_path / "home"),
    )
    reader = LineReader(process.stdout)
    try:
        yield process, reader
    finally:
        process.kill()
        process.wait()
        reader.rest()
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]


def test_sigint_cancels_the_run_and_exits_130(tmp_path: Path) -> None:
    with slow_run(tmp_path, delay=30) as (process, reader):
        first = ev.event_from_json(reader.next_line())
        assert isinstance(first, ev.TurnStarted)

        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=TIMEOUT)
        stderr = process.stderr.read()  # type: ignore[union-attr]
        events = [first, *(ev.event_from_json(line) for line in reader.rest())]

    assert code == 130, stderr
    last = events[-1]
    assert isinstance(last, ev.TurnFinished)
    assert (last.state, last.stop_reason) == (RunState.CANCELLED, StopReason.USER_CANCELLED)
    assert not any(isinstance(e, ev.ModelResponded) for e in events)
    assert "cancelled" in stderr


def test_a_killed_run_is_finished_by_resume(moot: RunMoot, tmp_path: Path) -> None:
    # The model takes 1.5 s; the process is killed as soon as the turn has started.
    with slow_run(tmp_path, delay=1.5) as (_, reader):
        session_id = ev.event_from_json(reader.next_line()).session_id
    model = f"scripted:{tmp_path / 'slow.json'}"
    log = json.loads(moot("sessions", "export", session_id, "--format", "json").stdout)
    assert log["events"][-1]["kind"] != "turn_finished", "the kill came after the run ended"

    refused = moot("-p", "another task", "--model", model, "--resume", session_id)
    resumed = moot("--resume", session_id, "--model", model, "--output-format", "events")

    assert_usage_error(refused, "unfinished run", f"moot --resume {session_id}")
    assert resumed.returncode == 0, resumed.stderr
    events = parse_stream(resumed.stdout)
    assert isinstance(events[0], ev.RunResumed)
    after = json.loads(moot("sessions", "export", session_id, "--format", "json").stdout)
    later = after["events"][len(log["events"]) :]
    # Each opening is a sitting, the refused one's too; then the run goes on where it was.
    assert [e["kind"] for e in later[:3]] == ["session_resumed", "session_resumed", "run_resumed"]
    assert events[0].seq == later[2]["seq"] == len(log["events"]) + 3
    assert isinstance(events[-1], ev.TurnFinished)
    assert events[-1].output == "slow answer"


def test_a_reader_that_goes_away_ends_the_run_without_a_traceback(
    moot: RunMoot, tmp_path: Path
) -> None:
    """`moot -p ... --output-format events | head -1`: exit 1 and a one-line message."""
    model = script(tmp_path, [{"text": "late", "delay": 1}])
    with subprocess.Popen(
        moot_command("-p", "go", "--model", model, "--output-format", "events"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=moot_env(tmp_path / "home"),
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        assert ready, "no output"
        first = ev.event_from_json(process.stdout.readline())
        process.stdout.close()  # like `head -1`: the next event written hits a closed pipe

        code = process.wait(timeout=TIMEOUT)
        stderr = process.stderr.read().decode()

    assert code == 1, stderr
    assert stderr == f"moot: output closed early; session {first.session_id}\n"
    log = json.loads(moot("sessions", "export", first.session_id, "--format", "json").stdout)
    assert log["events"][-1]["kind"] == "turn_finished"  # the log is whole all the same


# ---- sessions list | show | export -----------------------------------------------------------


def test_sessions_list_shows_the_session(finished: FinishedSession) -> None:
    result = finished.moot("sessions", "list")

    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    assert line.startswith(finished.session_id)
    assert "completed" in line
    assert line.endswith("how many files?")


def test_sessions_list_when_there_are_none(moot: RunMoot) -> None:
    result = moot("sessions", "list")

    assert (result.returncode, result.stdout) == (0, "no sessions yet\n")


@pytest.mark.parametrize("args", [["show"], ["export"], ["export", "--format", "md"]])
def test_sessions_show_and_markdown_export(finished: FinishedSession, args: list[str]) -> None:
    command, *options = args
    result = finished.moot("sessions", command, finished.session_id, *options)

    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("# how many files?\n")
    assert finished.session_id in text
    assert "> how many files?" in text
    assert "How many files are there?" in text  # the peer call
    assert "There are 3 files." in text  # the peer's answer
    assert ANSWER in text
    assert "turn completed (completed): 3 turns" in text


def test_sessions_json_export(finished: FinishedSession) -> None:
    result = finished.moot("sessions", "export", finished.session_id, "--format", "json")

    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert set(body) == {"session", "events"}
    assert body["session"]["id"] == finished.session_id
    assert body["session"]["title"] == "how many files?"
    kinds = [e["kind"] for e in body["events"]]
    assert (kinds[0], kinds[-1]) == ("turn_started", "turn_finished")


def test_an_interrupted_run_is_not_blamed_on_a_peers_earlier_error(tmp_path: Path) -> None:
    """Why the turn ended is the person's interrupt, not an error the run already got past."""
    ask_peer = {"name": "call_agent", "arguments": {"agent_name": "moot", "message": "help"}}
    turns = [
        {"tool_calls": [ask_peer]},
        {"error": "upstream 503 from the peer's model"},
        {"text": "still thinking", "delay": 30},
    ]
    with streaming_run(tmp_path, turns, name="peer.json") as (process, reader):
        while not isinstance(ev.event_from_json(reader.next_line()), ev.ToolFinished):
            continue  # the peer failed and its caller got the tool result; now it waits
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=TIMEOUT) == 130
        stderr = process.stderr.read()  # type: ignore[union-attr]

    assert "run cancelled (user_cancelled); session" in stderr
    assert "upstream 503" not in stderr


def test_the_workspace_never_widens_to_a_home_repository_or_someone_elses_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dotfiles repository in `~` does not make a project folder under it the whole home;
    a `.git` another user planted above the start (in `/tmp`, say) is passed over."""
    from moot.paths import workspace_root

    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "scratch" / "deep").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert workspace_root(home / "scratch" / "deep") == (home / "scratch" / "deep").resolve()
    assert workspace_root(home) == home.resolve()  # started in ~ itself: its repository

    shared = tmp_path / "shared"
    (shared / "project").mkdir(parents=True)
    (shared / ".git").mkdir()
    assert workspace_root(shared / "project") == shared.resolve()  # ours: the git root
    if os.geteuid() != 0:
        pytest.skip("giving the .git to another user needs root (CI runs this as root)")
    os.chown(shared / ".git", 65534, 65534)
    assert workspace_root(shared / "project") == (shared / "project").resolve()


def test_moot_in_a_subdirectory_works_in_the_whole_repository(tmp_path: Path) -> None:
    """The workspace is the git root (found without running git), not the directory moot
    was started in; outside a repository it is that directory."""
    from moot.paths import workspace_root

    repo = tmp_path / "repo"
    (repo / "src/deep").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "top.txt").write_text("from the top\n")
    linked = tmp_path / "linked"
    (linked / "sub").mkdir(parents=True)
    (linked / ".git").write_text("gitdir: /elsewhere/.git/worktrees/linked\n")
    assert workspace_root(repo / "src/deep") == repo.resolve()
    assert workspace_root(linked / "sub") == linked.resolve()
    assert workspace_root(tmp_path) == tmp_path.resolve()

    model = script(
        tmp_path,
        [{"tool_calls": [{"name": "read", "arguments": {"path": "top.txt"}}]}, {"text": "ok"}],
    )
    done = subprocess.run(
        moot_command("-p", "read it", "--model", model, "--output-format", "events"),
        cwd=repo / "src/deep",
        env={**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    (read,) = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert "from the top" in read.content and not read.is_error
    # The session belongs to the repository: listed from its root, continued from anywhere in it.
    listed = subprocess.run(
        moot_command("sessions", "list"),
        cwd=repo,
        env=moot_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert events[0].session_id in listed.stdout


def test_headless_an_agent_never_waits_for_a_message_from_the_person(
    moot: RunMoot, tmp_path: Path
) -> None:
    # Nobody can message an agent of `moot -p`: asked to wait 300 s for one, it goes on at once.
    wait = {"tool_calls": [{"name": "get_messages", "arguments": {"wait_seconds": 300}}]}
    model = script(tmp_path, [wait, "went on"])

    result = moot("-p", "wait for me", "--model", model, "--output-format", "events")

    assert result.returncode == 0, result.stderr
    events = parse_stream(result.stdout)
    (finished,) = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert finished.tool == "get_messages" and not finished.is_error
    assert finished.content.startswith("Nothing can message you here")
    assert not [e for e in events if isinstance(e, ev.WaitingForMessage)]


def test_headless_shows_an_agents_message_to_the_person_on_stderr(
    moot: RunMoot, tmp_path: Path
) -> None:
    say = {
        "tool_calls": [
            {"name": "send_message", "arguments": {"task_id": "user", "message": "halfway"}}
        ]
    }
    model = script(tmp_path, [say, "done"])

    result = moot("-p", "go", "--model", model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert "moot: message from moot: halfway" in result.stderr


def test_a_turn_the_session_refuses_ends_moot_p_with_its_reason(
    moot: RunMoot, tmp_path: Path
) -> None:
    """Fails on the old code: `moot -p /quick`, a command whose model cannot be used, was
    answered by `op_refused` and moot waited for a `turn_finished` that never came."""
    (tmp_path / ".moot/commands").mkdir(parents=True)
    (tmp_path / ".moot/commands/quick.md").write_text("---\nmodel: nosuch/model\n---\nx\n")

    result = moot("-p", "/quick", "--model", script(tmp_path, ["never asked"]))

    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("moot: /quick names model 'nosuch/model': ")
    assert "; session ses_" in line

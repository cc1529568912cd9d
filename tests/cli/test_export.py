"""Exports: markdown, JSON and HTML of a real session, and never a key in any of them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import wire_builders
from model_server import ModelServer, Reply
from trusted import trust_settings

MODEL = "anthropic/claude-haiku-4-5"
SHELL_KEY = "sk-ant-PLANTED-in-the-environment-0123456789"
SETTINGS_KEY = "sk-openai-PLANTED-in-the-settings-9876543210"
GITHUB_TOKEN = "ghp_PLANTEDgithubtoken0123456789"
SERVICE_TOKEN = "tok_PLANTED_service_abcdef"


def moot(work: Path, home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MOOT_"))}
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        cwd=work,
        env={**clean, "MOOT_HOME": str(home), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_export_holds_a_key_planted_in_the_environment_or_the_settings(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    (work / ".moot").mkdir(parents=True)
    (work / "notes.txt").write_text("old line\n")
    with ModelServer() as server:
        settings = {
            "sandbox": "none",
            "env": {"OPENAI_API_KEY": SETTINGS_KEY, "ANTHROPIC_BASE_URL": server.url},
        }
        (work / ".moot" / "settings.json").write_text(json.dumps(settings))
        trust_settings(work, home)
        build = wire_builders.anthropic
        # The model tries to read the keys from a command, then edits a file (a diff).
        echo = {"command": "echo $ANTHROPIC_API_KEY $OPENAI_API_KEY; env"}
        server.reply(
            Reply(body=build(call=("bash", echo), n=1)),
            Reply(body=build(call=("read", {"path": "notes.txt"}), n=2)),
            Reply(body=build(call=("edit", {"path": "notes.txt", "old": "old line",
                                            "new": "new line"}), n=3)),
            Reply(body=build(text="Edited <b>notes</b>.", n=4)),
        )  # fmt: skip
        run = moot(
            work, home, {"ANTHROPIC_API_KEY": SHELL_KEY},
            "-p", "look around", "--model", MODEL, "--output-format", "json",
            "--allowedTools", "Bash,Edit",
        )  # fmt: skip
        headers = [r.headers.get("x-api-key") for r in server.requests]
    assert run.returncode == 0, run.stderr
    assert headers and set(headers) == {SHELL_KEY}  # the key was really in use
    session = json.loads(run.stdout)["session_id"]

    exports = {}
    for kind in ("md", "json", "html"):
        done = moot(work, home, {}, "sessions", "export", session, "--format", kind)
        assert done.returncode == 0, done.stderr
        exports[kind] = done.stdout
    for kind, text in exports.items():
        assert SHELL_KEY not in text and SETTINGS_KEY not in text, kind
        assert "PLANTED" not in text, kind
    # Nor is it anywhere in the store the exports are made from.
    for stored in home.rglob("*"):
        if stored.is_file():
            assert b"PLANTED" not in stored.read_bytes(), stored

    events = json.loads(exports["json"])["events"]
    assert events[0]["kind"] == "turn_started"
    md = exports["md"]
    assert "```diff" in md and "+new line" in md and "calls `edit`" in md
    page = exports["html"]
    assert page.startswith("<!doctype html>") and "<details" in page
    assert "Edited &lt;b&gt;notes&lt;/b&gt;." in page  # the model's text is escaped
    assert '<span class="add">+new line</span>' in page
    # Self-contained: no script, no stylesheet or image fetched from anywhere.
    assert not re.search(r"<script|<link|<img|<iframe|src=|href=|@import|url\(", page)


READ_KEYS_SCRIPT = """\
turns:
  - tool_calls:
      - {name: read, arguments: {path: keys.txt}}
  - text: "The file holds two keys."
"""


def test_a_key_that_came_into_the_log_from_a_file_is_blanked_in_every_export(
    tmp_path: Path,
) -> None:
    """moot writes no key to the log, but a tool may read one (a `.env`, a config file), and
    that result is stored as it was. Every export blanks the keys moot knows of: the
    process's provider variables and the workspace settings' `env`, whichever front end
    asks (`moot sessions export` here, `/export` through the same client query)."""
    work, home = tmp_path / "work", tmp_path / "home"
    (work / ".moot").mkdir(parents=True)
    (work / "keys.txt").write_text(
        f"ANTHROPIC_API_KEY={SHELL_KEY}\nOPENAI={SETTINGS_KEY}\n"
        f"GH={GITHUB_TOKEN}\nSERVICE={SERVICE_TOKEN}\n"
    )
    # Keys of services other than the model's count too: any variable named like a secret.
    secrets = {"OPENAI_API_KEY": SETTINGS_KEY, "MY_SERVICE_TOKEN": SERVICE_TOKEN}
    (work / ".moot" / "settings.json").write_text(json.dumps({"env": secrets}))
    trust_settings(work, home)
    script = tmp_path / "read-keys.yaml"
    script.write_text(READ_KEYS_SCRIPT)
    env = {"ANTHROPIC_API_KEY": SHELL_KEY, "GITHUB_TOKEN": GITHUB_TOKEN}
    run = moot(
        work, home, env, "-p", "what is in keys.txt", "--model", f"scripted:{script}",
        "--output-format", "json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    session = json.loads(run.stdout)["session_id"]
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert SHELL_KEY.encode() in stored  # the tool's result holds the file as it was

    for kind in ("md", "json", "html"):
        done = moot(work, home, env, "sessions", "export", session, "--format", kind)
        assert done.returncode == 0, done.stderr
        assert "PLANTED" not in done.stdout, kind
        assert "[redacted key]" in done.stdout, kind
    assert "keys.txt" in done.stdout  # the rest of the transcript is there


def test_a_variable_is_taken_for_a_secret_by_the_words_of_its_name() -> None:
    from moot.providers.credentials import known_keys, secret_named

    for name in ("GITHUB_TOKEN", "MY_SERVICE_KEY", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
                 "npm-auth-token", "HF_TOKEN"):  # fmt: skip
        assert secret_named(name), name
    for name in ("KEYMAP", "PASSAGE", "PATH", "HOME", "MONKEY", "TOKENIZERS_PARALLELISM_X"):
        assert not secret_named(name), name
    env = {"PATH": "/usr/local/bin:/usr/bin", "DEPLOY_TOKEN": " d3pl0y-t0k3n-long \n", "PAT": "x"}
    assert known_keys(env, key_file=False) == {"d3pl0y-t0k3n-long"}  # trimmed; short ones left


def test_a_tool_output_holding_a_fence_cannot_end_the_markdown_blocks_around_it() -> None:
    """A tool's output (a README read, a `git diff` of markdown) often holds code fences and
    backticks: the transcript's fences and inline code outlast them, so what follows a result
    is still prose, and where each sitting and fork began shows in md and html alike."""
    from markdown_it import MarkdownIt

    from moot.frontend.transcript import html_blocks, markdown
    from moot.protocol import events as ev
    from moot.protocol.messages import ToolCall

    ids = {"session_id": "s", "run_id": "r", "call_id": "c", "agent": "moot"}
    said = {**ids, "model": "openai/gpt-5"}
    doc = "# Build\n\n```sh\nmake\n```\n\nand ````` five ticks"
    events = [
        ev.SessionForked(session_id="s", source="ses_original", at=7),
        ev.SessionResumed(session_id="s", model="openai/gpt-5", mode="plan"),
        ev.ModelResponded(
            **said, text="", tool_calls=(ToolCall(id="t", name="bash", arguments={"c": "``x``"}),)
        ),
        ev.ToolFinished(**ids, tool_call_id="t", tool="bash", content=doc),
        ev.ModelResponded(**said, text="The doc says run **make**."),
    ]
    md = "\n\n".join(markdown(events))
    tokens = MarkdownIt().parse(md)
    fences = [t.content for t in tokens if t.type == "fence"]
    assert fences == [doc + "\n"]  # the output whole, in one block
    inline = "".join(t.content for t in tokens if t.type == "inline")
    assert "The doc says run **make**." in inline  # prose, not code
    assert '{"c": "``x``"}' in md and "forked from ses_original at event 7" in md
    assert "resumed · openai/gpt-5 · plan" in md
    page = "".join(html_blocks(events))
    assert "forked from ses_original at event 7" in page and "resumed · openai/gpt-5" in page


def test_an_answer_cut_off_before_it_came_shows_what_had_streamed() -> None:
    """Interrupted mid-answer, a call has deltas but no `model_responded`: the transcript (an
    export, `moot sessions show`, the scrollback the app leaves) shows what had streamed, once;
    a whole answer shows once too, from its `model_responded`."""
    from moot.frontend.transcript import markdown
    from moot.protocol.states import RunState
    from tui_scripts import Run

    whole = Run().start("one").text("All of it.").responded("All of it.").finish("done").events
    cut = Run("run_2").start("two").text("Half of an ans", pieces=3)
    cut.finish("", RunState.CANCELLED)
    blocks = list(markdown([*whole, *cut.events]))
    assert sum("All of it." in b for b in blocks) == 1
    assert "**moot** (cut off):\n\nHalf of an ans" in blocks


def test_an_attachments_data_cannot_break_out_of_the_html_pages_img() -> None:
    """An MCP server's image block is any string, kept as it came when it is not base64: in
    the HTML export it stays inside the `src` attribute, so the page still runs no script."""
    from moot.frontend.transcript import html_blocks
    from moot.protocol import events as ev
    from moot.protocol.messages import Attachment

    ids = {"session_id": "s", "run_id": "r", "call_id": "c", "agent": "moot"}
    hostile = Attachment(
        mime_type="image/png", data='x" onerror="alert(1)"><script>alert(2)</script'
    )
    events = [
        ev.ToolFinished(**ids, tool_call_id="t", tool="mcp", content="", attachments=(hostile,))
    ]
    page = "".join(html_blocks(events))
    assert "<script" not in page and '" onerror=' not in page

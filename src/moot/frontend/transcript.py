"""A session's log as a readable transcript: markdown (`moot sessions show`, `export --format
md`), JSON (the events) and a self-contained HTML page (`export --format html`, `/export html`).

Secrets never reach an export. moot puts no key in the log: keys travel only in request
headers, errors blank them, and commands run without them. A key can still come in from
outside (a tool reads a `.env`, the person pastes one), so `render` blanks every key it is
given wherever it shows up; the client's queries give it the keys moot knows of (the
providers' variables, the settings' `env`, the key file). `tests/cli/test_export.py` plants keys
both ways and checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from moot.frontend.attachment_files import (
    FileNames,
    attachments_of,
    folder_of,
    html_inline,
    markdown_link,
)
from moot.protocol import events as ev
from moot.protocol.client import SessionSummary

_CLIP = 2000
KINDS = ("md", "json", "html")
REDACTED = "[redacted key]"


def _clip(text: str) -> str:
    if len(text) <= _CLIP:
        return text
    return text[:_CLIP] + f"\n… ({len(text) - _CLIP} more characters)"


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def _fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it (CommonMark: a fence
    closes only on at least as many), so a tool's output holding a fence cannot end it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _code(text: str) -> str:
    """`text` as inline code, its delimiters longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _sitting(e: ev.SessionResumed | ev.SessionForked) -> str:
    """Where a sitting or a fork begins, in words."""
    if isinstance(e, ev.SessionForked):
        return f"forked from {e.source} at event {e.at}"
    return f"resumed · {e.model} · {e.mode or 'no modes'}"


def markdown(events: Iterable[ev.Event], folder: str | None = None) -> Iterator[str]:
    """Markdown blocks, one per event that a reader cares about. Deltas are left out (the
    answer they made is in `model_responded`), but for an answer cut off before it came
    (interrupted, or the process ended): what had streamed shows where its call ended.
    Attachments link to their files in `folder` (`attachment_files`), else are described."""
    streamed: dict[str, list[str]] = {}
    names = FileNames()
    for e in events:
        who = f"**{e.agent}**"
        if isinstance(e, ev.AgentReturned | ev.TurnFinished) and (
            cut := "".join(streamed.pop(e.call_id, ()))
        ):
            yield f"{who} (cut off):\n\n{cut}"
        match e:
            case ev.TextDelta():
                streamed.setdefault(e.call_id, []).append(e.text)
            case ev.TurnStarted():
                yield f"### user → {e.agent}\n\n{_quote(e.prompt)}"
                for file in e.files:
                    note = f" ({file.note})" if file.note else ""
                    yield f"*attached `{file.path}`{note}*"
            case ev.AgentCalled():
                yield f"#### {e.caller} → {e.agent} (depth {e.depth})\n\n{_quote(e.message)}"
            case ev.ModelResponded():
                streamed.pop(e.call_id, None)
                if e.text:
                    yield f"{who}:\n\n{e.text}"
                for call in e.tool_calls:
                    args = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
                    yield f"{who} calls `{call.name}` {_code(_clip(args))}"
            case ev.ToolFinished():
                mark = " (error)" if e.is_error else ""
                yield f"`{e.tool}` result{mark}:\n\n{_fenced(_clip(e.content))}"
                if isinstance(diff := e.display.get("diff"), str) and diff:
                    yield _fenced(_clip(diff), "diff")
            case ev.ContextCompacted() | ev.HistoryCompacted():
                yield f"*{_compaction(e)}*"
            case ev.ApprovalDecided(approved=False):
                yield f"denied by {e.by}: {e.feedback or 'no reason given'}"
            case ev.LimitHit():
                yield f"*limit: {e.stop_reason}: {e.detail}*"
            case ev.Error():
                yield f"*{e.source} error: {e.message}*"
            case ev.RunResumed():
                yield "*run resumed*"
            case ev.SessionResumed() | ev.SessionForked():
                yield f"*{_sitting(e)}*"
            case ev.AgentReturned():
                yield f"#### {e.agent} returns ({e.state}, {e.stop_reason})"
            case ev.TurnFinished():
                yield (
                    f"*turn {e.state} ({e.stop_reason}): {e.turns} turns, "
                    f"{e.usage.total_tokens} tokens, ${e.cost_usd:.4f}*"
                )
        if attached := attachments_of(e):
            yield "\n".join(markdown_link(a, folder, names) for a in attached)


def as_markdown(session: SessionSummary, events: Sequence[ev.Event]) -> str:
    """A session as a markdown document (`moot sessions show`, `export --format md`)."""
    head = f"# {session.title or session.id}\n\nsession `{session.id}` in `{session.workspace}`\n"
    blocks = markdown(events, folder_of(session.id))
    return head + "\n" + "\n\n".join(blocks) + "\n"


def as_json(session: SessionSummary, events: Sequence[ev.Event]) -> str:
    """A session and every event as JSON (`moot sessions export --format json`); what
    `moot.testing.FakeClient.from_export` plays."""
    about = {
        "id": session.id,
        "title": session.title,
        "workspace": session.workspace,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
    }
    body = {"session": about, "events": msgspec.to_builtins(events)}
    return json.dumps(body, ensure_ascii=False, indent=1)


def _compaction(e: ev.ContextCompacted | ev.HistoryCompacted) -> str:
    how = "summarised" if e.method == "model" else "shortened without a summary"
    return (
        f"context compacted ({e.trigger}): {e.replaced} older messages {how}, "
        f"{len(e.elided)} tool outputs dropped; ~{e.tokens_before:,} → ~{e.tokens_after:,} tokens"
    )


_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d1f21;background:#fdfdfc}
h1{font-size:1.4rem}.meta{color:#666}
.turn{border-left:4px solid #4a7bd0;padding:.2rem .8rem;margin:1.6rem 0 .6rem;background:#eef3fb}
.peer{border-left-color:#9a6bc4;background:#f5effa}
.answer{margin:.6rem 0;white-space:pre-wrap}
details{margin:.3rem 0;border:1px solid #ddd;border-radius:4px;padding:.2rem .6rem;background:#fff}
summary{cursor:pointer;font-family:ui-monospace,monospace;font-size:.9rem}
pre{overflow-x:auto;font-size:.85rem;background:#f6f6f4;padding:.5rem;margin:.3rem 0}
.error summary,.note.error{color:#b3261e}.note{color:#666;font-style:italic;margin:.4rem 0}
.add{color:#116329}.del{color:#b3261e}
"""


def _esc(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def _diff_html(diff: str) -> str:
    lines = []
    for line in _clip(diff).splitlines():
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        lines.append(f'<span class="{kind}">{_esc(line)}</span>' if kind else _esc(line))
    return "<pre>" + "\n".join(lines) + "</pre>"


def html_blocks(events: Iterable[ev.Event]) -> Iterator[str]:
    """HTML fragments, one per event a reader cares about; tool calls and diffs fold away."""
    calls: dict[str, str] = {}
    for e in events:
        match e:
            case ev.TurnStarted():
                yield f'<div class="turn"><b>user → {_esc(e.agent)}</b><div class="answer">'
                yield f"{_esc(e.prompt)}</div></div>"
                yield from (html_inline(a, _esc) for a in e.attachments)
            case ev.AgentCalled():
                yield (
                    f'<div class="turn peer"><b>{_esc(e.caller)} → {_esc(e.agent)}</b>'
                    f'<div class="answer">{_esc(e.message)}</div></div>'
                )
            case ev.ModelResponded():
                if e.text:
                    yield f'<div class="answer"><b>{_esc(e.agent)}</b>: {_esc(e.text)}</div>'
                for call in e.tool_calls:
                    args = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
                    calls[call.id] = f"{call.name} {args}"
            case ev.ToolFinished():
                head = calls.get(e.tool_call_id, e.tool)
                error = " error" if e.is_error else ""
                body = f"<pre>{_esc(_clip(e.content))}</pre>"
                if isinstance(diff := e.display.get("diff"), str) and diff:
                    body += f"<details open><summary>diff</summary>{_diff_html(diff)}</details>"
                yield (
                    f'<details class="tool{error}"><summary>{_esc(_clip(head)[:200])}</summary>'
                    f"{body}</details>"
                )
                yield from (html_inline(a, _esc) for a in e.attachments)
            case ev.ApprovalDecided(approved=False):
                yield f'<div class="note">denied by {_esc(e.by)}: {_esc(e.feedback or "")}</div>'
            case ev.ContextCompacted() | ev.HistoryCompacted():
                summary = f"<pre>{_esc(e.summary)}</pre>" if e.summary else ""
                yield f"<details><summary>{_esc(_compaction(e))}</summary>{summary}</details>"
            case ev.LimitHit():
                why = f"{_esc(e.stop_reason)}: {_esc(e.detail)}"
                yield f'<div class="note error">limit: {why}</div>'
            case ev.Error():
                yield f'<div class="note error">{_esc(e.source)} error: {_esc(e.message)}</div>'
            case ev.SessionResumed() | ev.SessionForked():
                yield f'<div class="note">{_esc(_sitting(e))}</div>'
            case ev.TurnFinished():
                yield (
                    f'<div class="note">turn {_esc(e.state)} ({_esc(e.stop_reason)}): {e.turns} '
                    f"turns, {e.usage.total_tokens} tokens, ${e.cost_usd:.4f}</div>"
                )


def as_html(session: SessionSummary, events: Sequence[ev.Event]) -> str:
    """A session as one HTML page that needs nothing else: inline CSS, no script, no links."""
    title = _esc(session.title or session.id)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head><body>"
        f'<h1>{title}</h1><p class="meta">session <code>{_esc(session.id)}</code> in '
        f"<code>{_esc(session.workspace)}</code></p>\n"
        + "\n".join(html_blocks(events))
        + "\n</body></html>\n"
    )


def render(
    kind: str,
    session: SessionSummary,
    events: Sequence[ev.Event],
    secrets: Iterable[str] = (),
) -> str:
    """The session as `kind` (`md`, `json`, `html`), with each of `secrets` blanked.

    A key is ASCII without quotes, backslashes or `<>&` (moot refuses any other), so it reads
    the same in each format's escaping and a plain replace finds every copy of it.
    """
    writers = {"md": as_markdown, "json": as_json, "html": as_html}
    if kind not in writers:
        raise ValueError(f"no transcript format {kind!r}: {', '.join(KINDS)}")
    text = writers[kind](session, events)
    # Longest first: a key that holds another is blanked whole.
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text

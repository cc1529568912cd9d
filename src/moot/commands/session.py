"""Commands about the session itself: its model, permission rules, context, commits, and
the doctor's and the sandbox's reports."""

from __future__ import annotations

import os
from collections.abc import Sequence

from moot.commands.answers import answer, run_tool
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.commands.show import show_result
from moot.frontend.table import wrapped
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import ContextReport, PermissionsReport, SessionAdmin

RULE_KINDS = ("allow", "ask", "deny")


def register(registry: Registry) -> None:
    """Add the session commands (`COMMANDS`, at the end of this module) to `registry`."""
    for command in COMMANDS:
        registry.add(command)


async def _has_key(context: CommandContext, model: str) -> bool:
    """A model whose provider has no key yet: the person may paste one here (checked, then
    saved 0600 where `moot login` saves it); False when they did not."""
    client = context.client
    choice = next((m for m in client.models() if m.name == model), None)
    if choice is None or choice.needs_key is None or not isinstance(client, SessionAdmin):
        return True  # `SetModel` says what is wrong, if anything is
    provider = choice.needs_key
    try:
        key = await context.ask_secret(
            f"{model} needs a key for {provider} ({choice.note.removeprefix('no key: ')}). "
            "Paste it here: it is tried with one tiny request, then saved, readable only by you"
        )
    except CommandError:
        raise CommandError(
            f"{model}: {choice.note}, or save one with `moot login {provider}`"
        ) from None
    if not key or not key.strip():
        context.say(f"no key given; the model stays {client.status().model}")
        return False
    try:
        context.say(await client.save_key(provider, key))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return True


def _complete_models(context: CommandContext, typed: str) -> Sequence[str]:
    return [m.name for m in context.client.models() if m.name.startswith(typed)]


def _complete_permissions(context: CommandContext, typed: str) -> Sequence[str]:
    if " " in typed:
        return []
    return [w for w in (*RULE_KINDS, "remove") if w.startswith(typed)]


def _model_label(name: str, ready: bool, window: int | None, note: str, current: str) -> str:
    parts = [name]
    if window:
        parts.append(f"{window // 1000}k")
    if name == current:
        parts.append("(now)")
    if not ready:
        parts.append(f"({note})")
    return "  ".join(parts)


def _kind_of(context: CommandContext, rule: str) -> str:
    """The list a rule to remove is in, when only one holds it."""
    kinds = {r.kind for r in context.client.permissions().rules if r.rule == rule}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise CommandError(f"no rule {rule}; /permissions lists the rules in force")
    raise CommandError(f"{rule} is in {', '.join(sorted(kinds))}: /permissions remove KIND RULE")


def _rules_text(report: PermissionsReport, workspace: str) -> str:
    lines = [f"mode: {report.mode or 'none (no permission rules)'}"]
    for kind in ("deny", "ask", "allow"):
        rules = [r for r in report.rules if r.kind == kind]
        if not rules:
            continue
        lines.append(f"{kind}:")
        width = max(len(r.rule) for r in rules)
        lines += [f"  {r.rule:<{width}}  {_shown(r.source, workspace)}" for r in rules]
    if len(lines) == 1:
        lines.append("no rules: reads run, everything else asks")
    if report.local_file:
        lines.append(
            f"/permissions allow|ask|deny RULE adds to {_shown(report.local_file, workspace)}"
        )
    return "\n".join(lines)


def _shown(source: str, workspace: str) -> str:
    """A settings file relative to the workspace when it is inside, else as it is."""
    if os.path.isabs(source) and source.startswith(workspace.rstrip("/") + "/"):
        return os.path.relpath(source, workspace)
    return source


def _context_text(report: ContextReport, columns: int = 10_000) -> str:
    width = max(len(p.name) for p in report.parts)
    lines = [f"{report.agent} on {report.model} (estimates: about 4 characters a token)"]
    for part in report.parts:
        line = f"  {part.name:<{width}}  {part.tokens:>9,}"
        if part.detail and len(line) + 2 + len(part.detail) > columns:
            # Narrow: the detail under its row, wrapped, not the row cut in two.
            lines += [line, *wrapped(part.detail.split(", "), columns, indent="    ")]
        else:
            lines.append(f"{line}  {part.detail}".rstrip())
    total = f"  {'total':<{width}}  {report.tokens:>9,}"
    if report.context_window:
        total += (
            f"  of {report.context_window:,} ({100 * report.tokens / report.context_window:.0f}%)"
        )
    lines.append(total)
    if report.last_input_tokens is not None:
        lines.append(f"the last request counted {report.last_input_tokens:,} input tokens")
    return "\n".join(lines)


async def _model(context: CommandContext, args: str) -> None:
    client = context.client
    current = client.status().model
    if not args:
        choices = client.models()
        if not choices:
            context.say(f"model: {current}")
            return
        labelled = [(m.name, _model_label(m.name, m.ready, m.context_window, m.note, current))
                    for m in choices]  # fmt: skip
        chosen = await context.pick(f"model (now {current})", labelled)
        if chosen is None:
            return
        args = chosen
    if args == current:
        context.say(f"model: {current} already")
        return
    if not await _has_key(context, args):
        return
    changed = await answer(client, ops.SetModel(model=args), ("model_changed",))
    assert isinstance(changed, ev.ModelChanged)
    context.say(f"model: {changed.model} (was {changed.previous}) from the next turn on")


async def _permissions(context: CommandContext, args: str) -> None:
    if not args:
        report = context.client.permissions()
        context.say(_rules_text(report, context.client.status().workspace))
        return
    first, _, rest = args.partition(" ")
    rest = rest.strip()
    if first in RULE_KINDS and rest:
        arguments = {"action": "add", "kind": first, "rule": rest}
    elif first == "remove" and rest:
        kind, _, rule = rest.partition(" ")
        if kind in RULE_KINDS and rule.strip():
            arguments = {"action": "remove", "kind": kind, "rule": rule.strip()}
        else:
            arguments = {"action": "remove", "kind": _kind_of(context, rest), "rule": rest}
    else:
        raise CommandError(
            "/permissions lists the rules; /permissions allow|ask|deny RULE adds one "
            "(e.g. /permissions deny Read(.env)); /permissions remove [kind] RULE"
        )
    show_result(context, await run_tool(context.client, "permission_rule", arguments))


async def _rename(context: CommandContext, args: str) -> None:
    if not args.strip():
        raise CommandError("/rename TITLE: the title session lists and /resume show")
    renamed = await answer(context.client, ops.Rename(title=args), ("session_renamed",))
    assert isinstance(renamed, ev.SessionRenamed)
    context.say(f"session {context.client.session_id}: {renamed.title}")


async def _compact(context: CommandContext, args: str) -> None:
    context.say("compacting the conversation…")
    done = await answer(context.client, ops.Compact(focus=args), ("history_compacted",))
    assert isinstance(done, ev.HistoryCompacted)
    how = "summarised" if done.method == "model" else "shortened without a summary"
    context.say(
        f"compacted: {done.replaced} older messages {how}"
        + (f", {len(done.elided)} tool outputs dropped" if done.elided else "")
        + f"; about {done.tokens_before:,} → {done.tokens_after:,} tokens"
    )


async def _msg(context: CommandContext, args: str) -> None:
    to, _, text = args.strip().partition(" ")
    if not to or not text.strip():
        raise CommandError("/msg AGENT TEXT: an agent's name (or task id), then the message")
    sent = await answer(
        context.client, ops.SendMessage(to=to, text=text.strip()), ("message_sent",)
    )
    assert isinstance(sent, ev.MessageSent)
    context.say(f"message to {sent.to_agent} ({sent.to_call_id}): read at its next step")


async def _undo(context: CommandContext, args: str) -> None:
    show_result(context, await run_tool(context.client, "undo"))


async def _context(context: CommandContext, args: str) -> None:
    context.say(_context_text(context.client.context(args or None), context.columns))


async def _doctor(context: CommandContext, args: str) -> None:
    show_result(context, await run_tool(context.client, "doctor"))


async def _sandbox(context: CommandContext, args: str) -> None:
    show_result(context, await run_tool(context.client, "sandbox"))


async def _trust(context: CommandContext, args: str) -> None:
    shown = await run_tool(context.client, "trust_settings", {"action": "show"})
    held = shown.display.get("held")
    if shown.is_error or not isinstance(held, list) or not held:
        show_result(context, shown)
        return
    context.say(shown.content)
    choice = await context.pick(
        "Approve what these files turn on, here?",
        [("approve", "Approve (from the next session on)"), ("keep", "Keep it off")],
    )
    if choice != "approve":
        context.say("kept off; /trust asks again")
        return
    files = [[entry[0], entry[1]] for entry in held]  # the content shown, nothing newer
    done = await run_tool(context.client, "trust_settings", {"action": "approve", "files": files})
    show_result(context, done)


COMMANDS = (
    Command(
        "model",
        "Show or switch the model (a picker without a name)",
        _model,
        arguments="[name]",
        complete=_complete_models,
    ),
    Command(
        "permissions",
        "The rules in force and where each comes from; add or remove one",
        _permissions,
        arguments="[allow|ask|deny RULE | remove [kind] RULE]",
        complete=_complete_permissions,
    ),
    Command(
        "rename", "Give this session a title (session lists show it)", _rename, arguments="TITLE"
    ),
    Command(
        "compact",
        "Summarise older turns into a short summary, keeping recent ones verbatim",
        _compact,
        arguments="[focus]",
    ),
    Command(
        "msg", "Message a running agent (read at its next step)", _msg, arguments="AGENT|TASK TEXT"
    ),
    Command("undo", "Take back moot's last commit (its auto-commit)", _undo),
    Command("context", "What fills the context: prompt, memory, tools, messages", _context),
    Command("doctor", "Providers, keys (where from, never the key) and endpoints", _doctor),
    Command("sandbox", "Where shell commands run, and what is hidden there", _sandbox),
    Command("trust", "Approve what this repository's .moot settings turn on", _trust),
)

"""The one decision every tool call passes: allow, ask or deny.

`decide` takes the call, the session's mode, the rules in force and the workspace root, and
settles it in this order (the first step that speaks wins):

1. `finish` always runs: it ends a peer call, and refusing it would wedge the callee.
2. Deny rules: the call is refused, in every mode. A shell command is refused when any of its
   sub-commands is (a program given by a path matches the rule for its name: `Bash(rm:*)`
   refuses `/bin/rm x`). A `Read(...)` rule also refuses edit, multi_edit and write of its
   paths: they read the file to change it (`Rule.restricts`). A shell command that runs
   commands on no command line (`echo 'rm x' | sh`, `bash <<< ...`, `. /dev/stdin`: see
   `SubCommand.unseen`) is refused when any deny rule speaks about commands, since none can
   be checked against what it runs. So is, in every mode, a shell command whose words ask for
   a set-id bit (`chmod u+s`, `install -m 4755`: `permissions.set_id`).
3. Plan mode refuses every tool that changes files or runs commands, telling the model to
   present its plan; asking the person first would contradict the mode. The plan itself,
   `exit_plan_mode(plan)`, asks, with the plan as the preview: approving it leaves plan mode.
   Outside plan mode it runs (there is nothing to approve).
4. A shell command that cannot be parsed, or that runs commands on no command line, cannot be
   checked against rules, so it asks (in bypass mode, or under a bare `Bash` allow, only when
   a deny or ask rule could have matched it). So does one that sets a variable changing what
   runs (`XDG_CONFIG_HOME=.`, `export PATH=...`) where it would otherwise run unasked.
5. Writes of protected paths (`.git` internals, `.moot/`, the scripts hooks run, which run on
   the host), by a file tool or by the files a shell command line writes, ask in every mode,
   bypass included; an allow or ask rule does not change this, nor does a hook's allow (the
   ask is `firm`). Where nobody can answer (a headless run, even in bypass mode) it is
   refused.
6. bypassPermissions: everything else runs.
7. Ask rules ask.
8. `todo` and `call_agent` run (a callee's own tools pass `decide` themselves); so do
   read-only tools.
9. Allow rules: the call runs when they cover all of it (every path it touches, every
   sub-command of a shell command, and every file a shell command line writes, as below).
10. acceptEdits: file edits and writes inside the workspace run.
11. Everything else asks, and in dontAsk mode whatever would ask is refused with the reason.

File rules are matched against every form of each path a call touches: as normalised
(`src/../.env` is `.env`) and as resolved through symlinks (a link to `.env` is `.env`). A deny
or ask rule applies when it matches any form; allow rules must match all of them.

Shell commands meet file rules too, as far as the command line shows: `Read(...)` deny and ask
rules apply to the plain arguments and `<` files of every sub-command (`cat .env`), `Edit(...)`
and `Write(...)` ones to the files it writes: its `>`, `>>`, `&>`, `2>`, `<>`, `>&` files and
those its options and operands name (`tee F`, `cp a F`, `sort -o F`, `git log --output=F`,
`sed -i F`; `moot.permissions.shell_writes`). A `Bash(X:*)` allow rule allows running X; each
file the command line writes is an edit of that file and is allowed only as the edit tools'
write of it would be: by an `Edit(...)` or `Write(...)` allow rule, or in acceptEdits mode,
and only inside the workspace (devices such as `/dev/null` are not files). A prefix rule
covers no sub-command that writes files its command line does not name (`curl -O`, `find
-delete`, a name with an expansion) or sets a variable that changes what runs (`PATH=.`,
`LD_PRELOAD=...`, `GIT_*`); other assignments (`CI=1 npm test`) are fine. A bare `Bash` allow
rule allows every program, writes included. What a program reads or writes by its own choosing
is the sandbox's to confine, not this function's.

What a call touches is worked out in `moot.permissions.targets`, which rules match it in
`moot.permissions.rule_match`, and the allow rules that would let it run (the suggestions) in
`moot.permissions.suggest`; the per-session `ApprovalPolicy` built on `decide` is
`moot.permissions.policy.RulesPolicy`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path

from msgspec.structs import replace

from moot.permissions.rule_match import (
    allowing,
    commands_left,
    first_restricting,
    parts_to_allow,
    shown,
    speaks_about_commands,
    writes_left,
)
from moot.permissions.rules import RuleSet, tool_hidden
from moot.permissions.set_id import asks_for_set_id
from moot.permissions.targets import (
    FILE_EDIT_TOOLS,
    Call,
    Command,
    Target,
    describe,
    in_a_root,
    inside,
)
from moot.protocol.approval import EXIT_PLAN_MODE, ApprovalRequest, SideEffect, Verdict
from moot.protocol.modes import PermissionMode
from moot.workspace.protected import is_protected  # the one owner of what "protected" means

__all__ = [
    "ALWAYS_ALLOWED",
    "FILE_EDIT_TOOLS",
    "decide",
    "tool_hidden",
    "ways_to_run",
]

ALWAYS_ALLOWED = frozenset({"todo", "call_agent"})
"""Tools that run in every mode unless a rule says otherwise."""
_MUTATING = frozenset({SideEffect.WRITES_WORKSPACE, SideEffect.RUNS_COMMANDS})
_FINISH = "finish"
_PREVIEW_LIMIT = 2000


def decide(
    call: ApprovalRequest,
    mode: PermissionMode,
    rules: RuleSet,
    workspace_root: Path,
    *,
    protected: Collection[str] = (),
    added_roots: Collection[Path] = (),
) -> Verdict:
    """Settle one tool call (see the module docstring for the order of the steps).

    Args:
        call: The tool call about to run.
        mode: The session's permission mode.
        rules: The allow, ask and deny rules in force for the session.
        workspace_root: The workspace the file tools are confined to; relative rule
            patterns hang from it.
        protected: Workspace-relative paths protected besides `.git` internals and `.moot/`
            (the scripts hooks run, which run outside the sandbox; a hooks directory, with
            what lies below it); absolute ones for those in an added directory.
        added_roots: The added directories (`--add-dir`): edits there run in acceptEdits as
            in the workspace, and their `.git` internals and `.moot/` are protected too.

    Returns:
        The verdict; its `reason` names the rule or mode that decided, and for `ask` its
        `preview` holds what the person should look at.
    """
    try:
        described = describe(call, workspace_root, added_roots)
    except OSError as exc:  # the call's paths cannot be looked at; nothing can be checked
        return Verdict("deny", f"{call.tool}: cannot check what the call touches ({exc})")
    return _decide(described, PermissionMode(mode), rules, protected)


def _decide(
    call: Call, mode: PermissionMode, rules: RuleSet, protected: Collection[str] = ()
) -> Verdict:
    if call.tool == _FINISH:
        return Verdict("allow", "finish always runs")
    if hit := first_restricting(rules.deny, call):
        return Verdict("deny", f"denied by {hit}")
    if refusal := _set_id_refusal(call):
        return Verdict("deny", refusal)
    unseen = _unseen(call)
    if unseen and (denying := [rule for rule in rules.deny if speaks_about_commands(rule)]):
        return Verdict(
            "deny",
            f"{unseen}, so deny rule {denying[0]} cannot be checked against them. Write the"
            " commands out on the command line.",
        )
    mutating = call.request.side_effect in _MUTATING and call.tool not in ALWAYS_ALLOWED
    if mode == PermissionMode.PLAN and mutating:
        return Verdict("deny", _plan_refusal(call.tool))
    if call.tool == EXIT_PLAN_MODE:
        return _plan_verdict(call, mode)
    hint = "Write it as simple commands the rules can check."
    if (call.unparsed_command or unseen) and (unsure := _unsure_about_command(call, mode, rules)):
        return _ask(call, mode, unseen or unsure, hint)
    if changed := _unchecked_environment(call, mode, rules):
        return _ask(call, mode, changed, hint)
    if target := _protected_target(call, protected):
        # Before bypass: hooks and git run what these hold on the host, outside any sandbox.
        reason = f"{call.tool} writes the protected path {target}"
        hint = (  # the hint is dontAsk's alone (`_ask`)
            "A protected path is written only with the person's approval, which dontAsk never"
            " asks for: in another mode the person is asked."
        )
        verdict = _ask(call, mode, reason, hint)
        return replace(verdict, firm=True)
    if mode == PermissionMode.BYPASS_PERMISSIONS:
        return Verdict("allow", "allowed by permission mode bypassPermissions")
    if hit := first_restricting(rules.ask, call):
        return _ask(call, mode, f"ask rule {hit}", "Only the user can lift an ask rule.")
    if call.tool in ALWAYS_ALLOWED:
        return Verdict("allow", f"{call.tool} always runs")
    if call.request.side_effect == SideEffect.READ_ONLY:
        return Verdict("allow", f"{call.tool} only reads")
    if allowed := allowing(rules.allow, call, mode):
        return Verdict("allow", "allowed by " + ", ".join(allowed))
    if mode == PermissionMode.ACCEPT_EDITS and _edit_inside_workspace(call):
        where = "the workspace" + (" or an added directory" if call.added else "")
        return Verdict("allow", f"allowed by permission mode acceptEdits (an edit in {where})")
    return _ask(call, mode, _needs_approval(call, mode, rules), _allow_hint(call, rules))


def ways_to_run(
    call: ApprovalRequest,
    mode: PermissionMode,
    rules: RuleSet,
    workspace_root: Path,
    *,
    suggestions: Collection[str] = (),
    protected: Collection[str] = (),
    added_roots: Collection[Path] = (),
) -> tuple[tuple[str, ...], tuple[PermissionMode, ...]]:
    """What would let a call that asks run without asking, for a refusal where nobody can
    answer to name (and nothing else): each way is checked by deciding the call again with it,
    so that the refusal's advice holds whichever step asked (an ask rule is not lifted by an
    allow rule, a protected path by nothing but the person).

    Args:
        call: The call that asked.
        mode: The mode it asked in.
        rules: The rules in force.
        workspace_root: The workspace.
        suggestions: Allow rules that could cover it (`suggested_rules`).
        protected: As for `decide`.
        added_roots: As for `decide`.

    Returns:
        The suggestions, when together they let it run (else none), and the other modes in
        which it runs.
    """

    def runs(in_mode: PermissionMode, with_rules: RuleSet) -> bool:
        verdict = decide(
            call, in_mode, with_rules, workspace_root, protected=protected, added_roots=added_roots
        )
        return verdict.decision == "allow"

    allowing = tuple(suggestions)
    if not allowing or not runs(mode, rules.extended(allow=allowing)):
        allowing = ()
    for rule in allowing:  # only what is needed: an edit rule says nothing in acceptEdits
        fewer = tuple(r for r in allowing if r != rule)
        if fewer and runs(mode, rules.extended(allow=fewer)):
            allowing = fewer
    modes = tuple(m for m in PermissionMode if m != mode and runs(m, rules))
    return allowing, modes


def _set_id_refusal(call: Call) -> str | None:
    """Why a shell command that asks for a set-id bit is refused (`permissions.set_id`)."""
    for command in call.commands or ():
        if mode := asks_for_set_id(command.sub.words):
            return (
                f"`{command.sub.text}` asks for a set-user-ID or set-group-ID bit ({mode}):"
                " set-id files are not allowed in the workspace, since they would give any"
                " user of this machine the rights of the user moot runs as. The sandbox"
                " refuses or clears them whatever runs; leave the bit out."
            )
    return None


def _unseen(call: Call) -> str | None:
    """Why a shell command runs commands no rule can be checked against, or None."""
    for command in call.commands or ():
        if command.sub.unseen:
            return (
                f"{command.sub.text} runs commands that are on no command line (a shell"
                " reading a pipe, a here-string or /dev/stdin, or a program running what it"
                " reads)"
            )
    return None


def _unsure_about_command(call: Call, mode: PermissionMode, rules: RuleSet) -> str | None:
    """Why an unparseable command must ask, or None when the rules settle it anyway."""
    denying = [rule for rule in rules.deny if speaks_about_commands(rule)]
    if mode == PermissionMode.BYPASS_PERMISSIONS:
        if not denying:
            return None
        return f"the command cannot be parsed, so deny rule {denying[0]} cannot be checked"
    asking = [rule for rule in rules.ask if speaks_about_commands(rule)]
    everything_allowed = any(r.covers("bash") and r.specifier is None for r in rules.allow)
    if everything_allowed and not denying and not asking:
        return None
    return "the command cannot be parsed into simple commands, so rules cannot be checked"


def _unchecked_environment(call: Call, mode: PermissionMode, rules: RuleSet) -> str | None:
    """Why a command that sets a variable changing what runs must ask where it would run
    unasked (bypass mode, a bare `Bash` allow) while a deny or ask rule speaks about commands:
    `XDG_CONFIG_HOME=. git status` runs what `./git/config` names, which no rule sees."""
    changing = next((c for c in call.commands or () if c.changes_what_runs), None)
    if changing is None:
        return None
    restricting = [rule for rule in rules.deny if speaks_about_commands(rule)]
    if mode != PermissionMode.BYPASS_PERMISSIONS:
        if not any(r.covers("bash") and r.specifier is None for r in rules.allow):
            return None  # no prefix rule covers it: it asks as it is
        restricting += [rule for rule in rules.ask if speaks_about_commands(rule)]
    if not restricting:
        return None
    return (
        f"{changing.shown} sets a variable that changes what runs, so rule {restricting[0]}"
        " cannot be checked against what it runs"
    )


# ---- modes and paths ------------------------------------------------------------------------


def _plan_verdict(call: Call, mode: PermissionMode) -> Verdict:
    if mode != PermissionMode.PLAN:
        return Verdict("allow", f"not in plan mode (mode {mode}): no plan to approve")
    plan = call.request.arguments.get("plan")
    return Verdict(
        "ask",
        "approve the plan to leave plan mode",
        preview=plan if isinstance(plan, str) else "",
        firm=True,
    )


def _plan_refusal(tool: str) -> str:
    return (
        f"Plan mode: {tool} was not run, because it changes files or runs commands and plan "
        "mode only explores. Keep using read-only tools if you need to, then present your "
        "plan by calling exit_plan_mode(plan); once the user approves it, changes can be made."
    )


def _protected_target(call: Call, extra: Collection[str]) -> str | None:
    """The protected path a file tool writes, or a shell command's `>` file names."""
    if call.tool in FILE_EDIT_TOOLS:
        targets: Iterable[Target] = call.targets or ()
    elif call.commands:
        targets = [target for command in call.commands for target in command.writes]
    else:
        return None
    for target in targets:
        for form in target.forms:
            parts = inside(form, call.root)
            # A protected directory protects what lies below it (a hooks directory).
            named = any("/".join(parts[:depth]) in extra for depth in range(1, len(parts) + 1))
            if parts and (is_protected(parts) or named):
                return "/".join(parts)
            # An added directory's `.git` and `.moot/` are its own git's and moot's, as the
            # workspace's are (a directory holding the workspace is judged from each root).
            if any(is_protected(inside(form, added) or ("",)) for added in call.added):
                return form
            if any(form == p or inside(form, p) for p in extra if p.startswith("/")):
                return form  # a script hooks run, in an added directory
    return None


def _edit_inside_workspace(call: Call) -> bool:
    """A file tool's edit below the workspace or an added directory, in every form."""
    if call.tool not in FILE_EDIT_TOOLS or not call.targets:
        return False
    return all(in_a_root(form, call) for target in call.targets for form in target.forms)


def _written_forms(call: Call) -> list[str]:
    """Each file the shell command line writes, once, as named (normalised)."""
    forms = [target.forms[0] for command in call.commands or () for target in command.writes]
    return list(dict.fromkeys(forms))


def _needs_approval(call: Call, mode: PermissionMode, rules: RuleSet) -> str:
    reason = f"{call.tool} needs approval"
    left = commands_left(call, rules)
    plain = [c.shown for c in left if c.checkable and c.sub.words]
    if plain and len(left) < len(parts_to_allow(call)):
        reason += f" (not allowed by any rule: {'; '.join(plain)})"
    if unnamed := [c.shown for c in left if not c.checkable]:
        reason += (
            " (no prefix rule covers a command that writes files its command line does not"
            f" name, or sets variables that change what runs: {'; '.join(unnamed)})"
        )
    writes = writes_left(call, rules.allow, mode)
    if outside := _listed([(c, t) for c, t in writes if not in_a_root(t.forms[0], call)], call):
        reason += f" (it writes outside the workspace: {outside})"
    if within := _listed([(c, t) for c, t in writes if in_a_root(t.forms[0], call)], call):
        reason += (
            f" (it writes {within}; a write through the command line is an edit of that file,"
            " allowed by an Edit rule or in permission mode acceptEdits)"
        )
    return reason if mode == PermissionMode.DONT_ASK else f"{reason} in permission mode {mode}"


def _listed(writes: list[tuple[Command, Target]], call: Call) -> str:
    """`a.txt, b.txt in: cmd > a.txt; ...`: each file written, with its sub-command."""
    files = dict.fromkeys(shown(target.forms[0], call.root) for _, target in writes)
    commands = dict.fromkeys(command.shown for command, _ in writes)
    return f"{', '.join(files)} in: {'; '.join(commands)}" if writes else ""


def _allow_hint(call: Call, rules: RuleSet) -> str:
    # Only a call that asks or is refused needs the rules that would allow it: a run whose
    # calls are allowed never loads them (the first tool call is on a benchmark's path).
    from moot.permissions.suggest import suggest

    suggestions = suggest(call, rules)
    if not suggestions:
        return "The user can allow it with an allow rule."
    return f"The user can allow it with the rule {' and '.join(suggestions)}."


def _ask(call: Call, mode: PermissionMode, reason: str, hint: str) -> Verdict:
    """Ask the person; in dontAsk mode refuse instead, saying why and what would help."""
    if mode == PermissionMode.DONT_ASK:
        refusal = f"Refused without asking (permission mode dontAsk): {reason}. {hint}"
        return Verdict("deny", refusal)
    return Verdict("ask", reason, _preview(call))


def _preview(call: Call) -> str:
    """What the person should look at: the command, the URL, or the diff of a file change."""
    args = call.request.arguments if isinstance(call.request.arguments, dict) else {}
    if call.tool == "bash" and isinstance(args.get("command"), str):
        written = [shown(form, call.root) for form in _written_forms(call)]
        if written:
            return f"{args['command']}\n\nwrites: {', '.join(written)}"
        return args["command"]
    if call.tool == "web_fetch" and isinstance(args.get("url"), str):
        return args["url"]
    from moot.permissions.preview import diff_preview  # only a call that asks shows a diff

    diff = diff_preview(Path(call.root), call.tool, args)
    if diff is not None:
        return diff
    text = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= _PREVIEW_LIMIT else text[:_PREVIEW_LIMIT] + "\n..."

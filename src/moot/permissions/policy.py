"""`RulesPolicy`: the `ApprovalPolicy` that settles calls with `decide`, one session at a time.

It holds what belongs to a session rather than to the process: the rules approved "for this
session", on top of the rules from settings that every session shares. The session's mode is
not kept here: the runtime owns it, and each request carries it (`ApprovalRequest.mode`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from msgspec.structs import replace

from moot.permissions.rules import Rule, RuleSet, parse_rule
from moot.protocol.approval import ApprovalRequest, Verdict
from moot.protocol.modes import PermissionMode


class RulesPolicy:
    """The `ApprovalPolicy` that settles calls with `decide`, keeping each session's state.

    The rules approved "for this session" are kept per session id, so one policy may serve
    several sessions (and their peers) without one's approvals leaking into another.
    """

    def __init__(
        self,
        rules: RuleSet,
        workspace_root: Path,
        *,
        mode: PermissionMode = PermissionMode.DEFAULT,
        shell: str = "",
        protected: Collection[str] = (),
        added_roots: Collection[Path] = (),
        refresh: Callable[[], None] | None = None,
    ) -> None:
        """Args:
        rules: The rules from settings (and the command line), shared by every session.
        workspace_root: The workspace the sessions' file tools are confined to.
        mode: The mode of a request that carries none (a runtime without modes).
        shell: Where shell commands run ("bubblewrap", "docker", "host (NO sandbox)"), for
            the preview of a command that asks.
        protected: Workspace-relative files whose writes always ask, besides `.git`
            internals and `.moot/`: the scripts hooks run (`HookConfig.scripts`).
        added_roots: The added directories (`--add-dir`), edited as the workspace is.
        refresh: Called before each decision: replaces the rules when the settings files
            changed (`client.session_rules.SettingsWatch`).
        """
        self.protected = frozenset(protected)
        self.added_roots = tuple(added_roots)
        self.workspace_root = workspace_root
        self.shell = shell
        self._rules = rules
        self._default_mode = PermissionMode(mode)
        self._approved: dict[str, tuple[Rule, ...]] = {}
        self._refresh = refresh

    @property
    def default_mode(self) -> PermissionMode:
        """The mode a session that never switched works in (`HasModes`)."""
        return self._default_mode

    def add_allow(self, session_id: str, rule: Rule | str) -> None:
        """Allow calls like an approved one for the rest of the session ("approve for session").

        Raises:
            ValueError: A malformed rule.
        """
        rule = rule if isinstance(rule, Rule) else parse_rule(rule)
        approved = self._approved.get(session_id, ())
        if rule not in approved:
            self._approved[session_id] = (*approved, rule)

    def approved(self, session_id: str) -> tuple[Rule, ...]:
        """The allow rules approved for the session (not saved anywhere)."""
        return self._approved.get(session_id, ())

    def drop_allow(self, session_id: str, rule: Rule) -> bool:
        """Forget an approval for the session; False when there was none."""
        approved = self._approved.get(session_id, ())
        if rule not in approved:
            return False
        self._approved[session_id] = tuple(r for r in approved if r != rule)
        return True

    def replace_rules(self, rules: RuleSet) -> None:
        """Decide later calls by `rules` (the settings read again after a change)."""
        self._rules = rules

    def rules(self, session_id: str) -> RuleSet:
        """The rules in force for a session: the shared ones plus its own approvals."""
        approved = self._approved.get(session_id)
        return self._rules.extended(allow=approved) if approved else self._rules

    def forget(self, session_id: str) -> None:
        """Drop a closed session's approvals."""
        self._approved.pop(session_id, None)

    def decide(self, request: ApprovalRequest) -> Verdict:
        """Settle a call under its session's mode and rules (see `decide`).

        An `ask` carries the allow rules that an answer "for the session" or "always" keeps,
        and what would let it run unasked (`ways_to_run`), for a refusal where nobody answers.
        """
        # Lazy: the decision (what a call touches, the shell parser) loads at the first tool call.
        from moot.permissions.decide import decide, ways_to_run

        if self._refresh is not None:
            self._refresh()
        session = request.session_id
        rules = self.rules(session)
        mode = PermissionMode(request.mode) if request.mode else self._default_mode
        root, protected, added = self.workspace_root, self.protected, self.added_roots
        verdict = decide(request, mode, rules, root, protected=protected, added_roots=added)
        if verdict.decision != "ask":
            return verdict
        from moot.permissions.preview import shown_command  # only a call that asks
        from moot.permissions.suggest import suggested_rules

        suggestions = tuple(suggested_rules(request, self.workspace_root, rules))
        with_rules, in_modes = ways_to_run(
            request,
            mode,
            rules,
            self.workspace_root,
            suggestions=suggestions,
            protected=protected,
            added_roots=added,
        )
        preview = verdict.preview
        if request.tool == "bash":  # the person sees where it would run, not just what
            where = f"cwd: {self.workspace_root}" + (
                f"\nsandbox: {self.shell}" if self.shell else ""
            )
            preview = f"$ {shown_command(preview)}\n\n{where}"
        return replace(
            verdict,
            suggestions=suggestions,
            preview=preview,
            runs_with_rules=with_rules,
            runs_in_modes=tuple(m.value for m in in_modes),
        )

    def remember(self, session_id: str, rule: str, *, always: bool) -> None:
        """Keep an approval as an allow rule: for the session, or (`always`) also saved to
        the project's `.moot/settings.local.json` so later sessions load it.

        Raises:
            ValueError: A malformed rule (nothing is kept or saved then).
        """
        self.add_allow(session_id, rule)
        if always:
            from moot.settings import save_local_rule

            save_local_rule(self.workspace_root, "allow", rule)

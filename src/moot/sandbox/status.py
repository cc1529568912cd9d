"""What `moot sandbox status` (and the person's `/sandbox`) says of where commands run."""

from __future__ import annotations

from collections.abc import Mapping

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.select import SandboxChoice

LANDLOCK_NOTE = (
    "landlock: unlike bubblewrap, the workspace root (and any directory holding a protected or"
    " denied path) takes no new files, its files are rewritten in place; denied files cannot"
    " be read rather than reading empty; the host's processes show, out of reach"
)


def status_lines(choice: SandboxChoice, policy: SandboxPolicy) -> list[str]:
    """What `moot sandbox status` says after the setting: the backend and why, the workspace,
    what is read-only or hidden there (the masks are worked out now), and the network."""
    lines = [f"sandbox: {choice.describe()}", f"workspace: {policy.workspace} (writable)"]
    if choice.sandbox is not None and choice.backend != "host":
        lines.append(f"read-only in the workspace: {', '.join(policy.protected)}")
        if policy.masks is not None:
            masks = policy.masks()
            hidden = [*masks.hidden_files, *masks.hidden_dirs]
            lines.append(f"hidden by deny rules: {', '.join(hidden) or 'nothing yet'}")
            if masks.read_only:
                lines.append(f"read-only by deny rules: {', '.join(masks.read_only)}")
        lines.append(f"network: {network_line(policy)}")
    if choice.backend == "landlock":
        lines.append(LANDLOCK_NOTE)
    return lines


def network_line(policy: SandboxPolicy) -> str:
    """What commands may reach: nothing, everything, or what the proxy lets through."""
    if policy.proxy is None:
        return "allowed" if policy.network else "off"
    rules = policy.proxy.rules
    allowed = ", ".join(rules.allowed) or "none"
    denied = f"; denied: {', '.join(rules.denied)}" if rules.denied else ""
    other = "asked about" if policy.proxy.ask is not None else "refused"
    return f"only through moot's proxy; allowed: {allowed}{denied}; other hosts {other}"


def setting_source(setting: str, in_settings: bool, env: Mapping[str, str]) -> str:
    """Where the sandbox setting came from: `MOOT_SANDBOX`, a settings file, or the default."""
    from moot.sandbox.select import SETTING_VARIABLE

    if env.get(SETTING_VARIABLE):
        return f"{SETTING_VARIABLE}={setting}"
    return f"settings: {setting}" if in_settings else "auto (default)"

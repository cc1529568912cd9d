"""The Seatbelt profile (SBPL) a macOS command runs under, generated from the sandbox policy.

Pure functions, so that the mapping from policy to profile is tested as text on machines
without `sandbox-exec` (none of moot's test machines has one; see `seatbelt`).

The profile denies everything by default and allows, each as one rule:

- processes: fork, exec, signals and process information within the sandbox only;
- reading the whole file system except what is hidden: the home directories whole (but the
  toolchains of `home.PASSES` and a workspace inside one), moot's own directories and the
  credential files of `private.HIDDEN_IN_HOME`, and every path a `Read(...)` deny rule masks;
  the session's outputs directory is readable again inside moot's data directory;
- writing the workspace (and each `--add-dir`) and the session's temporary directory,
  except the protected paths (`.git`, `.moot`), the paths `Edit(...)` rules keep read-only,
  the hidden paths, and the paths no command may make (`policy.absent`);
- the network: none, or (`network="proxy"`) only outbound TCP to the session's proxy on
  localhost, or everything (`network="all"`, the policy's `network=True`).

Rules are written with `require-all` / `require-not` rather than a deny rule after an allow:
what a rule means then does not depend on the order in which Seatbelt weighs rules, which
Apple does not document. Paths are never spliced into the text: each is a parameter
(`(param "P3")`) given on the command line (`sandbox-exec -D P3=/path`), so no file name can
end a string and inject a rule. `sbpl_string` escapes a path for a profile written to a file
whole (`render(inline=True)`, for people to read or run by hand); it refuses the control
characters SBPL strings have no escape for.

Seatbelt matches the real path of a file (the kernel's vnode path): `/tmp` is
`/private/tmp`, `/var` is `/private/var` on macOS. Every path is resolved first
(`os.path.realpath`), and a path whose real path differs is named both ways.

Studied, not copied: OpenAI Codex's `seatbelt_base_policy.sbpl` (parameters for writable
roots, `require-not` for read-only parts) and Anthropic's sandbox-runtime (a proxy port on
localhost as the only way out).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

import msgspec

NetworkMode = Literal["off", "proxy", "all"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

DEVICES_WRITABLE = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")
"""Devices a command writes to as a matter of course (`> /dev/null`)."""

MACH_SERVICES = (
    "com.apple.system.opendirectoryd.libinfo",  # getpwuid, getgrgid: `id`, `ls -l`
    "com.apple.system.opendirectoryd.membership",  # group membership: `id -G`
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.system.DirectoryService.libinfo_v1",
    "com.apple.bsd.dirhelper",  # confstr(_CS_DARWIN_USER_TEMP_DIR)
    "com.apple.trustd.agent",  # certificate checks (TLS through the proxy)
)
"""Mach services any command-line tool asks for; no service that could act for it outside."""

NETWORK_SERVICES = (
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.dnssd.service",
)
"""Name resolution, only with the whole network (`all`): through a proxy, the proxy resolves."""


class SeatbeltRules(msgspec.Struct, frozen=True):
    """What the profile allows, as real absolute paths; `seatbelt.rules_for` fills it in from
    the policy, the masks and the home directories."""

    writable: tuple[str, ...]
    """The workspace, each added directory and the session's temporary directory."""
    read_only: tuple[str, ...] = ()
    """Below a writable root but not to be written: protected paths, `Edit(...)` masks, paths
    no command may make."""
    hidden: tuple[str, ...] = ()
    """Neither read nor written: `Read(...)` masks, moot's directories, credentials."""
    hidden_homes: tuple[str, ...] = ()
    """Home directories hidden whole, but for `passes` and the writable roots inside them."""
    passes: tuple[str, ...] = ()
    """Below a hidden home, readable (toolchains, `home.PASSES`)."""
    revealed: tuple[str, ...] = ()
    """Readable though inside a hidden path: the session's outputs directory."""
    network: NetworkMode = "off"
    proxy_port: int | None = None
    """With `network="proxy"`: the only port commands may connect to, on localhost."""


class Profile(msgspec.Struct, frozen=True):
    """A rendered profile and the parameters its `(param "Pn")` forms name."""

    text: str
    params: tuple[tuple[str, str], ...]


def real_forms(path: str) -> list[str]:
    """`path` (absolute) and its real path when that differs: Seatbelt sees the real one,
    and a path named only lexically would match nothing."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    forms = [os.path.normpath(path)]
    real = os.path.realpath(path)
    if real not in forms:
        forms.append(real)
    return forms


def sbpl_string(text: str) -> str:
    """`text` as an SBPL (TinyScheme) string literal: `\\` and `"` escaped.

    Raises:
        ValueError: `text` holds a control character (a newline in a file name, say):
            SBPL strings have no escape for every one, and a profile must mean what it says.
    """
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise ValueError(f"a control character in a path cannot go into a profile: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Paths:
    """Names each path once, as a parameter or (inline) as a string literal."""

    def __init__(self, inline: bool) -> None:
        self.inline = inline
        self.params: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if self.inline:
            return sbpl_string(path)
        for name, value in self.params.items():
            if value == path:
                return f'(param "{name}")'
        name = f"P{len(self.params)}"
        self.params[name] = path
        return f'(param "{name}")'


def render(rules: SeatbeltRules, *, inline: bool = False) -> Profile:
    """The profile for `rules` (see the module docstring); with `inline`, paths are string
    literals and `params` is empty.

    Raises:
        ValueError: A path is not absolute; with `inline`, one holds a control character;
            `network="proxy"` without a port in 1..65535.
    """
    name = _Paths(inline)
    lines = [
        "(version 1)",
        "(deny default)",
        ";; processes: their own tree only",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow process-info* (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow user-preference-read)",
        "(allow ipc-posix-sem)",
        "(allow pseudo-tty)",
        '(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))',
        '(allow file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
        "(allow mach-lookup",
        *(f'  (global-name "{service}")' for service in MACH_SERVICES),
        ")",
        *_reads(rules, name),
        *_writes(rules, name),
        *_network(rules),
    ]
    return Profile("\n".join(lines) + "\n", tuple(name.params.items()))


def argv(profile: Profile, command: list[str]) -> list[str]:
    """`sandbox-exec` running `command` under `profile` (its text given with `-p`)."""
    params = [arg for key, value in profile.params for arg in ("-D", f"{key}={value}")]
    return [SANDBOX_EXEC, "-p", profile.text, *params, "--", *command]


def _all_forms(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(form for path in paths for form in real_forms(path)))


def _reads(rules: SeatbeltRules, name: _Paths) -> list[str]:
    hidden = _all_forms(rules.hidden)
    homes = _all_forms(rules.hidden_homes)
    inside_homes = _all_forms([*rules.passes, *rules.writable])
    lines = [";; reading: everything but the hidden paths and the home directories"]
    lines.append("(allow file-read*")
    lines.append("  (require-all")
    lines += [f"    (require-not (subpath {name(path)}))" for path in hidden]
    lines.append("    (require-any")
    lines.append("      (require-all")
    lines.append('        (subpath "/")')
    lines += [f"        (require-not (subpath {name(path)}))" for path in homes]
    lines.append("      )")
    lines += [f"      (subpath {name(path)})" for path in inside_homes]
    lines.append(")))")
    if rules.revealed:
        lines.append(";; the session's own outputs, though inside moot's directories")
        lines.append("(allow file-read*")
        lines += [f"  (subpath {name(path)})" for path in _all_forms(rules.revealed)]
        lines.append(")")
    # A path is looked up through its parents: they may be stat'ed, never listed or read.
    parents = sorted({p for path in [*homes, *inside_homes] for p in _ancestors(path)})
    if parents:
        lines.append("(allow file-read-metadata")
        lines += [f"  (literal {name(path)})" for path in parents]
        lines.append(")")
    return lines


def _writes(rules: SeatbeltRules, name: _Paths) -> list[str]:
    if not rules.writable:
        raise ValueError("a profile needs a writable root (the workspace)")
    lines = [";; writing: the workspace and the temporary directory, but what stays read-only"]
    lines.append("(allow file-write*")
    lines.append("  (require-all")
    lines.append("    (require-any")
    lines += [f"      (subpath {name(path)})" for path in _all_forms(rules.writable)]
    lines.append("    )")
    for path in _all_forms([*rules.read_only, *rules.hidden]):
        lines.append(f"    (require-not (subpath {name(path)}))")
    lines.append("))")
    lines.append("(allow file-write-data")
    lines += [f'  (literal "{device}")' for device in DEVICES_WRITABLE]
    lines.append(")")
    return lines


def _network(rules: SeatbeltRules) -> list[str]:
    if rules.network == "off":
        return [";; network: none (denied by default)"]
    if rules.network == "proxy":
        port = rules.proxy_port
        if port is None or not 0 < port < 65536:
            raise ValueError(f"network through a proxy needs its port, not {port!r}")
        return [
            ";; network: only the session's proxy on localhost",
            f'(allow network-outbound (remote ip "localhost:{int(port)}"))',
        ]
    return [
        ";; network: all of it (the policy allows it)",
        "(allow network*)",
        "(allow system-socket)",
        "(allow mach-lookup",
        *(f'  (global-name "{service}")' for service in NETWORK_SERVICES),
        ")",
    ]


def _ancestors(path: str) -> list[str]:
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts))] + ["/"]

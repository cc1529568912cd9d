"""Which hosts a sandboxed command may reach through the session's proxy (`net_proxy`).

The settings' `sandbox.network` lists (`allowedDomains`, `deniedDomains`) hold host names or
wildcards: `pypi.org` is that host only, `*.pypi.org` every host below it (not `pypi.org`
itself: list both), `*` every host. A denied host is refused whatever else says so; an
allowed one gets through; a host on neither list is asked about (once, for the session, or
always), and refused where nobody can answer (`moot -p`). Names compare case-insensitively,
without a trailing dot; an IP address is a name like any other (a wildcard never covers one).
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
from collections.abc import Iterable
from typing import Literal

import msgspec

Verdict = Literal["allow", "deny", "ask"]


class NetworkRules(msgspec.Struct, frozen=True):
    """The allowlist and the denylist of a session, as the settings give them."""

    allowed: tuple[str, ...] = ()
    """`sandbox.network.allowedDomains`."""
    denied: tuple[str, ...] = ()
    """`sandbox.network.deniedDomains`: wins over `allowed` and over any answer."""

    def verdict(self, host: str, granted: Iterable[str] = ()) -> tuple[Verdict, str]:
        """What to do with a connection to `host`, and why (for the refusal and the log).

        Args:
            host: The name the command asked for (as it wrote it).
            granted: Hosts or patterns the person allowed in this session (answers
                "for the session"); a denied host stays denied.
        """
        name = normal(host)
        if pattern := first_match(name, self.denied):
            return "deny", f"{host} is denied by sandbox.network.deniedDomains ({pattern})"
        if pattern := first_match(name, self.allowed):
            return "allow", f"allowed by sandbox.network.allowedDomains ({pattern})"
        if pattern := first_match(name, granted):
            return "allow", f"allowed for this session ({pattern})"
        return "ask", f"{host} is on neither sandbox.network list"


def named(host: str, rules: NetworkRules, granted: Iterable[str] = ()) -> bool:
    """Whether `host` is allowed by its own name (not by a wildcard): only such a host may
    lead to this machine's own addresses (`net_proxy.LOCAL`)."""
    name = normal(host)
    return any(normal(p) == name for p in (*rules.allowed, *granted))


def normal(host: str) -> str:
    """`host` as the rules compare it: lower case, no trailing dot, no IPv6 brackets, a
    non-ASCII name in its IDNA form (`xn--`, as `canonical` turns a host)."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if not name.isascii():
        with contextlib.suppress(UnicodeError):
            name = name.encode("idna").decode("ascii").lower()
    return name


_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")


def canonical(host: str) -> str:
    """`host` in the one spelling the rules compare and the proxy connects to.

    The system's resolver reads a name more ways than its letters say: a non-ASCII name is
    IDNA-mapped (a soft hyphen vanishes, `ｅｖｉｌ` is `evil`) and an IPv4 address may be
    written `10.1`, `167772161`, `0xa.0.0.1` or `::ffff:10.0.0.1`. Each is turned into its
    plain form here, so a denied host cannot be reached by another spelling of it.

    Raises:
        ValueError: `host` is neither an address nor a name a resolver would take.
    """
    name = normal(host)
    try:
        ip = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        pass
    else:  # `::ffff:10.0.0.1` is 10.0.0.1
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        return (mapped or ip).compressed
    try:
        name = name.encode("idna").decode("ascii").lower().rstrip(".")
    except UnicodeError:
        raise ValueError(f"not a host name: {host!r}") from None
    try:
        return socket.inet_ntoa(socket.inet_aton(name))
    except OSError:
        pass
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a host name: {host!r}")
    return name


def matches(name: str, pattern: str) -> bool:
    """Whether the normalised host `name` is covered by `pattern` (see the module docstring)."""
    pattern = normal(pattern)
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return name.endswith(pattern[1:]) and len(name) > len(pattern) - 1
    return name == pattern


def first_match(name: str, patterns: Iterable[str]) -> str | None:
    """The first of `patterns` that covers `name`, if any."""
    return next((p for p in patterns if matches(name, p)), None)

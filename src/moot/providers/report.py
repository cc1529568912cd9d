"""What moot knows of its providers here: which have a key (named, never shown) and where each
one's endpoint is. `moot doctor` prints it, and so does the person's `/doctor`.
"""

from __future__ import annotations

from collections.abc import Mapping

from moot.providers import credentials


def configured(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None, str]]:
    """(provider, where its key is, base URL) for every provider moot knows.

    Where the key is: "key from <variable or key file>", None when there is none, or why a
    key found cannot be used (a control character inside it), which `--check` then reports.
    """
    from moot.providers.registry import UnknownModel

    rows = []
    for provider in credentials.ENDPOINTS:
        try:
            _, found = credentials.find_key(provider, environ)
            key = f"key from {found.source}" if found.source else None
        except UnknownModel as exc:
            key = f"unusable key: {exc}"
        rows.append((provider, key, credentials.base_url(provider, environ)))
    return rows


def shown_url(url: str) -> str:
    """`url` for display: credentials in it (`user:token@`, the query) hidden."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def report_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """The report `moot doctor` prints (without `--check`): moot's version, then each provider
    with where its key is (never the key) and its endpoint (credentials in it hidden)."""
    from moot._version import __version__

    lines = [f"moot {__version__}"]
    for provider, key, url in configured(environ):
        if key is None and provider in credentials.KEYLESS_OPTIONAL:
            key = "no key needed"
        elif key is None:
            key = "no key (" + " or ".join(credentials.ENDPOINTS[provider].key_env) + ")"
        lines.append(f"  {provider:<12} {key:<32} {shown_url(url)}")
    return lines

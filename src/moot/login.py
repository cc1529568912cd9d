"""`moot login <provider>`: save an API key to the key file (mode 0600), never echoing it.

`save_login_key` is the one way a key gets saved: `moot login` and the app's first-run screen
(through `moot.setup_detect`) both call it, so a key pasted into the app lands exactly where and
how `moot login` puts it.
"""

from __future__ import annotations

import getpass
import sys
from argparse import Namespace
from pathlib import Path

from moot.providers import credentials


class LoginError(ValueError):
    """A key that cannot be saved as given; the message says why and never holds the key."""


def key_providers() -> list[str]:
    """The providers that take a key (the ones `moot login` accepts), in the catalog's order."""
    return [p for p, e in credentials.ENDPOINTS.items() if e.key_env]


def save_login_key(provider: str, key: str) -> Path:
    """Save `key` for `provider` in the key file (`<config dir>/keys.json`, mode 0600).

    Surrounding whitespace is trimmed (a pasted key often ends in a newline).

    Raises:
        LoginError: The provider takes no key, or the key is empty, or holds a control or
            non-ASCII character inside it (such a key could never be sent in a header).
    """
    endpoint = credentials.ENDPOINTS.get(provider)
    if endpoint is None or not endpoint.key_env:
        known = ", ".join(key_providers())
        raise LoginError(f"{provider!r} takes no key here; providers with keys: {known}")
    key = key.strip()
    if not key:
        raise LoginError("no key given; nothing saved")
    if not all(" " <= char <= "~" for char in key):
        # Never the key, nor where the character is: either would tell part of it.
        raise LoginError("the key holds a control or non-ASCII character inside it; nothing saved")
    return credentials.save_key(provider, key)


def run_login(options: Namespace) -> int:
    provider = options.provider
    if provider not in key_providers():
        known = ", ".join(key_providers())
        print(
            f"moot: {provider!r} takes no key here; providers with keys: {known}", file=sys.stderr
        )
        return 2
    if sys.stdin.isatty():
        key = getpass.getpass(f"API key for {provider} (not shown): ")
    else:
        key = sys.stdin.readline()
    try:
        path = save_login_key(provider, key)
    except LoginError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 2
    print(f"saved the {provider} key to {path} (readable only by you)")
    return 0

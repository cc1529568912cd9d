"""`moot login <provider>`: save an API key to the key file (mode 0600), never echoing it."""

from __future__ import annotations

import getpass
import sys
from argparse import Namespace

from moot.providers import credentials


def run_login(options: Namespace) -> int:
    provider = options.provider
    endpoint = credentials.ENDPOINTS.get(provider)
    if endpoint is None or not endpoint.key_env:
        known = ", ".join(p for p, e in credentials.ENDPOINTS.items() if e.key_env)
        print(
            f"moot: {provider!r} takes no key here; providers with keys: {known}", file=sys.stderr
        )
        return 2
    if sys.stdin.isatty():
        key = getpass.getpass(f"API key for {provider} (not shown): ")
    else:
        key = sys.stdin.readline()
    key = key.strip()
    if not key:
        print("moot: no key given; nothing saved", file=sys.stderr)
        return 2
    path = credentials.save_key(provider, key)
    print(f"saved the {provider} key to {path} (readable only by you)")
    return 0

"""`moot login <provider>`: check an API key with one tiny request, then save it to the key
file (mode 0600), never echoing it.

`credentials.save_given_key` is the one way a key gets saved: `moot login`, the app's first-run
screen (through `moot.client.setup_detect`) and `/model` taking a key (`SessionAdmin.save_key`)
all call it, so a key lands exactly where and how `moot login` puts it.
"""

from __future__ import annotations

import getpass
import sys
from argparse import Namespace

from moot.providers import credentials

LoginError = credentials.KeyRefused
key_providers = credentials.key_providers
save_login_key = credentials.save_given_key


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
        key = credentials.given_key(provider, key)
    except LoginError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 2
    note = ""
    if not getattr(options, "no_check", False):
        import asyncio

        from moot.providers.probe import check_key

        checked = asyncio.run(check_key(provider, key))
        if checked.refused:
            print(f"moot: {checked.note}; nothing saved", file=sys.stderr)
            return 2
        note = f" ({checked.note})"
    try:
        path = save_login_key(provider, key)
    except LoginError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 2
    print(f"saved the {provider} key to {path} (readable only by you){note}")
    return 0

"""`moot trust`: approve what this repository's settings files turn on.

A project's `.moot/settings.json` and `.moot/settings.local.json` may hold grants (hooks,
`"sandbox": "none"`, allow rules, a wide default mode, `env`, ...) that stay off until the
person approves that exact content here (`moot.settings.review`). This shows each held file with
what it asks for and, once the person says yes (or `--yes`), approves the content shown: a file
changed since is asked about again. `--revoke` forgets the workspace's approvals.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path


def run_trust(options: Namespace) -> int:
    """Show what the workspace's settings files ask for and approve it; 0 when approved (or
    nothing waits), 1 when the person kept it off or it could not be done."""
    from moot.client.trust import held_files
    from moot.paths import workspace_root
    from moot.settings import SettingsError
    from moot.settings.review import SettingsApprovals

    workspace = workspace_root(Path.cwd())
    approvals = SettingsApprovals()
    if options.revoke:
        try:
            revoked = approvals.revoke(workspace)
        except OSError as exc:
            print(f"moot: cannot write {approvals.path}: {exc.strerror}", file=sys.stderr)
            return 1
        print(
            f"forgot the approvals of {workspace}"
            if revoked
            else f"nothing approved in {workspace}"
        )
        return 0
    try:
        held = held_files(workspace)
    except SettingsError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return 1
    if not held:
        print(f"nothing waits for approval in {workspace}: its settings files are in force")
        return 0
    for file in held:
        print(f"{file.file} asks to turn on:")
        for grant in file.grants:
            print(f"  - {grant}")
    if not options.yes:
        if not sys.stdin.isatty():
            print("moot: nothing approved; `moot trust --yes` approves it", file=sys.stderr)
            return 1
        try:
            answer = input(f"Approve this for {workspace}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("kept off; `moot trust` asks again")
            return 1
    try:
        for file in held:  # the content shown, not what the files hold by now
            approvals.approve(workspace, file)
    except OSError as exc:
        print(f"moot: cannot write {approvals.path}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"approved: sessions opened from now on in {workspace} use it")
    return 0

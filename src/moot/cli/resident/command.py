"""`moot resident status|stop`: the resident process of this interpreter and moot."""

from __future__ import annotations

import sys
from argparse import Namespace

from moot.cli.resident import client, place
from moot.cli.resident.switch import wanted


def run_resident(options: Namespace) -> int:
    answer = client.ask(options.action)
    where = place.socket_path(place.identity())
    if answer is None:
        on = "on" if wanted() else "off"
        print(f"no resident moot is running (socket {where}; resident: {on})")
        return 0 if options.action == "stop" else 1
    if answer.startswith("refused"):
        print(f"moot resident: {answer.strip()}", file=sys.stderr)
        return 1
    if options.action == "stop":
        print("the resident moot takes no more runs; it ends once those running end")
        return 0
    print(answer.strip())
    print(f"socket {where}")
    return 0

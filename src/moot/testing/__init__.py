"""A test kit for front ends, shipped with moot so any front end (and its tests) can use it.

- `FakeClient` plays a list of events (written by hand, or recorded from a real run with
  `moot sessions export ID --format json`) through the client surface and records every op it
  receives: a front end under test holds it as it would hold a real session.
- `drive_turn` submits a turn to any client (a real one, a fake, or a bare `Runtime`), pumps its
  events to `turn_finished` and answers approvals along the way.
"""

from moot.testing.drive import TurnOutcome, drive_turn
from moot.testing.fake_client import FakeClient, events_from_export

__all__ = ["FakeClient", "TurnOutcome", "drive_turn", "events_from_export"]

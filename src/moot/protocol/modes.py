"""The names of the permission modes, as ops and events carry them.

What each mode does is `moot.permissions.modes.PermissionMode`'s business; the protocol only
names them, so front ends can switch modes without importing the permission layer.
"""

from typing import Literal

ModeName = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]

"""Whether a `moot` asks for a resident process: read before anything else of moot loads, so
that asking costs a file's open and read when the answer is no."""

from __future__ import annotations

import os
import sys
from stat import S_ISREG

SETTING = b'"resident"'


def wanted(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    """Whether this `moot` should use a resident process: `MOOT_RESIDENT` (1 or 0) when set,
    else `"resident": true` in the user's own settings (a repository's settings cannot ask for
    it: the process serves the user, not a workspace)."""
    env = os.environ if environ is None else environ
    if (chosen := env.get("MOOT_RESIDENT", "")) in ("0", "1"):
        return chosen == "1"
    if sys.platform != "linux":
        return False  # the peer checks read /proc
    settings = _user_settings(env)
    try:
        # Non-blocking, as the settings loader opens it: a FIFO there never hangs `moot`.
        fd = os.open(settings, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not S_ISREG(os.fstat(fd).st_mode):
            return False
        raw = os.read(fd, 1 << 20)
    except OSError:
        return False
    finally:
        os.close(fd)
    if SETTING not in raw:  # no JSON parser loaded for the usual answer
        return False
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        return False  # moot itself says what is wrong with the file, as it starts
    return isinstance(data, dict) and data.get("resident") is True


def _user_settings(env: os._Environ[str] | dict[str, str]) -> str:
    """`<config dir>/settings.json` as `moot.paths.config_dir` says, without platformdirs
    (Linux only: `wanted` asks nothing elsewhere)."""
    if home := env.get("MOOT_HOME", ""):
        return os.path.join(os.path.expanduser(home), "config", "settings.json")
    config = env.get("XDG_CONFIG_HOME", "")
    if not config or not os.path.isabs(config):
        config = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "moot", "settings.json")

"""Slash commands, for every front end: the registry (`registry.py`) and the built-in commands
(`builtin.py`). No UI toolkit is imported here; the app and the REPL implement
`CommandContext`."""

"""Permission modes, allow/ask/deny rules, the one decision function, hooks."""

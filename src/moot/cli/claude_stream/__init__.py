"""Claude Code's headless protocol, spoken by moot: the message shapes the Claude Agent SDKs
and scripts written for `claude -p` read (`--output-format stream-json` and `json`).

moot's own events are a superset (`--output-format events`); these modules only translate
them, reading nothing but the protocol, so the stored log stays the one source of truth.
"""

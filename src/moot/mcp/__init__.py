"""MCP servers in a moot session: configuration, approval, the host process and the tools.

`config` reads `.mcp.json` and the settings files; `approvals` remembers which repository
servers the person allowed; `manager` (in moot) and `host` (a child process holding the SDK's
connections, see `wire`) run them; `tools` makes their tools moot tools. The SDK is imported
only in the host process, in `connection`, `transport` and `oauth`.
"""

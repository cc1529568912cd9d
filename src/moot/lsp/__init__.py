"""Language servers: what moot learns from them after an edit, and the `diagnostics` tool.

`servers` says which server serves a file's language and where its binary is (PATH outside
the workspace, or the person's settings); `rpc` speaks JSON-RPC to it over stdio; `server`
is one running server and the documents it holds; `session` is the session's set of them,
started at the first edit of a language and shut down with the session; `report` compares
what a server says before and after an edit and writes the new errors for the model.
"""

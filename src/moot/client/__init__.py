"""The client surface's implementations: what a front end opens to talk to a session.

`open_client` assembles a session in this process and returns its `LocalClient`; `open_queries`
answers questions about stored sessions without opening one. The contract itself (the `Client`
and `Queries` protocols and their values) is in `moot.protocol.client`. Front ends import this
package and `moot.protocol`, and nothing else of moot's internals (an import-linter contract in
`pyproject.toml` keeps it so).
"""

from moot.client.errors import SetupError

__all__ = ["SetupError"]

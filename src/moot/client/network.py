"""A session's network allowlist: its proxy (`moot.sandbox.net_proxy`), the questions it asks
about hosts on neither `sandbox.network` list, and the events that record both.

The proxy lives in the sandbox layer and knows nothing of the log: it calls back. Its code
loads only for a session whose settings name a network (`session_network`). Here each
connection becomes a `network_connection` event and each question a
`network_access_requested`, which the person answers with the `AnswerNetworkAccess` op (the
runtime reaches `answer` through `RuntimeOptions.network`, and records the
`network_access_decided`). An "always" answer is written into `.moot/settings.local.json`,
approved as the person's own (`moot.settings.write.save_allowed_domain`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from moot.client.settings_watch import SettingsWatch
from moot.protocol import events as ev
from moot.settings import (
    NetworkSettings,
    Settings,
    SettingsError,
    load_settings,
    network_settings,
    save_allowed_domain,
    settings_files,
)
from moot.settings.layers import SettingsLayers

if TYPE_CHECKING:
    from moot.client.session import SessionAssembly
    from moot.sandbox.net_proxy import ConnectionRecord, Grant
    from moot.sandbox.net_rules import NetworkRules


def session_network(
    settings: Settings, workspace: Path, assembly: SessionAssembly
) -> SessionNetwork | None:
    """The session's network, when its settings name one (`sandbox.network`); None: commands
    have no network. It asks only where the front end answers network questions."""
    wanted = network_settings(settings)
    if wanted is None:
        return None
    asks = assembly.can_ask and assembly.asks_about_network
    network = SessionNetwork(wanted, workspace, asks=asks, hosts=assembly.network_hosts)
    network.follow(assembly.settings_layers)
    return network


def rules_of(settings: NetworkSettings) -> NetworkRules:
    """The proxy's lists from the `sandbox.network` settings."""
    from moot.sandbox.net_rules import NetworkRules

    return NetworkRules(tuple(settings.allowed_domains), tuple(settings.denied_domains))


class SessionNetwork:
    """The session's proxy and its questions (see the module docstring).

    Args:
        settings: The `sandbox.network` settings.
        workspace: Where an "always" answer is written (`.moot/settings.local.json`).
        asks: Someone answers network questions; False: a host on neither list is refused.
        hosts: Names the proxy resolves to these addresses (tests).
    """

    def __init__(
        self,
        settings: NetworkSettings,
        workspace: Path,
        *,
        asks: bool,
        hosts: Mapping[str, str] | None = None,
    ) -> None:
        from moot.sandbox.net_proxy import NetworkProxy  # only for a session with a network

        self.workspace = workspace
        self.proxy = NetworkProxy(
            rules_of(settings), ask=self.ask if asks else None, record=self._connected, hosts=hosts
        )
        self._record: Callable[[ev.Event], object] | None = None
        self._waiting: dict[str, tuple[str, asyncio.Future[Grant]]] = {}

    def follow(self, layers: SettingsLayers) -> None:
        """Read the lists again whenever the settings files change (an "always" answer, an
        edit), as the permission rules do; settings that no longer load keep the old lists,
        and lists that are gone leave none (every host is then asked about or refused)."""
        watch = SettingsWatch(settings_files(self.workspace))

        def refresh() -> None:
            if not watch.changed():
                return
            try:
                settings = load_settings(self.workspace, chosen=layers)
            except SettingsError:
                return
            self.proxy.rules = rules_of(network_settings(settings) or NetworkSettings())

        self.proxy.refresh = refresh

    def attach(self, record: Callable[[ev.Event], object]) -> None:
        """Record events through `record` (the runtime's `record_session`) from now on."""
        self._record = record

    async def ask(self, host: str, port: int) -> Grant:
        """Ask the person about (host, port): a `network_access_requested`, then its answer."""
        request_id = f"net_{uuid.uuid4().hex[:12]}"
        waiting: asyncio.Future[Grant] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = (host, waiting)
        try:
            if self._record is None:
                return "deny"  # no session to ask through yet
            self._record(ev.NetworkAccessRequested(request_id=request_id, host=host, port=port))
            return await waiting
        finally:
            self._waiting.pop(request_id, None)

    def answer(self, request_id: str, approved: bool, scope: str) -> tuple[str, str]:
        """Settle a question (`AnswerNetworkAccess`); (its host, what an "always" kept).

        Raises:
            KeyError: No such question waits.
        """
        host, waiting = self._waiting[request_id]
        if waiting.done():
            raise KeyError(request_id)
        note = ""
        grant: Grant = "deny"
        if approved:
            grant = "always" if scope == "always" else "session" if scope == "session" else "once"
        if grant == "always":
            try:
                note = f"added {host} to {save_allowed_domain(self.workspace, host)}"
            except (SettingsError, OSError) as error:
                grant, note = "session", f"allowed for the session only: {error}"
        waiting.set_result(grant)
        return host, note

    def _connected(self, record: ConnectionRecord) -> None:
        if self._record is None:
            return
        event = ev.NetworkConnection(
            host=record.host,
            port=record.port,
            allowed=record.allowed,
            how=record.how,
            reason=record.reason,
            bytes_up=record.bytes_up,
            bytes_down=record.bytes_down,
        )
        with contextlib.suppress(Exception):  # a closed session records nothing more
            self._record(event)

"""`sandbox.network`: its lists add up across the files, a string `sandbox` and an object mix,
a repository's allowlist is a grant held for review and its denials are not."""

from __future__ import annotations

import pytest

from moot.settings import SettingsError, merge, network_settings, sandbox_backend
from moot.settings.check import validate
from moot.settings.review import grants, held_out


def test_the_lists_add_up_and_the_later_backend_wins() -> None:
    merged = merge(
        [
            {"sandbox": "docker"},
            {"sandbox": {"network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["x.io"]}}},
            {"sandbox": {"network": {"allowedDomains": ["*.pypi.org", "pypi.org"]}}},
        ]
    )
    network = network_settings(merged)
    assert sandbox_backend(merged) == "docker" and network is not None
    assert (network.allowed_domains, network.denied_domains) == (
        ["pypi.org", "*.pypi.org"],
        ["x.io"],
    )
    assert sandbox_backend(merge([{"sandbox": "docker"}, {"sandbox": "none"}])) == "none"
    assert network_settings(merge([{"sandbox": "bubblewrap"}])) is None


def test_a_repositorys_allowlist_is_held_and_its_denials_apply() -> None:
    data = {
        "sandbox": {
            "backend": "none",
            "network": {"allowedDomains": ["a.io"], "deniedDomains": ["b.io"]},
        }
    }
    assert grants(data) == [
        '"backend": "none" (shell commands run on the host, unsandboxed)',
        "network access for shell commands to a.io",
    ]
    assert held_out(data) == {"sandbox": {"network": {"deniedDomains": ["b.io"]}}}
    assert grants({"sandbox": {"network": {"deniedDomains": ["b.io"]}}}) == []


def test_a_misspelt_network_key_is_named_with_the_keys_it_takes() -> None:
    with pytest.raises(
        SettingsError, match=r"sandbox\.network\.allowed: not a known key .*allowedDomains"
    ):
        validate({"sandbox": {"network": {"allowed": []}}}, "f")
    with pytest.raises(
        SettingsError, match="expected one of auto, bubblewrap, landlock, seatbelt, docker, none"
    ):
        validate({"sandbox": {"backend": "nope"}}, "f")

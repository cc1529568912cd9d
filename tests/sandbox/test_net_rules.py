from __future__ import annotations

import pytest

from moot.sandbox.net_rules import NetworkRules, canonical, matches


def test_a_wildcard_covers_the_hosts_below_a_name_and_not_the_name_itself() -> None:
    assert matches("files.pypi.org", "*.pypi.org")
    assert matches("a.b.pypi.org", "*.pypi.org")
    assert not matches("pypi.org", "*.pypi.org")
    assert not matches("evilpypi.org", "*.pypi.org")
    assert matches("pypi.org", "PyPI.org.")
    assert matches("anything.example", "*")


def test_denied_wins_over_allowed_and_over_the_persons_answer() -> None:
    rules = NetworkRules(allowed=("*.example.com",), denied=("secret.example.com",))
    assert rules.verdict("www.example.com")[0] == "allow"
    verdict, why = rules.verdict("SECRET.example.com.", granted=("secret.example.com",))
    assert verdict == "deny" and "deniedDomains (secret.example.com)" in why
    assert rules.verdict("other.org")[0] == "ask"
    assert rules.verdict("other.org", granted=("other.org",))[0] == "allow"


def test_a_host_is_decided_in_the_spelling_the_resolver_reads() -> None:
    rules = NetworkRules(
        allowed=("*.example.com", "bücher.example"), denied=("secret.example.com",)
    )
    assert canonical("secr\xadet.example.com") == "secret.example.com"  # soft hyphen: nothing
    assert rules.verdict(canonical("ｓｅｃｒｅｔ.example.com"))[0] == "deny"
    assert rules.verdict(canonical("BÜCHER.example"))[0] == "allow"
    assert canonical("167772161") == canonical("10.1") == canonical("::ffff:10.0.0.1")
    for junk in ("a@secret.example.com", "a/b", "a b", "*"):
        with pytest.raises(ValueError, match="not a host name"):
            canonical(junk)

from __future__ import annotations

from moot.sandbox.net_rules import NetworkRules, matches


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

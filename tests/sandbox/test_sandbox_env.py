"""`scrub_env`: what a command's environment keeps (named variables) and what it loses."""

from __future__ import annotations

import pytest

from moot.sandbox.env import (
    DEFAULT_PATH,
    FORCED,
    is_passed_name,
    is_secret_name,
    looks_secret_value,
    scrub_env,
)


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "FAKE_API_KEY",
        "MYAPIKEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "HF_TOKEN",
        "NPM_TOKEN",
        "SLACK_BOT_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLIENT_SECRET",
        "JWT_SECRET_KEY",
        "DJANGO_SECRET",
        "PGPASSWORD",
        "DB_PASSWORD",
        "MYSQL_PWD",
        "GPG_PASSPHRASE",
        "SSH_AUTH_SOCK",
        "DOCKER_HOST",
        "NPM_AUTH",
        "GITLAB_PAT",
        "STRIPE_KEY",
        "private_key",
        "github_token",
        "npm_config_//registry.npmjs.org/:_authToken",
        "CI_JOB_JWT",
        "SESSION_COOKIE",
        "OAUTH",
        "CREDS",
        "SENTRY_DSN",
        "SLACK_WEBHOOK",
    ],
)
def test_secret_names_are_dropped_even_when_named(name: str) -> None:
    assert is_secret_name(name)
    assert name not in scrub_env({name: "x"}, named=[name])


BRIEF_SECRETS = {
    "CI_JOB_JWT": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2ln",
    "SESSION_COOKIE": "s%3Aabcdef",
    "BEARER": "abcdef0123456789",
    "OAUTH": "ya29.abcdef",
    "CREDS": "user:hunter2",
    "SLACK_WEBHOOK": "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    "SENTRY_DSN": "https://0123456789abcdef@o1.ingest.sentry.io/1",
}
"""What a denylist let through (issue 28): names no list of secret words foresaw."""


def test_only_named_variables_pass() -> None:
    env = scrub_env({**BRIEF_SECRETS, "SOMETHING_ELSE": "plain", "PATH": "/usr/bin"})

    assert not set(env) & {*BRIEF_SECRETS, "SOMETHING_ELSE"}
    assert env["PATH"] == "/usr/bin"


@pytest.mark.parametrize("name", sorted(BRIEF_SECRETS))
def test_a_secret_the_settings_name_does_not_pass(name: str) -> None:
    """Settings may name a variable (a repository's too), and the process's value wins over
    the file's: naming one must not be a way to read the person's secret."""
    assert is_secret_name(name) or looks_secret_value(BRIEF_SECRETS[name])
    assert name not in scrub_env(BRIEF_SECRETS, named=[name])


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "USER",
        "SHELL",
        "TZ",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYENV_VERSION",
        "GOPATH",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "NODE_ENV",
        "PYTHONHASHSEED",
        "JAVA_HOME",
        "SSL_CERT_FILE",
    ],
)
def test_the_toolchains_variables_pass(name: str) -> None:
    assert is_passed_name(name) and not is_secret_name(name)
    assert scrub_env({name: "plain-value"})[name] == "plain-value"


@pytest.mark.parametrize(
    "name",
    [
        "TOKENIZERS_PARALLELISM",
        "KEYMAP",
        "PASSWORD_STORE_DIR",
        "KEYTIMEOUT",
        "OPENAI_BASE_URL",
        "MY_PROJECT_MODE",
    ],
)
def test_other_variables_pass_only_when_the_settings_name_them(name: str) -> None:
    assert not is_secret_name(name)
    assert name not in scrub_env({name: "plain-value"})
    assert scrub_env({name: "plain-value"}, named=[name])[name] == "plain-value"


@pytest.mark.parametrize("name", ["XAUTHORITY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "MOOT_HOME"])
def test_doors_to_the_desktop_and_to_moot_stay_out(name: str) -> None:
    assert name not in scrub_env({name: "/somewhere"})


@pytest.mark.parametrize(
    "value",
    [
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
        "sk-proj-abcdefghijklmnopqrstuvwxyz",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-abcdefghijklmnopqrst",
        "xoxb-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
        "hf_abcdefghijklmnopqrstuvwxyz0123456789",
        "postgres://app:hunter2@db.internal:5432/app",
        "https://user:pass@example.com/repo.git",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
        "https://ghp_token@github.com/me/repo.git",
        "https://0123456789abcdef@o1.ingest.sentry.io/1",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "https://discord.com/api/webhooks/1/abc",
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2ln",
        # found by the second attack (issue 28): proxies curl, pip and git take as written
        "corp:hunter2@proxy.internal:3128",
        "http://:hunter2@proxy.internal:3128",
        "socks5h://0123456789abcdef@proxy.internal:1080",
        "socks5://:tok@proxy.internal:1080",
    ],
)
def test_secret_looking_values_are_dropped_whatever_the_name(value: str) -> None:
    assert looks_secret_value(value)
    assert "INNOCENT" not in scrub_env({"INNOCENT": value}, named=["INNOCENT"])
    assert "HTTPS_PROXY" not in scrub_env({"HTTPS_PROXY": value})


@pytest.mark.parametrize(
    "value",
    [
        "/usr/bin:/bin",
        "https://api.example.com/v1",
        "ssh://git@github.com:22/me/repo.git",
        "git@github.com:me/repo.git",
        "disk-usage-report-for-the-whole-team",
        "en_US.UTF-8",
        "proxy.internal:3128",
        "http://proxy.internal:3128",
        "localhost,127.0.0.1,.internal",
        "user@example.com",
    ],
)
def test_ordinary_values_are_kept(value: str) -> None:
    assert not looks_secret_value(value)
    assert scrub_env({"SOMETHING": value}, named=["SOMETHING"])["SOMETHING"] == value


def test_defaults_fill_gaps_and_forced_values_win() -> None:
    env = scrub_env({"TERM": "xterm-256color", "PAGER": "less", "LANG": "de_DE.UTF-8"})

    assert env["PATH"] == DEFAULT_PATH
    assert env["HOME"] and env["LANG"] == "de_DE.UTF-8"
    assert {name: env[name] for name in FORCED} == FORCED
    assert env["TERM"] == "dumb" and env["GIT_TERMINAL_PROMPT"] == "0"


def test_extra_is_set_last_and_the_input_is_left_alone() -> None:
    source = {"TMPDIR": "/host/tmp", "API_KEY": "k"}

    env = scrub_env(source, extra={"TMPDIR": "/tmp"})

    assert env["TMPDIR"] == "/tmp"
    assert source == {"TMPDIR": "/host/tmp", "API_KEY": "k"}

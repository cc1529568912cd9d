"""`scrub_env`: what a sandboxed command's environment keeps and what it loses."""

from __future__ import annotations

import pytest

from moot.sandbox.env import DEFAULT_PATH, FORCED, is_secret_name, looks_secret_value, scrub_env


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
    ],
)
def test_secret_names_are_dropped(name: str) -> None:
    assert is_secret_name(name)
    assert name not in scrub_env({name: "x"})


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
        "GOPATH",
        "CARGO_HOME",
        "TOKENIZERS_PARALLELISM",
        "KEYMAP",
        "XAUTHORITY",
        "PYTHONHASHSEED",
        "PASSWORD_STORE_DIR",
        "KEYTIMEOUT",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "MOOT_SANDBOX",
    ],
)
def test_ordinary_names_are_kept(name: str) -> None:
    assert not is_secret_name(name)
    assert scrub_env({name: "plain-value"})[name] == "plain-value"


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
    ],
)
def test_secret_looking_values_are_dropped_whatever_the_name(value: str) -> None:
    assert looks_secret_value(value)
    assert "INNOCENT" not in scrub_env({"INNOCENT": value})


@pytest.mark.parametrize(
    "value",
    [
        "/usr/bin:/bin",
        "https://api.example.com/v1",
        "ssh://git@github.com:22/me/repo.git",
        "git@github.com:me/repo.git",
        "disk-usage-report-for-the-whole-team",
        "en_US.UTF-8",
    ],
)
def test_ordinary_values_are_kept(value: str) -> None:
    assert not looks_secret_value(value)
    assert scrub_env({"SOMETHING": value})["SOMETHING"] == value


def test_keep_passes_a_chosen_secret_through() -> None:
    env = scrub_env({"NPM_TOKEN": "t", "GITHUB_TOKEN": "g"}, keep=["npm_token"])

    assert env["NPM_TOKEN"] == "t"
    assert "GITHUB_TOKEN" not in env


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

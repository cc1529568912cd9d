"""The environment a sandboxed command sees: the caller's, minus anything that looks secret.

Every backend passes the environment it is given through `scrub_env`, so a command the model
runs cannot print `ANTHROPIC_API_KEY` into the transcript or send it anywhere. A variable is
dropped when its *name* looks secret (a word such as `KEY`, `TOKEN`, `SECRET`, `PASSWORD`,
`CREDENTIALS`; a family such as `AWS_*`) or its *value* does (a known key format, a URL with a
password in it). Names are split into `_`-separated words, so `TOKENIZERS_PARALLELISM` and
`KEYMAP` stay while `HF_TOKEN` and `OPENAI_API_KEY` go. Then a few variables get sane values
for a command with no terminal and no stdin: `TERM=dumb`, pagers that do not wait for keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_WORDS = frozenset({"KEY", "TOKEN", "CREDENTIAL", "CREDENTIALS", "AUTH", "PAT"})
"""A name holding one of these `_`-separated words is secret (`GITHUB_PAT`, `NPM_AUTH`)."""
SECRET_FRAGMENTS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "APIKEY")
"""Substrings that make a name secret wherever they stand (`PGPASSWORD`, `MYAPIKEY`)."""
SECRET_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_APPLICATION_", "VAULT_", "OP_SERVICE_ACCOUNT")
"""Families whose every member is credentials or says where they are."""
SECRET_NAMES = frozenset(
    {"MYSQL_PWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KRB5CCNAME", "DOCKER_HOST"}
)
"""Not secrets themselves but doors to them: an agent socket signs as the user; a Docker
endpoint is root on the host."""
HARMLESS = frozenset({"PASSWORD_STORE_DIR", "KEYTIMEOUT", "GPG_TTY"})
"""Names the rules above would drop but that hold no secret (a directory, a number, a tty)."""

_SECRET_VALUE = re.compile(
    r"""
    \b(?:sk|rk)-[A-Za-z0-9_-]{20,}          # OpenAI, Anthropic (sk-ant-...), Stripe secret keys
    | \bgh[pousr]_[A-Za-z0-9]{30,}          # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{30,}
    | \bglpat-[A-Za-z0-9_-]{20,}            # GitLab
    | \bxox[abposr]-[A-Za-z0-9-]{10,}       # Slack
    | \bAKIA[0-9A-Z]{16}\b                  # AWS access key id
    | \bAIza[0-9A-Za-z_-]{35}               # Google API key
    | \bhf_[A-Za-z0-9]{30,}                 # Hugging Face
    | -----BEGIN[ A-Z]*PRIVATE\ KEY-----
    | ://[^/\s:@]+:[^/\s@]+@                # a password inside a URL (postgres://u:p@host)
    """,
    re.VERBOSE,
)

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FORCED = {
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "DEBIAN_FRONTEND": "noninteractive",
}
"""Set for every command: there is no terminal and stdin is closed, so nothing should page,
colour for a screen or wait for a password prompt."""


def is_secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret (see the module docstring)."""
    upper = name.upper()
    if upper in HARMLESS:
        return False
    if upper in SECRET_NAMES or upper.startswith(SECRET_PREFIXES):
        return True
    if any(fragment in upper for fragment in SECRET_FRAGMENTS):
        return True
    return any(word in SECRET_WORDS for word in upper.split("_"))


def looks_secret_value(value: str) -> bool:
    """Whether a value looks like a credential whatever its name: a known key format, a URL
    with a password, a private key."""
    return _SECRET_VALUE.search(value) is not None


def scrub_env(
    env: Mapping[str, str], *, keep: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment to run a command with: `env` without secrets, with sane defaults.

    Args:
        env: The environment to start from, usually `os.environ`.
        keep: Names to pass through even though they look secret (a user's explicit choice).
        extra: Set last, unscrubbed: the backend's own variables (`TMPDIR`, say).

    Returns:
        A new dict: no secret-looking names or values; `PATH`, `HOME` and `LANG` present (from
        `env` or a default); `FORCED` applied.
    """
    kept = {name.upper() for name in keep}
    clean = {
        name: value
        for name, value in env.items()
        if name.upper() in kept or not (is_secret_name(name) or looks_secret_value(value))
    }
    clean.setdefault("PATH", DEFAULT_PATH)
    clean.setdefault("HOME", "/")
    clean.setdefault("LANG", "C.UTF-8")
    clean.update(FORCED)
    clean.update(extra or {})
    return clean

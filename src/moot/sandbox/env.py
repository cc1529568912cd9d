"""The environment a command sees: named variables only, never one that looks secret.

Every backend (bubblewrap, Docker, the host, the editor's terminal) passes the environment it
is given through `scrub_env`. A variable reaches the command only when it is named: in
`PASSED` (the basics a shell needs, and the toolchains' own variables that say where things
are: `VIRTUAL_ENV`, `GOPATH`, `CARGO_HOME`, ...), in `PASSED_PREFIXES` (`LC_*`, `PYTHON*`,
...), or by the settings' `env` (the person's files, or a repository's, which the person is
told about: `moot.settings.review`). Anything else stays out, whatever its name: a denylist
always misses one (`CI_JOB_JWT`, `SESSION_COOKIE`, `SENTRY_DSN`).

A named variable is still dropped when its *name* looks secret (a word such as `KEY`,
`TOKEN`, `SECRET`, `PASSWORD`, `COOKIE`; a family such as `AWS_*`) or its *value* does (a known
key format, a URL carrying credentials, a webhook): a settings file may name `GITHUB_TOKEN`,
and the process's own value would win over the file's (`client.environment.session_environ`),
so naming a variable must not be a way to read the person's. There is no way to pass a
secret to a command through the environment; a command that needs one reads a file the
person put in the workspace.

Then a few variables get sane values for a command with no terminal and no stdin:
`TERM=dumb`, pagers that do not wait for keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

PASSED = frozenset(
    {
        # what a shell and most programs expect
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ", "LANG", "LANGUAGE", "TMPDIR",
        "CI", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLUMNS", "LINES",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
        # Python
        "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE",
        "CONDA_PYTHON_EXE", "CONDA_SHLVL", "UV_PYTHON", "UV_CACHE_DIR", "PIPX_HOME",
        # JavaScript
        "NODE_ENV", "NODE_PATH", "NODE_OPTIONS", "NVM_DIR", "NVM_BIN", "NVM_INC",
        "VOLTA_HOME", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR", "DENO_INSTALL", "COREPACK_HOME",
        # Go
        "GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOOS", "GOARCH",
        "GO111MODULE", "GOTOOLCHAIN", "GOPRIVATE", "GONOSUMDB", "GONOPROXY", "GOPROXY",
        "CGO_ENABLED",
        # Rust
        "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR",
        # JVM, Ruby, .NET
        "JAVA_HOME", "JDK_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_HOME", "GRADLE_USER_HOME",
        "SDKMAN_DIR", "GEM_HOME", "GEM_PATH", "BUNDLE_PATH", "BUNDLE_GEMFILE", "RBENV_ROOT",
        "RBENV_VERSION", "DOTNET_ROOT", "DOTNET_CLI_TELEMETRY_OPTOUT",
        # version managers
        "ASDF_DIR", "ASDF_DATA_DIR", "MISE_DATA_DIR",
        # compilers and linkers
        "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS",
        "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CMAKE_PREFIX_PATH",
        # certificates and proxies (the value check drops a proxy URL with a password)
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        # git's identity (the person's own; the repository's config wins over none of it)
        "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    }
)  # fmt: skip
"""Variables every command gets when the environment has them (and they look harmless)."""
PASSED_PREFIXES = ("LC_", "PYTHON", "PYENV_", "RUST")
"""Families passed whole: the locale, Python's and pyenv's, Rust's (`RUSTFLAGS`,
`RUST_BACKTRACE`). Not `JAVA_OPTS` and its kind: they often carry `-D...password=`."""

SECRET_WORDS = frozenset(
    {
        "KEY", "KEYS", "TOKEN", "TOKENS", "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "OAUTH",
        "PAT", "JWT", "BEARER", "COOKIE", "COOKIES", "SESSION", "DSN", "WEBHOOK", "PRIVATE",
        "SIGNATURE", "SALT", "PWD", "PASS",
    }
)  # fmt: skip
"""A name holding one of these `_`-separated words is secret (`GITHUB_PAT`, `CI_JOB_JWT`)."""
SECRET_FRAGMENTS = (
    "PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "APIKEY", "AUTHTOKEN", "ACCESSTOKEN",
    "AUTHKEY", "PRIVATEKEY",
)  # fmt: skip
"""Substrings that make a name secret wherever they stand (`PGPASSWORD`,
`npm_config__authToken`)."""
SECRET_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_APPLICATION_", "VAULT_", "OP_SERVICE_ACCOUNT")
"""Families whose every member is credentials or says where they are."""
SECRET_NAMES = frozenset(
    {"MYSQL_PWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KRB5CCNAME", "DOCKER_HOST"}
)
"""Not secrets themselves but doors to them: an agent socket signs as the user; a Docker
endpoint is root on the host."""
HARMLESS = frozenset({"PASSWORD_STORE_DIR", "KEYTIMEOUT", "GPG_TTY", "TOKENIZERS_PARALLELISM"})
"""Names the rules above would drop but that hold no secret (a directory, a number, a tty)."""

_SECRET_VALUE = r"""
    \b(?:sk|rk)-[A-Za-z0-9_-]{20,}          # OpenAI, Anthropic (sk-ant-...), Stripe secret keys
    | \bgh[pousr]_[A-Za-z0-9]{30,}          # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{30,}
    | \bglpat-[A-Za-z0-9_-]{20,}            # GitLab
    | \bxox[abposr]-[A-Za-z0-9-]{10,}       # Slack
    | \bAKIA[0-9A-Z]{16}\b                  # AWS access key id
    | \bAIza[0-9A-Za-z_-]{35}               # Google API key
    | \bhf_[A-Za-z0-9]{30,}                 # Hugging Face
    | \beyJ[A-Za-z0-9_-]{10,}\.eyJ          # a JWT
    | -----BEGIN[ A-Z]*PRIVATE\ KEY-----
    | ://[^/\s:@]*:[^/\s@]+@                # a password inside a URL (postgres://u:p@host)
    | \b(?:https?|socks[45]?h?)://[^/\s@]+@  # a token as a web or proxy URL's user
    | (?:^|[\s,;=])[^/\s:@,;=]+:[^/\s@,;]+@[\w.\[-]  # a proxy without a scheme (u:p@proxy:3128)
    | hooks\.slack\.com/                    # webhooks: whoever has the URL may post
    | discord(?:app)?\.com/api/webhooks/
    | webhook\.office\.com/
    """
"""Values that look secret (a verbose pattern, compiled at its first use: `_secret_value`)."""


@cache
def _secret_value() -> re.Pattern[str]:
    """`_SECRET_VALUE`, compiled once a command's environment is first scrubbed (~0.5 ms that
    no session pays before its first command)."""
    return re.compile(_SECRET_VALUE, re.VERBOSE)


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


def is_passed_name(name: str) -> bool:
    """Whether `name` is one every command gets (`PASSED`, `PASSED_PREFIXES`), if harmless."""
    return name in PASSED or name.upper().startswith(PASSED_PREFIXES)


def is_secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret (see the module docstring)."""
    upper = name.upper()
    if upper in HARMLESS:
        return False
    if upper in SECRET_NAMES or upper.startswith(SECRET_PREFIXES):
        return True
    if any(fragment in upper for fragment in SECRET_FRAGMENTS):
        return True
    return any(word in SECRET_WORDS for word in re.split(r"[^A-Z0-9]+", upper))


def looks_secret_value(value: str) -> bool:
    """Whether a value looks like a credential whatever its name: a known key format, a URL
    with a password or a token in it, a webhook, a private key."""
    return _secret_value().search(value) is not None


def scrub_env(
    env: Mapping[str, str],
    *,
    named: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment to run a command with: the named variables of `env` that look harmless,
    with sane defaults.

    Args:
        env: The environment to start from: the session's (`os.environ` under the settings'
            `env`).
        named: Names passed besides `PASSED`: those the settings' `env` sets
            (`SandboxPolicy.env_names`). They too are dropped when they look secret.
        extra: Set last, unchecked: the backend's own variables (`TMPDIR`, say).

    Returns:
        A new dict: only named variables, none with a secret-looking name or value; `PATH`,
        `HOME` and `LANG` present (from `env` or a default); `FORCED` applied.
    """
    also = set(named)
    clean = {
        name: value
        for name, value in env.items()
        if (name in also or is_passed_name(name))
        and not (is_secret_name(name) or looks_secret_value(value))
    }
    clean.setdefault("PATH", DEFAULT_PATH)
    clean.setdefault("HOME", "/")
    clean.setdefault("LANG", "C.UTF-8")
    clean.update(FORCED)
    clean.update(extra or {})
    return clean

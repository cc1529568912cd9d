"""The Seatbelt profile, as text, against the policy it is made from.

No test machine of moot's runs macOS: the profile is never run by `sandbox-exec` here. So it
is read back with a small reader of SBPL's S-expressions (`parse`) and decided by a small
evaluator of the forms moot writes (`Decide`: `subpath`, `literal`, `require-all/any/not`,
`param`), with Seatbelt's rule for a profile that denies by default: an operation is allowed
when some allow rule for it matches. The evaluator knows only those forms and fails on any
other, so a profile moot writes with another form fails these tests until they learn it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from moot.client.facts import sandbox_words
from moot.permissions.masks import sandbox_masks
from moot.permissions.rules import RuleSet
from moot.sandbox.base import SandboxMasks, SandboxPolicy
from moot.sandbox.seatbelt import SeatbeltSandbox, command_env, rules_for, seatbelt_unavailable
from moot.sandbox.seatbelt_profile import (
    SANDBOX_EXEC,
    Profile,
    SeatbeltRules,
    argv,
    real_forms,
    render,
    sbpl_string,
)
from moot.sandbox.select import auto_order
from moot.workspace.absent import AbsentPaths

# ---- reading a profile back -------------------------------------------------------------

_TOKEN = re.compile(r'\s+|;[^\n]*|#"(?:[^"\\]|\\.)*"|"(?:[^"\\]|\\.)*"|\(|\)|[^\s()";]+')


class Str(str):
    """A string literal of the profile, unescaped (a bare symbol stays a plain `str`)."""


def parse(text: str) -> list[Any]:
    """The profile's forms; strings unescaped as TinyScheme reads them."""
    stack: list[list[Any]] = [[]]
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        assert match, f"unreadable at {text[pos : pos + 30]!r}"
        token = match.group()
        pos = match.end()
        if token.isspace() or token.startswith(";"):
            continue
        if token == "(":
            stack.append([])
        elif token == ")":
            done = stack.pop()
            stack[-1].append(done)
        elif token.startswith('"'):
            stack[-1].append(Str(re.sub(r"\\(.)", r"\1", token[1:-1])))
        else:
            stack[-1].append(token)
    assert len(stack) == 1, "unbalanced parentheses"
    return stack[0]


class Decide:
    """Whether the profile allows an operation on a path (see the module docstring)."""

    def __init__(self, profile: Profile) -> None:
        self.forms = parse(profile.text)
        self.params = dict(profile.params)

    def allows(self, operation: str, path: str) -> bool:
        for form in self.forms:
            if form[0] != "allow":
                continue
            ops = [x for x in form[1:] if isinstance(x, str) and not isinstance(x, Str)]
            filters = [x for x in form[1:] if isinstance(x, list)]
            if not any(self._covers(op, operation) for op in ops):
                continue
            if not filters or any(self._match(f, path) for f in filters):
                return True
        return False

    @staticmethod
    def _covers(op: str, operation: str) -> bool:
        return op == operation or (op.endswith("*") and operation.startswith(op[:-1]))

    def _value(self, value: Any) -> str:
        if isinstance(value, list):
            assert value[0] == "param", value
            return self.params[value[1]]
        assert isinstance(value, Str), value
        return str(value)

    def _match(self, form: list[Any], path: str) -> bool:
        head = form[0]
        if head == "require-all":
            return all(self._match(f, path) for f in form[1:])
        if head == "require-any":
            return any(self._match(f, path) for f in form[1:])
        if head == "require-not":
            return not self._match(form[1], path)
        if head == "subpath":
            root = self._value(form[1])
            return path == root or path.startswith(root.rstrip("/") + "/")
        if head == "literal":
            return path == self._value(form[1])
        if head in ("regex", "target", "global-name", "remote"):
            return False  # not a file filter
        raise AssertionError(f"a form the evaluator does not know: {form}")

    def network_rules(self) -> list[list[Any]]:
        return [f for f in self.forms if f[0] == "allow" and any("network" in x for x in f[1:])]


# ---- the rules from a policy ------------------------------------------------------------


def _rules(
    workspace: Path,
    *,
    policy: SandboxPolicy | None = None,
    masks: SandboxMasks | None = None,
    homes: list[str] | None = None,
    private: list[str] | None = None,
    outputs: Path | None = None,
    proxy_port: int | None = None,
    tmp: Path | None = None,
) -> SeatbeltRules:
    return rules_for(
        policy or SandboxPolicy(workspace=workspace),
        workspace=workspace,
        tmp=tmp or workspace.parent / "session-tmp",
        masks=masks or SandboxMasks(),
        homes=homes or [],
        private=private or [],
        outputs=outputs,
        proxy_port=proxy_port,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = (tmp_path / "home" / "me" / "ws").resolve()
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".moot").mkdir()
    (workspace / "src").mkdir()
    return workspace


def test_the_profile_denies_by_default_and_allows_nothing_by_default(ws: Path) -> None:
    forms = parse(render(_rules(ws)).text)

    assert forms[0] == ["version", "1"]
    assert forms[1] == ["deny", "default"]
    assert ["allow", "default"] not in forms
    # Every allow names its operations; none is a bare allow of everything of a kind but
    # processes, signals and information of the sandbox's own, and devices.
    broad = [f for f in forms if f[0] == "allow" and len(f) == 2]
    assert {f[1] for f in broad} <= {
        "process-exec", "process-fork", "sysctl-read", "user-preference-read", "ipc-posix-sem",
        "pseudo-tty",
    }  # fmt: skip


def test_the_workspace_and_the_session_tmp_are_writable_and_nothing_else(ws: Path) -> None:
    tmp = ws.parent / "session-tmp"
    decide = Decide(render(_rules(ws, tmp=tmp)))

    assert decide.allows("file-write-create", f"{ws}/src/new.py")
    assert decide.allows("file-write-data", f"{ws}/README")
    assert decide.allows("file-write-unlink", f"{tmp}/x")
    for outside in ("/etc/passwd", f"{ws.parent}/beside", "/tmp/x", "/private/var/tmp/x", "/"):
        assert not decide.allows("file-write-create", outside), outside
    assert not decide.allows("file-write-create", f"{ws}-evil/x"), "a sibling with its prefix"
    assert decide.allows("file-write-data", "/dev/null")
    assert not decide.allows("file-write-unlink", "/dev/null")


@pytest.mark.parametrize("target", [".git/config", ".git/hooks/pre-commit", ".git", ".moot/x"])
def test_git_and_moot_are_read_only(ws: Path, target: str) -> None:
    decide = Decide(render(_rules(ws)))

    assert not decide.allows("file-write-create", f"{ws}/{target}")
    assert not decide.allows("file-write-unlink", f"{ws}/{target}")
    assert decide.allows("file-read-data", f"{ws}/{target}")


def test_a_missing_git_may_be_made_as_with_the_other_backends(tmp_path: Path) -> None:
    """`git init` in a new project; an existing `.git` stays read-only."""
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()

    decide = Decide(render(_rules(ws)))

    assert decide.allows("file-write-create", f"{ws}/.git/config")


def test_an_added_directory_is_writable_but_its_own_git(ws: Path, tmp_path: Path) -> None:
    added = (tmp_path / "lib").resolve()
    (added / ".git").mkdir(parents=True)
    (added / ".moot").mkdir()
    policy = SandboxPolicy(workspace=ws, added=(added,))

    decide = Decide(render(_rules(ws, policy=policy)))

    assert decide.allows("file-write-create", f"{added}/src/x.c")
    assert not decide.allows("file-write-create", f"{added}/.git/config")
    assert not decide.allows("file-write-create", f"{added}/.moot/settings.json")


def test_masks_deny_reads_and_writes_and_edit_masks_writes(ws: Path) -> None:
    rules = RuleSet(deny=("Read(./.env)", "Read(./secrets/**)", "Edit(./locked/**)"))
    for rel in (".env", "secrets/key.pem", "locked/a.txt"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    masks = sandbox_masks(rules, ws)
    assert masks.hidden_files and masks.hidden_dirs and masks.read_only

    decide = Decide(render(_rules(ws, masks=masks)))

    for hidden in (".env", "secrets", "secrets/key.pem"):
        assert not decide.allows("file-read-data", f"{ws}/{hidden}"), hidden
        assert not decide.allows("file-write-data", f"{ws}/{hidden}"), hidden
    assert decide.allows("file-read-data", f"{ws}/locked/a.txt")
    assert not decide.allows("file-write-data", f"{ws}/locked/a.txt")
    assert not decide.allows("file-write-create", f"{ws}/locked/new")
    assert decide.allows("file-read-data", f"{ws}/src/main.py")


def test_a_mask_given_outside_the_workspace_is_hidden_where_it_lies(ws: Path) -> None:
    masks = SandboxMasks(hidden_files=("/srv/shared/token",))

    decide = Decide(render(_rules(ws, masks=masks)))

    assert not decide.allows("file-read-data", "/srv/shared/token")
    assert decide.allows("file-read-data", "/srv/shared/other")


def test_moots_directories_and_credentials_are_hidden_but_the_sessions_outputs(
    ws: Path,
) -> None:
    data = "/home/me/.local/share/moot"
    outputs = Path(f"{data}/outputs/20260101-abc")
    private = [data, "/home/me/.config/moot", "/home/me/.ssh"]

    decide = Decide(render(_rules(ws, private=private, outputs=outputs)))

    assert not decide.allows("file-read-data", f"{data}/sessions.db")
    assert not decide.allows("file-read-data", "/home/me/.config/moot/settings.json")
    assert not decide.allows("file-read-data", "/home/me/.ssh/id_ed25519")
    assert decide.allows("file-read-data", f"{outputs}/cmd-1.txt")
    assert not decide.allows("file-write-create", f"{outputs}/cmd-1.txt")


def test_moots_directory_inside_the_workspace_is_hidden_there(ws: Path) -> None:
    inside = ws / ".moot-home"
    inside.mkdir()

    decide = Decide(render(_rules(ws, private=[str(inside)])))

    assert not decide.allows("file-read-data", f"{inside}/data/sessions.db")
    assert not decide.allows("file-write-create", f"{inside}/x")
    assert decide.allows("file-write-create", f"{ws}/src/x")


def test_the_home_is_hidden_but_its_toolchains_and_the_workspace_in_it(
    ws: Path, tmp_path: Path
) -> None:
    home = (tmp_path / "home" / "me").resolve()
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("token")

    decide = Decide(render(_rules(ws, homes=[str(home)])))

    assert not decide.allows("file-read-data", f"{home}/.bash_history")
    assert not decide.allows("file-read-data", f"{home}/.cargo/credentials.toml")
    assert decide.allows("file-read-data", f"{home}/.cargo/bin/cargo")
    assert decide.allows("file-read-data", f"{ws}/src/main.py")
    assert decide.allows("file-read-metadata", str(home)), "the way to the workspace"
    assert not decide.allows("file-read-data", str(home)), "listing the home"
    assert decide.allows("file-read-data", "/usr/bin/env")


def test_a_home_that_is_the_workspace_is_not_hidden_whole(ws: Path) -> None:
    decide = Decide(render(_rules(ws, homes=[str(ws)])))

    assert decide.allows("file-read-data", f"{ws}/src/main.py")


def test_a_path_no_command_may_make_cannot_be_made(ws: Path, tmp_path: Path) -> None:
    absent = AbsentPaths(ws, [".husky"], tmp_path / "quarantine")
    policy = SandboxPolicy(workspace=ws, absent=absent)

    decide = Decide(render(_rules(ws, policy=policy)))

    assert not decide.allows("file-write-create", f"{ws}/.husky")
    assert not decide.allows("file-write-create", f"{ws}/.husky/pre-commit")


# ---- symlinks, escaping -----------------------------------------------------------------


def test_a_path_reached_through_a_symlink_is_named_by_its_real_path_too(tmp_path: Path) -> None:
    """As macOS's /tmp -> /private/tmp: Seatbelt sees the real path."""
    real = tmp_path / "private" / "tmp"
    real.mkdir(parents=True)
    link = tmp_path / "tmp"
    link.symlink_to(real)
    assert real_forms(str(link)) == [str(link), str(real)]
    ws = (tmp_path / "ws").resolve()
    (ws / ".git").mkdir(parents=True)
    (ws / ".git-real").mkdir()
    masks = SandboxMasks(hidden_files=(f"{link}/secret",))

    decide = Decide(render(_rules(ws, masks=masks, tmp=link / "session")))

    assert not decide.allows("file-read-data", f"{real}/secret")
    assert not decide.allows("file-read-data", f"{link}/secret")
    assert decide.allows("file-write-create", f"{real}/session/x")


def test_a_protected_symlink_is_protected_where_it_leads(ws: Path) -> None:
    (ws / ".moot").rmdir()
    (ws / "elsewhere").mkdir()
    (ws / ".moot").symlink_to(ws / "elsewhere")

    decide = Decide(render(_rules(ws)))

    assert not decide.allows("file-write-create", f"{ws}/elsewhere/settings.json")


HOSTILE = [
    'a"b',
    'evil")) (allow default) (allow file-write* (subpath "/',
    "back\\slash\\",
    'ends with \\"',
    "(parens)",
    "; comment",
    'x" (param "P0") "',
    "sp ace",
    "ünï",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_is_a_parameter_and_never_profile_text(tmp_path: Path, name: str) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    masks = SandboxMasks(hidden_files=(name,), read_only=(f"d/{name}",))

    profile = render(_rules(ws, masks=masks))

    assert name not in profile.text
    path = os.path.normpath(f"{ws}/{name}")
    assert path in dict(profile.params).values()
    decide = Decide(profile)
    assert not decide.allows("file-read-data", path)
    assert not decide.allows("file-write-data", f"{ws}/d/{name}")
    assert not decide.allows("file-write-create", "/etc/x")
    # What sandbox-exec is given: each parameter one argument, whole.
    args = argv(profile, ["/bin/bash", "-c", "true"])
    assert any(a.endswith(f"={path}") for a in args)


@pytest.mark.parametrize("name", HOSTILE)
def test_an_inline_profile_escapes_a_hostile_name_into_one_string(
    tmp_path: Path, name: str
) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    masks = SandboxMasks(hidden_files=(name,))

    profile = render(_rules(ws, masks=masks), inline=True)

    assert profile.params == ()
    path = os.path.normpath(f"{ws}/{name}")
    decide = Decide(profile)
    assert not decide.allows("file-read-data", path)
    assert not decide.allows("file-write-create", "/etc/x")
    assert decide.allows("file-write-create", f"{ws}/ok")
    strings = re.findall(r'"(?:[^"\\]|\\.)*"', profile.text)
    assert sbpl_string(path) in strings


@pytest.mark.parametrize("name", ["new\nline", "tab\there", "bell\x07", "del\x7f"])
def test_a_control_character_cannot_go_into_an_inline_profile(tmp_path: Path, name: str) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    rules = _rules(ws, masks=SandboxMasks(hidden_files=(name,)))

    with pytest.raises(ValueError, match="control character"):
        render(rules, inline=True)
    profile = render(rules)  # as a parameter it is one argument, whole
    assert name not in profile.text
    assert not Decide(profile).allows("file-read-data", f"{ws}/{name}")


def test_a_relative_path_is_refused() -> None:
    with pytest.raises(ValueError, match="absolute"):
        render(SeatbeltRules(writable=("ws",)))


# ---- the network ------------------------------------------------------------------------


def test_no_network_by_default(ws: Path) -> None:
    decide = Decide(render(_rules(ws)))

    assert decide.network_rules() == []
    assert "network" not in "".join(
        line for line in render(_rules(ws)).text.splitlines() if not line.startswith(";")
    )


def test_with_a_proxy_only_its_port_on_localhost(ws: Path) -> None:
    decide = Decide(render(_rules(ws, proxy_port=43128)))

    assert decide.network_rules() == [
        ["allow", "network-outbound", ["remote", "ip", "localhost:43128"]]
    ]


def test_a_policy_allowing_the_network_allows_all_of_it(ws: Path) -> None:
    policy = SandboxPolicy(workspace=ws, network=True)

    rules = _rules(ws, policy=policy, proxy_port=43128)
    decide = Decide(render(rules))

    assert rules.network == "all" and rules.proxy_port is None
    assert ["allow", "network*"] in decide.network_rules()


@pytest.mark.parametrize("port", [None, 0, 70000, -1])
def test_a_proxy_without_a_port_is_refused(ws: Path, port: int | None) -> None:
    with pytest.raises(ValueError, match="port"):
        render(SeatbeltRules(writable=(str(ws),), network="proxy", proxy_port=port))


def test_commands_are_told_the_proxy_and_the_sessions_tmp(tmp_path: Path) -> None:
    env = command_env({"PATH": "/usr/bin", "GITHUB_TOKEN": "t"}, (), tmp_path, 43128)

    assert env["TMPDIR"] == str(tmp_path)
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:43128"
    assert env["ALL_PROXY"] == "socks5h://127.0.0.1:43128"
    assert "GITHUB_TOKEN" not in env
    assert "HTTPS_PROXY" not in command_env({"PATH": "/usr/bin"}, (), tmp_path, None)


# ---- what would run ---------------------------------------------------------------------


def test_the_argv_gives_the_profile_its_parameters_then_the_command(ws: Path) -> None:
    profile = render(_rules(ws))

    args = argv(profile, ["/bin/bash", "-c", "echo hi"])

    assert args[:3] == [SANDBOX_EXEC, "-p", profile.text]
    end = args.index("--")
    pairs = args[3:end]
    assert pairs[::2] == ["-D"] * len(profile.params)
    assert pairs[1::2] == [f"{k}={v}" for k, v in profile.params]
    assert args[end + 1 :] == ["/bin/bash", "-c", "echo hi"]
    used = set(re.findall(r'\(param "(P\d+)"\)', profile.text))
    assert used == {k for k, _ in profile.params}, "every parameter used, none missing"


async def test_the_backend_works_the_profile_out_before_each_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Masks that appear during a session are in the next command's profile; the backend's
    argv is what `render` and `argv` make (nothing is run: no sandbox-exec here)."""
    (tmp_path / "moot-home").mkdir()
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "moot-home"))
    ws = (tmp_path / "ws").resolve()
    (ws / ".git").mkdir(parents=True)
    denied: list[str] = []
    policy = SandboxPolicy(
        workspace=ws, masks=lambda: sandbox_masks(RuleSet(deny=tuple(denied)), ws)
    )
    sandbox = SeatbeltSandbox(policy, proxy_port=43128)
    try:
        first = (await sandbox.launch("cat .env", ws)).argv
        (ws / ".env").write_text("SECRET=1")
        denied.append("Read(./.env)")
        second = (await sandbox.launch("cat .env", ws)).argv
        assert (ws / ".moot").is_dir(), "a missing .moot is made before the command"
    finally:
        await sandbox.close()

    def decide(args: list[str]) -> Decide:
        pairs = args[3 : args.index("--")]
        params = tuple((k, v) for k, v in (p.split("=", 1) for p in pairs[1::2]))
        return Decide(Profile(args[2], params))

    assert first[-3:] == ["/bin/bash", "-c", "cat .env"]
    assert decide(first).allows("file-read-data", f"{ws}/.env")
    assert not decide(second).allows("file-read-data", f"{ws}/.env")
    assert not decide(second).allows("file-read-data", f"{tmp_path}/moot-home/x")
    assert not decide(second).allows("file-write-create", f"{ws}/.moot/settings.json")
    assert decide(second).network_rules() == [
        ["allow", "network-outbound", ["remote", "ip", "localhost:43128"]]
    ]


async def test_the_sessions_proxy_is_the_one_place_commands_connect_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the `sandbox.network` proxy (`policy.proxy`), the backend starts it on a loopback
    port at the first command and the profile opens that port only; the commands are told it."""
    from moot.sandbox.net_proxy import NetworkProxy
    from moot.sandbox.net_rules import NetworkRules

    (tmp_path / "moot-home").mkdir()
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "moot-home"))
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    proxy = NetworkProxy(NetworkRules(allowed=("pypi.org",)), record=lambda _: None)
    sandbox = SeatbeltSandbox(SandboxPolicy(workspace=ws, proxy=proxy))
    try:
        args = (await sandbox.launch("true", ws)).argv
        port = (await proxy.start(tcp=True)).port
        env = sandbox.command_env({"PATH": "/usr/bin:/bin"})
    finally:
        await sandbox.close()
    pairs = args[3 : args.index("--")]
    params = tuple((k, v) for k, v in (p.split("=", 1) for p in pairs[1::2]))
    assert port and Decide(Profile(args[2], params)).network_rules() == [
        ["allow", "network-outbound", ["remote", "ip", f"localhost:{port}"]]
    ]
    assert env["HTTPS_PROXY"] == f"http://127.0.0.1:{port}"


def test_seatbelt_runs_only_on_macos() -> None:
    assert seatbelt_unavailable("linux") == "seatbelt: only on macOS"
    assert auto_order("darwin")[0] == "seatbelt"
    assert "seatbelt" not in auto_order("linux")


def test_the_model_is_told_to_write_temporary_files_in_tmpdir() -> None:
    """Seatbelt shows the host's /tmp read-only: a model told "a temporary directory" tries
    /tmp and fails."""
    assert "$TMPDIR (not /tmp) are writable" in sandbox_words("seatbelt", False)
    assert "a temporary directory are writable" in sandbox_words("bubblewrap", False)


async def test_commands_get_a_git_config_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's global config is in the hidden home (and may hold tokens): commands get
    the identity and nothing else, in a file they can read and not write."""
    home = tmp_path / "home"
    home.mkdir()
    _write(
        home / ".gitconfig",
        '[user]\n\tname = Ada\n[http]\n\textraHeader = "Authorization: Bearer tok-1"\n',
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    sandbox = SeatbeltSandbox(SandboxPolicy(workspace=ws))
    try:
        args = (await sandbox.launch("git config --global user.name", ws)).argv
        own = Path(sandbox.command_env(os.environ)["GIT_CONFIG_GLOBAL"])
        text = _read(own)
    finally:
        await sandbox.close()

    assert "Ada" in text and "tok-1" not in text
    pairs = args[3 : args.index("--")]
    params = tuple((k, v) for k, v in (p.split("=", 1) for p in pairs[1::2]))
    decide = Decide(Profile(args[2], params))
    assert decide.allows("file-read-data", str(own))
    assert not decide.allows("file-write-data", str(own))
    assert not decide.allows("file-read-data", f"{home.resolve()}/.gitconfig")
    assert _read(own.parent / "gone") == "", "removed as the sandbox closed"


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _read(path: Path) -> str:
    """A file's text; "" when neither it nor its directory exists any more."""
    if not path.parent.exists():
        return ""
    return path.read_text() if path.exists() else "(no such file, but its directory is there)"

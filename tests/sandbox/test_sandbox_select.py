"""Choosing a sandbox: auto, an explicit backend, or the host on purpose, never by accident."""

from __future__ import annotations

import asyncio
import os
import sys
import types
from pathlib import Path

import pytest

from moot.sandbox import bwrap_probe
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.select import HOW_TO_ENABLE, choose_sandbox, select_sandbox


@pytest.fixture
def policy(tmp_path: Path) -> SandboxPolicy:
    return SandboxPolicy(workspace=tmp_path)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap_probe, "bwrap_unavailable", lambda: "bwrap is not installed")


@pytest.fixture
def no_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    from moot.sandbox import landlock

    monkeypatch.setattr(landlock, "landlock_unavailable", lambda: "landlock: no Landlock here")


@pytest.fixture
def no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    """As when moot.sandbox.docker does not exist (None in sys.modules fails the import)."""
    monkeypatch.setitem(sys.modules, "moot.sandbox.docker", None)


class FakeDockerSandbox:
    name = "docker"

    def __init__(self, policy: SandboxPolicy, *, session_id: str | None = None) -> None:
        self.policy = policy
        self.session_id = session_id


def fake_docker(monkeypatch: pytest.MonkeyPatch, unavailable: str | None) -> None:
    module = types.ModuleType("moot.sandbox.docker")
    module.docker_unavailable = lambda: unavailable  # type: ignore[attr-defined]
    module.DockerSandbox = FakeDockerSandbox  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "moot.sandbox.docker", module)


def test_none_is_the_host_on_purpose(policy: SandboxPolicy) -> None:
    choice = choose_sandbox("none", policy)

    assert choice.backend == "host"
    assert "NO sandbox" in choice.describe() and '"none"' in choice.describe()


def test_auto_prefers_bubblewrap(policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap_probe, "bwrap_unavailable", lambda: None)
    fake_docker(monkeypatch, None)

    choice = choose_sandbox("auto", policy)

    assert choice.backend == "bubblewrap"
    assert "works here" in choice.describe()


@pytest.mark.usefixtures("no_bwrap", "no_landlock")
def test_auto_takes_docker_when_bubblewrap_does_not_work(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_docker(monkeypatch, None)

    choice = choose_sandbox("auto", policy, session_id="ses_1")

    assert choice.backend == "docker"
    assert isinstance(choice.sandbox, FakeDockerSandbox) and choice.sandbox.policy is policy
    assert choice.sandbox.session_id == "ses_1"


@pytest.mark.usefixtures("no_bwrap", "no_landlock", "no_docker")
def test_auto_with_nothing_that_works_refuses_and_says_how_to_fix_it(
    policy: SandboxPolicy,
) -> None:
    choice = choose_sandbox("auto", policy)

    assert choice.sandbox is None and choice.backend == "none"
    text = choice.describe()
    assert "bwrap is not installed" in text
    assert "Docker backend is not part of this build" in text
    assert "landlock: no Landlock here" in text
    assert HOW_TO_ENABLE in text
    assert select_sandbox("auto", policy) is None


@pytest.mark.usefixtures("no_bwrap", "no_landlock")
def test_a_docker_engine_that_does_not_answer_is_named(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_docker(monkeypatch, "Cannot connect to the Docker daemon")

    choice = choose_sandbox("auto", policy)

    assert choice.sandbox is None
    assert "docker: Cannot connect to the Docker daemon" in choice.reason


@pytest.mark.usefixtures("no_bwrap", "no_landlock", "no_docker")
def test_bypass_lets_auto_use_the_host_and_says_so(policy: SandboxPolicy) -> None:
    choice = choose_sandbox("auto", policy, bypass=True)

    assert choice.backend == "host"
    assert "bypass" in choice.describe() and "bwrap is not installed" in choice.describe()


@pytest.mark.usefixtures("no_bwrap", "no_landlock", "no_docker")
@pytest.mark.parametrize("setting", ["bubblewrap", "landlock", "docker"])
def test_an_explicit_backend_never_falls_back(policy: SandboxPolicy, setting: str) -> None:
    assert select_sandbox(setting, policy) is None
    assert select_sandbox(setting, policy, bypass=True) is None


def test_bypass_still_uses_a_sandbox_that_works(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap_probe, "bwrap_unavailable", lambda: None)

    assert choose_sandbox("auto", policy, bypass=True).backend == "bubblewrap"


def test_an_unknown_setting_is_refused(policy: SandboxPolicy) -> None:
    with pytest.raises(ValueError, match="unknown sandbox setting 'off'"):
        choose_sandbox("off", policy)


def test_selecting_imports_no_docker_when_bubblewrap_works(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap_probe, "bwrap_unavailable", lambda: None)
    monkeypatch.delitem(sys.modules, "moot.sandbox.docker", raising=False)

    choose_sandbox("auto", policy)

    assert "moot.sandbox.docker" not in sys.modules


@pytest.mark.usefixtures("no_bwrap")
def test_auto_takes_landlock_before_docker_and_says_why_not_bubblewrap(
    policy: SandboxPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This kernel has Landlock (CI's must): `auto` takes it when bubblewrap does not work,
    before a Docker engine that answers, and says why bubblewrap was passed over."""
    from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable

    if (why_not := landlock_unavailable()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{why_not}; CI runs on a kernel with Landlock ABI 6")
        pytest.skip(why_not)
    fake_docker(monkeypatch, None)

    choice = choose_sandbox("auto", policy)

    assert choice.backend == "landlock" and isinstance(choice.sandbox, LandlockSandbox)
    assert choice.reason.startswith("bubblewrap: bwrap is not installed; Landlock ABI ")
    assert "(setting auto: the first that works)" in choice.reason
    explicit = choose_sandbox("landlock", policy)
    assert explicit.backend == "landlock" and "as set" in explicit.reason


def test_landlock_below_the_abi_the_policy_needs_is_refused_and_named(
    policy: SandboxPolicy,
) -> None:
    """A kernel whose Landlock lacks what the policy needs is refused, naming both ABIs."""
    from moot.sandbox import landlock_abi
    from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable

    abi = landlock_abi.abi_version()
    if abi == 0:
        pytest.skip("no Landlock here")
    why_not = landlock_unavailable(required=abi + 1)

    assert why_not == (
        f"landlock: the kernel offers Landlock ABI {abi}; moot needs ABI {abi + 1} (Linux 6.12"
        " or later), whose signal scope keeps commands from killing processes outside the"
        " sandbox"
    )
    with pytest.raises(RuntimeError, match=f"offers Landlock ABI {abi}; moot needs"):
        LandlockSandbox(policy, required_abi=abi + 1)


def test_a_deferred_backend_is_chosen_at_once_and_built_at_its_first_command(
    policy: SandboxPolicy,
) -> None:
    """A session's sandbox (`deferred=True`): the backend is chosen as it opens, so its name
    and why are known, and built at its first command, once; what else the backend has is the
    built one's."""
    from moot.sandbox.bubblewrap import BubblewrapSandbox
    from moot.sandbox.select import DeferredSandbox

    if (why_not := bwrap_probe.bwrap_unavailable()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{why_not}; CI installs bubblewrap")
        pytest.skip(why_not)
    unused = choose_sandbox("bubblewrap", policy, deferred=True)
    choice = choose_sandbox("bubblewrap", policy, deferred=True)

    assert isinstance(choice.sandbox, DeferredSandbox) and choice.backend == "bubblewrap"
    assert "works here" in choice.reason

    async def two_commands() -> list[str]:
        outputs = []
        for command in ("echo one > made.txt", "cat made.txt"):
            assert choice.sandbox is not None
            result = await choice.sandbox.run(
                command, cwd=policy.workspace, env=dict(os.environ), timeout=30
            )
            assert result.exit_code == 0, result.stderr
            assert result.backend == "bubblewrap"
            outputs.append(result.stdout)
        await choice.sandbox.close()
        assert unused.sandbox is not None
        await unused.sandbox.close()  # nothing to close: never built
        return outputs

    assert asyncio.run(two_commands()) == ["", "one\n"]
    built = choice.sandbox.built
    assert isinstance(built, BubblewrapSandbox) and choice.sandbox.built is built  # built once
    assert choice.sandbox.bwrap == built.bwrap  # the rest is the built backend's
    assert unused.sandbox._built is None  # type: ignore[union-attr]


def test_a_deferred_bubblewrap_runs_the_bwrap_probed_as_the_session_opened(
    policy: SandboxPolicy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is probed is what runs: a `bwrap` that appears first on the PATH between the
    session's opening and its first command (a directory the person's PATH names, written
    meanwhile) is not the one the commands run under."""
    if (why_not := bwrap_probe.bwrap_unavailable()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{why_not}; CI installs bubblewrap")
        pytest.skip(why_not)
    probed = bwrap_probe.find_bwrap()
    choice = choose_sandbox("bubblewrap", policy, deferred=True)
    planted = tmp_path / "bin"
    planted.mkdir()
    (planted / "bwrap").write_text("#!/bin/sh\necho planted\n")
    (planted / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")

    assert choice.sandbox is not None
    assert choice.sandbox.bwrap == probed  # type: ignore[attr-defined]

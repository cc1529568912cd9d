"""One runtime per session: the store's claims, in one process and across real processes.

A second claim is refused at once (never waited for) and names the holder; a claim ends with
its holder however that ends, `kill -9` included; reading needs no claim.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.providers.scripted import ScriptedProvider
from moot.store import MemoryStore, SessionBusy, SQLiteStore, Store, UnknownSessionError
from moot.store.claims import lock_file

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait

_HOLDER = textwrap.dedent(
    """
    import sys, time
    from moot.store import SQLiteStore
    store = SQLiteStore(sys.argv[1])
    claim = store.claim(sys.argv[2])
    print("held", flush=True)
    time.sleep(60)
    """
)


def _holder(path: Path, session_id: str) -> subprocess.Popen[str]:
    """Another process holding the session's claim (killed by the test)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), session_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "held\n", process.stderr.read()  # type: ignore[union-attr]
    return process


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "s.db") if request.param == "sqlite" else MemoryStore()


def test_a_second_claim_is_refused_until_the_first_is_released(store: Store) -> None:
    sid = store.create_session().id
    claim = store.claim(sid)
    with pytest.raises(SessionBusy, match=f"session {sid} is in use by another runtime in this"):
        store.claim(sid)
    claim.release()
    claim.release()  # twice changes nothing
    with store.claim(sid):
        pass
    store.claim(sid).release()


def test_other_sessions_and_reading_need_no_claim(store: Store) -> None:
    one, two = store.create_session().id, store.create_session().id
    held = store.claim(one)
    store.claim(two).release()
    assert {s.id for s in store.sessions()} == {one, two}
    assert store.events(one) == []
    held.release()


def test_a_dropped_claim_is_released(store: Store) -> None:
    sid = store.create_session().id
    store.claim(sid)  # not kept
    gc.collect()
    store.claim(sid).release()


def test_an_unknown_session_cannot_be_claimed(store: Store) -> None:
    with pytest.raises(UnknownSessionError):
        store.claim("ses_nope")


def test_closing_a_store_releases_its_claims(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path / "s.db")
    sid = first.create_session().id
    kept = first.claim(sid)
    second = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(SessionBusy):
        second.claim(sid)
    first.close()
    assert not kept.held
    second.claim(sid).release()
    second.close()


def test_a_claim_leaves_no_file_behind_and_any_session_id_is_a_safe_name(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        for sid in ("ses_plain", "../../escape", "a/b", ".hidden"):
            store.create_session(session_id=sid)
            with store.claim(sid):
                held = lock_file(tmp_path / "s.db-locks", sid)
                assert held.parent == tmp_path / "s.db-locks"
                assert held.exists()
            assert not held.exists()
    assert list((tmp_path / "s.db-locks").iterdir()) == []
    assert not (tmp_path.parent / "escape.lock").exists()


def test_another_process_holding_a_session_is_named_and_its_death_frees_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        sid = store.create_session().id
        other = store.create_session().id
    holder = _holder(path, sid)
    try:
        with SQLiteStore(path) as store:
            started = time.monotonic()
            with pytest.raises(SessionBusy, match=rf"another moot process \(pid {holder.pid}\)"):
                store.claim(sid)
            assert time.monotonic() - started < 1  # refused, not waited for
            store.claim(other).release()  # a new or other session is free meanwhile
            assert store.session(sid) is not None  # and reading works

            holder.send_signal(signal.SIGKILL)
            holder.wait(TIMEOUT)
            # The kernel released the lock with the process; the file it left is taken over.
            assert lock_file(path.with_name("s.db-locks"), sid).exists()
            store.claim(sid).release()
    finally:
        holder.kill()
        holder.wait(TIMEOUT)
        holder.stdout.close()  # type: ignore[union-attr]
        holder.stderr.close()  # type: ignore[union-attr]


def test_many_processes_racing_for_one_claim_get_it_one_at_a_time(tmp_path: Path) -> None:
    """Claims are taken and released (and their files unlinked) by many processes at once;
    no two ever hold one session together."""
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        sid = store.create_session().id
    racer = textwrap.dedent(
        """
        import os, sys
        from moot.store import SessionBusy, SQLiteStore
        store = SQLiteStore(sys.argv[1])
        won = 0
        for _ in range(500):
            try:
                claim = store.claim(sys.argv[2])
            except SessionBusy:
                continue
            # Holding it: nobody else may be inside. O_EXCL fails if another holder is.
            fd = os.open(sys.argv[3], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            os.unlink(sys.argv[3])
            claim.release()
            won += 1
        print(won)
        """
    )
    inside = tmp_path / "inside"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", racer, str(path), sid, str(inside)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    won = []
    for process in racers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        won.append(int(out))
    assert sum(won) > 0
    assert list((tmp_path / "s.db-locks").iterdir()) == []


# ---- runtimes claim their session -----------------------------------------------------------


def _agent(*turns: object) -> Agent:
    return Agent("main", model=ScriptedProvider(list(turns)))


async def test_a_second_runtime_on_a_session_is_refused_until_the_first_shuts_down(
    store: Store,
) -> None:
    first = Runtime([_agent("one")], store=store)
    first.submit(ops.UserTurn(text="hi"))
    assert (await first.wait()).output == "one"  # type: ignore[union-attr]

    with pytest.raises(SessionBusy):
        Runtime([_agent("two")], store=store, session_id=first.session_id)

    first.submit(ops.Shutdown())
    second = Runtime([_agent("one", "two")], store=store, session_id=first.session_id)
    second.submit(ops.UserTurn(text="hi"))
    assert (await second.wait()).output == "two"  # type: ignore[union-attr]
    second.submit(ops.Shutdown())


async def test_shutdown_mid_run_releases_the_session_after_the_run_records_its_end(
    store: Store,
) -> None:
    runtime = Runtime([_agent({"text": "late", "delay": 30})], store=store)
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="hi"))
    assert isinstance(await anext(events), ev.TurnStarted)

    runtime.submit(ops.Shutdown())
    with pytest.raises(SessionBusy):  # the cancelled run has not recorded its end yet
        store.claim(runtime.session_id)
    await runtime.wait()
    await asyncio.sleep(0)  # the task's done callbacks run on the next tick

    assert store.events(runtime.session_id)[-1].kind == "turn_finished"
    store.claim(runtime.session_id).release()


def test_a_runtime_whose_session_cannot_be_claimed_holds_nothing(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        sid = store.create_session().id
        with store.claim(sid), pytest.raises(SessionBusy):
            Runtime([_agent()], store=store, session_id=sid)
        Runtime([_agent()], store=store, session_id=sid).submit(ops.Shutdown())
    assert os.listdir(tmp_path / "s.db-locks") == []

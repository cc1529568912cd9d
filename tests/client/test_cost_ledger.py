"""The cost ledger against figures worked out by hand from the catalog's prices."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from moot.cli import main
from moot.client.ledger import ledger_lines
from moot.client.queries import StoreQueries
from moot.commands.cost import ledger_text
from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.paths import default_db_path
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Usage
from moot.providers.scripted import ScriptedProvider
from moot.store.sqlite import SQLiteStore
from runtime_helpers import run_turn

SONNET = "anthropic/claude-sonnet-4-5"  # $3 in, $15 out, $0.30 cache read, $3.75 cache write
HAIKU = "anthropic/claude-haiku-4-5"  # $1 in, $5 out


async def play(store: SQLiteStore, model: str, *usages: dict, workspace: str = "/w") -> str:
    turns = [{"text": f"answer {i}", "usage": u} for i, u in enumerate(usages)]
    runtime = Runtime(
        [Agent("main", model=ScriptedProvider(turns, name=model))],
        store=store,
        options=RuntimeOptions(workspace=workspace),
    )
    for _ in usages:
        await run_turn(runtime)
    runtime.submit(ops.Shutdown())
    return runtime.session_id


async def test_tokens_and_cost_per_model_per_session_match_the_hand_computed_figures(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    first = await play(
        store,
        SONNET,
        {"input_tokens": 1_000, "output_tokens": 200, "cache_read_tokens": 5_000,
         "cache_write_tokens": 2_000},
        {"input_tokens": 500, "output_tokens": 100},
    )  # fmt: skip
    second = await play(store, HAIKU, {"input_tokens": 2_000_000, "output_tokens": 100_000})
    lines = {(c.session_id, c.model): c for c in StoreQueries(store).costs()}
    sonnet = lines[(first, SONNET)]
    assert (sonnet.calls, sonnet.input_tokens, sonnet.output_tokens) == (2, 1_500, 300)
    assert (sonnet.cache_read_tokens, sonnet.cache_write_tokens) == (5_000, 2_000)
    # 1,500 x 3 + 300 x 15 + 5,000 x 0.30 + 2,000 x 3.75 = 18,000 USD per million tokens.
    assert sonnet.cost_usd == pytest.approx(0.018)
    # 2,000,000 x 1 + 100,000 x 5 = 2,500,000 per million.
    assert lines[(second, HAIKU)].cost_usd == pytest.approx(2.5)
    assert len(lines) == 2
    table = ledger_text(list(lines.values()), per_session=True)
    assert "$2.5180" in table.splitlines()[-1]  # the total


def test_compaction_summaries_count_and_unpriced_models_keep_what_they_reported() -> None:
    ts = datetime(2026, 1, 2, tzinfo=UTC)
    events = [
        ev.UsageRecorded(model="scripted", usage=Usage(input_tokens=10), cost_usd=0.25, ts=ts),
        ev.UsageRecorded(model="local/thing", usage=Usage(output_tokens=7), ts=ts),
        ev.HistoryCompacted(
            model=SONNET, usage=Usage(input_tokens=100_000, output_tokens=2_000), ts=ts
        ),
        ev.ContextCompacted(replaced=2, ts=ts),  # the fallback asked no model: no line
    ]
    lines = {c.model: c for c in ledger_lines("s", events)}
    assert lines["scripted"].cost_usd == 0.25
    assert lines["local/thing"].cost_usd is None and lines["local/thing"].output_tokens == 7
    assert lines[SONNET].cost_usd == pytest.approx(0.33)  # 100k x 3 + 2k x 15 per million
    assert set(lines) == {"scripted", "local/thing", SONNET}
    assert ledger_lines("s", events, since=ts + timedelta(seconds=1)) == []
    assert "+ unpriced" in ledger_text(list(lines.values()), per_session=False)


async def test_moot_cost_reads_every_session_through_the_queries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(path)
    sid = await play(store, HAIKU, {"input_tokens": 1_000_000, "output_tokens": 0})
    store.close()
    assert main(["cost", "--all-workspaces", "--since", "2000-01-01"]) == 0
    out = capsys.readouterr().out
    assert sid in out and HAIKU in out and "$1.0000" in out
    assert main(["cost", "--all-workspaces", "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out.strip() == "no model usage recorded"
    assert main(["cost"]) == 0  # this workspace's sessions only: the one above is of /w
    assert capsys.readouterr().out.strip() == "no model usage recorded"
    store = SQLiteStore(path)
    here = await play(store, SONNET, {"output_tokens": 1_000}, workspace=str(tmp_path))
    store.close()
    monkeypatch.chdir(tmp_path)
    assert main(["cost"]) == 0
    out = capsys.readouterr().out
    assert here in out and sid not in out and "$0.0150" in out  # 1,000 x $15 per million
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")  # anywhere in the repository: its sessions
    assert main(["cost"]) == 0
    assert here in capsys.readouterr().out
    assert main(["cost", "--since", "yesterday"]) == 2


async def test_a_fork_counts_only_what_was_spent_in_it(tmp_path: Path) -> None:
    """A fork (and so a rewind, which goes on in one) copies its original's usage events; each
    spend is counted once, in the session that made it, however often it is forked."""
    from moot.client.upkeep import SessionUpkeep

    store = SQLiteStore(tmp_path / "s.db")
    original = await play(store, HAIKU, {"input_tokens": 1_000_000, "output_tokens": 0})
    forks = [SessionUpkeep(store).fork(original) for _ in range(2)]
    of_a_fork = SessionUpkeep(store).fork(forks[0])
    queries = StoreQueries(store)

    assert [c.cost_usd for c in queries.costs(session_id=original)] == [pytest.approx(1.0)]
    for fork in (*forks, of_a_fork):
        assert queries.costs(session_id=fork) == []
    assert sum(c.cost_usd or 0 for c in queries.costs()) == pytest.approx(1.0)

    # What a fork spends after it is its own (the script goes on where the log leaves it).
    turns = [{"text": "played"}, {"text": "more", "usage": {"input_tokens": 500_000}}]
    runtime = Runtime(
        [Agent("main", model=ScriptedProvider(turns, name=HAIKU))],
        store=store,
        session_id=forks[1],
    )  # fmt: skip
    await run_turn(runtime)
    runtime.submit(ops.Shutdown())
    assert [c.cost_usd for c in queries.costs(session_id=forks[1])] == [pytest.approx(0.5)]
    assert sum(c.cost_usd or 0 for c in queries.costs()) == pytest.approx(1.5)

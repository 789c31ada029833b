"""The Overview's triage count (overlap-only rows nobody has a verdict on), counted on the run's
verdict table, equals what the Review queue's progress over everyone leaves in that scope."""

from __future__ import annotations

import numpy as np
import pytest
from test_verdicts import ROWS, csv_bytes

from scoring import ingest, store
from scoring import review as V

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def queue_remaining(engine, run) -> int:
    """What the queue's progress bar leaves in the overlap-only scope (everyone's verdicts)."""
    scored = store.load_scored(engine, run.id)
    scope = V.queue_scope(scored, "overlap_only", None, None, seed=run.review_seed)
    return int(V.scope_progress(scope, engine, None).iloc[-1]["remaining"])


@pytest.mark.parametrize("seed", range(4))
def test_unreviewed_overlap_rows_match_the_queues_progress(engine, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = ROWS + [ROWS[2], ROWS[3]]  # identical rows share an item key: both count
    run = ingest.save_run(engine, csv_bytes(rows), "model_english.csv").run
    other = ingest.save_run(engine, csv_bytes([ROWS[5], ("new", "x", "Art", "y")]), "other.csv").run
    table = V.verdict_table(engine, run.id)
    assert V.unreviewed_in(table) == queue_remaining(engine, run) == 6
    keys = store.load_scored(engine, run.id)["item_key"].tolist()
    shared = store.load_scored(engine, other.id)["item_key"].tolist()[0]
    for _ in range(12):  # marks, skips and undos by two reviewers; a mark in another run counts too
        action, key = int(rng.integers(0, 5)), keys[int(rng.integers(0, len(keys)))]
        who = ["alice", "bob"][int(rng.integers(0, 2))]
        if action == 0:
            V.record_skip(engine, key, run.id, who)
        elif action == 1:
            V.undo_last(engine, who, run_id=run.id)
        elif action == 2:
            V.record_mark(engine, shared, other.id, who, "correct")
        else:
            V.record_mark(engine, key, run.id, who, "correct" if action == 3 else "wrong")
        table = V.verdict_table(engine, run.id)
        assert V.unreviewed_in(table) == queue_remaining(engine, run)
    reviewed = set(table.current["item_key"])
    both_fail = [k for k, b in zip(keys, table.rows["bucket"]) if b == "both_fail" and k not in reviewed]
    assert V.unreviewed_in(table, "both_fail") == len(both_fail)

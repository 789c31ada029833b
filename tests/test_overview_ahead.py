"""What the Overview does ahead of its estimate: it ranks a run's rows on another thread while it
sums the verdicts (:func:`ui.estimate_data.start_ranking`), and draws the chart of a run nobody
reviewed before computing figures that can show no estimate (:func:`ui.estimate_data.may_have_evidence`)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_verdicts import ROWS, csv_bytes

from scoring import ingest, review, store
from scoring.core.order import review_rank
from ui import estimate_data, state


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_rank_started_ahead_is_the_runs_review_rank(engine, db_url, monkeypatch) -> None:
    monkeypatch.setenv(store.ENV_VAR, db_url)
    state.run_cache().clear()
    run = ingest.save_run(engine, csv_bytes(ROWS), "ranked.csv").run
    keys = store.load_table(engine, run.id)["item_key"]
    estimate_data.start_ranking(run.id)
    deadline = time.monotonic() + 30
    while len(state.run_cache()) < 2 and time.monotonic() < deadline:  # the rows, then the rank
        time.sleep(0.01)

    def no_second_rank(*_args: object) -> None:
        raise AssertionError("ranked again")

    monkeypatch.setattr(estimate_data, "review_rank", no_second_rank)
    kept = estimate_data.run_rank(run.id, keys)
    np.testing.assert_array_equal(kept, review_rank(keys, run.review_seed))
    estimate_data.start_ranking(run.id)  # kept: no second thread, no second rank
    np.testing.assert_array_equal(estimate_data.run_rank(run.id, keys), kept)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_run_nobody_reviewed_has_no_evidence_until_a_verdict(engine, db_url, monkeypatch) -> None:
    monkeypatch.setenv(store.ENV_VAR, db_url)
    state.run_cache().clear()
    run = ingest.save_run(engine, csv_bytes(ROWS), "unreviewed.csv").run
    other = ingest.save_run(engine, csv_bytes([(f"{q} (other)", *rest) for q, *rest in ROWS[:2]]), "other.csv").run
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    other_key = store.load_table(engine, other.id)["item_key"][0]
    assert other_key not in keys
    assert not estimate_data.may_have_evidence(run.id)
    assert not estimate_data.has_evidence(estimate_data.figures(run.id))
    review.record_mark(engine, other_key, other.id, "ana", "correct")  # another run's row: no evidence here
    assert not estimate_data.may_have_evidence(run.id)
    review.record_mark(engine, keys[0], run.id, "ana", "correct")
    assert estimate_data.may_have_evidence(run.id)

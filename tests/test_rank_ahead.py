"""The Overview ranks a run's rows on another thread while it sums the verdicts
(:func:`ui.estimate_data.start_ranking`): the rank it keeps is the one the estimate would compute."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_verdicts import ROWS, csv_bytes

from scoring import ingest, store
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

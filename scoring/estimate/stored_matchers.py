"""A stored run's reviewed sample with every optional matcher's verdicts, for the matchers report
(``python -m scoring matchers`` and the Matchers page). Apart from :mod:`.matcher_quality` (pure)
because it reads the database through :mod:`.stored_run`."""

from __future__ import annotations

import polars as pl
from sqlalchemy import Engine

from scoring.estimate.matcher_quality import with_matchers
from scoring.estimate.sample import reviewed_sample
from scoring.estimate.stored_run import StoredRun, stored_final


def stored_matcher_sample(
    engine: Engine, run_id: int, threshold: float | None = None
) -> tuple[StoredRun, pl.DataFrame]:
    """Run ``run_id`` and its sample (the random-sample rule applied) with the matchers' columns;
    ``threshold``: chrF's (default: the setting's)."""
    run = stored_final(engine, run_id)
    sample = reviewed_sample(run.final, run.rank, run.served)
    return run, with_matchers(sample, threshold)

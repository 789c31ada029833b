"""A stored run's final verdicts, reviewers' verdicts and figures, read from the database.

Kept apart from the rest of :mod:`scoring.estimate` (pure) because it loads the database layer:
pages and ``python -m scoring estimate`` import it by name. The final verdicts are assembled as
:func:`scoring.export.build_export` does (human verdicts, adjudicators' decisions, the stored
judge label of each row), except that a judge label never settles a row here: the estimate's
truth is what people decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from scoring import review
from scoring.core.errors import InputError
from scoring.estimate.reasons import RunRows
from scoring.estimate.summary import RunEstimate, run_estimate
from scoring.export import stored_judge_labels
from scoring.store import RunInfo, get_run, load_scored


@dataclass(frozen=True)
class StoredRun:
    """A run's metadata, every row with its final verdict (pandas, :func:`review.final_verdicts`
    columns plus ``judge_label`` when any is stored), and reviewers' current verdicts on it."""

    info: RunInfo
    final: pd.DataFrame
    current: pd.DataFrame

    def rows(self) -> RunRows:
        """The run for :func:`scoring.estimate.reason_counts` and the golden-answer report."""
        return RunRows(self.info.id, self.info.name, self.info.language, self.final)


def stored_final(engine: Engine, run_id: int) -> StoredRun:
    """Run ``run_id``'s rows and verdicts; :class:`InputError` when there is no such run."""
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    scored = load_scored(engine, run_id)
    current = review.current_verdicts(engine, scored["item_key"])
    decisions = review.adjudications(engine, scored["item_key"])
    labels = stored_judge_labels(engine, run_id, scored["item_key"].tolist())
    final = review.final_verdicts(scored, review.human_summary(current), labels or None, False, decisions)
    return StoredRun(info, final, current)


def stored_estimate(engine: Engine, run_id: int, half_width: float = 0.02) -> tuple[StoredRun, RunEstimate]:
    """The run and all its figures (:func:`scoring.estimate.run_estimate`)."""
    run = stored_final(engine, run_id)
    return run, run_estimate(run.final, half_width)


def stored_runs(engine: Engine, run_ids: Sequence[int]) -> list[StoredRun]:
    """Several runs, for the reasons analytics across runs and languages."""
    return [stored_final(engine, run_id) for run_id in run_ids]

"""A stored run's final verdicts, reviewers' verdicts and figures, read from the database.

Kept apart from the rest of :mod:`scoring.estimate` (pure) because it loads the database layer:
pages and ``python -m scoring estimate`` import it by name. The final verdicts are the run's
verdict table (:mod:`scoring.review.verdict_table`, the one every reader uses), where a judge
label never settles a row: the estimate's truth is what people decided. Its judge labels are
those of the one rule: the configuration chosen for the run on the Judge page
(:mod:`scoring.store.judge_choice`), else the latest label of each row of any configuration;
:attr:`StoredRun.judge_config` names which, for every page that shows the estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from scoring.core.order import review_rank
from scoring.core.stats import DEFAULT_HALF_WIDTH
from scoring.core.verdict_rules import isin
from scoring.estimate.reasons import RunRows
from scoring.estimate.summary import RunEstimate, run_estimate
from scoring.review import audit_half_width
from scoring.review.verdict_table import VerdictTable, verdict_table
from scoring.store import RunInfo
from scoring.store.judge_choice import JudgeConfig, describe


@dataclass(frozen=True)
class StoredRun:
    """A run's metadata, every row with its final verdict (pandas, :func:`review.final_verdicts`
    columns plus ``judge_label`` when any is stored), and reviewers' current verdicts on it."""

    info: RunInfo
    final: pd.DataFrame
    current: pd.DataFrame
    #: The judge configuration whose labels ``final`` carries (None: the latest of any).
    judge_choice: JudgeConfig | None = None
    #: Per row of ``final``: its place in the run's seeded review order, and whether the queue
    #: served it in this run (the estimate's random-sample rule, :mod:`scoring.estimate.sample`).
    rank: np.ndarray | None = None
    served: np.ndarray | None = None
    #: Whose judge labels ``final`` carries, in full (:attr:`scoring.store.judge_choice.RunLabels.name`).
    judge_name: str = ""

    @property
    def judge_config(self) -> str:
        """The name of the judge labels the estimate uses, to show wherever the estimate is shown."""
        return describe(self.judge_choice)

    def rows(self) -> RunRows:
        """The run for :func:`scoring.estimate.reason_counts` and the golden-answer report."""
        return RunRows(self.info.id, self.info.name, self.info.language, self.final)


def stored_final(
    engine: Engine,
    run_id: int,
    ranked: bool = True,
    scored: pd.DataFrame | None = None,
    rank: np.ndarray | None = None,
    table: VerdictTable | None = None,
) -> StoredRun:
    """Run ``run_id``'s rows and verdicts; :class:`InputError` when there is no such run.
    ``ranked=False`` skips the review ranks and the served rows (only the estimate needs them).
    A caller that keeps the run's rows (``scored``: :func:`scoring.store.load_scored`), their
    review ranks (``rank``: :func:`scoring.core.order.review_rank` of its item keys) or its
    verdict table (``table``, without the judge switch) passes them: the rows and ranks never
    change, and on a million rows each costs a second or two."""
    table = table or verdict_table(engine, run_id, scored=scored)
    info, final, found = table.info, table.final, table.labels
    if not ranked:
        return StoredRun(info, final, table.current, found.choice, judge_name=found.name)
    if rank is None:
        rank = review_rank(table.keys["item_key"], info.review_seed)  # polars keys: no conversion
    served = isin(table.keys["item_key"], table.served)  # the polars keys: no conversion of a million strings
    return StoredRun(info, final, table.current, found.choice, rank, served, found.name)


def stored_estimate(
    engine: Engine,
    run_id: int,
    half_width: float = DEFAULT_HALF_WIDTH,
    scored: pd.DataFrame | None = None,
    rank: np.ndarray | None = None,
    table: VerdictTable | None = None,
) -> tuple[StoredRun, RunEstimate]:
    """The run and all its figures (:func:`scoring.estimate.run_estimate`); ``scored``, ``rank``
    and ``table`` as :func:`stored_final` takes them."""
    run = stored_final(engine, run_id, scored=scored, rank=rank, table=table)
    return run, run_estimate(run.final, half_width, rank=run.rank, served=run.served)


def planned_half_width(engine: Engine, run_id: int) -> float:
    """The half-width (a share) a plan of run ``run_id`` aims for unless told: the one its audit
    scope was last planned for (kept in the database), else :data:`DEFAULT_HALF_WIDTH` (+-5
    points). The True accuracy page and ``python -m scoring estimate`` both ask here, so they plan
    the same rows for the same run."""
    kept = audit_half_width(engine, run_id)
    return kept if kept is not None else DEFAULT_HALF_WIDTH


def stored_runs(engine: Engine, run_ids: Sequence[int]) -> list[StoredRun]:
    """Several runs, for the reasons analytics across runs and languages (no estimate: unranked)."""
    return [stored_final(engine, run_id, ranked=False) for run_id in run_ids]

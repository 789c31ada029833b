"""How many rows to review for a chosen half-width when the judge has labelled the run, and what
the judge's labels are worth in reviews.

The judge-assisted estimate (:mod:`.ppi`) has variance ``sum W_h² S_h² (1/n_h - 1/N_h)`` with
``S_h`` the spread of the residual ``Y - lambda_h x`` instead of the verdicts' own: Neyman
allocation on it (``n_h`` proportional to ``N_h S_h``, between what the random sample already
holds, at least 2, and the stratum's size; the one multiplier that meets ``(half_width / z)²``
found by bisection, as :func:`scoring.estimate.allocate` does).

``S_h²`` is planned as ``p(1-p) x kept``: ``p`` its bucket's pooled reviewed share moved toward 0.5
to its one-sided 69% Wilson bound (:func:`scoring.estimate.planner.planning_rates`; 0.5 where the
bucket has none), as the human-only planner does,
``kept`` the share of the verdicts' variance the judge leaves in its bucket (the residuals' over the
verdicts' within-stratum sum of squares). Planning on the residual variance read off the pilot
directly gave a stratum whose pilot happened to be all correct too few further rows, and the
finished interval covered 0.87 to 0.93 in the simulation (``tests/bench_ppi.py``); raising each
stratum's variance to its 80% chi-square bound overshot (+-1.57 for +-2). The plan aims at
:data:`PLAN_AIM` of the asked half-width, so most finished plans end at or under it.

The same allocation with ``kept`` = 1 is the plan without the judge; the difference is what the
judge is worth here, in reviews. Rows already reviewed are never undone; which rows come next is
:func:`scoring.estimate.next_rows` on the returned plan (the audit scope and the seeded order are
the human-only planner's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from scoring.core.stats import Z95
from scoring.estimate.planner import ReviewPlan, planning_rates, smallest_scale
from scoring.estimate.ppi import Fit, fit, judge_values, sample_arrays
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import MIN_REVIEWED, Strata, build_strata

PPI_PLAN_METHOD = (
    "Neyman allocation over bucket x domain on the judge-assisted estimate's residual spread: S_h² = p(1-p) x the "
    "share of the verdicts' variance the judge leaves in the bucket (residual human verdict - lambda x judge label "
    "over the verdicts' sum of squares), p the bucket's pooled reviewed share moved toward 0.5 to its one-sided 69% "
    "Wilson bound (0.5 where the bucket has none); the total from sum W² S² (1/n - 1/N) aimed at 95% "
    "of the asked half-width, each stratum between what its random sample holds (at least 2) and its size"
)
#: The share of the asked half-width a plan aims at (a margin for variances read off a pilot).
PLAN_AIM = 0.95
#: One-sided normal quantile of the Wilson bound a planned rate is moved toward 0.5 by (69%, as the
#: human-only planner's).


@dataclass(frozen=True)
class JudgePlan:
    """The plan with the judge's labels (``plan``, a :class:`ReviewPlan` whose strata also hold
    ``residual_sd``) and the rows the same plan needs without them (``human_planned``)."""

    plan: ReviewPlan
    human_planned: int

    @property
    def saved(self) -> int:
        """What the judge's labels are worth here, in reviews (0 when they do not help)."""
        return max(0, self.human_planned - self.plan.planned)

    def as_dict(self) -> dict:
        return {**self.plan.as_dict(), "human_planned": self.human_planned, "saved": self.saved}


def expected_variance(size: np.ndarray, s2: np.ndarray, n: np.ndarray) -> float:
    """``sum W² S² (1/n - 1/N)`` over strata with ``n`` rows (infinite while a stratum with rows
    and spread has none reviewed)."""
    w = size / size.sum()
    n = np.asarray(n, dtype=float)
    if np.any((n <= 0) & (size > 0) & (s2 > 0)):
        return float("inf")
    safe = np.maximum(n, 1.0)
    return float(np.sum(w * w * s2 * np.maximum(1 / safe - 1 / np.maximum(size, 1.0), 0.0)))


def allocate_spread(size: np.ndarray, s2: np.ndarray, low: np.ndarray, half_width: float,
                    z: float = Z95) -> np.ndarray:  # fmt: skip
    """Rows per stratum (integers, ``low <= n <= size``): ``ceil(mu W S)`` for the smallest ``mu``
    (by bisection) whose :func:`expected_variance` reaches ``(half_width / z)²``."""
    if half_width <= 0:
        raise ValueError("The half-width must be positive.")
    w, spread = size / size.sum(), np.sqrt(s2)
    target = (half_width / z) ** 2
    low = np.minimum(np.maximum(low, 0), size).astype(float)

    def rows(mu: float) -> np.ndarray:
        return np.ceil(np.clip(mu * w * spread, low, size))

    def too_wide(mu: float) -> bool:
        return expected_variance(size, s2, rows(mu)) > target

    return rows(smallest_scale(too_wide)).astype(np.int64)


def _plan(strata: Strata, f: Fit, human: Fit, sampled_n: np.ndarray, half_width: float,
          z: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(rows per stratum, planning variance): the verdicts' variance at the bucket's reviewed share
    moved toward 0.5 within the planner's PLAN_Z Wilson bound, times the share of it the judge leaves
    (the bucket's residual over its verdicts' sum of squares, ``f`` over ``human``)."""
    b_n = np.bincount(strata.bucket, weights=sampled_n, minlength=4)
    b_k = np.bincount(strata.bucket, weights=f.strata.correct, minlength=4)
    p = planning_rates(b_k[strata.bucket], b_n[strata.bucket])
    kept = np.divide(np.bincount(strata.bucket, weights=f.squares, minlength=4),
                     np.bincount(strata.bucket, weights=human.squares, minlength=4), out=np.ones(4),
                     where=np.bincount(strata.bucket, weights=human.squares, minlength=4) > 0)  # fmt: skip
    s2 = p * (1 - p) * np.clip(kept, 0.0, 1.0)[strata.bucket]
    low = np.maximum(sampled_n, np.minimum(MIN_REVIEWED, strata.size))
    return allocate_spread(strata.size, s2, low, half_width * PLAN_AIM, z), s2


def plan_arrays(strata: Strata, truth: np.ndarray, judge: np.ndarray, missing: np.ndarray | None,
                half_width: float = 0.02, z: float = Z95) -> JudgePlan:  # fmt: skip
    """The plan from per-row arrays aligned with ``strata``'s rows (as
    :func:`scoring.estimate.ppi.judge_assisted_arrays` takes them)."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    missing = np.zeros(len(reviewed), dtype=bool) if missing is None else np.asarray(missing, dtype=bool) & ~reviewed
    sampled = reviewed | missing
    x, mean_x = judge_values(strata, judge)
    y = np.where(reviewed, np.nan_to_num(np.asarray(truth, dtype=float)), 0.5)  # a missing row: either way
    judged, human = fit(strata, y, x, mean_x, sampled, None, z=z), fit(strata, y, x, mean_x, sampled, 0.0, z=z)
    cells = len(strata.size)
    n_sampled = np.bincount(strata.row_cell[sampled], minlength=cells).astype(float)
    n_reviewed = np.bincount(strata.row_cell[reviewed], minlength=cells)
    planned, s2 = _plan(strata, judged, human, n_sampled, half_width, z)
    human_planned, _ = _plan(strata, human, human, n_sampled, half_width, z)
    expected = z * math.sqrt(expected_variance(strata.size, s2, planned.astype(float)))
    b_n = np.bincount(strata.bucket, weights=n_sampled, minlength=4)
    rate = np.divide(judged.strata.correct, n_sampled, out=np.full(cells, 0.5), where=n_sampled > 0)
    table = strata.cells.select("bucket", "Domain", "size").with_columns(
        reviewed=pl.Series(n_reviewed, dtype=pl.Int64),
        planned=pl.Series(planned, dtype=pl.Int64),
        remaining=pl.Series(np.maximum(planned - n_reviewed, 0), dtype=pl.Int64),
        rate=pl.Series(rate),
        prior=pl.Series(b_n[strata.bucket] == 0),
        residual_sd=pl.Series(np.sqrt(s2)),
    )
    plan = ReviewPlan(half_width, int(planned.sum()), int(n_reviewed.sum()),
                      int(np.maximum(planned - n_reviewed, 0).sum()), expected, table, PPI_PLAN_METHOD)  # fmt: skip
    return JudgePlan(plan, int(human_planned.sum()))


def plan_with_judge(sample: pl.DataFrame, half_width: float = 0.02, strata: Strata | None = None,
                    z: float = Z95) -> JudgePlan | None:  # fmt: skip
    """The judge-assisted plan of a sample (:func:`scoring.estimate.reviewed_sample`), or None when
    the judge labelled no row (the human-only planner is then the plan)."""
    check_sample(sample)
    truth, judge, missing = sample_arrays(sample)
    if np.isnan(judge).all():
        return None
    return plan_arrays(strata or build_strata(sample), truth, judge, missing, half_width, z)

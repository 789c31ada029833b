"""How many rows to review for a chosen half-width when the judge has labelled the run, and what
the judge's labels are worth in reviews.

The judge-assisted estimate (:mod:`.ppi`) is stratified over bucket x domain x the judge's label,
so its plan is the human-only planner's Neyman allocation (:func:`scoring.estimate.plan_review`)
over those parts: each part's rate the pooled reviewed share of its bucket x label, moved toward
0.5 to its one-sided :data:`JUDGE_PLAN_Z` Wilson bound. A judge right on 90% of rows makes its
"correct" parts nearly pure, so the plan asks for few of them and many of the rows it calls wrong.
The same allocation over bucket x domain alone is the plan without the judge; the difference is
what the judge is worth here, in reviews. Rows already reviewed are never undone; which rows come
next is :func:`scoring.estimate.next_rows` on the returned plan (per part, in the seeded order).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from scoring.core.stats import Z95
from scoring.estimate.planner import ReviewPlan, plan_review
from scoring.estimate.ppi import judge_inputs
from scoring.estimate.strata import Strata, split_by_judge

#: One-sided z of the margin the judge's plan takes on each part's rate (a 66% bound). Its parts
#: pool fewer rows than the buckets do, so the human-only planner's 69% bound overshot (plans for
#: +-2 ended at +-1.6). Since the parts' variances shrink by 3 pseudo-rows (``JUDGE_SHRINK``), 0.25
#: left 15% of plans above +-2; at 0.4, 99.5% end at or under it, for 49% of the human-only rows
#: (``tests/bench_ppi.py``: 0.3 gives 94% and 47%, but covers 0.98).
JUDGE_PLAN_Z = 0.4
PPI_PLAN_METHOD = (
    "Neyman allocation over bucket x domain x the judge's label (the rows it called correct, wrong, or did not "
    "label): each part's rate the pooled reviewed share of its bucket x label moved toward 0.5 to its one-sided "
    "66% Wilson bound, the total from the stratified variance p(1-p)/(n-1) with the finite-population "
    "correction, each part between what its random sample holds (at least 2) and its size"
)


@dataclass(frozen=True)
class JudgePlan:
    """The plan with the judge's labels (``plan``, whose strata are bucket x judge label x domain)
    and the rows the human-only plan needs for the same half-width (``human_planned``)."""

    plan: ReviewPlan
    human_planned: int

    @property
    def saved(self) -> int:
        """What the judge's labels are worth here, in reviews (0 when they do not help)."""
        return max(0, self.human_planned - self.plan.planned)

    def as_dict(self) -> dict:
        return {**self.plan.as_dict(), "human_planned": self.human_planned, "saved": self.saved}


def plan_arrays(strata: Strata, truth: np.ndarray, judge: np.ndarray, missing: np.ndarray | None,
                half_width: float = 0.02, z: float = Z95) -> JudgePlan:  # fmt: skip
    """The plan from per-row arrays aligned with ``strata``'s rows (as
    :func:`scoring.estimate.ppi.judge_assisted_arrays` takes them)."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    right = reviewed & (np.nan_to_num(np.asarray(truth, dtype=float)) > 0.5)
    parts = split_by_judge(strata, judge, right, missing)
    plan = replace(plan_review(parts, half_width, z, plan_z=JUDGE_PLAN_Z), method=PPI_PLAN_METHOD)
    return JudgePlan(plan, plan_review(strata, half_width, z).planned)


def plan_with_judge(sample: pl.DataFrame, half_width: float = 0.02, z: float = Z95) -> JudgePlan | None:
    """The judge-assisted plan of a sample (:func:`scoring.estimate.reviewed_sample`), or None when
    the judge labelled no row (the human-only planner is then the plan)."""
    found = judge_inputs(sample)
    return None if found is None else plan_arrays(found.strata, found.truth, found.judge, found.missing, half_width, z)

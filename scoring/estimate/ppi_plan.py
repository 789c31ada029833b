"""How many rows to review for a chosen half-width when the judge has labelled the run.

The judge-assisted estimate (:mod:`.ppi`) is the human-only stratified estimate with the judge's
label as a control variate, so it reads the same random sample (per bucket x domain, a prefix of
its review order) and its plan is the human-only planner's Neyman allocation with each bucket's
variance scaled by what the judge leaves of it: ``(A - 2 lambda B + lambda² C) / A`` over the
bucket's strata, at its lambda and its degrees-of-freedom factor, as the estimate computes them
now. A judge that does not narrow the estimate leaves the plan exactly the human-only one. The rows
asked for are the human-only plan's first rows of each stratum: fewer of them, never others.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.core.stats import DEFAULT_HALF_WIDTH, Z95
from scoring.estimate.planner import ReviewPlan, plan_review
from scoring.estimate.ppi import JUDGE_MIN_REVIEWED, fit_judge, judge_covariate, judge_inputs, quadratic
from scoring.estimate.strata import Strata

PPI_PLAN_METHOD = (
    "Neyman allocation over bucket x domain as without the judge (rates at the one-sided bound of the bucket's "
    "pooled reviewed share), each bucket's variance scaled by the share the judge's labels leave of it in the "
    "judge-assisted estimate (its lambda, on one degree of freedom fewer) in strata planned to 20 reviewed rows "
    "or more"
)


@dataclass(frozen=True)
class JudgePlan:
    """The plan with the judge's labels (``plan``, over bucket x domain like the human-only one)
    and the rows the human-only plan needs for the same half-width (``human_planned``);
    ``factors``: per bucket, the share of its variance the judge leaves."""

    plan: ReviewPlan
    human_planned: int
    factors: dict[str, float]

    def as_dict(self) -> dict:
        return {**self.plan.as_dict(), "human_planned": self.human_planned, "factors": self.factors}


def variance_factors(strata: Strata, truth: np.ndarray, judge: np.ndarray, min_reviewed: int = 2) -> np.ndarray:
    """Per bucket, the share of its part of the run's variance left with the judge's labels (1 where
    its lambda is 0), from the fit the estimate makes on the settled rows, here over every stratum
    with ``min_reviewed`` of them: a pilot's strata are thinner than the 20 rows the estimate waits
    for, and the plan is for once they are reviewed."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    right = reviewed & (np.nan_to_num(np.asarray(truth, dtype=float)) > 0.5)
    x, population_mean, _ = judge_covariate(strata, judge)
    fit = fit_judge(strata, right, x, population_mean, min_reviewed)
    size = fit.strata.size / max(fit.strata.size.sum(), 1.0)
    lam = np.where(fit.applies, fit.lam[fit.strata.bucket], 0.0)
    plain = quadratic(fit, size, np.zeros_like(size))
    judged = np.where(lam > 0, quadratic(fit, size, lam * size) * fit.inflate[fit.strata.bucket], plain)
    top = np.bincount(fit.strata.bucket, weights=judged, minlength=fit.strata.groups)
    bottom = np.bincount(fit.strata.bucket, weights=plain, minlength=fit.strata.groups)
    ratio = np.divide(top, bottom, out=np.ones(fit.strata.groups), where=bottom > 0)
    return np.clip(np.nan_to_num(ratio, nan=1.0, posinf=1.0), 0.0, 1.0)  # nothing measured: no reduction


def plan_arrays(
    strata: Strata,
    truth: np.ndarray,
    judge: np.ndarray,
    missing: np.ndarray | None,
    half_width: float = DEFAULT_HALF_WIDTH,
    z: float = Z95,
) -> JudgePlan:
    """The plan from per-row arrays aligned with ``strata``'s rows (as
    :func:`scoring.estimate.ppi.judge_assisted_arrays` takes them)."""
    del missing  # the strata count them; the plan asks for them first either way
    factors = variance_factors(strata, truth, judge)
    plan = replace(
        plan_review(strata, half_width, z, factor=factors[strata.bucket], factor_from=JUDGE_MIN_REVIEWED),
        method=PPI_PLAN_METHOD,
    )
    named = {name: float(factors[b]) for b, name in enumerate(BUCKETS)}
    return JudgePlan(plan, plan_review(strata, half_width, z).planned, named)


def plan_with_judge(sample: pl.DataFrame, half_width: float = DEFAULT_HALF_WIDTH, z: float = Z95) -> JudgePlan | None:
    """The judge-assisted plan of a sample (:func:`scoring.estimate.reviewed_sample`), or None when
    the judge labelled no row (the human-only planner is then the plan)."""
    found = judge_inputs(sample)
    return None if found is None else plan_arrays(found.strata, found.truth, found.judge, found.missing, half_width, z)

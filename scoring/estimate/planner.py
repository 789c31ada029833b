"""How many rows to review, in which strata, for a chosen interval half-width, and exactly which
rows come next.

Neyman allocation with the finite-population correction: with ``W_h = N_h/N`` and
``S_h = sqrt(p_h (1 - p_h))``, the estimator's variance is about ``sum W_h² S_h² (1/n_h - 1/N_h)``
(:mod:`.strata`: ``p(1-p)/(n-1)`` with the correction). The fewest rows that bring it to
``(half_width / z)²`` are ``n_h = clip(lambda W_h S_h, L_h, N_h)`` for the one ``lambda`` that
meets the target, where ``L_h`` is what is already reviewed (at least 2, so no stratum falls
back). Rows already reviewed are never undone, so the allocation is a top-up.

The rate ``p_h`` a plan assumes is the stratum's bucket's pooled share (across domains), moved
toward 0.5 to the edge of its one-sided 77% Wilson bound (:data:`PLAN_Z`): a share read off a
small pilot is often too far from 0.5, and a plan built on it ends wider than asked; a stratum's
own share would stop the strata whose first rows were lucky, which biases their estimate. With
this margin at least 90% of finished plans end at or under the asked half-width, at 95% coverage
(``tests/test_planner.py`` and ``tests/test_estimate_coverage.py`` simulate it). The prior 0.5
where the bucket has no reviewed row.

Which rows: each stratum's rows in the seeded review order (:mod:`.order`), the first ones not
reviewed yet. Rows of the random sample whose truth is missing (skipped, in conflict) come first
in that order: they are planned like any other (leaving them out would bias the sample) and
flagged ``conflict`` where they need adjudication. Rows reviewed by hand outside the sample are
not counted, and not asked for again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from scoring.core.order import review_rank
from scoring.core.stats import DEFAULT_HALF_WIDTH, Z95, wilson_from_share
from scoring.estimate.estimator import PRIOR
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import MIN_REVIEWED, Strata, build_strata, stands_alone
from scoring.estimate.wording import plan_outcome, plan_sentence

PLAN_METHOD = (
    "Neyman allocation over bucket x domain (n_h proportional to N_h x S_h, S_h = sqrt(p(1-p)) at the rate "
    "nearest 0.5 within the one-sided 77% Wilson bound of the bucket's pooled reviewed share, the prior 0.5 "
    "where the bucket has none), the total from the stratified variance "
    "p(1-p)/(n-1) with the finite-population correction, each stratum between what is already reviewed (at "
    "least 2) and its size"
)
#: One-sided z of the margin a plan's rates take (a 77% bound): finished plans end at or under the asked
#: width. At 0.5 (69%) plans after a pilot of 10-20 rows per bucket ended there in 80-83% of runs of 700-2,000
#: rows (an all-correct pilot bucket planned as if nearly error-free); at 0.75, 95-98%, for 10-13% more rows
#: (``tests/bench_small_runs.py``); at 1.0, 99-100% for 25-40% more.
PLAN_Z = 0.75
PLAN_COLUMNS = ("bucket", "Domain", "size", "reviewed", "planned", "remaining", "rate", "prior", "observed")


@dataclass(frozen=True)
class ReviewPlan:
    """Rows to review for an interval of +-``half_width`` (z = 1.96).

    ``strata`` holds :data:`PLAN_COLUMNS`: per stratum its size, reviewed rows, planned rows (the
    reviewed ones included), remaining = planned - reviewed, the rate the plan assumed, and
    whether that rate is the prior. ``expected_half_width`` is the estimator's half-width once
    the plan is done, if the assumed rates hold.
    """

    half_width: float
    planned: int
    reviewed: int
    remaining: int
    expected_half_width: float
    strata: pl.DataFrame
    method: str = PLAN_METHOD

    @property
    def sentence(self) -> str:
        """The plan in one sentence, as the page and the CLI print it (:func:`.wording.plan_sentence`)."""
        return plan_sentence(
            self.half_width,
            self.planned,
            self.reviewed,
            self.remaining,
            self.expected_half_width,
            int(self.strata["size"].sum()),
            int(self.strata["prior"].sum()),
        )

    @property
    def outcome(self) -> str:
        """What the plan gives once done, in words (:func:`.wording.plan_outcome`)."""
        return plan_outcome(
            self.expected_half_width, self.planned, int(self.strata["size"].sum()), int(self.strata["prior"].sum())
        )

    def as_dict(self) -> dict:
        plain = {k: v for k, v in asdict(self).items() if k != "strata"}
        return {**plain, "sentence": self.sentence, "strata": self.strata.to_dicts()}


def _rates(strata: Strata, plan_z: float = PLAN_Z) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(share, rate, spread, prior) per cell: the current reviewed share (the bucket's pooled share
    below :data:`MIN_REVIEWED`, the prior where the bucket has none), the rate the plan assumes
    (nearest 0.5 within the :data:`PLAN_Z` Wilson bound), ``sqrt(rate(1-rate))`` (what Neyman
    allocates by: never 0, so a stratum all right so far still gets rows), and whether the prior
    was used."""
    n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)[strata.bucket]
    k_bucket = np.bincount(strata.bucket, weights=strata.correct, minlength=strata.groups)[strata.bucket]
    own = stands_alone(strata)
    prior = ~own & (n_bucket == 0)
    n = np.where(own, strata.reviewed, np.where(prior, 0.0, n_bucket))
    k = np.where(own, strata.correct, np.where(prior, 0.0, k_bucket))
    share = np.where(prior, PRIOR, k / np.maximum(n, 1))
    # The rate a plan assumes is its bucket's (pooled across domains), not the stratum's own: a
    # stratum whose first rows happen to be all correct would otherwise get no more rows, and the
    # estimate of strata stopped early on a lucky start is biased and too sure (simulated: 0.93
    # coverage planning on each stratum's own share, 0.95 on its bucket's).
    rate = planning_rates(k_bucket, n_bucket, plan_z)
    return share, rate, np.sqrt(rate * (1 - rate)), prior


def planning_rates(k: np.ndarray, n: np.ndarray, z: float = PLAN_Z) -> np.ndarray:
    """Per stratum, the rate nearest 0.5 inside the one-sided ``z`` Wilson bound of ``k`` of
    ``n`` (the prior where ``n`` is 0): a share read off a few rows, all right, plans as if
    errors were likelier. Both planners plan on it."""
    out = np.full(len(n), PRIOR)
    for i, (k_i, n_i) in enumerate(zip(k, n)):
        if n_i > 0:
            low, high = wilson_from_share(min(max(k_i / n_i, 0.0), 1.0), n_i, z)
            out[i] = min(max(PRIOR, low), high)
    return out


def expected_variance(size: np.ndarray, share: np.ndarray, n: np.ndarray, z: float = Z95) -> float:
    """The estimator's variance with ``n`` reviewed rows per cell if each cell's rate is ``share``:
    ``sum W² p(1-p)/(n-1) (1-n/N)`` (a census adds nothing)."""
    del z
    return stratified_variance(size, share * (1 - share), n)


def stratified_variance(size: np.ndarray, per_row: np.ndarray, n: np.ndarray) -> float:
    """``sum W² v/(n-1) (1-n/N)`` for a per-row variance ``v`` per cell: every plan's variance."""
    w = size / max(size.sum(), 1.0)
    fpc = np.clip(1 - n / np.maximum(size, 1), 0, 1)
    return float(np.sum(w * w * per_row * fpc / np.maximum(n - 1, 1)))


def allocate(
    size: np.ndarray,
    share: np.ndarray,
    spread: np.ndarray,
    low: np.ndarray,
    half_width: float,
    z: float = Z95,
    variance: Callable[[np.ndarray], float] | None = None,
) -> np.ndarray:
    """Rows per cell (integers, ``low <= n <= size``): Neyman's ``lambda W S`` with ``S`` =
    ``spread``, ``lambda`` the smallest (by bisection) whose :func:`expected_variance` (or
    ``variance`` of the rows per cell, when given) reaches ``(half_width/z)²``."""
    if half_width <= 0:
        raise ValueError("The half-width must be positive.")
    w = size / size.sum()
    target = (half_width / z) ** 2
    low = np.minimum(np.maximum(low, 0), size).astype(float)

    def rows(lam: float) -> np.ndarray:
        return np.ceil(np.clip(lam * w * spread, low, size))

    def too_wide(lam: float) -> bool:
        n = rows(lam)
        return (expected_variance(size, share, n, z) if variance is None else variance(n)) > target

    return rows(smallest_scale(too_wide)).astype(np.int64)


def smallest_scale(too_wide: Callable[[float], bool]) -> float:
    """The smallest Neyman scale (by bisection, 60 halvings) at which the plan is no longer too
    wide; 0 when it is not even with no rows added. Shared by every planner here."""
    if not too_wide(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while too_wide(hi) and hi < 1e15:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if too_wide(mid) else (lo, mid)
    return hi


def plan_review(
    sample: pl.DataFrame | Strata,
    half_width: float = DEFAULT_HALF_WIDTH,
    z: float = Z95,
    plan_z: float = PLAN_Z,
    factor: np.ndarray | None = None,
    factor_from: int = 0,
) -> ReviewPlan:
    """The plan for an interval of +-``half_width`` over the whole run (see the module).
    ``factor``: per cell, what the judge's labels leave of its variance once it has ``factor_from``
    reviewed rows (:mod:`.ppi_plan`); 1 without. Rows of the random sample still missing a verdict
    are always planned (first)."""
    strata = sample if isinstance(sample, Strata) else build_strata(check_sample(sample))
    share, rate, spread, prior = _rates(strata, plan_z)
    base = rate * (1 - rate)
    judged = base * (1.0 if factor is None else np.clip(np.nan_to_num(factor, nan=1.0), 0.0, 1.0))

    def variance(n: np.ndarray) -> float:
        return stratified_variance(strata.size, np.where(n >= factor_from, judged, base), n)

    low = np.maximum(strata.reviewed + strata.missing_counts(), np.minimum(MIN_REVIEWED, strata.size))
    planned = allocate(strata.size, rate, np.sqrt(judged), np.minimum(low, strata.size), half_width, z, variance)
    expected = z * math.sqrt(variance(planned.astype(float)))
    reviewed = strata.reviewed.astype(np.int64)
    table = strata.cells.select("bucket", "Domain", "size", "reviewed").with_columns(
        planned=pl.Series(planned, dtype=pl.Int64),
        remaining=pl.Series(planned - reviewed, dtype=pl.Int64),
        rate=pl.Series(rate),
        prior=pl.Series(prior),
        observed=pl.Series(share),
    )
    return ReviewPlan(
        half_width, int(planned.sum()), int(reviewed.sum()), int((planned - reviewed).sum()), expected, table
    )


def next_rows(
    sample: pl.DataFrame,
    plan: ReviewPlan,
    seed: int | str | None = None,
    key: str = "item_key",
    rank: np.ndarray | None = None,
) -> pl.DataFrame:
    """The rows to review next: per stratum, its first ``remaining`` unreviewed rows in the
    seeded review order of ``key`` (item keys by default; ``row_idx`` works too). ``rank``, when
    given instead, is each sample row's place in the queue's own order (lower first), computed
    once by the caller: the rows picked must be the ones the queue will serve first.

    Columns: row_idx, item_key, bucket, Domain, rank (place in the run's review order),
    conflict; sorted by rank, so a queue can serve them as they come.
    """
    check_sample(sample)
    if rank is None:
        if seed is None:
            raise ValueError("next_rows needs the run's seed or the rows' ranks in the review order.")
        rank = review_rank(sample[key], seed)
    by_hand = pl.col("by_hand") if "by_hand" in sample.columns else pl.lit(False)
    keys = ["bucket", "Domain"]
    ranked = sample.select("row_idx", "item_key", "bucket", "Domain", "reviewed", "conflict", by_hand=by_hand)
    ranked = ranked.with_columns(rank=pl.Series(np.asarray(rank)).rank("ordinal").cast(pl.Int64) - 1)
    want = plan.strata.select(*keys, "remaining")
    return (
        ranked.filter(~pl.col("reviewed") & ~pl.col("by_hand"))
        .sort("rank")
        .with_columns(_nth=pl.int_range(pl.len()).over(keys))
        .join(want, on=keys, how="inner")
        .filter(pl.col("_nth") < pl.col("remaining"))
        .sort("rank")
        .select("row_idx", "item_key", "bucket", "Domain", "rank", "conflict")
    )

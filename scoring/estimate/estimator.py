"""The run's true accuracy, estimated from the reviewed rows, with a 95% interval that stays
honest where a stratum is all right, all wrong, or not reviewed at all.

Worked example (``tests/test_estimate.py``): two strata of one domain, both_pass 800 rows with
10 reviewed all correct and overlap_only 200 rows with 10 reviewed, 4 correct. Estimate
0.8 x 1 + 0.2 x 0.4 = 0.88. Variances at the Wilson centres (z = 1.96): both_pass
p~ = 11.92/13.84 = 0.8612, 0.8612 x 0.1388/13.84 x (1 - 10/800) = 0.008526; overlap_only
p~ = 5.92/13.84 = 0.4278, 0.4278 x 0.5722/13.84 x 0.95 = 0.016800. Combined 0.64 x 0.008526
+ 0.04 x 0.016800 = 0.006129, standard error 0.07829, interval 0.88 +- 0.1534 = [0.7266, 1].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import Z95, wilson_from_share
from scoring.estimate.evidence import MAX_BORROWED, TO_REVIEW, shortfall, withhold
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import (
    BUCKET,
    NONE,
    OWN,
    Strata,
    Weights,
    build_strata,
    cell_sums,
    model_variances,
    shares,
    shrunk_variances,
    spread_centres,
    weights,
)
from scoring.estimate.wording import to_get_one

ACCURACY_METHOD = (
    "Stratified estimate over bucket x domain: each stratum's share of reviewed rows judged correct, weighted by "
    "its size (a stratum with fewer than 2 reviewed rows, unless all its rows are, keeps its reviewed rows and "
    "gives the rest its bucket's pooled share across domains). 95% interval: Wilson score interval on the Kish "
    "effective sample size, the variance the sum of W² x p'(1-p')/(n-1) x (1-n/N) per stratum, p' the stratum's "
    "share shrunk toward its bucket's by 1 pseudo-row (so an all-correct stratum keeps a variance), plus, for "
    "fallen-back strata, the spread between the bucket's strata and the binomial noise of their unreviewed rows; "
    "missing rows of the random sample widen it to every truth they could have; strata whose bucket has no "
    "reviewed row count 0.5 in the estimate and widen the interval by their whole weight (0 to 1)."
)
#: The method in a few words, for a chart's caption or a table's column.
ACCURACY_METHOD_SHORT = "stratified, shrunk-variance Wilson interval with finite-population correction"
PRIOR = 0.5  #: the rate assumed where nothing is known (estimate of an unreviewed bucket, planner's prior)
#: Column types of a table of estimates whose figures may all be None (no interval yet anywhere).
FIGURE_TYPES = {
    "estimate": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "half_width": pl.Float64,
    TO_REVIEW: pl.String,
}


@dataclass(frozen=True)
class Estimate:
    """Estimated share of correct rows in ``scope`` (a domain, or ``combined``), 95% interval.

    ``reviewed``/``correct`` count the scope's own reviewed rows; ``unknown_weight`` is the share
    of the scope's rows whose bucket has no reviewed row: counted at 0.5 in ``estimate`` and
    spanned from 0 to 1 by the interval. ``standard_error`` covers the reviewed part only.
    """

    scope: str
    estimate: float
    ci_low: float
    ci_high: float
    rows: int
    reviewed: int
    correct: int
    standard_error: float
    unknown_weight: float
    missing: int = 0  #: rows of the random sample whose truth is missing (skipped, in conflict, pending)
    missing_width: float = 0.0  #: what they add to the interval's width (low to high)
    #: False: too few reviewed rows here for an interval (:func:`scoring.estimate.evidence.shortfall`):
    #: no figure is printed (:func:`scoring.estimate.evidence.has_interval`), only what to review
    shown: bool = True
    needed: int = 0  #: at least this many reviews of the scope's random sample would let it show an interval
    #: buckets with rows here and no reviewed row anywhere: each needs some (part of ``needed``)
    review_buckets: tuple[str, ...] = ()
    method: str = field(default=ACCURACY_METHOD, repr=False)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    @property
    def complete(self) -> bool:
        """Every row's bucket has reviewed rows: the interval is a sampling interval only."""
        return self.unknown_weight == 0

    def as_dict(self) -> dict:
        """The estimate as every output carries it: without an interval, no figure (None) and
        ``what_to_review`` saying what would give one (:func:`scoring.estimate.evidence.withhold`)."""
        row = {**asdict(self), "half_width": self.half_width, "complete": self.complete}
        return withhold(row, to_get_one(self.scope, self.needed, self.review_buckets))


@dataclass(frozen=True)
class AccuracyEstimate:
    """The run's estimate, per domain and combined, and how each stratum was used.

    ``strata`` columns: bucket, Domain, size, reviewed, correct, share (its own reviewed share,
    null when none), rate (the share the estimate uses: its own, its bucket's pooled one, or null),
    used (``stratum``, ``bucket`` = fell back, ``none`` = no reviewed row in its bucket).
    """

    combined: Estimate
    domains: list[Estimate]
    strata: pl.DataFrame
    method: str = ACCURACY_METHOD

    @property
    def rows(self) -> list[Estimate]:
        """Per domain (sorted), then combined: the order the tables print."""
        return [*self.domains, self.combined]

    @property
    def fell_back(self) -> list[tuple[str, str]]:
        """(bucket, domain) of the strata that use their bucket's pooled rate."""
        return [(b, d) for b, d in self.strata.filter(pl.col("used") == BUCKET).select("bucket", "Domain").rows()]

    @property
    def unreviewed(self) -> list[tuple[str, str]]:
        """(bucket, domain) of the strata whose bucket has no reviewed row at all."""
        return [(b, d) for b, d in self.strata.filter(pl.col("used") == NONE).select("bucket", "Domain").rows()]

    def table(self) -> pl.DataFrame:
        """One row per domain and combined: scope, rows, reviewed, correct, estimate, ci_low,
        ci_high, half_width, unknown_weight, shown, needed, what_to_review (the figures None where
        there is no interval: :meth:`Estimate.as_dict`)."""
        cols = (
            "scope",
            "rows",
            "reviewed",
            "correct",
            "estimate",
            "ci_low",
            "ci_high",
            "half_width",
            "unknown_weight",
            "shown",
            "needed",
            TO_REVIEW,
        )
        return pl.DataFrame([{c: r.as_dict()[c] for c in cols} for r in self.rows], schema_overrides=FIGURE_TYPES)

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "combined": self.combined.as_dict(),
            "domains": [r.as_dict() for r in self.domains],
            "fell_back": [list(pair) for pair in self.fell_back],
            "unreviewed": [list(pair) for pair in self.unreviewed],
            "strata": self.strata.to_dicts(),
        }


def _interval(
    strata: Strata, k: np.ndarray, target: np.ndarray | None, z: float, w: Weights | None = None
) -> tuple[float, float, float, float]:
    """(estimate of the known part, its standard error, low, high) for cell counts ``k``: the
    Wilson score interval of the estimate on the effective sample size ``p'(1-p')/se²``, ``p'``
    the same weighted sum of the cells' shrunk shares (so ten of ten correct is worth about ten
    rows, not a zero-width certainty), then the unknown weight added to the top. ``w``: the
    cells' weights when the caller has them (the same strata and target)."""
    w = weights(strata, target) if w is None else w
    known = float(np.dot(w.a, shares(strata, k)))
    var = float(np.sum(w.a**2 * shrunk_variances(strata, k))) + model_variances(strata, k, target)
    return wilson_interval(strata, k, w, known, var, z)


def wilson_interval(
    strata: Strata, k: np.ndarray, w: Weights, known: float, var: float, z: float = Z95
) -> tuple[float, float, float, float]:
    """(known, standard error, low, high): the Wilson interval of ``known`` (the estimate of the
    reviewed part, weight ``1 - w.unknown``) with variance ``var``, on the effective sample size
    ``p'(1-p')/var`` at the weighted shrunk share ``p'``; the unknown weight is added to the top.
    The judge-assisted estimate passes its own ``known`` and ``var`` on the same cells."""
    se = float(np.sqrt(max(var, 0.0)))
    mass = float(w.a.sum())  # 1 less the unknown weight
    if se == 0 or mass <= 0:
        low = high = known
    else:  # the Wilson interval of the known part's own share, scaled back to the target
        spread = float(np.dot(w.a, spread_centres(strata, k))) / mass
        share = min(1.0, max(0.0, known / mass))
        share_low, share_high = wilson_from_share(share, spread * (1 - spread) * mass**2 / var, z)
        low, high = mass * share_low, mass * share_high
    return known, se, max(0.0, min(low, known)), min(1.0, max(high, known) + w.unknown)


def share_estimate(
    strata: Strata,
    k: np.ndarray,
    target: np.ndarray | None = None,
    scope: str = COMBINED,
    z: float = Z95,
    withhold: bool = False,
    max_borrowed: float = MAX_BORROWED,
) -> Estimate:
    """The stratified estimate of a yes/no quantity whose per-cell reviewed counts are ``k``
    (correct rows, or rows a rule gets right), over the cells ``target`` selects. Missing rows
    of the random sample widen the interval to the union of the intervals with all of them
    wrong and all of them right. ``withhold``: a domain with too few reviewed rows for an interval
    says so (:func:`scoring.estimate.evidence.shortfall`, up to ``max_borrowed`` of its rows
    borrowing) rather than print a confident one."""
    w = weights(strata, target)
    inside = np.ones(len(k), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    if withhold and target is not None:
        z = small_sample_z(strata, k, w, z)
    known, se, low, high = _interval(strata, k, target, z, w)
    miss = strata.missing_counts()
    missing = int(miss[inside].sum())
    lacking = shortfall(strata, inside, w, max_borrowed) if withhold else None
    needed = lacking.rows if lacking is not None else 0
    width = high - low
    if missing:
        low = min(low, _interval(strata.imputed(False), k, target, z)[2])
        high = max(high, _interval(strata.imputed(True), k + miss, target, z)[3])
    return Estimate(
        scope=scope,
        estimate=min(1.0, known + PRIOR * w.unknown),
        ci_low=min(low, high),
        ci_high=high,
        rows=w.rows,
        reviewed=int(strata.reviewed[inside].sum()),
        correct=int(k[inside].sum()),
        standard_error=se,
        unknown_weight=w.unknown,
        missing=missing,
        missing_width=(high - low) - width,
        needed=needed,
        shown=needed == 0,
        review_buckets=lacking.buckets if lacking is not None and needed else (),
    )


def small_sample_z(strata: Strata, k: np.ndarray, w: Weights, z: float = Z95) -> float:
    """``z`` made Student's t on the degrees of freedom the domain's variance is estimated on
    (its reviewed rows less one per stratum): a domain's interval rests on a few dozen reviewed rows
    in a few strata, and its variance estimate is then noisy enough that z covered 0.92-0.93 (a
    domain unlike its buckets, 29 reviewed rows in four strata, its standard error right on
    average). Satterthwaite's degrees of freedom (5-10 there) overshot to 0.97. Domains only: the
    run's figure pools every stratum."""
    v = w.a**2 * shrunk_variances(strata, k)
    n = strata.reviewed
    use = (v > 0) & (n >= 2)
    if not use.any():
        return z
    df = float(np.sum(n[use] - 1))
    return t_quantile(df, z)


def t_quantile(df: float, z: float = Z95) -> float:
    """Student's t quantile matching the normal ``z`` on ``df`` degrees of freedom (the
    Cornish-Fisher expansion; within 0.01 of the exact value from 3 degrees of freedom:
    t(0.975, 5) = 2.571, 10: 2.228, 30: 2.042)."""
    if not np.isfinite(df) or df <= 0:
        return z
    df = max(df, 3.0)
    return float(
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def estimate_indicator(strata: Strata, values: np.ndarray, z: float = Z95) -> tuple[Estimate, list[Estimate]]:
    """(combined, per domain) estimate of the share of rows where ``values`` (one bool per sample
    row; only reviewed rows are read) holds: a rule's agreement with the reviewers, say."""
    k = cell_sums(strata, np.asarray(values, dtype=float))
    domains = strata.cells["Domain"].to_numpy()
    per_domain = [share_estimate(strata, k, domains == d, d, z) for d in strata.domains]
    return share_estimate(strata, k, None, COMBINED, z), per_domain


def _strata_table(strata: Strata) -> pl.DataFrame:
    w = weights(strata)
    own = shares(strata, strata.correct)
    n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    k_bucket = np.bincount(strata.bucket, weights=strata.correct, minlength=strata.groups)
    pooled = np.divide(k_bucket, n_bucket, out=np.zeros(strata.groups), where=n_bucket > 0)[strata.bucket]
    rate = np.where(w.status == OWN, own, pooled)
    return strata.cells.with_columns(
        share=pl.Series(np.where(strata.reviewed > 0, own, np.nan)).fill_nan(None),
        rate=pl.Series(np.where(w.status == NONE, np.nan, rate)).fill_nan(None),
        used=pl.Series(w.status.astype(str).tolist(), dtype=pl.String),
    )


def estimate_accuracy(sample: pl.DataFrame | Strata, z: float = Z95) -> AccuracyEstimate:
    """True accuracy of the run from its reviewed rows (see :data:`ACCURACY_METHOD`).

    ``sample`` is :func:`scoring.estimate.reviewed_sample`'s table (or strata built from one).
    """
    strata = sample if isinstance(sample, Strata) else build_strata(check_sample(sample))
    domains = strata.cells["Domain"].to_numpy()
    per_domain = [share_estimate(strata, strata.correct, domains == d, d, z, withhold=True) for d in strata.domains]
    return AccuracyEstimate(
        share_estimate(strata, strata.correct, None, COMBINED, z, withhold=True), per_domain, _strata_table(strata)
    )

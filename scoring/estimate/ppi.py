"""Judge-assisted true accuracy: the human-only stratified estimate (bucket x domain, :mod:`.estimator`)
with the judge's label on every row as a control variate, PPI++ with its power-tuned lambda (see
``docs/statistics.md``, "Judge-assisted estimate", and ``tests/test_ppi.py``).

In each bucket x domain stratum the judge labelled every row, so the share of its rows the judge
calls correct is known exactly, and the reviewed random sample shows how far the reviewers' share
sits from the judge's. The stratum's estimate is

    mean(Y) + lambda_B x (share the judge calls correct over all its rows - over its reviewed rows)

with ``Y`` the reviewers' verdict. Any lambda keeps it unbiased (the correction has mean zero over
random samples); lambda 0 is the human-only estimate. Its variance, ``(1 - n/N)/(n - 1) x
(A - 2 lambda B + lambda² C)`` per stratum, takes ``A`` as the human-only estimate takes it (its
share shrunk one pseudo-row toward its bucket's, or its own where nearer 0.5: :func:`scoring.estimate.strata.spreads`),
``B`` and ``C`` the reviewed rows' covariance of verdict and label and variance of the label.

One lambda per bucket, pooled over its domains (a stratum of a few reviewed rows cannot tune its
own), is the one that makes the run's variance smallest (PPI++'s power tuning, in the stratified
form of Fisch et al.), clipped to [0, 1]; then, since it was tuned on the same rows, its part of
the variance is taken over one degree of freedom fewer, and a bucket whose variance that does not
lower keeps lambda 0. So the judge can only narrow the interval, a judge whose label is the same
on every row of a stratum (a function of the buckets: the exact-substring verdict itself) gives
exactly the human-only estimate, and a domain's figure and the combined one use the same lambdas:
the combined figure is the domains' row-weighted mean. Strata with fewer than
:data:`JUDGE_MIN_REVIEWED` reviewed rows are estimated as without the judge (those with fewer than
two take their bucket's rate, as the human-only estimate does).

Rows the judge did not label (unparsed, not run) count at their stratum's labelled share: a
constant, so they neither help nor bias. "Worth k reviews" is one number everywhere:
:func:`worth_reviews`, from the two estimates' variances.

:func:`ppi_mean_ci` is the textbook one-mean PPI++ (independent rows, variances with n, as
``ppi_py.ppi_mean_ci``), kept for the worked numbers of the notes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.core.stats import Z95
from scoring.estimate.estimator import (
    FIGURE_TYPES,
    PRIOR,
    Estimate,
    estimate_accuracy,
    small_sample_z,
    wilson_interval,
)
from scoring.estimate.evidence import TO_REVIEW, withhold
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import (
    OWN,
    Strata,
    build_strata,
    cell_sums,
    fpc,
    model_variances,
    shares,
    spreads,
    weights,
)
from scoring.estimate.wording import to_get_one

PPI_METHOD = (
    "PPI++ per bucket x domain stratum with the judge's label as a control variate: each stratum's share of "
    "reviewed rows judged correct, corrected by lambda x (the share of all its rows the judge calls correct less "
    "the share among its reviewed rows); one lambda per bucket, pooled over its domains, chosen to make the run's "
    "variance smallest (clipped to 0-1, its part of the variance on one degree of freedom fewer, 0 where that does "
    "not lower it), so the judge never widens the interval and a judge whose label follows the buckets gives the "
    "human-only estimate; the same lambdas in every domain, so the combined figure is the domains' row-weighted "
    "mean; the variance and interval as the human-only estimate takes them (shrunk shares, Wilson interval on the "
    "effective sample size); rows "
    "without a settled verdict are spanned from all wrong to all right; strata with fewer than 20 reviewed rows "
    "are estimated without the judge."
)
PPI_METHOD_SHORT = "judge-assisted (PPI++, lambda per bucket)"
#: A stratum uses the judge once this many of its rows are reviewed. Its covariance of verdict and
#: label from fewer rows is too noisy a variance to stand on: a small domain unlike its buckets with
#: 2-7 reviewed rows per stratum covered 0.87 with a 95% judge (2,000 rows, 150 reviewed); from 10
#: rows the judge-assisted domains after a plan covered 0.91-0.93, from 20 rows 0.93-0.95.
JUDGE_MIN_REVIEWED = 20


def power_tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s lambda for a mean, as ``ppi_py`` computes it: cov(Y, Yhat) (with n) over
    (1 + n/N) var(Yhat over all n + N rows) (with n - 1), clipped to [0, 1]."""
    y, yhat, u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if len(u) == 0 or len(y) == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, u]), ddof=1))
    return float(np.clip(cov / ((1 + len(y) / len(u)) * var), 0.0, 1.0)) if var > 0 else 0.0


def ppi_mean_ci(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, lam: float | None = None, z: float = Z95
) -> tuple[float, float, float, float]:
    """(estimate, low, high, lambda) of one mean from n labelled rows (``y``, ``yhat``) and N rows
    with the prediction only, rows independent (``ppi_py.ppi_mean_ci``; ``lam`` None = PPI++)."""
    y, yhat, u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    lam = power_tuned_lambda(y, yhat, u) if lam is None else float(lam)
    imputed = (lam * u.mean(), lam**2 * u.var() / len(u)) if len(u) else (0.0, 0.0)
    theta = imputed[0] + float(np.mean(y - lam * yhat))
    se = float(np.sqrt(imputed[1] + np.var(y - lam * yhat) / len(y)))
    return theta, theta - z * se, theta + z * se, lam


def worth_reviews(reviewed: int, human_se: float, judged_se: float) -> float:
    """What ``reviewed`` rows are worth with the judge's labels, in reviews without them: the rows
    the human-only estimate would need for the judge-assisted variance, ``n x (se_h / se_j)²``.
    The estimate, the planner, the page and the CLI all quote this one figure."""
    if judged_se <= 0 or human_se <= 0 or judged_se >= human_se * (1 - 1e-9):
        return float(reviewed)
    return float(reviewed) * (human_se / judged_se) ** 2


@dataclass(frozen=True)
class JudgedEstimate:
    """The judge-assisted estimate of ``scope`` (a domain, or ``combined``), 95% interval.

    ``reviewed``: rows of the random sample with a settled verdict; ``missing``: rows of it
    without one (spanned); ``judged``: rows with a judge label. ``human_standard_error`` is the
    human-only estimate's on the same rows, so ``effective_reviews`` (:func:`worth_reviews`) is
    what the reviews are worth with the judge's labels. ``uses_judge``: the judge narrowed this
    scope's interval (else its figures are the human-only ones). ``shown`` False: too few reviewed
    rows here for an interval (:func:`scoring.estimate.evidence.shortfall`; the human-only
    estimate's): no figure is printed, ``needed`` more reviews (some in each of ``review_buckets``) would do.
    """

    scope: str
    estimate: float
    ci_low: float
    ci_high: float
    rows: int
    reviewed: int
    missing: int
    judged: int
    standard_error: float
    human_standard_error: float
    effective_reviews: float
    unknown_weight: float
    uses_judge: bool = True
    shown: bool = True
    needed: int = 0
    review_buckets: tuple[str, ...] = ()
    method: str = field(default=PPI_METHOD, repr=False)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    @property
    def worth(self) -> float:
        """Reviews the judge's labels add here (0 when they do not narrow the interval)."""
        return max(0.0, self.effective_reviews - self.reviewed)

    def as_dict(self) -> dict:
        """As every output carries it: no figure without an interval (:meth:`Estimate.as_dict`)."""
        row = {**asdict(self), "half_width": self.half_width, "worth": self.worth}
        return withhold(row, to_get_one(self.scope, self.needed, self.review_buckets))


@dataclass(frozen=True)
class JudgeAssisted:
    """The run's judge-assisted estimate per domain and combined.

    ``strata``: one row per bucket x domain stratum with the columns of
    :class:`scoring.estimate.AccuracyEstimate`'s strata, ``judged`` (its labelled rows),
    ``judge_share`` (the share of its rows the judge calls correct) and ``lambda`` (its bucket's)."""

    combined: JudgedEstimate
    domains: list[JudgedEstimate]
    strata: pl.DataFrame
    lambdas: dict[str, float] = field(default_factory=dict)
    method: str = PPI_METHOD

    @property
    def rows(self) -> list[JudgedEstimate]:
        return [*self.domains, self.combined]

    @property
    def narrows(self) -> bool:
        """Whether the judge narrows the combined interval at all."""
        return self.combined.uses_judge

    def table(self) -> pl.DataFrame:
        """One row per domain and combined: scope, rows, reviewed, judged, estimate, ci_low, ci_high,
        half_width, effective_reviews, uses_judge, shown, needed, what_to_review (figures None
        without an interval)."""
        cols = (
            "scope",
            "rows",
            "reviewed",
            "judged",
            "estimate",
            "ci_low",
            "ci_high",
            "half_width",
            "effective_reviews",
            "uses_judge",
            "shown",
            "needed",
            TO_REVIEW,
        )
        return pl.DataFrame([{c: r.as_dict()[c] for c in cols} for r in self.rows], schema_overrides=FIGURE_TYPES)

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "lambdas": self.lambdas,
            "combined": self.combined.as_dict(),
            "domains": [r.as_dict() for r in self.domains],
            "strata": self.strata.to_dicts(),
        }


@dataclass(frozen=True)
class Fit:
    """The control variate fitted on one version of the sample (missing rows imputed or not):
    per cell the reviewed share, the label's mean over reviewed rows and over all rows, the
    moments ``A`` (verdict variance, as the human-only estimate takes it), ``B`` (covariance),
    ``C`` (label variance), ``g`` = (1 - n/N)/(n - 1), whether the judge applies, and per
    bucket the lambda and the degrees-of-freedom factor of its tuned part."""

    strata: Strata
    share: np.ndarray
    sample_mean: np.ndarray
    population_mean: np.ndarray
    a_moment: np.ndarray
    b_moment: np.ndarray
    c_moment: np.ndarray
    g: np.ndarray
    applies: np.ndarray
    lam: np.ndarray
    inflate: np.ndarray


def judge_covariate(strata: Strata, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per row x, per cell mean of x over all its rows, per cell labelled rows): the judge's label
    1/0, an unlabelled row at its cell's labelled share (0.5 where the cell has none labelled)."""
    judge = np.asarray(judge, dtype=float)
    labelled = ~np.isnan(judge)
    cells = len(strata.size)
    count = np.bincount(strata.row_cell[labelled], minlength=cells).astype(float)
    said = np.bincount(strata.row_cell[labelled], weights=judge[labelled], minlength=cells)
    share = np.divide(said, count, out=np.full(cells, 0.5), where=count > 0)
    x = np.where(labelled, judge, share[strata.row_cell])
    sums = np.bincount(strata.row_cell, weights=x, minlength=cells)
    return x, np.divide(sums, strata.size, out=np.zeros(cells), where=strata.size > 0), count


def quadratic(fit: Fit, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per cell, ``g (a² A - 2 a b B + b² C)``: its part of the variance with coefficients ``a`` on
    the verdict and ``b`` on the label."""
    return fit.g * (a * a * fit.a_moment - 2 * a * b * fit.b_moment + b * b * fit.c_moment)


def fit_judge(
    strata: Strata,
    right: np.ndarray,
    x: np.ndarray,
    population_mean: np.ndarray,
    min_reviewed: int = JUDGE_MIN_REVIEWED,
) -> Fit:
    """The fit on strata whose ``reviewed_rows`` hold the sample (``right``: per row, reviewed and
    correct): moments per cell, then one lambda per bucket for the whole run's variance, over the
    strata with ``min_reviewed`` reviewed rows (the planner reads the judge on thinner ones too)."""
    rows = np.asarray(strata.reviewed_rows, dtype=bool)
    cells = len(strata.size)
    k = np.bincount(strata.row_cell[rows], weights=np.asarray(right, dtype=float)[rows], minlength=cells)
    strata = replace(strata, reviewed=np.bincount(strata.row_cell[rows], minlength=cells).astype(float), correct=k)
    n = strata.reviewed
    y = np.asarray(right, dtype=float)
    share = shares(strata, k)
    xbar = shares(strata, cell_sums(strata, x))
    c_moment = np.maximum(shares(strata, cell_sums(strata, x * x)) - xbar**2, 0.0)
    b_moment = shares(strata, cell_sums(strata, x * y)) - xbar * share
    a_moment = spreads(strata, k)  # the verdict's variance exactly as the human-only estimate takes it
    # The verdict's variance is shrunk (A may be below the sample's), so bound the covariance by
    # sqrt(A C): every stratum's variance stays a variance (>= 0) at every lambda.
    b_moment = np.clip(b_moment, -np.sqrt(a_moment * c_moment), np.sqrt(a_moment * c_moment))
    g = np.divide(fpc(strata), np.maximum(n - 1, 1.0), out=np.zeros(cells), where=n > 0)
    w = weights(strata)
    applies = (w.status == OWN) & (n >= max(2, min_reviewed)) & (n < strata.size) & (c_moment > 0)
    size = strata.size / max(strata.size.sum(), 1.0)
    lam = np.zeros(strata.groups)
    inflate = np.ones(strata.groups)
    for bucket in range(strata.groups):
        cells_b = applies & (strata.bucket == bucket)
        if not cells_b.any():
            continue
        a, wt = w.a[cells_b], size[cells_b]
        gb, bb, cb, ab = g[cells_b], b_moment[cells_b], c_moment[cells_b], a_moment[cells_b]
        denominator = float(np.sum(gb * wt * wt * cb))
        if denominator <= 0:
            continue
        tuned = float(np.clip(np.sum(gb * a * wt * bb) / denominator, 0.0, 1.0))
        free = float(np.sum(n[cells_b] - 1))  # degrees of freedom left after each stratum's mean
        if free < 2:  # nothing left to tune lambda on
            continue
        factor = free / (free - 1)
        plain = float(np.sum(gb * a * a * ab))
        judged = max(0.0, float(np.sum(gb * (a * a * ab - 2 * a * tuned * wt * bb + (tuned * wt) ** 2 * cb)))) * factor
        if tuned > 0 and judged < plain:
            lam[bucket], inflate[bucket] = tuned, factor
    return Fit(strata, share, xbar, population_mean, a_moment, b_moment, c_moment, g, applies, lam, inflate)


def judged_interval(fit: Fit, target: np.ndarray | None, z: float = Z95) -> tuple[float, float, float, float, float]:
    """(known part of the estimate, its standard error, low, high, the human-only standard error)
    of the cells ``target`` selects, with the fit's lambdas."""
    strata = fit.strata
    w = weights(strata, target)
    if target is not None:  # a domain: Student's t on its degrees of freedom, as the human-only figure
        z = small_sample_z(strata, strata.correct, w, z)
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    rows = float(strata.size[inside].sum())
    size = np.where(inside, strata.size / rows, 0.0) if rows else np.zeros(len(strata.size))
    b = np.where(fit.applies, fit.lam[strata.bucket] * size, 0.0)
    known = float(np.dot(w.a, fit.share) + np.dot(b, fit.population_mean - fit.sample_mean))
    extra = model_variances(strata, strata.correct, target)
    human = float(np.sum(quadratic(fit, w.a, np.zeros_like(b)))) + extra
    judged = float(np.sum(quadratic(fit, w.a, b) * np.where(b > 0, fit.inflate[strata.bucket], 1.0))) + extra
    known, se, low, high = wilson_interval(strata, strata.correct, w, known, judged, z)
    return known, se, low, high, float(np.sqrt(max(human, 0.0)))


def judge_assisted_arrays(
    strata: Strata, truth: np.ndarray, judge: np.ndarray, missing: np.ndarray | None = None, z: float = Z95
) -> JudgeAssisted:
    """The estimate from per-row arrays aligned with ``strata``'s rows (bucket x domain, its
    ``reviewed_rows`` the random sample's settled rows): ``truth`` (1/0 on reviewed rows, any value
    elsewhere), ``judge`` (1/0, NaN = not labelled), ``missing`` (bool: in the random sample,
    verdict not settled). Missing rows widen the interval to the union of the intervals with all
    of them wrong and all of them right, as the human-only estimate does."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    missing = np.zeros(len(reviewed), dtype=bool) if missing is None else np.asarray(missing, dtype=bool) & ~reviewed
    right = reviewed & (np.nan_to_num(np.asarray(truth, dtype=float)) > 0.5)
    x, population_mean, labelled_cells = judge_covariate(strata, judge)
    fit = fit_judge(strata, right, x, population_mean)
    corners = []
    if missing.any():
        for value in (False, True):
            both = replace(strata, reviewed_rows=reviewed | missing, missing=None)
            corners.append(fit_judge(both, right | (missing & value), x, population_mean))
    plain = replace(strata, missing=np.bincount(strata.row_cell[missing], minlength=len(strata.size)).astype(float))
    human = estimate_accuracy(plain, z)
    labelled = ~np.isnan(np.asarray(judge, dtype=float))
    cell_domain = strata.cells["Domain"].to_numpy()

    def scope(h: Estimate, target: np.ndarray | None, count: int) -> JudgedEstimate:
        known, se, low, high, human_se = judged_interval(fit, target, z)
        for corner in corners:
            _, _, c_low, c_high, _ = judged_interval(corner, target, z)
            low, high = min(low, c_low), max(high, c_high)
        uses = se < human_se * (1 - 1e-9)
        estimate = min(1.0, max(0.0, known + PRIOR * h.unknown_weight))
        return JudgedEstimate(
            scope=h.scope,
            estimate=estimate,
            ci_low=min(low, estimate),
            ci_high=max(high, estimate),
            rows=h.rows,
            reviewed=h.reviewed,
            missing=h.missing,
            judged=count,
            standard_error=se,
            human_standard_error=h.standard_error,
            effective_reviews=worth_reviews(h.reviewed, human_se, se),
            unknown_weight=h.unknown_weight,
            uses_judge=uses,
            shown=h.shown,
            needed=h.needed,
            review_buckets=h.review_buckets,
        )

    per_domain = [
        scope(h, cell_domain == h.scope, int(labelled_cells[cell_domain == h.scope].sum())) for h in human.domains
    ]
    table = human.strata.with_columns(
        judged=pl.Series(labelled_cells, dtype=pl.Int64),
        judge_share=pl.Series(population_mean),
        **{"lambda": pl.Series(fit.lam[strata.bucket])},
    )
    lambdas = {name: float(fit.lam[b]) for b, name in enumerate(BUCKETS)}
    return JudgeAssisted(scope(human.combined, None, int(labelled.sum())), per_domain, table, lambdas)


def sample_arrays(sample: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(truth, judge, missing) of a sample as arrays: truth 1/0 (NaN unknown), judge 1/0 (NaN not
    labelled), missing (False everywhere when the sample has no ``missing`` column)."""
    truth = sample["truth"].cast(pl.Float64).to_numpy()
    judge = (
        sample["judge_correct"].cast(pl.Float64).to_numpy()
        if "judge_correct" in sample.columns
        else np.full(len(sample), np.nan)
    )
    missing = (
        sample["missing"].fill_null(False).to_numpy()
        if "missing" in sample.columns
        else np.zeros(len(sample), dtype=bool)
    )
    return truth, judge, missing.astype(bool)


@dataclass(frozen=True)
class JudgeInputs:
    """What the judge-assisted estimate and plan read from a sample: its strata (bucket x domain,
    the plain random sample) and per-row arrays (:func:`sample_arrays`). Built once per sample (a
    run's million rows), then read by the estimate and by a plan for every half-width asked."""

    strata: Strata
    truth: np.ndarray
    judge: np.ndarray
    missing: np.ndarray


def judge_inputs(sample: pl.DataFrame) -> JudgeInputs | None:
    """The :class:`JudgeInputs` of a sample (:func:`scoring.estimate.reviewed_sample`), or None
    when the judge labelled no row (the human-only figures are then all there is). The random
    sample is the human-only one: per bucket x domain, the prefix of its review order."""
    sample = check_sample(sample)
    truth, judge, missing = sample_arrays(sample)
    if np.isnan(judge).all():
        return None
    return JudgeInputs(build_strata(sample), truth, judge, missing)


def judge_assisted(sample: pl.DataFrame, z: float = Z95) -> JudgeAssisted | None:
    """The judge-assisted estimate of a sample, or None when the judge labelled no row."""
    found = judge_inputs(sample)
    if found is None:
        return None
    return judge_assisted_arrays(found.strata, found.truth, found.judge, found.missing, z)

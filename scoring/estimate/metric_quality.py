"""How good each metric (and the judge) is against the reviewers, for the whole run: precision,
recall (sensitivity), specificity and the Rogan-Gladen corrected accuracy, with intervals.

The reviewed rows are a stratified sample, so each figure is a ratio of stratified estimates
(every cell weighted by its size, the fallback of :mod:`.strata` included): precision =
TP/(TP+FP), recall = TP/(TP+FN), specificity = TN/(TN+FP), where TP is the estimated share of
the run's rows the metric passes and the reviewers call correct, and so on. The judge is judged
over the rows it labelled (CORRECT, or INCORRECT/NOT_ATTEMPTED) only.

Note: the two metrics are constant within a bucket, so for them Rogan-Gladen gives back exactly
the stratified estimate of :mod:`.estimator` (raw = TP + FP, Se = TP/T, Sp = TN/(1 - T) make
(raw + Sp - 1)/(Se + Sp - 1) = T): it is a cross-check there, and informative for the judge.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import polars as pl

from scoring.core.metric_names import JUDGE, METRIC_COLUMNS
from scoring.core.report import COMBINED
from scoring.core.stats import Z95, rogan_gladen, wilson_from_share
from scoring.estimate.estimator import share_estimate
from scoring.estimate.evidence import withhold
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import (
    NONE,
    Strata,
    Weights,
    build_strata,
    cell_sums,
    fpc,
    linear_variances,
    shares,
    shrunk_shares,
    variance_centres,
    weights,
)
from scoring.estimate.wording import to_get_one

RATIO_METHOD = (
    "Stratified ratio estimates over bucket x domain (cells weighted by size); 95% interval: Wilson score "
    "interval on the Kish effective sample size, the variance by Taylor linearisation with the finite-population "
    "correction, each stratum's at shares shrunk toward its bucket's by one pseudo-row (so a stratum whose reviewed "
    "passes are all correct keeps a variance); missing rows of the random sample widen it to every value they "
    "could give"
)
CORRECTED_METHOD = (
    "Rogan-Gladen (raw + Sp - 1)/(Se + Sp - 1), clipped to [0, 1]; 95% interval by the delta method from Se and "
    "Sp (their stratified variances, their covariance from the linearisation), shown once 30 reviewed rows are "
    "right and 30 wrong; for a metric whose verdict follows the buckets (exact, overlap) it is the stratified "
    "estimate of the accuracy and takes that interval; "
    "clipped to [0, 1]; undefined when Se + Sp <= 1. Where some rows' bucket has no reviewed row, every interval "
    "also spans whatever those rows could be (Rogan-Gladen then from the corners of the Se and Sp intervals)"
)
#: The corrected accuracy shows an interval once this many reviewed rows are right, and as many
#: wrong: its delta-method interval from Se and Sp read off fewer covered 0.67-0.80 (runs of 300-2,000
#: rows, 20-60 reviewed), 0.95-0.975 from 30 of each.
MIN_CORRECTED = 30
#: Metric name -> sample column.
METRICS: dict[str, str] = {**METRIC_COLUMNS, JUDGE: "judge_correct"}


@dataclass(frozen=True)
class Ratio:
    """One estimated share with its 95% interval (all None when nothing reviewed bears on it).

    ``reviewed`` is the number of reviewed rows in the ratio's denominator (the metric's passes
    for precision, rows the reviewers call correct for recall, wrong for specificity);
    ``effective_n`` the Kish effective sample size the Wilson interval used.
    """

    value: float | None
    ci_low: float | None
    ci_high: float | None
    reviewed: int
    effective_n: float | None
    #: > 0: too few reviewed rows for an interval (``ci_low``/``ci_high`` None); this many more would do
    needed: int = 0

    def as_dict(self) -> dict:
        """As every output carries it: no value without an interval (:mod:`scoring.estimate.evidence`)."""
        return withhold(asdict(self), to_get_one(COMBINED, self.needed), ("value", "ci_low", "ci_high"))


NO_RATIO = Ratio(None, None, None, 0, None)


@dataclass(frozen=True)
class MetricQuality:
    """A metric against the reviewers over ``rows`` rows of the run (all, or the judged ones).

    ``agreement`` is the reviewed 2x2 table [[metric right & reviewers right, metric right &
    reviewers wrong], [metric wrong & reviewers right, both wrong]] (counts, unweighted);
    ``coverage`` the share of ``rows`` whose bucket has reviewed rows (the rest bear on nothing).
    """

    metric: str
    rows: int
    reviewed: int
    raw_accuracy: float | None
    precision: Ratio
    recall: Ratio
    specificity: Ratio
    corrected: Ratio
    coverage: float
    agreement: list[list[int]]
    method: str = RATIO_METHOD
    corrected_method: str = CORRECTED_METHOD

    def as_dict(self) -> dict:
        ratios = {name: getattr(self, name).as_dict() for name in ("precision", "recall", "specificity", "corrected")}
        return {**asdict(self), **ratios}


@dataclass(frozen=True)
class _Linear:
    """A ratio's value and the linearised per-row variable whose stratified variance is its own."""

    ratio: Ratio
    u: np.ndarray
    variance: float
    census: bool
    mass: float  # the denominator's estimated share of the covered rows


def ratio_variances(
    strata: Strata, num: np.ndarray, den: np.ndarray, value: float, bottom: float, fixed: np.ndarray | None = None
) -> np.ndarray:
    """Per cell, the variance of the mean of ``u = den (x - R)/bottom`` (``num = den x``, both
    0/1) over its reviewed rows: ``(E[u²] - E[u]²)/(n - 1)`` times ``1 - n/N``, with the share of
    ``den`` and the share of ``x`` within it each shrunk toward the bucket's (:func:`.strata.shrunk_shares`). A
    stratum whose reviewed passes are all correct so keeps a variance, as its true precision may
    be below 1 (the linearised sample variance gave it 0, and 82-85% coverage)."""
    rows = strata.reviewed
    d = shrunk_shares(strata, cell_sums(strata, den), n=rows)
    q = _centres(strata, num, den, fixed)
    mean = d * (q - value) / bottom
    square = d * (q * (1 - value) ** 2 + (1 - q) * value**2) / bottom**2
    spread = np.maximum(square - mean**2, 0.0)
    return np.divide(spread, np.maximum(rows - 1, 1.0), out=np.zeros(len(rows)), where=rows > 0) * fpc(strata)


def _centres(strata: Strata, num: np.ndarray, den: np.ndarray, fixed: np.ndarray | None) -> np.ndarray:
    """Per cell, the share of ``x`` within ``den`` its variance is taken at: pooled over the bucket's
    cells whose rows all agree (:func:`.strata.variance_centres`), except in cells where ``x`` is
    the metric's own verdict and the same on every row (``fixed``: recall of a metric that passes a
    whole bucket is 1 there by construction, not by luck)."""
    k, n = cell_sums(strata, num), cell_sums(strata, den)
    pooled = variance_centres(strata, k, n=n)
    return pooled if fixed is None else np.where(fixed, shrunk_shares(strata, k, n), pooled)


def _ratio(
    strata: Strata, w: Weights, num: np.ndarray, den: np.ndarray, z: float, fixed: np.ndarray | None = None
) -> _Linear | None:
    top = float(np.dot(w.a, shares(strata, cell_sums(strata, num))))
    bottom = float(np.dot(w.a, shares(strata, cell_sums(strata, den))))
    reviewed = int(den[strata.reviewed_rows].sum())
    if bottom <= 0 or reviewed == 0:
        return None
    value = min(1.0, max(0.0, top / bottom))
    u = (num - value * den) / bottom
    variance = float(np.dot(w.a**2, ratio_variances(strata, num, den, value, bottom, fixed)))
    used = w.a > 0
    census = bool(np.all(strata.reviewed[used] >= strata.size[used]))
    if census:
        return _Linear(Ratio(value, value, value, reviewed, None), u, 0.0, True, bottom)
    # The effective n at the shrunk ratio (never 0 or 1), so all-correct passes still give an interval
    centre = float(np.dot(w.a, shrunk_num(strata, num, den, fixed))) / bottom
    centre = min(max(centre, 1e-9), 1 - 1e-9)
    n_eff = centre * (1 - centre) / variance if variance > 0 else float(reviewed)
    low, high = wilson_from_share(value, n_eff, z)
    return _Linear(Ratio(value, low, high, reviewed, n_eff), u, variance, False, bottom)


def shrunk_num(strata: Strata, num: np.ndarray, den: np.ndarray, fixed: np.ndarray | None = None) -> np.ndarray:
    """Per cell, the share of ``den`` times the shrunk share of ``x`` within it: the cell's
    shrunk numerator, whose weighted sum over the denominator is the ratio's shrunk centre."""
    d = shares(strata, cell_sums(strata, den))
    return d * _centres(strata, num, den, fixed)


def _widen(part: _Linear | None, pessimistic: float, optimistic: float) -> Ratio:
    """A ratio's interval stretched over rows whose bucket has no reviewed row: at worst they add
    ``pessimistic`` to its denominator only, at best ``optimistic`` to both parts (their share of
    the run where the metric passes, or fails, as the ratio needs)."""
    if part is None:
        return NO_RATIO
    r = part.ratio
    if r.ci_low is None or r.ci_high is None or pessimistic + optimistic == 0:
        return r
    low = r.ci_low * part.mass / (part.mass + pessimistic)
    high = (r.ci_high * part.mass + optimistic) / (part.mass + optimistic)
    return Ratio(r.value, low, high, r.reviewed, r.effective_n)


def _wilson_variance(part: _Linear, z: float) -> float:
    """A ratio's variance for the delta method (0 for a census): its own stratified variance
    (shrunk shares, so never 0 for a sample). A Wilson centre on its effective n added z²
    pseudo-rows at 0.5 on top, and the corrected accuracy covered 0.98-0.99 (too wide)."""
    del z
    if part.census or part.ratio.value is None:
        return 0.0
    return part.variance


def _corrected(
    strata: Strata, w: Weights, raw: float, se: _Linear, sp: _Linear, z: float, wide: tuple[Ratio, Ratio] | None = None
) -> Ratio:
    """Rogan-Gladen with its delta-method interval (see :data:`CORRECTED_METHOD`); with ``wide``
    (Se and Sp widened over unreviewed buckets) the interval spans their corners instead."""
    sens, spec = se.ratio.value, sp.ratio.value
    value = rogan_gladen(raw, sens or 0.0, spec or 0.0)
    if value is None or sens is None or spec is None:
        return NO_RATIO
    if wide is not None:
        (se_low, se_high), (sp_low, sp_high) = (wide[0].ci_low, wide[0].ci_high), (wide[1].ci_low, wide[1].ci_high)
        low = rogan_gladen(raw, se_high or 0.0, sp_low or 0.0)
        high = rogan_gladen(raw, se_low or 0.0, sp_high or 0.0)
        return Ratio(
            value,
            min(value, 0.0 if low is None else low),
            max(value, 1.0 if high is None else high),
            min(se.ratio.reviewed, sp.ratio.reviewed),
            None,
        )
    youden = sens + spec - 1
    r = (raw + spec - 1) / youden  # unclipped: the derivatives are taken here
    v_se, v_sp = _wilson_variance(se, z), _wilson_variance(sp, z)
    rho = 0.0  # the correlation of Se and Sp, from their linearised variables' own sample variances
    lin_se, lin_sp = (float(np.dot(w.a**2, linear_variances(strata, part.u))) for part in (se, sp))
    if lin_se > 0 and lin_sp > 0:
        both = float(np.dot(w.a**2, linear_variances(strata, se.u + sp.u)))
        rho = float(np.clip((both - lin_se - lin_sp) / 2 / np.sqrt(lin_se * lin_sp), -1, 1))
    var = (r * r * v_se + (1 - r) ** 2 * v_sp - 2 * r * (1 - r) * rho * np.sqrt(v_se * v_sp)) / youden**2
    half = z * float(np.sqrt(max(0.0, var)))
    return Ratio(
        value,
        min(1.0, max(0.0, r - half)),
        min(1.0, max(0.0, r + half)),
        min(se.ratio.reviewed, sp.ratio.reviewed),
        None,
    )


def _as_stratified(strata: Strata, corrected: Ratio) -> Ratio:
    """Rogan-Gladen of a metric whose verdict is the same on every row of each stratum (exact and
    overlap: a function of the bucket) is the stratified estimate of the accuracy itself, so it
    takes that estimate's interval (withheld where that one is). The delta method on Se and Sp,
    strongly correlated there, cancelled to intervals a hundredth as wide ([0.556, 0.557] beside
    the stratified [0.472, 0.638]) and covered 0.62-0.92 at 60-100 reviews."""
    found = share_estimate(strata, strata.correct, withhold=True)
    if not found.shown:
        return replace(corrected, ci_low=None, ci_high=None, needed=found.needed)
    value = float(corrected.value or 0.0)
    return replace(corrected, ci_low=min(found.ci_low, value), ci_high=max(found.ci_high, value))


def _quality(
    metric: str, sample: pl.DataFrame, z: float, column: str | None = None, strata: Strata | None = None
) -> MetricQuality:
    """``strata``: :func:`build_strata` of ``sample``, when the caller built it: a metric with a
    verdict on every row reads the whole sample, so its cells are those (on a million rows each
    build is a group-by and a join on two text columns)."""
    column = column or METRICS[metric]
    whole = not sample[column].null_count()
    rows = sample if whole else sample.filter(pl.col(column).is_not_null())
    if rows.is_empty():
        return MetricQuality(metric, 0, 0, None, NO_RATIO, NO_RATIO, NO_RATIO, NO_RATIO, 0.0, [[0, 0], [0, 0]])
    strata = strata if whole and strata is not None else build_strata(rows)
    w = weights(strata)
    m = rows[column].to_numpy().astype(float)
    t = rows["truth"].fill_null(False).to_numpy().astype(float)
    reviewed = strata.reviewed_rows
    precision = _ratio(strata, w, m * t, m, z)
    cells = len(strata.size)
    passes = np.bincount(strata.row_cell, weights=m, minlength=cells)
    fixed = (passes == 0) | (passes == strata.size)  # the metric says the same of every row of the cell
    recall = _ratio(strata, w, m * t, t, z, fixed)
    specificity = _ratio(strata, w, (1 - m) * (1 - t), 1 - t, z, fixed)
    raw = float(m.mean())
    # Rows whose bucket has no reviewed row: their metric verdict is known, their truth is not.
    unknown = np.where(w.status == NONE, strata.size / strata.size.sum(), 0.0)
    passes = passes / strata.size
    u_pass, u_fail = float(np.dot(unknown, passes)), float(np.dot(unknown, 1 - passes))
    wide = (_widen(recall, u_fail, u_pass), _widen(specificity, u_pass, u_fail))
    corrected = NO_RATIO
    if recall and specificity:
        corrected = _corrected(strata, w, raw, recall, specificity, z, wide if w.unknown > 0 else None)
        short = max(0, MIN_CORRECTED - recall.ratio.reviewed) + max(0, MIN_CORRECTED - specificity.ratio.reviewed)
        if fixed.all() and corrected.value is not None:
            corrected = _as_stratified(strata, corrected)
        elif short and corrected.value is not None and corrected.ci_low != corrected.ci_high:
            corrected = replace(corrected, ci_low=None, ci_high=None, needed=short)
    mr, tr = m[reviewed] > 0, t[reviewed] > 0
    table = [[int((mr & tr).sum()), int((mr & ~tr).sum())], [int((~mr & tr).sum()), int((~mr & ~tr).sum())]]
    return MetricQuality(
        metric=metric,
        rows=rows.height,
        reviewed=int(reviewed.sum()),
        raw_accuracy=raw,
        precision=_widen(precision, u_pass, u_pass),
        recall=wide[0],
        specificity=wide[1],
        corrected=corrected,
        coverage=1.0 - w.unknown,
        agreement=table,
    )


def metric_quality(sample: pl.DataFrame, z: float = Z95, strata: Strata | None = None) -> list[MetricQuality]:
    """Exact, overlap, and the judge when any row has a judge verdict (``judge_correct``).

    Missing rows of the random sample (``missing``: skipped, in conflict, pending) widen every
    interval to the union of those computed with them reviewed at the four corners: right or
    wrong where the metric passes, right or wrong where it fails (each figure is monotone in
    both, so the corners hold its extremes). ``strata``: :func:`build_strata` of ``sample`` when
    the caller has it (the estimate does)."""
    check_sample(sample)
    names = ["exact", "overlap"]
    if "judge_correct" in sample.columns and sample["judge_correct"].drop_nulls().len():
        names.append("judge")
    figures = [_quality(name, sample, z, strata=strata) for name in names]
    if "missing" not in sample.columns or not sample["missing"].fill_null(False).any():
        return figures
    return [
        _union(
            q,
            [
                _quality(q.metric, _imputed(sample, METRICS[q.metric], a, b), z)
                for a in (False, True)
                for b in (False, True)
            ],
        )
        for q in figures
    ]


def column_quality(name: str, column: str, sample: pl.DataFrame, z: float = Z95) -> MetricQuality:
    """:func:`metric_quality`'s figures for any yes/no verdict column of ``sample`` (an optional
    matcher's, :mod:`scoring.match`), named ``name``; missing rows widen them the same way."""
    check_sample(sample)
    base = _quality(name, sample, z, column)
    if "missing" not in sample.columns or not sample["missing"].fill_null(False).any():
        return base
    corners = [_quality(name, _imputed(sample, column, a, b), z, column) for a in (False, True) for b in (False, True)]
    return _union(base, corners)


def _imputed(sample: pl.DataFrame, column: str, if_pass: bool, if_fail: bool) -> pl.DataFrame:
    """``sample`` with its missing rows reviewed: right (``if_pass``) where the metric passes."""
    miss = pl.col("missing").fill_null(False)
    truth = pl.when(pl.col(column).fill_null(False)).then(pl.lit(if_pass)).otherwise(pl.lit(if_fail))
    return sample.with_columns(
        truth=pl.when(miss).then(truth).otherwise(pl.col("truth")),
        reviewed=pl.col("reviewed") | miss,
        missing=pl.lit(False),
    )


def _union(base: MetricQuality, corners: list[MetricQuality]) -> MetricQuality:
    """``base`` (missing rows left out) with each interval stretched over the corners'."""

    def widen(name: str) -> Ratio:
        r: Ratio = getattr(base, name)
        if r.value is None:
            return r
        lows = [r.ci_low, *(getattr(c, name).ci_low for c in corners)]
        highs = [r.ci_high, *(getattr(c, name).ci_high for c in corners)]
        low = min((v for v in lows if v is not None), default=None)
        high = max((v for v in highs if v is not None), default=None)
        return Ratio(r.value, low, high, r.reviewed, r.effective_n)

    return replace(
        base,
        precision=widen("precision"),
        recall=widen("recall"),
        specificity=widen("specificity"),
        corrected=widen("corrected"),
    )

"""Judge-assisted true accuracy: the judge's label on every row as one more stratum, the human
verdicts on the reviewed random sample inside each part (prediction-powered inference in its
stratified form, see ``/work/shared/notes/judge-assisted-estimates.md`` and ``tests/test_ppi.py``).

Each bucket x domain stratum is split by the judge's label: rows it called correct, rows it called
wrong, rows it did not label (unparsed, not run). The judge labelled every row, so each part's size
is known, and the estimate is the human-only stratified estimate (:mod:`.estimator`: its shrunk
variances, fallbacks pooled per bucket x label, Wilson interval) over the parts. A stratum whose own
reviewed rows stand alone but one of whose parts would not is kept whole
(:func:`scoring.estimate.strata.thin_splits`): a thin part would borrow a rate pooled across domains. This is PPI++
with a lambda per part: inside a part the judge's label is a constant, so any lambda gives the
same estimate (``lambda x mean(label) + mean(Y - lambda x label)`` is ``mean(Y)`` there), and the
judge's bias is corrected by the reviewed rows exactly as PPI corrects it. A bad judge splits the
strata at random and the interval stays about as wide as the human-only one, never wrong.

What stratifying on the label buys over a lambda per bucket x domain is the allocation: a judge
right on 90% of rows leaves its "correct" parts nearly pure (a 0.97 stratum becomes 0.997 and 0.78),
so the planner (:mod:`.ppi_plan`) puts the reviews where the judge says wrong. With errors of the
judge independent of the row, Neyman allocation over the parts needs ``4a(1-a)`` of the human-only
reviews for a judge right on a share ``a`` of rows (0.36 at 90%); with proportional sampling PPI++
on bucket x domain saves only what the judge explains inside each stratum (about 22% here).

The random sample is per part (:func:`scoring.estimate.sample.judge_stratified`): a prefix of a
bucket x domain stratum's review order is a prefix of each part's, so a review that followed the
human-only plan counts in full, and one that followed the judge's plan counts here.

:func:`ppi_mean_ci` is the textbook one-mean PPI++ (independent rows, variances with n, as
``ppi_py.ppi_mean_ci``), kept for the worked numbers of the notes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
import polars as pl

from scoring.core.stats import Z95
from scoring.estimate.estimator import COMBINED, Estimate, estimate_accuracy
from scoring.estimate.sample import check_sample, judge_stratified
from scoring.estimate.strata import Strata, build_strata, split_by_judge, thin_splits

PPI_METHOD = (
    "Stratified by the judge's label (PPI with a lambda per part): each bucket x domain stratum split into the rows "
    "the judge called correct, called wrong and did not label, the parts' sizes known from its labels on every row; "
    "the human-only stratified estimate over the parts (their reviewed random sample, each part's variance at its "
    "share shrunk toward its bucket x label's pooled share by 3 pseudo-rows, thin parts pooled per bucket x label, "
    "Wilson interval on the effective sample size); a stratum with "
    "enough reviewed rows of its own but a part with fewer than 2 is kept whole; rows without a settled verdict "
    "are spanned from all wrong to all right; a domain with fewer than 30 reviewed rows shows its human-only "
    "estimate (too few reviews to check the judge against there)."
)
#: A domain needs this many reviewed rows of the random sample for its own judge-assisted figure;
#: below, it shows the human-only one. With 20 reviewed rows (a 2% domain) the judge-assisted interval
#: was wider than the human-only one for every judge (+-10.3 to +-12.3 against +-9.9) and covered
#: 0.97-0.98 over 3,000 runs; with 40 a 95% judge narrows it (+-5.9 against +-7.7) at the human-only
#: coverage. The count is fixed by the design, not by the intervals, so choosing on it keeps both valid.
MIN_JUDGED_REVIEWS = 30
PPI_METHOD_SHORT = "judge-assisted (stratified by the judge's label)"


def power_tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s lambda for a mean, as ``ppi_py`` computes it: cov(Y, Yhat) (with n) over
    (1 + n/N) var(Yhat over all n + N rows) (with n - 1), clipped to [0, 1]."""
    y, yhat, u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if len(u) == 0 or len(y) == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, u]), ddof=1))
    return float(np.clip(cov / ((1 + len(y) / len(u)) * var), 0.0, 1.0)) if var > 0 else 0.0


def ppi_mean_ci(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, lam: float | None = None,
                z: float = Z95) -> tuple[float, float, float, float]:  # fmt: skip
    """(estimate, low, high, lambda) of one mean from n labelled rows (``y``, ``yhat``) and N rows
    with the prediction only, rows independent (``ppi_py.ppi_mean_ci``; ``lam`` None = PPI++)."""
    y, yhat, u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    lam = power_tuned_lambda(y, yhat, u) if lam is None else float(lam)
    imputed = (lam * u.mean(), lam**2 * u.var() / len(u)) if len(u) else (0.0, 0.0)
    theta = imputed[0] + float(np.mean(y - lam * yhat))
    se = float(np.sqrt(imputed[1] + np.var(y - lam * yhat) / len(y)))
    return theta, theta - z * se, theta + z * se, lam


@dataclass(frozen=True)
class JudgedEstimate:
    """The judge-assisted estimate of ``scope`` (a domain, or ``combined``), 95% interval.

    ``reviewed``: rows of the random sample with a settled verdict; ``missing``: rows of it
    without one (spanned); ``judged``: rows with a judge label. ``human_standard_error`` is the
    human-only estimate's on the same rows (bucket x domain, the judge's labels unused), so
    ``effective_reviews`` = reviewed x (human-only / judge-assisted half-width)² is what the judge's
    labels are worth in reviews.
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
    #: False for a domain with fewer than :data:`MIN_JUDGED_REVIEWS` reviewed rows: the figures are its human-only ones
    uses_judge: bool = True
    method: str = field(default=PPI_METHOD, repr=False)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict:
        return {**asdict(self), "half_width": self.half_width}


@dataclass(frozen=True)
class JudgeAssisted:
    """The run's judge-assisted estimate per domain and combined.

    ``strata``: one row per part (bucket, judge = the judge's label, Domain), with the columns of
    :class:`scoring.estimate.AccuracyEstimate`'s strata and ``judged`` (its labelled rows)."""

    combined: JudgedEstimate
    domains: list[JudgedEstimate]
    strata: pl.DataFrame
    method: str = PPI_METHOD

    @property
    def rows(self) -> list[JudgedEstimate]:
        return [*self.domains, self.combined]

    def table(self) -> pl.DataFrame:
        """One row per domain and combined: scope, rows, reviewed, judged, estimate, ci_low, ci_high,
        half_width, effective_reviews, uses_judge."""
        cols = ("scope", "rows", "reviewed", "judged", "estimate", "ci_low", "ci_high", "half_width",
                "effective_reviews", "uses_judge")  # fmt: skip
        return pl.DataFrame([{c: r.as_dict()[c] for c in cols} for r in self.rows])

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "combined": self.combined.as_dict(),
            "domains": [r.as_dict() for r in self.domains],
            "strata": self.strata.to_dicts(),
        }


def judge_assisted_arrays(strata: Strata, truth: np.ndarray, judge: np.ndarray, missing: np.ndarray | None = None,
                          z: float = Z95, whole: np.ndarray | None = None) -> JudgeAssisted:  # fmt: skip
    """The estimate from per-row arrays aligned with ``strata``'s rows (bucket x domain, its
    ``reviewed_rows`` the random sample's settled rows): ``truth`` (1/0 on reviewed rows, any value
    elsewhere), ``judge`` (1/0, NaN = not labelled), ``missing`` (bool: in the random sample,
    verdict not settled); ``whole``: per cell, keep it whole (default :func:`thin_splits`). The
    human-only estimate of the same rows gives ``effective_reviews``."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    missing = np.zeros(len(reviewed), dtype=bool) if missing is None else np.asarray(missing, dtype=bool) & ~reviewed
    right = reviewed & (np.nan_to_num(np.asarray(truth, dtype=float)) > 0.5)
    whole = thin_splits(strata, judge) if whole is None else whole
    parts = split_by_judge(strata, judge, right, missing, whole)
    plain = replace(strata, missing=np.bincount(strata.row_cell[missing], minlength=len(strata.size)).astype(float))
    judged, human = estimate_accuracy(parts, z), estimate_accuracy(plain, z)
    labelled = ~np.isnan(np.asarray(judge, dtype=float))
    names = strata.domains
    cell_domain = np.searchsorted(np.array(names, dtype=object), strata.cells["Domain"].to_numpy())
    judged_in = np.bincount(cell_domain[strata.row_cell[labelled]], minlength=len(names))

    def scope(j: Estimate, h: Estimate, count: int) -> JudgedEstimate:
        uses_judge = j.scope == COMBINED or j.reviewed >= MIN_JUDGED_REVIEWS
        shown = j if uses_judge else h
        worth = shown.reviewed * (h.half_width / shown.half_width) ** 2 if shown.half_width > 0 else shown.reviewed
        return JudgedEstimate(scope=shown.scope, estimate=shown.estimate, ci_low=shown.ci_low, ci_high=shown.ci_high,
                              rows=shown.rows, reviewed=shown.reviewed, missing=shown.missing, judged=count,
                              standard_error=shown.standard_error, human_standard_error=h.standard_error,
                              effective_reviews=float(worth), unknown_weight=shown.unknown_weight,
                              uses_judge=uses_judge)  # fmt: skip

    per_domain = [scope(j, h, int(judged_in[i])) for i, (j, h) in enumerate(zip(judged.domains, human.domains))]
    table = judged.strata.with_columns(
        judged=pl.Series(np.bincount(parts.row_cell[labelled], minlength=len(parts.size)), dtype=pl.Int64))
    return JudgeAssisted(scope(judged.combined, human.combined, int(labelled.sum())), per_domain, table)


def sample_arrays(sample: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(truth, judge, missing) of a sample as arrays: truth 1/0 (NaN unknown), judge 1/0 (NaN not
    labelled), missing (False everywhere when the sample has no ``missing`` column)."""
    truth = sample["truth"].cast(pl.Float64).to_numpy()
    judge = sample["judge_correct"].cast(pl.Float64).to_numpy() if "judge_correct" in sample.columns else np.full(
        len(sample), np.nan)  # fmt: skip
    missing = sample["missing"].fill_null(False).to_numpy() if "missing" in sample.columns else np.zeros(
        len(sample), dtype=bool)  # fmt: skip
    return truth, judge, missing.astype(bool)


@dataclass(frozen=True)
class JudgeInputs:
    """What the judge-assisted estimate and plan read from a sample: its strata (bucket x domain)
    and per-row arrays (:func:`sample_arrays`), the random sample taken per part
    (:func:`scoring.estimate.sample.judge_stratified`). Built once per sample (a run's million rows),
    then read by the estimate and by a plan for every half-width asked."""

    strata: Strata
    truth: np.ndarray
    judge: np.ndarray
    missing: np.ndarray
    whole: np.ndarray  #: per bucket x domain cell, kept whole (:func:`thin_splits`)


def judge_inputs(sample: pl.DataFrame) -> JudgeInputs | None:
    """The :class:`JudgeInputs` of a sample (:func:`scoring.estimate.reviewed_sample`), or None
    when the judge labelled no row (the human-only figures are then all there is).

    A cell kept whole takes the plain rule's random sample (the prefix of the cell's order), not
    the union of its parts' prefixes: after a review that followed the judge's plan that union
    holds more of the rows the judge calls wrong than a random sample of the cell would."""
    sample = check_sample(sample)
    parts = judge_stratified(sample)
    truth, judge, _ = sample_arrays(parts)
    if np.isnan(judge).all():
        return None
    strata = build_strata(parts)
    whole = thin_splits(strata, judge)
    if parts is not sample and whole.any():
        plain = pl.Series(whole[strata.row_cell])
        parts = parts.with_columns(pl.when(plain).then(sample[c]).otherwise(pl.col(c)).alias(c)
                                   for c in ("reviewed", "missing", "by_hand"))  # fmt: skip
        strata = build_strata(parts)
    truth, judge, missing = sample_arrays(parts)
    return JudgeInputs(strata, truth, judge, missing, whole)


def judge_assisted(sample: pl.DataFrame, z: float = Z95) -> JudgeAssisted | None:
    """The judge-assisted estimate of a sample, or None when the judge labelled no row."""
    found = judge_inputs(sample)
    if found is None:
        return None
    return judge_assisted_arrays(found.strata, found.truth, found.judge, found.missing, z, found.whole)

"""Judge-assisted true accuracy: stratified PPI++ (prediction-powered inference with power tuning)
over the estimate's own strata, using the judge's label on every row and the human verdicts on
the reviewed random sample. The judge only narrows the interval; its bias is corrected by the
reviewed rows, so a bad judge gives an interval about as wide as the human-only one, never a
wrong one (see ``/work/shared/notes/judge-assisted-estimates.md`` and ``tests/test_ppi.py``).

Per stratum h (bucket x domain, with the same fallbacks as :mod:`.strata`), the finite-population
form of PPI++: with ``x`` the judge's label (1 correct, 0 wrong) and, on rows the judge did not
label, the stratum's mean label (a constant: those rows count with lambda 0)::

    theta_h = lambda_h * mean over all N_h rows of x  +  mean over the n_h sampled rows of (Y - lambda_h x)
    Var     = (1 - n_h / N_h) * s²(Y - lambda_h x) / n_h          (s² with n - 1)

The judge's labels are known on every row of the run, so their mean carries no sampling error:
only the human part varies, with the finite-population correction. ``lambda_h`` is the PPI++
power-tuned weight, here the one that minimises that variance (cov(Y, x) / var(x)), clipped to
[0, 1]. Two guards against the under-coverage of a lambda tuned on the rows it then corrects
(``tests/test_ppi.py`` measures both): it is *cross-fitted* (the sampled rows alternate between two
folds; a row is corrected with the lambda tuned on the other fold), and it is *pooled* where rows
are few: a stratum's own lambda needs :data:`POOL_BELOW` sampled rows, else its bucket's pooled one
(within-stratum moments summed over the bucket's strata) with as many, else the run's. A
stratum's residual variance borrows :data:`BORROWED_DF` degrees of freedom from its bucket's, so a
few rows all alike do not claim no variance.

Rows inside the random prefix without a settled verdict (``missing``) are unknown truth: the
estimate is computed with all of them wrong and with all of them right, and the interval is the
union of the two.

:func:`ppi_mean_ci` is the textbook one-mean PPI++ (independent rows, variances with n, as
``ppi_py.ppi_mean_ci``), kept for the worked numbers of the notes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import Z95
from scoring.estimate.estimator import PRIOR
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import BUCKET, NONE, Strata, build_strata, weights

#: A stratum tunes its own lambda from at least this many sampled rows; below, its bucket's (with
#: as many in the bucket), else the run's. 40 under-covered (0.93) in the simulation; 200 did not.
POOL_BELOW = 200
#: Degrees of freedom each stratum's residual variance borrows from its bucket's pooled one.
BORROWED_DF = 2.0
PPI_METHOD = (
    "Stratified PPI++ over bucket x domain (the same strata and fallbacks as the human-only estimate): per "
    "stratum lambda x the judge's mean label over all its rows plus the mean of (human verdict - lambda x judge "
    "label) over its reviewed random sample; lambda tuned per stratum to minimise the variance and clipped to "
    f"[0, 1], the run's pooled lambda in strata with fewer than {POOL_BELOW} reviewed rows; rows the judge did "
    "not label count with lambda 0. 95% interval: per-stratum variance (1-n/N) s²/n of that difference, "
    "combined as the sum of W² x variance; rows without a settled verdict are spanned from all wrong to all right."
)
PPI_METHOD_SHORT = "judge-assisted (stratified PPI++)"
LAMBDA_OWN, LAMBDA_BUCKET, LAMBDA_RUN = "stratum", "bucket", "run"


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
    same formula with lambda 0 (human verdicts only), so ``effective_reviews`` = reviewed x
    (human / judge-assisted variance) is what the judge's labels are worth in reviews.
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
    method: str = field(default=PPI_METHOD, repr=False)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict:
        return {**asdict(self), "half_width": self.half_width}


@dataclass(frozen=True)
class JudgeAssisted:
    """The run's judge-assisted estimate per domain and combined.

    ``strata`` columns: bucket, Domain, size, reviewed, judged, judge_share (the judge's mean label
    on the stratum's labelled rows, null when none), lambda, lambda_from (``stratum`` or
    ``pooled``), residual_sd (of human verdict - lambda x label on its reviewed rows)."""

    combined: JudgedEstimate
    domains: list[JudgedEstimate]
    strata: pl.DataFrame
    pooled_lambda: float
    method: str = PPI_METHOD

    @property
    def rows(self) -> list[JudgedEstimate]:
        return [*self.domains, self.combined]

    def table(self) -> pl.DataFrame:
        """One row per domain and combined: scope, rows, reviewed, judged, estimate, ci_low, ci_high,
        half_width, effective_reviews."""
        cols = ("scope", "rows", "reviewed", "judged", "estimate", "ci_low", "ci_high", "half_width",
                "effective_reviews")  # fmt: skip
        return pl.DataFrame([{c: r.as_dict()[c] for c in cols} for r in self.rows])

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "pooled_lambda": self.pooled_lambda,
            "combined": self.combined.as_dict(),
            "domains": [r.as_dict() for r in self.domains],
            "strata": self.strata.to_dicts(),
        }


@dataclass(frozen=True)
class Fit:
    """One fit on one filling of the sample (missing verdicts all wrong, or all right)."""

    strata: Strata  # ``reviewed``/``reviewed_rows`` = the sampled rows of this filling
    lam: np.ndarray  # per cell, the mean lambda of its sampled rows
    source: np.ndarray  # per cell, where its lambda comes from: LAMBDA_OWN, LAMBDA_BUCKET or LAMBDA_RUN
    bucket_lam: np.ndarray  # per bucket, the mean lambda of its sampled rows (for fallen-back cells)
    run_lambda: float  # the run's pooled lambda (both folds)
    mean_x: np.ndarray  # per cell, the judge's mean label (over all its rows)
    residual_mean: np.ndarray  # per cell, mean of (Y - lambda x) over its sampled rows
    residual_var: np.ndarray  # per cell, s² of (Y - lambda (x - mean x)) (n - 1, shrunk to the bucket's)
    mean_var: np.ndarray  # per cell, variance of the residual's sample mean (with the FPC)
    squares: np.ndarray  # per cell, the residuals' sum of squared deviations
    bucket_var: np.ndarray  # per cell, its bucket's pooled residual s² (what a thin stratum leans on)


def judge_values(strata: Strata, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x per row, the judge's mean label per cell): a row the judge did not label (NaN) gets
    its cell's mean label, a constant, so it adds nothing through lambda."""
    judge = np.asarray(judge, dtype=float)
    labelled = ~np.isnan(judge)
    cells = len(strata.size)
    count = np.bincount(strata.row_cell[labelled], minlength=cells).astype(float)
    total = np.bincount(strata.row_cell[labelled], weights=judge[labelled], minlength=cells)
    mean_x = np.divide(total, count, out=np.zeros(cells), where=count > 0)
    return np.where(labelled, judge, mean_x[strata.row_cell]), mean_x


def _moments(cell: np.ndarray, y: np.ndarray, x: np.ndarray, cells: int) -> tuple[np.ndarray, ...]:
    """(n, within-cell sum of cross-products, of squares of x) per cell."""
    n = np.bincount(cell, minlength=cells).astype(float)
    safe = np.maximum(n, 1.0)
    dy = y - (np.bincount(cell, weights=y, minlength=cells) / safe)[cell]
    dx = x - (np.bincount(cell, weights=x, minlength=cells) / safe)[cell]
    return n, np.bincount(cell, weights=dx * dy, minlength=cells), np.bincount(cell, weights=dx * dx, minlength=cells)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.clip(np.divide(num, den, out=np.zeros(np.shape(num)), where=den > 1e-12), 0.0, 1.0)


def _tuned(n: np.ndarray, sxy: np.ndarray, sxx: np.ndarray, bucket: np.ndarray,
           pool_below: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(lambda, source) per cell from these moments: the cell's own with ``pool_below`` rows, else
    its bucket's pooled one with that many in the bucket, else the run's."""
    b_n, b_xy, b_xx = (np.bincount(bucket, weights=v, minlength=4) for v in (n, sxy, sxx))
    run = float(_ratio(np.array(sxy.sum()), np.array(sxx.sum())))
    source = np.where(n >= pool_below, 0, np.where(b_n[bucket] >= pool_below, 1, 2))
    lam = np.choose(source, [_ratio(sxy, sxx), _ratio(b_xy, b_xx)[bucket], np.full(len(n), run)])
    return lam, source


def fit(strata: Strata, y: np.ndarray, x: np.ndarray, mean_x: np.ndarray, sampled: np.ndarray,
        lam: float | None = None, pool_below: int = POOL_BELOW, z: float = Z95,
        crossfit: bool = True) -> Fit:  # fmt: skip
    """Lambda per sampled row (``lam`` fixes it: 0 is the human-only estimate), cross-fitted: a
    row of one fold (rows alternate) takes the lambda tuned on the other fold, so no row's own
    verdict tunes the weight it is corrected with (``crossfit=False``: every row takes the lambda
    tuned on all of them, the textbook PPI++ the simulation rejects); then the residuals' means
    and variances."""
    cells = len(strata.size)
    cell = strata.row_cell[sampled]
    yy, xx = np.asarray(y, dtype=float)[sampled], np.asarray(x, dtype=float)[sampled]

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(cell, weights=values, minlength=cells)

    n, sxy, sxx = _moments(cell, yy, xx, cells)
    run_lambda = float(_ratio(np.array(sxy.sum()), np.array(sxx.sum())))
    if lam is None:
        fold = np.flatnonzero(sampled) % 2 if crossfit else np.zeros(len(yy), dtype=np.int64)
        lam_row, source_row = np.zeros(len(yy)), np.zeros(len(yy), dtype=np.int64)
        for k in (0, 1) if crossfit else (0,):
            other = fold != k if crossfit else np.ones(len(yy), dtype=bool)
            tuned, source = _tuned(*_moments(cell[other], yy[other], xx[other], cells), strata.bucket,
                                   pool_below // 2 if crossfit else pool_below)  # fmt: skip
            mine = fold == k
            lam_row[mine], source_row[mine] = tuned[cell[mine]], source[cell[mine]]
        cell_source = np.maximum(np.bincount(cell, weights=source_row, minlength=cells) / np.maximum(n, 1), 0).round()
    else:
        lam_row, cell_source = np.full(len(yy), float(lam)), np.zeros(cells)
    safe = np.maximum(n, 1.0)
    lam_c = total(lam_row) / safe
    b_n = np.bincount(strata.bucket, weights=n, minlength=4)
    bucket_lam = np.divide(np.bincount(strata.bucket, weights=total(lam_row), minlength=4), b_n, out=np.zeros(4),
                           where=b_n > 0)  # fmt: skip
    r_mean = total(yy - lam_row * xx) / safe
    e = yy - lam_row * (xx - mean_x[cell])
    squares = total((e - (total(e) / safe)[cell]) ** 2)
    # Each stratum's s² borrows BORROWED_DF degrees of freedom from its bucket's pooled s², so a
    # stratum of a few rows, all correct, is not taken to have no variance.
    bucket_sq = np.bincount(strata.bucket, weights=squares, minlength=4)
    bucket_df = np.bincount(strata.bucket, weights=np.maximum(n - 1, 0), minlength=4)
    z2 = z * z
    centre = (np.bincount(strata.bucket, weights=total(yy), minlength=4) + z2 / 2) / (b_n + z2)
    bucket_s2 = np.divide(bucket_sq, bucket_df, out=np.zeros(4), where=bucket_df > 0)
    bucket_s2 = np.where(bucket_s2 > 1e-12, bucket_s2, centre * (1 - centre))  # no spread seen: not no variance
    s2 = (squares + BORROWED_DF * bucket_s2[strata.bucket]) / (np.maximum(n - 1, 0) + BORROWED_DF)
    fpc = np.clip(1 - np.divide(n, strata.size, out=np.ones(cells), where=strata.size > 0), 0.0, 1.0)
    mean_var = np.divide(s2 * fpc, n, out=np.zeros(cells), where=n > 0)
    sampled_strata = replace(strata, reviewed=n, correct=total(yy), reviewed_rows=np.asarray(sampled, dtype=bool))
    sources = np.array([LAMBDA_OWN, LAMBDA_BUCKET, LAMBDA_RUN])[cell_source.astype(np.int64)]
    return Fit(sampled_strata, lam_c, sources, bucket_lam, run_lambda, mean_x, r_mean, s2, mean_var, squares,
               bucket_s2[strata.bucket])


def t_quantile(z: float, df: float) -> float:
    """Student's t quantile at the normal quantile ``z`` for ``df`` degrees of freedom
    (Cornish-Fisher, within 0.5% of the exact value from 5 df on; df below 2 counts as 2)."""
    v = max(float(df), 2.0)
    return z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2) + (
        3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)  # fmt: skip


def combine(f: Fit, target: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """(known part of the estimate, its standard error, unknown weight, degrees of freedom) over
    the cells ``target`` selects: per cell with a rate, W x lambda x the judge's mean label, plus
    the residuals' weighted means (a fallen-back cell borrows its bucket's residuals, and their
    mean lambda). The degrees of freedom are Satterthwaite's over the strata's variances, so an
    interval resting on a few small strata uses t, not z."""
    w = weights(f.strata, target)
    inside = np.ones(len(f.lam), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    share = np.where(inside, f.strata.size / max(w.rows, 1), 0.0)
    lam = np.where(w.status == BUCKET, f.bucket_lam[f.strata.bucket], f.lam)
    known = float(np.sum(np.where(w.status == NONE, 0.0, share * lam * f.mean_x)) + np.dot(w.a, f.residual_mean))
    v = w.a**2 * f.mean_var
    cell_df = np.maximum(f.strata.reviewed - 1, 0) + BORROWED_DF
    df = float(v.sum() ** 2 / np.sum(v**2 / cell_df)) if v.sum() > 0 else np.inf
    return known, float(np.sqrt(v.sum())), w.unknown, df


def _scope(fits: list[Fit], human: Fit, target: np.ndarray | None, scope: str, counts: dict[str, int],
           z: float) -> JudgedEstimate:  # fmt: skip
    parts = [combine(f, target) for f in fits]
    (low_known, low_se, unknown, low_df), (high_known, high_se, _, high_df) = parts[0], parts[-1]
    human_se = combine(human, target)[1]
    se = max(low_se, high_se)
    low = max(0.0, low_known - t_quantile(z, low_df) * low_se)
    high = min(1.0, high_known + t_quantile(z, high_df) * high_se + unknown)
    estimate = min(1.0, (low_known + high_known) / 2 + PRIOR * unknown)
    reviewed = counts["reviewed"]
    effective = reviewed * (human_se / se) ** 2 if se > 0 else float(reviewed)
    return JudgedEstimate(scope=scope, estimate=estimate, ci_low=min(low, high), ci_high=high, standard_error=se,
                          human_standard_error=human_se, effective_reviews=effective, unknown_weight=unknown,
                          **counts)  # fmt: skip


def judge_assisted_arrays(strata: Strata, truth: np.ndarray, judge: np.ndarray, missing: np.ndarray | None = None,
                          z: float = Z95, pool_below: int = POOL_BELOW,
                          crossfit: bool = True) -> JudgeAssisted:  # fmt: skip
    """The estimate from per-row arrays aligned with ``strata``'s rows: ``truth`` (1/0 on reviewed
    rows, any value elsewhere), ``judge`` (1/0, NaN = not labelled), ``missing`` (bool: in the
    random sample, verdict not settled). ``strata.reviewed_rows`` marks the reviewed rows."""
    reviewed = np.asarray(strata.reviewed_rows, dtype=bool)
    missing = np.zeros(len(reviewed), dtype=bool) if missing is None else np.asarray(missing, dtype=bool) & ~reviewed
    sampled = reviewed | missing
    x, mean_x = judge_values(strata, judge)
    base = np.where(reviewed, np.nan_to_num(np.asarray(truth, dtype=float)), 0.0)
    fillings = [base] if not missing.any() else [base, np.where(missing, 1.0, base)]
    fits = [fit(strata, y, x, mean_x, sampled, None, pool_below, z, crossfit) for y in fillings]
    human = fit(strata, fillings[0], x, mean_x, sampled, 0.0, pool_below, z)
    labelled = ~np.isnan(np.asarray(judge, dtype=float))
    domains = strata.cells["Domain"].to_numpy()
    names = strata.domains
    cell_domain = np.searchsorted(np.array(names, dtype=object), domains)
    row_domain = cell_domain[strata.row_cell]

    def per_domain_counts(rows: np.ndarray) -> np.ndarray:
        return np.bincount(row_domain[rows], minlength=len(names))

    tallies = {"rows": np.bincount(row_domain, minlength=len(names)), "reviewed": per_domain_counts(reviewed),
               "missing": per_domain_counts(missing), "judged": per_domain_counts(labelled)}  # fmt: skip
    combined = _scope(fits, human, None, COMBINED, {k: int(v.sum()) for k, v in tallies.items()}, z)
    per_domain = [_scope(fits, human, cell_domain == i, d, {k: int(v[i]) for k, v in tallies.items()}, z)
                  for i, d in enumerate(names)]  # fmt: skip
    main = fits[0]
    cells = len(strata.size)
    judged = np.bincount(strata.row_cell[labelled], minlength=cells)
    table = pl.DataFrame({
        "bucket": strata.cells["bucket"], "Domain": strata.cells["Domain"], "size": strata.cells["size"],
        "reviewed": np.bincount(strata.row_cell[reviewed], minlength=cells), "judged": judged,
        "judge_share": pl.Series(np.where(judged > 0, mean_x, np.nan)).fill_nan(None),
        "lambda": np.where(main.strata.reviewed > 0, main.lam, main.bucket_lam[strata.bucket]),
        "lambda_from": np.where(main.strata.reviewed > 0, main.source, LAMBDA_BUCKET).tolist(),
        "residual_sd": np.sqrt(main.residual_var),
    }, schema_overrides={"reviewed": pl.Int64, "judged": pl.Int64})  # fmt: skip
    return JudgeAssisted(combined, per_domain, table, main.run_lambda)


def sample_arrays(sample: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(truth, judge, missing) of a sample as arrays: truth 1/0 (NaN unknown), judge 1/0 (NaN not
    labelled), missing (False everywhere when the sample has no ``missing`` column)."""
    truth = sample["truth"].cast(pl.Float64).to_numpy()
    judge = sample["judge_correct"].cast(pl.Float64).to_numpy() if "judge_correct" in sample.columns else np.full(
        len(sample), np.nan)  # fmt: skip
    missing = sample["missing"].fill_null(False).to_numpy() if "missing" in sample.columns else np.zeros(
        len(sample), dtype=bool)  # fmt: skip
    return truth, judge, missing.astype(bool)


def judge_assisted(sample: pl.DataFrame, strata: Strata | None = None, z: float = Z95,
                   pool_below: int = POOL_BELOW) -> JudgeAssisted | None:  # fmt: skip
    """The judge-assisted estimate of a sample (:func:`scoring.estimate.reviewed_sample`), or
    None when the judge labelled no row (the human-only estimate is then all there is)."""
    check_sample(sample)
    truth, judge, missing = sample_arrays(sample)
    if np.isnan(judge).all():
        return None
    return judge_assisted_arrays(strata or build_strata(sample), truth, judge, missing, z, pool_below)

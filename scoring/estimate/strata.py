"""Strata of a run (bucket x domain), the fallback for thinly reviewed strata, and the variance
formulas every estimate here shares. NumPy on per-stratum arrays: an estimate is a few dozen
numbers whatever the run's size, so 200 simulated runs take seconds.

Every estimate is linear in the strata's reviewed shares: ``sum over cells a_c * mean_c(y)``.
For a target population T (the whole run, or one domain) with ``W_c = N_c / N_T``:

- a cell with at least :data:`MIN_REVIEWED` reviewed rows (or all of its rows reviewed) is its
  own stratum: ``a_c = W_c``;
- a cell with fewer *falls back to its bucket*: its reviewed rows count as they are and its other
  rows take the pooled share of every reviewed row of its bucket, across all domains. So each cell
  c of bucket B also gets ``F_B * n_c / n_B``, where ``F_B`` is the weight of the unreviewed rows
  of B's fallen-back cells in T and ``n_B`` B's reviewed rows;
- when a bucket has no reviewed row at all, its fallen weight ``U`` is unknown: the estimate
  counts it at the prior 0.5 and its interval spans it from 0 to 1 (see :mod:`.estimator`).

Writing the estimate this way keeps its variance exact for the linear form: the cells are
independent samples, so ``Var = sum a_c^2 Var(mean_c)`` with no covariance to chase, also for
the pooled rates of the fallen-back cells.

Each cell's ``Var(mean_c)`` (:func:`shrunk_variances`) is the unbiased ``p(1-p)/(n-1)`` with the
finite-population correction, at a share shrunk toward the bucket's pooled share by
:data:`SHRINK` pseudo-rows: a cell whose reviewed rows all agree keeps a variance (its true share
may well be 0.97), yet one that is 0.97 is not pulled halfway to 0.5 as a Wilson centre would
(z² = 3.84 pseudo-rows at 0.5 made the combined interval 1.5x too wide). A fallen-back cell
adds what no sample of it can show (:func:`model_variances`): its unreviewed rows differ from
the bucket's rate by the spread between the bucket's cells and by their own binomial noise.
Coverage of each choice is measured by simulation in ``tests/test_estimate_coverage.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.core.stats import Z95
from scoring.estimate.sample import check_sample

#: A stratum needs this many reviewed rows to stand on its own; below it uses its bucket's rate.
MIN_REVIEWED = 2
#: Pseudo-rows at the bucket's pooled share added to a cell's share for its variance (not its estimate).
SHRINK = 1.0
#: From this many reviewed rows, all agreeing, a cell's variance is taken at its bucket's pooled
#: all-agreeing share (:func:`spreads`).
POOL_FROM = 8
OWN, BUCKET, NONE = "stratum", "bucket", "none"
CELL_COLUMNS = ("bucket", "Domain", "size", "reviewed", "correct")


@dataclass(frozen=True)
class Strata:
    """A sample's cells (bucket x domain, in :data:`BUCKETS` order then by domain) and which
    cell each row falls in. ``cells`` holds :data:`CELL_COLUMNS`; the arrays repeat them."""

    cells: pl.DataFrame
    row_cell: np.ndarray  # per sample row, its cell's index
    size: np.ndarray  # rows per cell (float)
    reviewed: np.ndarray  # reviewed rows per cell (float)
    correct: np.ndarray  # reviewed rows judged correct per cell (float)
    bucket: np.ndarray  # per cell, its bucket's index in BUCKETS
    reviewed_rows: np.ndarray  # per sample row, whether it is reviewed (bool)
    #: per cell, rows of its random sample whose truth is missing (skipped, in conflict, pending)
    missing: np.ndarray | None = None
    #: how many pooling groups ``bucket`` indexes (the four buckets)
    groups: int = len(BUCKETS)

    def missing_counts(self) -> np.ndarray:
        return np.zeros(len(self.size)) if self.missing is None else self.missing

    def imputed(self, right: bool) -> Strata:
        """The cells as if every missing row had been reviewed ``right`` (or wrong): the two
        ends of what the missing rows can do to a share (per-row arrays are not changed)."""
        miss = self.missing_counts()
        return replace(
            self, reviewed=self.reviewed + miss, correct=self.correct + (miss if right else 0.0), missing=None
        )

    @property
    def domains(self) -> list[str]:
        return sorted(set(self.cells["Domain"].to_list()))


@dataclass(frozen=True)
class Weights:
    """Coefficients of one target population: ``estimate = sum a * share + 0.5 * unknown``.

    ``status`` says per cell how its rate is found: its own reviewed rows (``stratum``), its
    bucket's pooled rate (``bucket``), or nowhere (``none``: its bucket has no reviewed row).
    """

    a: np.ndarray
    unknown: float  # weight of the target whose bucket has no reviewed row
    status: np.ndarray  # per cell: OWN, BUCKET or NONE (cells outside the target: "")
    rows: int  # N_T


def build_strata(sample: pl.DataFrame) -> Strata:
    """The cells of ``sample`` (see :mod:`scoring.estimate.sample`)."""
    check_sample(sample)
    order = pl.DataFrame({"bucket": list(BUCKETS), "_b": list(range(len(BUCKETS)))})
    missing = pl.col("missing").fill_null(False) if "missing" in sample.columns else pl.lit(False)
    keyed = sample.select(
        "bucket",
        pl.col("Domain").cast(pl.String).fill_null(""),
        reviewed=pl.col("reviewed").fill_null(False),
        right=(pl.col("reviewed").fill_null(False) & pl.col("truth").fill_null(False)),
        missing=missing,
    )
    cells = (
        keyed.group_by("bucket", "Domain")
        .agg(
            size=pl.len(),
            reviewed=pl.col("reviewed").sum(),
            correct=pl.col("right").sum(),
            missing=pl.col("missing").sum(),
        )
        .join(order, on="bucket")
        .sort("_b", "Domain")
    )
    index = cells.select("bucket", "Domain").with_row_index("_cell")
    row_cell = keyed.join(index, on=["bucket", "Domain"], how="left", maintain_order="left")["_cell"].to_numpy()
    return Strata(
        cells=cells.select(*CELL_COLUMNS).with_columns(pl.col("size", "reviewed", "correct").cast(pl.Int64)),
        row_cell=row_cell.astype(np.int64),
        size=cells["size"].to_numpy().astype(float),
        reviewed=cells["reviewed"].to_numpy().astype(float),
        correct=cells["correct"].to_numpy().astype(float),
        bucket=cells["_b"].to_numpy().astype(np.int64),
        reviewed_rows=keyed["reviewed"].to_numpy(),
        missing=cells["missing"].to_numpy().astype(float),
    )


def stands_alone(strata: Strata, min_reviewed: int = MIN_REVIEWED) -> np.ndarray:
    """Per cell: enough reviewed rows to use its own share (or every row of it reviewed)."""
    return (strata.reviewed >= min_reviewed) | ((strata.reviewed >= strata.size) & (strata.size > 0))


def weights(strata: Strata, target: np.ndarray | None = None, min_reviewed: int = MIN_REVIEWED) -> Weights:
    """Coefficients for the cells ``target`` selects (all cells by default); see the module."""
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    rows = float(strata.size[inside].sum())
    w = np.where(inside, strata.size / rows, 0.0) if rows else np.zeros(len(strata.size))
    own = stands_alone(strata, min_reviewed)
    n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    has = n_bucket > 0
    # A fallen-back cell's reviewed rows count as they are (only where its bucket has any: else
    # the cell has none either); its other rows take the bucket's pooled share.
    seen = np.where(own, 1.0, reviewed_share(strata))
    fallen = np.bincount(strata.bucket, weights=w * (1.0 - seen), minlength=strata.groups)
    share = strata.reviewed / np.where(has, n_bucket, 1.0)[strata.bucket]
    a = w * seen + np.where(has[strata.bucket], fallen[strata.bucket] * share, 0.0)
    status = np.where(~inside, "", np.where(own, OWN, np.where(has[strata.bucket], BUCKET, NONE)))
    return Weights(a=a, unknown=float(fallen[~has].sum()), status=status, rows=int(rows))


def reviewed_share(strata: Strata) -> np.ndarray:
    """Per cell, the share of its rows that are reviewed (``n/N``; 0 for an empty cell)."""
    return np.divide(strata.reviewed, strata.size, out=np.zeros(len(strata.size)), where=strata.size > 0)


def cell_sums(strata: Strata, values: np.ndarray) -> np.ndarray:
    """Per cell, the sum of ``values`` (one per sample row) over its reviewed rows."""
    take = strata.reviewed_rows
    return np.bincount(strata.row_cell[take], weights=np.asarray(values, dtype=float)[take], minlength=len(strata.size))


def shares(strata: Strata, sums: np.ndarray) -> np.ndarray:
    """Per cell, ``sums / reviewed`` (0 where nothing is reviewed: such cells weigh 0)."""
    return np.divide(sums, strata.reviewed, out=np.zeros(len(sums)), where=strata.reviewed > 0)


def wilson_variances(strata: Strata, k: np.ndarray, z: float = Z95) -> np.ndarray:
    """Per cell, :func:`scoring.core.stats.wilson_adjusted_variance` of ``k`` correct out of its
    reviewed rows: ``p~(1-p~)/(n+z²) * (1 - n/N)`` at the Wilson centre ``p~ = (k+z²/2)/(n+z²)``."""
    n, z2 = strata.reviewed, z * z
    centre = (k + z2 / 2) / (n + z2)
    return centre * (1 - centre) / (n + z2) * fpc(strata)


def linear_variances(strata: Strata, values: np.ndarray) -> np.ndarray:
    """Per cell, the variance of the mean of real ``values`` over its reviewed rows:
    ``(1 - n/N) s²/n`` with ``s²`` the sample variance (n - 1 in the denominator); a cell with
    one reviewed row borrows its bucket's pooled ``s²`` (it only enters through that pool)."""
    values = np.asarray(values, dtype=float)
    n = strata.reviewed
    mean = shares(strata, cell_sums(strata, values))
    take = strata.reviewed_rows
    dev = np.zeros(len(values))
    dev[take] = (values[take] - mean[strata.row_cell[take]]) ** 2
    squares = cell_sums(strata, dev)
    s2 = np.divide(squares, n - 1, out=np.zeros(len(n)), where=n >= 2)
    bucket_n = np.bincount(strata.bucket, weights=n, minlength=strata.groups)
    bucket_sq = np.bincount(strata.bucket, weights=squares, minlength=strata.groups)
    pooled = np.divide(bucket_sq, bucket_n - 1, out=np.zeros(len(bucket_n)), where=bucket_n >= 2)
    s2 = np.where(n == 1, pooled[strata.bucket], s2)
    return np.divide(s2 * fpc(strata), n, out=np.zeros(len(n)), where=n > 0)


def pooled_shares(strata: Strata, k: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """Per cell, its bucket's pooled share ``(k_B + 1/2)/(n_B + 1)`` (Jeffreys-smoothed, so a
    bucket all right so far is not taken as surely all right); ``n`` defaults to the reviewed rows."""
    n = strata.reviewed if n is None else n
    n_b = np.bincount(strata.bucket, weights=n, minlength=strata.groups)
    k_b = np.bincount(strata.bucket, weights=k, minlength=strata.groups)
    return ((k_b + 0.5) / (n_b + 1.0))[strata.bucket]


def fpc(strata: Strata) -> np.ndarray:
    """Per cell, the finite-population correction ``1 - n/N``."""
    return np.clip(1 - reviewed_share(strata), 0.0, 1.0)


def shrunk_shares(strata: Strata, k: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """Per cell, ``(k + shrink p_B)/(n + shrink)``: the share ``k/n`` (``n`` the reviewed rows by
    default) moved toward its bucket's by :func:`shrink_of` pseudo-rows, as every variance here
    takes it."""
    n = strata.reviewed if n is None else n
    return (k + SHRINK * pooled_shares(strata, k, n)) / (n + SHRINK)


def variance_centres(strata: Strata, k: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """Per cell, the share a ratio's variance is taken at (:mod:`.metric_quality`): :func:`shrunk_shares`,
    except that a cell whose ``n`` rows (reviewed rows by default) all agree takes, when nearer 0.5,
    the Jeffreys share of every such row of its bucket's cells that agree the same way (all right
    with all right, all wrong with all wrong), as if they were one stratum. Ten of ten passes correct
    is no evidence of a cell right on every pass: a pseudo-row toward its bucket's 0.99 left each of
    six such cells a tenth of the variance their 60 rows have together, and precision intervals built
    on them covered 0.80-0.89 for a nominal 0.95. Pooled, 60 of 60 is worth what 60 rows are."""
    n = strata.reviewed if n is None else n
    out = shrunk_shares(strata, k, n)
    for agree, right in (((n > 0) & (k >= n), 1.0), ((n > 0) & (k <= 0), 0.0)):
        rows = np.bincount(strata.bucket, weights=np.where(agree, n, 0.0), minlength=strata.groups)
        pooled = (right * rows + 0.5) / (rows + 1.0)
        nearer = agree & (np.abs(pooled[strata.bucket] - 0.5) < np.abs(out - 0.5))
        out = np.where(nearer, pooled[strata.bucket], out)
    return out


def shrunk_variances(strata: Strata, k: np.ndarray) -> np.ndarray:
    """Per cell, the variance of the share ``k/n`` of its reviewed rows: ``p'(1-p')/(n-1)`` times
    ``1 - n/N``, with ``p'`` the share shrunk by :func:`shrunk_shares` (``p_B``: :func:`pooled_shares`).
    0 for a census; cells with fewer than 2 reviewed rows use ``n`` (they enter only pooled)."""
    n = strata.reviewed
    spread = np.maximum(spreads(strata, k), 0.0)
    return np.divide(spread, np.maximum(n - 1, 1.0), out=np.zeros(len(n)), where=n > 0) * fpc(strata)


def spreads(strata: Strata, k: np.ndarray) -> np.ndarray:
    """Per cell, ``p(1-p)`` at its shrunk share (:func:`shrunk_shares`) or at its own share, whichever
    is larger: shrinking toward the bucket keeps an all-correct cell a variance, but must not shrink
    the variance of a cell whose share sits nearer 0.5 than its bucket's (a domain 10-30 points
    off its buckets covered 0.92-0.93 when its cells' variances were pulled toward theirs).

    A cell with :data:`POOL_FROM` or more reviewed rows that all agree takes its variance at the
    share of every such row of its bucket pooled (:func:`variance_centres`, as the ratios do): one
    pseudo-row toward a bucket at 0.98 takes 12 of 12 correct at p(1-p) = 0.0015, a thirteenth of
    a true 0.98's 0.0196, so after a plan that reviews the
    nearly-right buckets thinly, their all-correct strata carried most of the error and the combined
    interval covered 0.90-0.92 on 300-row runs (0.93-0.96 pooled from 8 rows, 300 runs a regime). Below 8 rows the
    pseudo-row already leaves a variance of that size, and pooling there made the proportional
    reviews' intervals cover 0.98-0.99."""
    centre = spread_centres(strata, k)
    own = shares(strata, k)
    return np.maximum(centre * (1 - centre), own * (1 - own))


def spread_centres(strata: Strata, k: np.ndarray) -> np.ndarray:
    """Per cell, the share its variance is taken at (:func:`spreads`): :func:`variance_centres` from
    :data:`POOL_FROM` reviewed rows, else :func:`shrunk_shares`. The Wilson interval's effective
    sample size is taken at the same shares, or ten of ten correct would count as one row."""
    return np.where(strata.reviewed >= POOL_FROM, variance_centres(strata, k), shrunk_shares(strata, k))


def between_cells(strata: Strata, k: np.ndarray, min_reviewed: int = MIN_REVIEWED) -> np.ndarray:
    """Per bucket, the spread (variance) of the true shares of its cells around the bucket's,
    by the method of moments over its cells that stand alone: their shares' weighted variance
    less what sampling alone explains. Fewer than two such cells: a quarter of ``p(1-p)``, a
    deliberately wide guess (a fallen-back cell is then counted as hardly known)."""
    own = stands_alone(strata, min_reviewed) & (strata.reviewed > 0) & (strata.reviewed < strata.size)
    p_b = pooled_shares(strata, k)
    share = shares(strata, k)
    var = shrunk_variances(strata, k)
    out = np.zeros(strata.groups)
    for b in range(strata.groups):
        cells = own & (strata.bucket == b)
        m = int(cells.sum())
        rate = float(p_b[strata.bucket == b][0]) if np.any(strata.bucket == b) else 0.5
        if m < 2:
            out[b] = rate * (1 - rate) / 4
            continue
        wt = strata.reviewed[cells] / strata.reviewed[cells].sum()
        mean = float(np.dot(wt, share[cells]))
        spread = float(np.dot(wt, (share[cells] - mean) ** 2)) * m / (m - 1)
        out[b] = max(0.0, spread - float(np.dot(wt, var[cells])))
    return out


def model_variances(
    strata: Strata, k: np.ndarray, target: np.ndarray | None = None, min_reviewed: int = MIN_REVIEWED
) -> float:
    """What the pooled share cannot know of the fallen-back cells in ``target``: each one's
    unreviewed rows ``U`` differ from the bucket's rate by the spread between cells
    (:func:`between_cells`) and by their own binomial noise, ``(U/N_T)² (tau² + p(1-p)/U)``."""
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    rows = float(strata.size[inside].sum())
    if rows == 0:
        return 0.0
    n_b = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    fallen = inside & ~stands_alone(strata, min_reviewed) & (n_b[strata.bucket] > 0)
    left = np.where(fallen, strata.size - strata.reviewed, 0.0)
    p = pooled_shares(strata, k)
    tau2 = between_cells(strata, k, min_reviewed)[strata.bucket]
    noise = np.divide(p * (1 - p), left, out=np.zeros(len(left)), where=left > 0)
    return float(np.sum((left / rows) ** 2 * (tau2 + noise)))

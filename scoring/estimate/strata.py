"""Strata of a run (bucket x domain), the fallback for thinly reviewed strata, and the variance
formulas every estimate here shares. NumPy on per-stratum arrays: an estimate is a few dozen
numbers whatever the run's size, so 200 simulated runs take seconds.

Every estimate is linear in the strata's reviewed shares: ``sum over cells a_c * mean_c(y)``.
For a target population T (the whole run, or one domain) with ``W_c = N_c / N_T``:

- a cell with at least :data:`MIN_REVIEWED` reviewed rows (or all of its rows reviewed) is its
  own stratum: ``a_c = W_c``;
- a cell with fewer *falls back to its bucket*: it takes the pooled share of every reviewed row
  of its bucket, across all domains. So each cell c of bucket B also gets ``F_B * n_c / n_B``,
  where ``F_B`` is the weight of B's fallen-back cells in T and ``n_B`` B's reviewed rows;
- when a bucket has no reviewed row at all, its fallen weight ``U`` is unknown: the estimate
  counts it at the prior 0.5 and its interval spans it from 0 to 1 (see :mod:`.estimator`).

Writing the estimate this way keeps its variance exact for the linear form: the cells are
independent samples, so ``Var = sum a_c^2 Var(mean_c)`` with no covariance to chase, also for
the pooled rates of the fallen-back cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from scoring.core.protocols import BUCKETS
from scoring.core.stats import Z95
from scoring.estimate.sample import check_sample

#: A stratum needs this many reviewed rows to stand on its own; below it uses its bucket's rate.
MIN_REVIEWED = 2
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
    keyed = sample.select(
        "bucket", pl.col("Domain").cast(pl.String).fill_null(""), reviewed=pl.col("reviewed").fill_null(False),
        right=(pl.col("reviewed").fill_null(False) & pl.col("truth").fill_null(False)),
    )  # fmt: skip
    cells = (
        keyed.group_by("bucket", "Domain")
        .agg(size=pl.len(), reviewed=pl.col("reviewed").sum(), correct=pl.col("right").sum())
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
    a = np.where(own, w, 0.0)
    n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=len(BUCKETS))
    fallen = np.bincount(strata.bucket, weights=np.where(own, 0.0, w), minlength=len(BUCKETS))
    has = n_bucket > 0
    share = strata.reviewed / np.where(has, n_bucket, 1.0)[strata.bucket]
    a = a + np.where(has[strata.bucket], fallen[strata.bucket] * share, 0.0)
    status = np.where(~inside, "", np.where(own, OWN, np.where(has[strata.bucket], BUCKET, NONE)))
    return Weights(a=a, unknown=float(fallen[~has].sum()), status=status, rows=int(rows))


def cell_sums(strata: Strata, values: np.ndarray) -> np.ndarray:
    """Per cell, the sum of ``values`` (one per sample row) over its reviewed rows."""
    take = strata.reviewed_rows
    return np.bincount(strata.row_cell[take], weights=np.asarray(values, dtype=float)[take],
                       minlength=len(strata.size))  # fmt: skip


def shares(strata: Strata, sums: np.ndarray) -> np.ndarray:
    """Per cell, ``sums / reviewed`` (0 where nothing is reviewed: such cells weigh 0)."""
    return np.divide(sums, strata.reviewed, out=np.zeros(len(sums)), where=strata.reviewed > 0)


def wilson_variances(strata: Strata, k: np.ndarray, z: float = Z95) -> np.ndarray:
    """Per cell, :func:`scoring.core.stats.wilson_adjusted_variance` of ``k`` correct out of its
    reviewed rows: ``p~(1-p~)/(n+z²) * (1 - n/N)`` at the Wilson centre ``p~ = (k+z²/2)/(n+z²)``."""
    n, z2 = strata.reviewed, z * z
    centre = (k + z2 / 2) / (n + z2)
    fpc = np.clip(1 - np.divide(n, strata.size, out=np.ones(len(n)), where=strata.size > 0), 0.0, 1.0)
    return centre * (1 - centre) / (n + z2) * fpc


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
    bucket_n = np.bincount(strata.bucket, weights=n, minlength=len(BUCKETS))
    bucket_sq = np.bincount(strata.bucket, weights=squares, minlength=len(BUCKETS))
    pooled = np.divide(bucket_sq, bucket_n - 1, out=np.zeros(len(bucket_n)), where=bucket_n >= 2)
    s2 = np.where(n == 1, pooled[strata.bucket], s2)
    fpc = np.clip(1 - np.divide(n, strata.size, out=np.ones(len(n)), where=strata.size > 0), 0.0, 1.0)
    return np.divide(s2 * fpc, n, out=np.zeros(len(n)), where=n > 0)

"""A run's rows as the estimator reads them: stratum, whether a reviewer settled the row, and
what the reviewers (or an adjudicator) decided, with each metric's verdict beside it.

Built from the frame :func:`scoring.core.verdict_rules.final_verdicts` returns (pandas, as
:func:`scoring.verdict_export.build_export` makes it) or from any polars frame with the same columns.
A row is *settled* when reviewers agree on ``correct`` or ``wrong`` or an adjudicator decided
it; reviewers in conflict leave it unsettled (it waits for adjudication). Its *truth* is then
the final verdict. Judge labels CORRECT count as right, INCORRECT and NOT_ATTEMPTED as wrong;
any other label (UNPARSED, ERROR, none) leaves the row unjudged.

Only a random sample may enter the estimate (:data:`SAMPLE_RULE`). Given each row's place in the
run's seeded review order (``rank``) and which rows the queue served, a stratum's sample is the
prefix of its review order up to the last row the queue served there:

- ``reviewed``: settled and inside that prefix: the estimate's data;
- ``missing``: inside the prefix but not settled (skipped, in conflict, waiting for a second
  reviewer or an adjudicator): part of the random sample with an unknown truth, so the interval
  spans whatever it is (:mod:`.estimator`);
- ``by_hand``: settled but past the prefix (opened from Compare, Agreement, My verdicts, or
  carried over from another run): chosen, not drawn, so used nowhere in the estimate or the
  planner; its verdict still counts in the adjudicated accuracy, the export and kappa.

Without ranks (plain tables, simulations) every settled row is ``reviewed`` as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from scoring.core.errors import InputError
from scoring.core.protocols import BUCKETS
from scoring.core.verdict_rules import CONFLICT, VERDICTS, judge_correct

if TYPE_CHECKING:
    import pandas as pd

#: The columns of a sample, in order; ``answer``, ``response``, ``question`` follow when present.
SAMPLE_COLUMNS = (
    "row_idx",
    "item_key",
    "Domain",
    "bucket",
    "exact_correct",
    "overlap_correct",
    "judge_correct",
    "reviewed",
    "truth",
    "conflict",
    "missing",
    "by_hand",
    "rank",
)
#: The rule on the page and in docs/statistics.md.
SAMPLE_RULE = (
    "Only a random sample counts: per stratum (bucket x domain), the rows of its seeded review order up to the "
    "last one the review queue served. Rows in that prefix without a settled verdict (skipped, in conflict, "
    "waiting for a second reviewer or an adjudicator) are missing data: the interval spans every truth they could "
    "have. Rows reviewed out of order (opened from another page, or carried over from another run) are left out "
    "of the estimate and the planner; their verdicts count everywhere else."
)
#: What a sample must hold to be estimated from (built by :func:`make_sample` or :func:`reviewed_sample`).
CORE_COLUMNS = ("bucket", "Domain", "reviewed", "truth")
TEXT_COLUMNS = ("question", "answer", "response")
#: Carried when the rows have them: the text, and each row's language (per-language figures).
CARRIED_COLUMNS = (*TEXT_COLUMNS, "language")
_NEEDED = (
    "item_key",
    "Domain",
    "bucket",
    "exact_correct",
    "overlap_correct",
    "human_verdict",
    "final_verdict",
    "final_source",
)


def _as_polars(final: pd.DataFrame | pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    if isinstance(final, pl.DataFrame):
        return final.select(columns)
    return pl.from_pandas(final[columns].reset_index(drop=True))


def reviewed_sample(
    final: pd.DataFrame | pl.DataFrame,
    rank: np.ndarray | None = None,
    served: np.ndarray | None = None,
    all_text: bool = True,
) -> pl.DataFrame:
    """The estimator's view of a run's final verdicts (:data:`SAMPLE_COLUMNS`, polars).

    ``rank``: each row's place in the run's review order (``scoring.core.order.review_rank``);
    ``served``: per row, whether the queue served it in this run (default: every settled row).
    With ``rank`` the random-sample rule of the module applies. ``all_text=False`` carries
    :data:`TEXT_COLUMNS` on settled rows only (null elsewhere): all the estimate reads of them
    (:func:`scoring.estimate.what_if`), without a second copy of a million rows' text.
    Raises :class:`InputError` when a needed column is missing or a bucket is unknown.
    """
    missing = [c for c in _NEEDED if c not in final.columns]
    if missing:
        raise InputError(f"Cannot estimate from a table without the columns {', '.join(missing)}.")
    extra = [c for c in ("row_idx", "judge_label", *CARRIED_COLUMNS) if c in final.columns]
    later = [] if all_text else [c for c in TEXT_COLUMNS if c in extra]
    table = _as_polars(final, [*_NEEDED, *(c for c in extra if c not in later)])
    if "row_idx" not in table.columns:
        table = table.with_row_index("row_idx")
    label = pl.col("judge_label") if "judge_label" in extra else pl.lit(None, dtype=pl.String)
    human = pl.col("human_verdict").cast(pl.String).fill_null("")
    reviewed = human.is_in(list(VERDICTS)) | (pl.col("final_source").cast(pl.String) == "adjudicated")
    sample = table.select(
        pl.col("row_idx").cast(pl.Int64),
        pl.col("item_key").cast(pl.String),
        pl.col("Domain").cast(pl.String).fill_null(""),
        pl.col("bucket").cast(pl.String),
        pl.col("exact_correct").cast(pl.Boolean),
        pl.col("overlap_correct").cast(pl.Boolean),
        judge_correct=judge_correct(label),
        reviewed=reviewed.fill_null(False),
        truth=pl.when(reviewed).then(pl.col("final_verdict").cast(pl.String) == "correct").otherwise(None),
        conflict=(human == CONFLICT) & ~reviewed.fill_null(False),
    ).hstack(table.select(pl.col(c).cast(pl.String) for c in CARRIED_COLUMNS if c in table.columns))
    if later:
        text = _settled_text(final, later, sample["reviewed"])
        own = [c for c in sample.columns if c not in CARRIED_COLUMNS]
        sample = sample.hstack(text).select(*own, *(c for c in CARRIED_COLUMNS if c in extra))
    return check_sample(random_prefix(sample, rank, served))


def _settled_text(final: pd.DataFrame | pl.DataFrame, columns: list[str], settled: pl.Series) -> list[pl.Series]:
    """``columns`` of ``final`` on the ``settled`` rows, null on the others: only those rows convert."""
    at = np.flatnonzero(settled.fill_null(False).to_numpy())
    empty = pl.repeat(None, settled.len(), dtype=pl.String, eager=True)
    if not at.size:
        return [empty.alias(c) for c in columns]
    if isinstance(final, pl.DataFrame):
        picked = final.select(columns)[at]
    else:
        picked = pl.from_pandas(final[columns].iloc[at].reset_index(drop=True))
    return [empty.alias(c).scatter(at, picked[c].cast(pl.String)) for c in columns]


def random_prefix(sample: pl.DataFrame, rank: np.ndarray | None, served: np.ndarray | None = None) -> pl.DataFrame:
    """``sample`` with ``reviewed``, ``missing``, ``by_hand``, ``rank`` and ``served`` set by the rule
    of the module; ``reviewed`` on input means settled."""
    settled = pl.col("reviewed")
    if rank is None:
        plain = sample.with_columns(missing=pl.lit(False), by_hand=pl.lit(False), rank=pl.lit(None, dtype=pl.Int64))
        return plain.select(*SAMPLE_COLUMNS, *[c for c in sample.columns if c not in SAMPLE_COLUMNS])
    if len(rank) != sample.height or (served is not None and len(served) != sample.height):
        raise ValueError("rank and served need one value per row of the sample.")
    served_col = pl.Series(np.asarray(served, dtype=bool)) if served is not None else sample["reviewed"]
    marked = sample.with_columns(rank=pl.Series(np.asarray(rank), dtype=pl.Int64), served=served_col)
    keys = ["bucket", "Domain"]
    frontier = pl.col("rank").filter(pl.col("served")).max().over(keys)
    # Nothing served yet (a run just uploaded): no stratum has a prefix, and no window over a
    # million rows' two text columns is needed to say so (100 MB and a tenth of a second).
    inside = (pl.col("rank") <= frontier).fill_null(False) if served_col.any() else pl.lit(False)
    return marked.with_columns(
        reviewed=settled & inside,
        missing=inside & ~settled,
        by_hand=settled & ~inside,
    ).select(*SAMPLE_COLUMNS, *[c for c in marked.columns if c not in SAMPLE_COLUMNS])


def make_sample(bucket: list[str], domain: list[str], truth: list[bool | None], **columns: list) -> pl.DataFrame:
    """A sample from plain lists (tests, simulations, callers without a database): ``truth`` None
    means not reviewed. Metric columns default to what the bucket implies; other columns of
    :data:`SAMPLE_COLUMNS` (``item_key``, ``judge_correct``...) may be given by name."""
    n = len(bucket)
    table = pl.DataFrame(
        {"bucket": bucket, "Domain": domain, "truth": truth},
        schema={"bucket": pl.String, "Domain": pl.String, "truth": pl.Boolean},
    )
    table = table.with_columns(
        row_idx=pl.Series(columns.pop("row_idx", range(n)), dtype=pl.Int64),
        item_key=pl.Series(columns.pop("item_key", [f"row-{i}" for i in range(n)]), dtype=pl.String),
        exact_correct=pl.col("bucket").is_in(["both_pass", "exact_only"]),
        overlap_correct=pl.col("bucket").is_in(["both_pass", "overlap_only"]),
        judge_correct=pl.Series(columns.pop("judge_correct", [None] * n), dtype=pl.Boolean),
        reviewed=pl.col("truth").is_not_null(),
        conflict=pl.Series(columns.pop("conflict", [False] * n), dtype=pl.Boolean),
        missing=pl.Series(columns.pop("missing", [False] * n), dtype=pl.Boolean),
        by_hand=pl.Series(columns.pop("by_hand", [False] * n), dtype=pl.Boolean),
        rank=pl.Series(columns.pop("rank", [None] * n), dtype=pl.Int64),
    )
    # A missing or by-hand row is not part of the estimate's data whatever its truth says.
    table = table.with_columns(reviewed=pl.col("reviewed") & ~pl.col("missing") & ~pl.col("by_hand"))
    table = table.with_columns(pl.Series(name, values) for name, values in columns.items())
    return check_sample(table.select(*SAMPLE_COLUMNS, *columns))


def check_sample(sample: pl.DataFrame) -> pl.DataFrame:
    """``sample`` itself, once its columns and buckets are known to be usable."""
    missing = [c for c in CORE_COLUMNS if c not in sample.columns]
    if missing:
        raise InputError(f"A sample needs the columns {', '.join(missing)}.")
    unknown = sorted(set(sample["bucket"].drop_nulls().unique().to_list()) - set(BUCKETS))
    if unknown or sample["bucket"].null_count():
        raise InputError(f"Unknown bucket {unknown[0] if unknown else None!r}: expected one of {', '.join(BUCKETS)}.")
    return sample

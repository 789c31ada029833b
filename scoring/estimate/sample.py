"""A run's rows as the estimator reads them: stratum, whether a reviewer settled the row, and
what the reviewers (or an adjudicator) decided, with each metric's verdict beside it.

Built from the frame :func:`scoring.core.adjudication.final_verdicts` returns (pandas, as
:func:`scoring.export.build_export` makes it) or from any polars frame with the same columns.
A row is *reviewed* when reviewers agree on ``correct`` or ``wrong`` or an adjudicator decided
it; reviewers in conflict leave it unreviewed (it waits for adjudication). Its *truth* is then
the final verdict. Judge labels CORRECT count as right, INCORRECT and NOT_ATTEMPTED as wrong;
any other label (UNPARSED, ERROR, none) leaves the row unjudged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from scoring.core.adjudication import CONFLICT, VERDICTS, judge_correct
from scoring.core.errors import InputError
from scoring.core.protocols import BUCKETS

if TYPE_CHECKING:
    import pandas as pd

#: The columns of a sample, in order; ``answer``, ``response``, ``question`` follow when present.
SAMPLE_COLUMNS = (
    "row_idx", "item_key", "Domain", "bucket", "exact_correct", "overlap_correct", "judge_correct",
    "reviewed", "truth", "conflict",
)  # fmt: skip
#: What a sample must hold to be estimated from (built by :func:`make_sample` or :func:`reviewed_sample`).
CORE_COLUMNS = ("bucket", "Domain", "reviewed", "truth")
TEXT_COLUMNS = ("question", "answer", "response")
_NEEDED = ("item_key", "Domain", "bucket", "exact_correct", "overlap_correct", "human_verdict", "final_verdict",
           "final_source")  # fmt: skip


def _as_polars(final: pd.DataFrame | pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    if isinstance(final, pl.DataFrame):
        return final.select(columns)
    return pl.from_pandas(final[columns].reset_index(drop=True))


def reviewed_sample(final: pd.DataFrame | pl.DataFrame) -> pl.DataFrame:
    """The estimator's view of a run's final verdicts (:data:`SAMPLE_COLUMNS`, polars).

    Raises :class:`InputError` when a needed column is missing or a bucket is unknown.
    """
    missing = [c for c in _NEEDED if c not in final.columns]
    if missing:
        raise InputError(f"Cannot estimate from a table without the columns {', '.join(missing)}.")
    extra = [c for c in ("row_idx", "judge_label", *TEXT_COLUMNS) if c in final.columns]
    table = _as_polars(final, [*_NEEDED, *extra])
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
    ).hstack(table.select(pl.col(c).cast(pl.String) for c in TEXT_COLUMNS if c in extra))  # fmt: skip
    return check_sample(sample)


def make_sample(
    bucket: list[str], domain: list[str], truth: list[bool | None], **columns: list
) -> pl.DataFrame:
    """A sample from plain lists (tests, simulations, callers without a database): ``truth`` None
    means not reviewed. Metric columns default to what the bucket implies; other columns of
    :data:`SAMPLE_COLUMNS` (``item_key``, ``judge_correct``...) may be given by name."""
    n = len(bucket)
    table = pl.DataFrame(
        {"bucket": bucket, "Domain": domain, "truth": truth}, schema={"bucket": pl.String, "Domain": pl.String,
                                                                      "truth": pl.Boolean})  # fmt: skip
    table = table.with_columns(
        row_idx=pl.Series(columns.pop("row_idx", range(n)), dtype=pl.Int64),
        item_key=pl.Series(columns.pop("item_key", [f"row-{i}" for i in range(n)]), dtype=pl.String),
        exact_correct=pl.col("bucket").is_in(["both_pass", "exact_only"]),
        overlap_correct=pl.col("bucket").is_in(["both_pass", "overlap_only"]),
        judge_correct=pl.Series(columns.pop("judge_correct", [None] * n), dtype=pl.Boolean),
        reviewed=pl.col("truth").is_not_null(),
        conflict=pl.lit(False),
    )
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

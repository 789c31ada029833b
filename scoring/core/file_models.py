"""The models one file holds: its ``model`` column (a harness log's metadata fills it, a table may
carry one), its rows grouped by model, and how a page and a command say so.

A file whose model column holds several values is several models' runs in one file: its figures
must never be pooled (one 63.8% for two models is neither model's accuracy). Each model's rows are
a run of their own, in the order the file first names the model; their rows keep the file's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

MODEL_FIELD = "model"  #: the column naming each row's model (any case, surrounding spaces ignored)
NO_MODEL = "(no model)"  #: how the rows with a blank model cell are named
#: The models a sentence lists by name; more are counted ("and 3 more").
NAMED_MODELS = 6
#: The extra column a model's run gets when its file holds several models: each row's data row in
#: the file (1 = the first row after the header), since the run numbers its own rows 1, 2, 3...
FILE_ROW = "file_row"


@dataclass(frozen=True)
class ModelRows:
    """One model's rows of a file."""

    model: str  #: the model column's value, stripped ("" for rows whose cell is blank)
    rows: pl.Series  #: their 0-based positions in the file's table, in file order

    @property
    def count(self) -> int:
        return self.rows.len()

    @property
    def shown(self) -> str:
        return self.model or NO_MODEL

    @property
    def named(self) -> tuple[str, int]:
        """(model, rows), as :func:`models_line` lists them."""
        return self.model, self.count


def model_field(columns: Sequence[str]) -> str | None:
    """The column naming each row's model: ``model`` itself, else one named so in another case or
    with surrounding spaces (``Model``); None when the file has none."""
    if MODEL_FIELD in columns:
        return MODEL_FIELD
    return next((c for c in columns if str(c).strip().lower() == MODEL_FIELD), None)


def models_of(table: pl.DataFrame) -> list[ModelRows]:
    """The models of ``table``'s rows, in the order the file first names them; one entry for a
    file without a model column or with one value in it (its ``model`` then "" or that value)."""
    field = model_field(table.columns)
    if field is None:
        return [ModelRows("", pl.int_range(0, table.height, dtype=pl.Int64, eager=True))]
    names = table[field].cast(pl.String).fill_null("").str.strip_chars()
    grouped = (
        pl.DataFrame({"model": names})
        .with_row_index("row")
        .group_by("model", maintain_order=True)
        .agg(pl.col("row").cast(pl.Int64))
    )
    return [ModelRows(model, pl.Series("row", rows, dtype=pl.Int64)) for model, rows in grouped.iter_rows()]


def models_line(models: Sequence[tuple[str, int]]) -> str:
    """``2 models: A (300 rows), B (300 rows)`` of (model, rows) pairs (:attr:`ModelRows.named`):
    what a page and a command say before saving."""
    named = [
        f"{model or NO_MODEL} ({count:,} row{'s' if count != 1 else ''})" for model, count in models[:NAMED_MODELS]
    ]
    more = len(models) - len(named)
    listed = ", ".join(named) + (f" and {more:,} more" if more else "")
    return f"{len(models):,} model{'s' if len(models) != 1 else ''}: {listed}"


def with_file_rows(table: pl.DataFrame, rows: pl.Series) -> pl.DataFrame:
    """A model's rows of a file (``table`` already taken at ``rows``) with :data:`FILE_ROW`, each
    row's place in the file counted from 1; a file with its own column of that name keeps it."""
    if FILE_ROW in table.columns:
        return table
    return table.with_columns((rows + 1).cast(pl.String).alias(FILE_ROW))

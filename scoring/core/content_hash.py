"""A run's content, hashed: the same rows give the same hash whatever the file's encoding (UTF-8,
UTF-8 with a BOM, UTF-16), its row order, its column order or its format.

The sha256 of a file's bytes tells an identical re-upload; it cannot tell the same rows saved
again in another encoding or shuffled, which a team would otherwise store as a second run of the
same model (and count twice). This hash is over the rows as read (every cell text, after
decoding): each row's cells, each prefixed by its length so no separator can collide, hashed to
one digest per row; the digests sorted (order does not count, repeats do); then one sha256 over
the sorted column names and the digests. The model column is left out: it names the run, it is
not its content (:func:`content_columns`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import polars as pl
import polars_hash  # noqa: F401  (registers the ``chash`` namespace: sha256 in Rust)

from scoring.core.row_language import LANGUAGE
from scoring.core.slices import by_slices

#: The input columns every run has (:data:`scoring.store.ROW_COLUMNS`), hashed with the extras.
BASE_COLUMNS = ("question", "answer", "Domain", "response")
_FEED_ROWS = 100_000  #: digests fed to the final hash at a time (a million rows' joined digests: 65 MB)


def content_columns(
    table: pl.DataFrame, extra_columns: Sequence[str], language_from_file: bool, skip: Sequence[str] = ()
) -> pl.DataFrame:
    """The columns of ``table`` that are a run's content: the four input columns, the row
    languages when the file gave them (a language filled from the run or the script is not the
    file's), and the extra columns, less ``skip`` (the model column)."""
    left_out = set(skip)
    names = [*BASE_COLUMNS, *([LANGUAGE] if language_from_file and LANGUAGE in table.columns else [])]
    names += [c for c in extra_columns if c not in names and c in table.columns]
    return table.select(c for c in names if c not in left_out)


def content_hash(table: pl.DataFrame) -> str:
    """The sha256 (hex) of ``table``'s rows as a multiset over its columns taken in name order
    (see the module); ``table``: :func:`content_columns`."""
    names = sorted(table.columns)
    digest = hashlib.sha256(json.dumps(names, ensure_ascii=False).encode("utf-8"))
    digest.update(f"\n{table.height}\n".encode())
    if not names or table.height == 0:
        return digest.hexdigest()
    rows = by_slices(table.select(names), _row_digests).sort()
    for start in range(0, rows.len(), _FEED_ROWS):
        digest.update("".join(rows.slice(start, _FEED_ROWS).to_list()).encode("ascii"))
    return digest.hexdigest()


def _row_digests(rows: pl.DataFrame) -> pl.Series:
    """One sha256 per row over its cells, each as ``<UTF-8 length>:<text>`` (null as empty)."""
    parts: list[pl.Expr] = []
    for name in rows.columns:
        cell = pl.col(name).cast(pl.String).fill_null("")
        parts += [cell.str.len_bytes().cast(pl.String), pl.lit(":"), cell]
    return rows.select(pl.concat_str(parts).chash.sha2_256().alias("row")).to_series()

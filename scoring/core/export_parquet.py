"""The export as Parquet: the CSV export's columns and rows, with its manifest inside the file.

The columns are the CSV's, named and ordered the same. The four metric columns keep their types
(``exact_correct`` and ``overlap_correct`` boolean, ``matching_words`` and ``total_golden_words``
64-bit integers); every other column is text, each cell the CSV's cell (an empty cell is ``""``,
:data:`~scoring.core.export_format.VERDICTS_COLUMN` the same JSON text) but without the ``'`` the
CSV puts before formula-like cells: Parquet is not opened by a spreadsheet (JSONL keeps the raw
text too). No column is nested, so the file stays a flat table any reader takes.

The manifest (:func:`scoring.verdict_export.manifest`) is stored as JSON in the file's key-value metadata
under :data:`MANIFEST_KEY`; the sidecar ``.manifest.json`` written beside it, as for CSV and JSONL,
adds the file's sha256, which the file itself cannot hold.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import polars as pl

MANIFEST_KEY = "answer_review.manifest"
_TYPED = {
    "row": pl.Int64,  # the row's number as the pages show it (issue 37)
    "exact_correct": pl.Boolean,
    "overlap_correct": pl.Boolean,
    "matching_words": pl.Int64,
    "total_golden_words": pl.Int64,
}


def table_parquet_bytes(table: pl.DataFrame, manifest: Mapping[str, object] | None = None) -> bytes:
    """An export table (:func:`scoring.verdict_export.export_table`) as Parquet (zstd), ``manifest`` as
    JSON in its key-value metadata."""
    columns = [
        pl.col(name).cast(_TYPED[name]) if name in _TYPED else pl.col(name).cast(pl.String).fill_null("")
        for name in table.columns
    ]
    buffer = io.BytesIO()
    metadata = {MANIFEST_KEY: json.dumps(manifest, ensure_ascii=False)} if manifest is not None else None
    table.select(columns).write_parquet(buffer, compression="zstd", metadata=metadata)
    return buffer.getvalue()


def parquet_manifest(data: bytes) -> dict | None:
    """The manifest stored in a Parquet export, None when the file has none (or it is not JSON)."""
    text = pl.read_parquet_metadata(data).get(MANIFEST_KEY)
    if text is None:
        return None
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None

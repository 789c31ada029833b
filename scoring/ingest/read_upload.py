"""An upload's bytes read as a run's input: its columns, and, for an uploaded export, the human
verdicts to restore and the review seed it was exported with (:mod:`scoring.core.export_order`).
Nothing here touches the database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from scoring.core.export_format import EXPORT_COLUMNS
from scoring.core.export_order import exported_seed
from scoring.core.export_parquet import parquet_manifest
from scoring.core.export_read_back import exported_model, split_exported
from scoring.core.loader import load_bytes
from scoring.core.row_language import LANGUAGE
from scoring.store import ROW_COLUMNS

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ReadUpload:
    """A parsed upload, ready to score and store."""

    table: pl.DataFrame  #: the input columns, all text (an export's derived columns removed)
    extra_columns: list[str]  #: the table's columns beyond :data:`scoring.store.ROW_COLUMNS`
    #: an uploaded export's derived columns (its verdicts, adjudications, skips), else None
    exported: pd.DataFrame | None = None
    seed: int | None = None  #: the review seed the export names (None: not an export, or none named)
    model: str | None = None  #: the model a harness's log names (None for plain tables)
    warnings: list[str] = field(default_factory=list)
    #: the file's own field names and the column mapping applied (canonical name -> field)
    source_fields: list[str] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)
    #: where its ``language`` column came from (``column:<field>``, ``metadata``), None without one
    language_from: str | None = None
    #: ``csv``, ``tsv``, ``jsonl``, ``json``, ``parquet`` or a harness's name (:data:`scoring.core.harness.KINDS`)
    format: str = "csv"


def read_upload(
    data: bytes,
    filename: str,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
) -> ReadUpload:
    """Parse ``data`` (:func:`scoring.core.loader.load_bytes`; ``columns``: the column mapping,
    ``companions``: files uploaded with it). Raises :class:`scoring.core.errors.InputError` for
    bad input (:class:`scoring.core.loader.MissingColumns` when required fields are not found)."""
    loaded = load_bytes(data, filename, columns, companions)
    table, exported, seed = loaded.table, None, None
    if set(EXPORT_COLUMNS) <= set(table.columns):
        # An uploaded export: its derived columns are not input, its human verdicts are restored,
        # and the run gets the export's review seed, so its review order is the original's.
        frame, exported = split_exported(loaded.frame, neutralised=loaded.format in ("csv", "tsv"))
        table = pl.DataFrame({str(c): pl.Series(frame[c].tolist(), dtype=pl.String) for c in frame.columns})
        seed = exported_seed(exported, parquet_manifest(data) if loaded.format == "parquet" else None)
    extra_columns = [c for c in table.columns if c not in ROW_COLUMNS and c != LANGUAGE]
    return ReadUpload(
        table,
        extra_columns,
        exported,
        seed,
        loaded.model or exported_model(exported),  # a restored export keeps its model's name
        loaded.warnings,
        loaded.source_fields,
        loaded.columns,
        loaded.language_from if LANGUAGE in table.columns else None,
        loaded.format,
    )

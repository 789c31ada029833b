"""Export of adjudicated verdicts: every row of a run with its metrics, human, judge and final
verdicts (:func:`build_export`), its manifest, and the judge labels it may carry. The file format
and reading an export back live in :mod:`scoring.core.export_format`; restoring its verdicts in
:mod:`scoring.store.restore`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import polars as pl
from sqlalchemy import Engine

import scoring
from scoring import review
from scoring.core.errors import InputError
from scoring.core.export_format import (
    ADJUDICATION_EXPORT,
    DERIVED_COLUMNS,
    EXPORT_COLUMNS,
    JUDGE_COLUMN,
    LEAD_COLUMNS,
    MODEL_COLUMN,
    ORDER_COLUMNS,
    PROTOCOLS,
    ROW_COLUMN,
    TIME_FORMAT,
    VERDICTS_COLUMN,
    VERDICTS_FORMAT,
    neutralise,
    table_csv_bytes,
    to_csv_bytes,
    to_jsonl_bytes,
    unneutralise,
    verdict_lists,
    verdicts_text,
)
from scoring.core.export_order import ORDER_FORMAT, SEED_COLUMN, SKIPS_COLUMN, skips_text
from scoring.core.export_parquet import MANIFEST_KEY, parquet_manifest, table_parquet_bytes
from scoring.core.export_read_back import split_exported
from scoring.review.verdict_table import VerdictTable, build, verdict_table
from scoring.store import (
    ROW_COLUMNS,
    RunInfo,
    get_run,
    judge_cache,
    judge_choice,
    load_table,
)
from scoring.store.judge_choice import RunLabels
from scoring.store.restore import restore_verdicts
from scoring.store.run_table import EXTRA_PREFIX, LANGUAGE_COLUMN

#: The columns :func:`scoring.review.final_verdicts` adds that the export carries.
FINAL_COLUMNS = ["human_verdict", "reviewers", "reason", "note", "final_verdict", "final_source", "reviewed_at"]
#: From this many rows the Export page prepares the file first, showing its phases, then offers
#: the download (a million rows take seconds to build; a silent button gets clicked again).
PREPARE_ROWS = 100_000

#: The export's public names, wherever they are implemented (pages and tests use ``export.X``).
__all__ = [
    "DERIVED_COLUMNS",
    "EXPORT_COLUMNS",
    "JUDGE_COLUMN",
    "MANIFEST_KEY",
    "PREPARE_ROWS",
    "SEED_COLUMN",
    "SKIPS_COLUMN",
    "VERDICTS_COLUMN",
    "FORMATS",
    "ExportFile",
    "build_export",
    "export_file",
    "export_table",
    "manifest",
    "neutralise",
    "parquet_export",
    "parquet_manifest",
    "restore_verdicts",
    "split_exported",
    "stored_judge_labels",
    "stored_run_labels",
    "table_csv_bytes",
    "table_parquet_bytes",
    "to_csv_bytes",
    "to_jsonl_bytes",
    "unneutralise",
]


def _input_names(extras: list[str], added: set[str]) -> dict[str, str]:
    """Rename input extras that collide with export columns (``note`` -> ``note_input``), the
    row's ``language`` included (``Language`` too: a re-upload reads either as the language)."""
    taken = set(ROW_COLUMNS) | {LANGUAGE_COLUMN} | set(extras) | added
    renames: dict[str, str] = {}
    for col in extras:
        if col in added or col.strip().lower() == LANGUAGE_COLUMN:
            new = f"{col}_input"
            while new in taken:
                new += "_"
            taken.add(new)
            renames[col] = new
    return renames


def _added_columns(with_judge: bool) -> list[str]:
    """The export's columns after the input's, in order."""
    return [
        *EXPORT_COLUMNS,
        VERDICTS_COLUMN,
        *ORDER_COLUMNS,
        *ADJUDICATION_EXPORT,
        *([JUDGE_COLUMN] if with_judge else []),
    ]


def _require_run(engine: Engine, run_id: int) -> RunInfo:
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    return info


def _extra_source(columns: Iterable[str], name: str) -> str:
    """The stored column holding input column ``name`` (``extra:<name>`` when the name is taken
    by a stored column such as ``bucket``; see :func:`scoring.store.load_table`)."""
    prefixed = f"{EXTRA_PREFIX}{name}"
    return prefixed if prefixed in set(columns) else name


def build_export(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """:func:`export_table` as pandas with typed cells, for the JSON-lines file and Python
    callers: booleans and integers as such, the run's seed as an integer, and every reviewer's
    own verdict in :data:`VERDICTS_COLUMN` as lists of dicts (not JSON text).

    The same table, not a second build: the rows and cells are :func:`export_table`'s.
    """
    table, verdicts = _export(engine, run_id, judge_labels, judge_settles, progress)
    out = table.to_pandas()
    out[SEED_COLUMN] = verdicts.info.review_seed
    keys = verdicts.rows["item_key"].to_pandas()
    out[VERDICTS_COLUMN] = verdict_lists(verdicts.current, keys, verdicts.served)
    return out


def _skips(engine: Engine, run_id: int) -> dict[str, str]:
    """Item key -> its :data:`SKIPS_COLUMN` cell, for the few rows the queue served that nobody
    holds a verdict on (every other row's cell is empty)."""
    return {key: skips_text(names) for key, names in review.served_unmarked(engine, run_id).items()}


def export_table(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> pl.DataFrame:
    """Every row of a run in input order, as text columns for the CSV and Parquet files: the row's
    number as the pages show it and the run's model (:data:`LEAD_COLUMNS`), input columns, both
    metrics, human and final verdicts (the run's verdict table,
    :mod:`scoring.review.verdict_table`), every reviewer's own verdict in :data:`VERDICTS_COLUMN`
    (JSON text), and the review order: the run's seed and the rows its queue served without a
    verdict (:mod:`scoring.core.export_order`). With ``judge_labels`` (the run's,
    :func:`stored_run_labels`) the judge label is a column, and ``judge_settles`` lets it settle
    overlap_only rows.

    An input column named like an export column is kept under ``<name>_input``.
    Raises :class:`InputError` when the run does not exist. ``progress(phase, done, total)``
    hears "loading" and "verdicts" (the page's status for a large run).
    """
    return _export(engine, run_id, judge_labels, judge_settles, progress)[0]


def _verdict_table(
    engine: Engine, run_id: int, judge_labels: Mapping[str, str] | None, judge_settles: bool
) -> VerdictTable:
    """The run's verdict table for an export: the kept one when the labels are the run's own
    (without labels no judge label settles a row, so any table's verdicts hold)."""
    if judge_labels is None:
        return verdict_table(engine, run_id)
    table = verdict_table(engine, run_id, judge_settles)
    return table if table.labels.labels == dict(judge_labels) else build(engine, run_id, judge_labels, judge_settles)


def _export(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None,
    judge_settles: bool,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[pl.DataFrame, VerdictTable]:
    report = progress or (lambda phase, done, total: None)
    info = _require_run(engine, run_id)
    report("loading", 0, info.n_rows)
    verdicts = _verdict_table(engine, run_id, judge_labels, judge_settles)
    table = verdicts.rows
    report("verdicts", 0, table.height)
    with_judge = judge_labels is not None
    derived = [*FINAL_COLUMNS, *ADJUDICATION_EXPORT, *([JUDGE_COLUMN] if with_judge else [])]
    out = verdicts.verdicts.with_columns(pl.col("reviewed_at").dt.strftime(TIME_FORMAT).fill_null("")).select(derived)
    keys = table["item_key"]
    lists = pl.Series(VERDICTS_COLUMN, [""] * table.height, dtype=pl.String)
    if not verdicts.current.empty:  # the reviewed rows' own verdicts (a few of a large run)
        where = keys.is_in(pl.Series(verdicts.current["item_key"].astype(str).tolist(), dtype=pl.String).implode())
        where = where.arg_true()
        part = keys.gather(where).to_pandas()
        texts = verdict_lists(verdicts.current, part, verdicts.served).map(verdicts_text)
        lists = lists.scatter(where, pl.Series(texts.astype(str).tolist(), dtype=pl.String))
    skips = keys.replace_strict(_skips(engine, run_id), default="", return_dtype=pl.String)
    out = out.with_columns(lists, pl.lit(str(info.review_seed)).alias(SEED_COLUMN), skips.alias(SKIPS_COLUMN))
    added = _added_columns(with_judge)
    extras = list(info.extra_columns)
    renames = _input_names(extras, {*added, *LEAD_COLUMNS})
    lead = pl.DataFrame(
        {
            ROW_COLUMN: (table["row_idx"].cast(pl.Int64) + 1)
            if "row_idx" in table.columns
            else pl.int_range(1, table.height + 1, dtype=pl.Int64, eager=True),
            MODEL_COLUMN: pl.repeat(info.model, table.height, dtype=pl.String, eager=True),
        }
    )
    inputs = table.select(
        *ROW_COLUMNS[:3],
        LANGUAGE_COLUMN,
        *ROW_COLUMNS[3:],
        *(pl.col(_extra_source(table.columns, name)).alias(renames.get(name, name)) for name in extras),
    )
    metrics = table.select("exact_correct", "overlap_correct", "matching_words", "total_golden_words", "bucket")
    frame = pl.concat([lead, inputs, metrics, out], how="horizontal")
    return frame.select(*LEAD_COLUMNS, *inputs.columns, *added), verdicts


def manifest(
    engine: Engine,
    run_id: int,
    frame: pd.DataFrame | pl.DataFrame,
    data: bytes | None = None,
    judge_settles: bool = False,
    judge_config: str | None = None,
) -> dict:
    """What an export contains and how it was made; ``data`` (the exported bytes) adds its sha256;
    ``judge_config`` (:attr:`~scoring.store.judge_choice.RunLabels.name`) names whose judge labels
    the file carries (``judge_configuration``, only when it carries them). ``review_guidelines``:
    what the reviewers were told (text, who wrote it, when), null when the run has none; every
    export (the CLI's and the page's) builds its manifest here."""
    info = _require_run(engine, run_id)

    def counts(col: str, labels: tuple[str, ...]) -> dict[str, int]:
        if col not in frame.columns:
            return dict.fromkeys(labels, 0)
        found = (
            dict(frame[col].value_counts().iter_rows())
            if isinstance(frame, pl.DataFrame)
            else (frame[col].value_counts().to_dict())
        )
        return {label: int(found.get(label, 0)) for label in labels}

    result = {
        "tool": "answer-review scoring",
        "tool_version": scoring.__version__,
        "exported_at": datetime.now(UTC).strftime(TIME_FORMAT),
        "run": {
            "id": info.id,
            "name": info.name,
            "model": info.model,
            "language": info.language,
            "filename": info.filename,
            "sha256": info.sha256,
            "n_rows": info.n_rows,
            "uploaded_at": info.uploaded_at.strftime(TIME_FORMAT) if info.uploaded_at else "",
            "review_seed": info.review_seed,
        },
        "rows": len(frame),
        "columns": [str(c) for c in frame.columns],
        "protocols": PROTOCOLS,
        "judge_labels": JUDGE_COLUMN in frame.columns,
        "judge_settles": bool(judge_settles),
        **({"judge_configuration": judge_config} if judge_config and JUDGE_COLUMN in frame.columns else {}),
        "review_guidelines": review.guidelines.manifest_entry(engine, run_id),
        "counts": {
            "final_source": counts("final_source", review.FINAL_SOURCES),
            "final_verdict": counts("final_verdict", review.FINAL_VERDICTS),
            "human_verdict": counts("human_verdict", (*review.VERDICTS, review.CONFLICT)),
        },
    }
    if VERDICTS_COLUMN in frame.columns:
        result["human_verdicts"] = VERDICTS_FORMAT
    if SEED_COLUMN in frame.columns:
        result["review_order"] = ORDER_FORMAT
    if data is not None:
        result["export_sha256"] = hashlib.sha256(data).hexdigest()
    return result


def parquet_export(
    engine: Engine, run_id: int, table: pl.DataFrame, judge_settles: bool = False, judge_config: str | None = None
) -> tuple[bytes, dict]:
    """An export table (:func:`export_table`) as a Parquet file and its manifest.

    The file holds the manifest (``format`` "parquet") in its key-value metadata
    (:data:`MANIFEST_KEY`); the manifest returned, for the ``.manifest.json`` beside the file, is
    the same with the file's sha256 added (a file cannot hold its own hash).
    """
    info = {
        **manifest(engine, run_id, table, judge_settles=judge_settles, judge_config=judge_config),
        "format": "parquet",
    }
    data = table_parquet_bytes(table, info)
    return data, {**info, "export_sha256": hashlib.sha256(data).hexdigest()}


def stored_judge_labels(engine: Engine, run_id: int, item_keys: Iterable[str] | None = None) -> dict[str, str]:
    """The judge label of each item of a run under the one rule (:func:`stored_run_labels`)."""
    return stored_run_labels(engine, run_id, item_keys).labels


def stored_run_labels(engine: Engine, run_id: int, item_keys: Iterable[str] | None = None) -> RunLabels:
    """A run's judge labels and whose they are, under the one rule every reader uses
    (:func:`scoring.store.judge_choice.run_labels`): the configuration chosen for the run, else
    the latest label of each row until one is chosen.

    ``item_keys``: the run's keys when the caller has them (else the run's rows are read). An
    empty judge cache answers at once: reading 100,000 rows' keys to find no label cost 0.8 s.
    """
    _require_run(engine, run_id)
    if judge_cache.revision(engine) == 0:
        return RunLabels({}, judge_choice.get_choice(engine, run_id))
    keys = item_keys if item_keys is not None else load_table(engine, run_id)["item_key"]
    # Read from the judge cache directly: importing scoring.judge would load the OpenAI SDK, a
    # second of start-up for every `python -m scoring export`.
    return judge_choice.run_labels(engine, run_id, keys)


#: The formats :func:`export_file` writes.
FORMATS = ("csv", "jsonl", "parquet")


@dataclass(frozen=True)
class ExportFile:
    """One export as written: the file's bytes, its manifest (``format`` and ``export_sha256``
    included) and how many rows it holds."""

    data: bytes
    manifest: dict
    rows: int


def export_file(
    engine: Engine,
    run_id: int,
    fmt: str = "csv",
    judge: bool = False,
    judge_settles: bool = False,
    bom: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> ExportFile:
    """The file the Export page offers and ``python -m scoring export`` writes, with its manifest:
    one place picks the writer. ``judge`` adds the run's judge labels (the one rule; the
    manifest names whose), ``judge_settles`` lets them settle overlap_only rows (and implies
    ``judge``); ``bom`` starts a CSV with a UTF-8 BOM. ``progress`` hears "loading", "verdicts"
    and "writing"."""
    if fmt not in FORMATS:
        raise InputError(f"Unknown export format {fmt!r}: one of {', '.join(FORMATS)}.")
    report = progress or (lambda phase, done, total: None)
    found = verdict_table(engine, run_id, judge_settles).labels if judge or judge_settles else None
    labels, config = (found.labels, found.name) if found is not None else (None, None)
    if fmt == "jsonl":  # lists of verdicts as JSON arrays: the pandas shape of the same table
        frame: pd.DataFrame | pl.DataFrame = build_export(engine, run_id, labels, judge_settles, report)
    else:  # polars all the way: a million rows in a few seconds
        frame = export_table(engine, run_id, labels, judge_settles, report)
    report("writing", 0, len(frame))
    if fmt == "parquet":
        data, info = parquet_export(engine, run_id, frame, judge_settles=judge_settles, judge_config=config)
    else:
        data = table_csv_bytes(frame, bom=bom) if fmt == "csv" else to_jsonl_bytes(frame)
        info = {
            **manifest(engine, run_id, frame, data=data, judge_settles=judge_settles, judge_config=config),
            "format": fmt,
        }
    report("writing", len(frame), len(frame))
    return ExportFile(data, info, len(frame))

"""The export's file format, pure: its columns, CSV/JSONL bytes with spreadsheet formula
neutralisation (reading an uploaded export back is :mod:`scoring.core.export_read_back`).

An exported CSV is also a valid responses file: uploading it stores its input columns as a run
and restores its human verdicts, so review work can move between machines. Every reviewer's
current verdict travels in one JSON column (:data:`VERDICTS_COLUMN`), because the one-line human
summary cannot carry a conflict back. Formula neutralisation (a leading ``'``) is reversible and
undone on the way back in; the JSON cell always starts with ``[`` so it is never touched by it.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Collection
from datetime import datetime

import numpy as np
import pandas as pd
import polars as pl

from scoring.core import verdict_rules as review
from scoring.core.export_order import SEED_COLUMN, SKIPS_COLUMN

EXPORT_COLUMNS = [
    "exact_correct",
    "overlap_correct",
    "matching_words",
    "total_golden_words",
    "bucket",
    "human_verdict",
    "reviewers",
    "reason",
    "note",
    "final_verdict",
    "final_source",
    "reviewed_at",
]
#: Every reviewer's current verdict on the row: a JSON list of objects with :data:`VERDICT_FIELDS`
#: (JSON text in CSV, empty when nobody reviewed the row; a JSON array in JSONL). Not part of
#: :data:`EXPORT_COLUMNS`, which tell an export from an input file, so older exports still count.
VERDICTS_COLUMN = "human_verdicts"
VERDICT_FIELDS = ("reviewer", "verdict", "reason", "note", "reviewed_at")
#: Optional field of each verdict: how the row reached its reviewers (``queue`` or ``opened``).
VIA_FIELD = "via"
VIA_VALUES = ("queue", "opened")
JUDGE_COLUMN = "judge_label"
#: An adjudicator's decision where reviewers disagreed (empty elsewhere); like VERDICTS_COLUMN,
#: not part of EXPORT_COLUMNS, so exports made before adjudication existed are still recognised.
ADJUDICATION_EXPORT = list(review.ADJUDICATION_COLUMNS)
#: The review order's columns (:mod:`scoring.core.export_order`) are derived too, and not required either.
ORDER_COLUMNS = [SEED_COLUMN, SKIPS_COLUMN]
#: The columns an export starts with (issue 37): the row's number as the pages show it ("Row 3 of
#: the run", the queue's ``?row=3``: 1 is the first row after the file's header) and the run's
#: model, so a verdict in the file names both. Derived too (an upload of the export stores neither
#: as input; the model names the restored run's), and not required: older exports still count.
ROW_COLUMN, MODEL_COLUMN = "row", "model"
LEAD_COLUMNS = [ROW_COLUMN, MODEL_COLUMN]
DERIVED_COLUMNS = frozenset(
    [*LEAD_COLUMNS, *EXPORT_COLUMNS, VERDICTS_COLUMN, *ORDER_COLUMNS, *ADJUDICATION_EXPORT, JUDGE_COLUMN]
)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
#: Times inside :data:`VERDICTS_COLUMN` keep their microseconds, so a restored mark has exactly
#: the time it was made and the round trip is lossless.
PRECISE_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
#: A cell a spreadsheet could run as a formula, also when a previous ``'`` precedes it, so that
#: neutralising (one more ``'``) and restoring (one ``'`` less) are exact inverses.
_FORMULA = re.compile(r"^'*[=+\-@\t\r]")
_NEUTRALISED = re.compile(r"^'+[=+\-@\t\r]")
PROTOCOLS = {
    "exact_substring": "is_correct = answer.lower() in response.lower(); lowercasing is the only "
    "normalisation; a blank response scores incorrect.",
    "word_overlap": "Both sides lowercased, split on whitespace, leading/trailing punctuation stripped "
    "(ASCII and Unicode P*), compared as sets: is_correct = set(golden_words) <= set(response_words); "
    "a blank response scores incorrect.",
    "bucket": "both_pass, both_fail, exact_only (exact passes, overlap fails), overlap_only (the reverse).",
    "final_verdict": "The human verdict when the reviewers agree (final_source human); reviewers in "
    "conflict: pending. Otherwise the automatic rule (final_source auto): both_pass correct, both_fail "
    "wrong, exact_only correct, overlap_only pending (final_source pending); with judge_settles, a judge "
    "label CORRECT/INCORRECT on a pending overlap_only row decides it (final_source judge).",
    "csv_neutralisation": "CSV cells that begin with =, +, -, @, tab or carriage return (optionally "
    "after leading apostrophes) get one extra leading apostrophe; uploading the CSV removes it again. "
    "JSONL keeps the raw text.",
}
#: The manifest's description of :data:`VERDICTS_COLUMN` (what a re-upload relies on).
VERDICTS_FORMAT = {
    "column": VERDICTS_COLUMN,
    "version": 1,
    "fields": list(VERDICT_FIELDS),
    "encoding": "A JSON list with one object per reviewer holding a current verdict on the row, sorted by "
    "reviewer: verdict correct or wrong, reason one of the fixed reasons or empty, note text, reviewed_at "
    "UTC ISO 8601 with microseconds; via (optional) queue when the review queue served the row in this run, "
    "opened when it was opened on purpose (only queue rows extend the estimate's random sample). CSV: the list "
    "as JSON text, an empty cell when nobody reviewed the "
    "row (the cell starts with '[' and is never neutralised). JSONL: a JSON array.",
    "summary_columns": "human_verdict, reviewers, reason, note and reviewed_at summarise this list in one "
    "line per row (conflict when reviewers disagree); uploading a file with this column restores this "
    "column, and refuses a row whose human_verdict or reviewers disagree with it.",
    "restore": "Uploading the CSV records each listed verdict unless that reviewer's current verdict on the "
    "item already has the same verdict, reason and note, or is newer than the listed one; so uploading "
    "the same export again, or into the database it came from, records nothing. Nothing is undone.",
}


def format_time(values: pd.Series) -> pd.Series:
    stamps = pd.to_datetime(values, utc=True)
    return stamps.dt.strftime(TIME_FORMAT).fillna("").astype(object)


def verdict_lists(current: pd.DataFrame, keys: pd.Series, served: Collection[str] | None = None) -> pd.Series:
    """Each row's reviewers' current verdicts, as lists of dicts (sorted by reviewer), for the export.

    With ``served`` (the items the run's queue served), each verdict also says ``via``: ``queue`` or
    ``opened``, so an export restored elsewhere keeps the estimate's random sample (see
    :mod:`scoring.estimate.sample`)."""
    by_key: dict[str, list[dict]] = {}
    if not current.empty:
        cur = current.sort_values(["item_key", "reviewer"], kind="stable")
        times = pd.to_datetime(cur["reviewed_at"], utc=True).dt.strftime(PRECISE_TIME_FORMAT)
        for key, reviewer, verdict, reason, note, when in zip(
            cur["item_key"],
            cur["reviewer"],
            cur["verdict"],
            cur["reason"].fillna(""),
            cur["note"].fillna(""),
            times.where(times.notna(), ""),
        ):
            values = (str(reviewer), str(verdict), str(reason), str(note), str(when))
            entry = dict(zip(VERDICT_FIELDS, values))
            if served is not None:
                entry[VIA_FIELD] = "queue" if str(key) in served else "opened"
            by_key.setdefault(str(key), []).append(entry)
    # Most rows of a large run have no verdict: those share one empty list (never mutated),
    # and only the reviewed rows get lists of their own, found by position.
    lists = np.empty(len(keys), dtype=object)
    lists.fill([])
    if by_key:
        values = keys.to_numpy(dtype=object)
        for pos in np.flatnonzero(review.isin(keys, list(by_key))):
            lists[pos] = [dict(d) for d in by_key[str(values[pos])]]
    return pd.Series(lists, index=keys.index, dtype=object)


def verdicts_text(value: object) -> str:
    """A :data:`VERDICTS_COLUMN` cell as CSV text: compact JSON, "" for nobody."""
    if isinstance(value, list | tuple):
        return json.dumps(list(value), ensure_ascii=False, separators=(",", ":")) if value else ""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _cell_text(values: pd.Series) -> pd.Series:
    """Text of a column as written to CSV: True/False, integers, JSON for the verdict lists, "" for missing."""
    if pd.api.types.is_bool_dtype(values):
        return values.map({True: "True", False: "False"}).astype(object)
    if str(values.name) == VERDICTS_COLUMN:
        return values.map(verdicts_text).astype(object)
    return values.astype(object).where(values.notna(), "").map(str)


def neutralise(values: pd.Series) -> pd.Series:
    """Prefix ``'`` to cells a spreadsheet would run as formulas (see :data:`PROTOCOLS`)."""
    text = values.astype(object).map(str)
    hit = text.str.match(_FORMULA).fillna(False).to_numpy(dtype=bool)
    return pd.Series(np.where(hit, "'" + text, text), index=values.index, dtype=object)


def unneutralise(values: pd.Series) -> pd.Series:
    """Remove the ``'`` that :func:`neutralise` added; other cells are left as they are."""
    text = values.astype(object).map(str)
    hit = text.str.match(_NEUTRALISED).fillna(False).to_numpy(dtype=bool)
    return pd.Series(np.where(hit, text.str.slice(1), text), index=values.index, dtype=object)


def _neutralise_name(name: str) -> str:
    return "'" + name if _FORMULA.match(name) else name


def unneutralise_name(name: str) -> str:
    return name[1:] if _NEUTRALISED.match(name) else name


def _csv_column(values: pd.Series) -> pl.Series:
    """A column as the text :func:`_cell_text` gives, as polars; Arrow-backed text is not copied
    through Python objects, and the verdict lists are turned to JSON only where not empty."""
    if str(values.name) == VERDICTS_COLUMN:
        texts = np.full(len(values), "", dtype=object)
        cells = values.to_numpy(dtype=object)
        for pos in np.flatnonzero(np.fromiter(map(bool, cells), dtype=bool, count=len(cells))):
            texts[pos] = verdicts_text(cells[pos])
        return pl.Series(texts.tolist(), dtype=pl.String)
    try:
        column = pl.from_pandas(values.reset_index(drop=True))
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        column = pl.Series(_cell_text(values).tolist(), dtype=pl.String)
    if column.dtype == pl.Boolean:
        return column.replace_strict({True: "True", False: "False"}, return_dtype=pl.String).fill_null("")
    if column.dtype == pl.String:
        return column.fill_null("")
    if column.dtype.is_numeric() and not column.dtype.is_float():
        return column.cast(pl.String).fill_null("")
    return pl.Series(_cell_text(values).tolist(), dtype=pl.String)


def to_csv_bytes(frame: pd.DataFrame, bom: bool = False) -> bytes:
    """UTF-8 CSV (CRLF rows, minimal quoting) with formula-like cells neutralised."""
    columns = [_csv_column(frame.iloc[:, i]).alias(str(name)) for i, name in enumerate(frame.columns)]
    return table_csv_bytes(pl.DataFrame(columns), bom)


def table_csv_bytes(table: pl.DataFrame, bom: bool = False) -> bytes:
    """:func:`to_csv_bytes` of a polars table: headers and cells neutralised the same way.

    Written by polars (a million rows in about a second; pandas took over ten): the bytes are
    those pandas' ``to_csv`` wrote, an empty cell unquoted, booleans ``True``/``False``.
    """
    table = table.rename({name: _neutralise_name(name) for name in table.columns})
    text = [
        pl.when(pl.col(n)).then(pl.lit("True")).otherwise(pl.lit("False")).alias(n)
        if dtype == pl.Boolean
        else pl.col(n).cast(pl.String).fill_null("").alias(n)
        for n, dtype in table.schema.items()
    ]
    cells = [
        pl.when(pl.col(name) == "")
        .then(None)
        .when(_formula_like(pl.col(name)))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name in table.columns
    ]
    buffer = io.BytesIO()
    if bom:
        buffer.write(codecs.BOM_UTF8)
    table.select(text).select(cells).write_csv(buffer, quote_style="necessary", line_terminator="\r\n")
    return buffer.getvalue()


def _formula_like(text: pl.Expr) -> pl.Expr:
    """:data:`_FORMULA` in polars: the first character decides, except after a leading quote."""
    first = text.str.slice(0, 1)
    return first.is_in(list("=+-@\t\r")) | ((first == "'") & text.str.contains(_FORMULA.pattern))


def _json_value(value: object) -> object:
    if isinstance(value, list | tuple | dict):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, pd.Timestamp | datetime):
        return value.strftime(TIME_FORMAT)
    return value


def to_jsonl_bytes(frame: pd.DataFrame) -> bytes:
    """One JSON object per row, raw text (no neutralisation), UTF-8 without escaping."""
    columns = [str(c) for c in frame.columns]
    lines = [
        json.dumps(dict(zip(columns, (_json_value(v) for v in row))), ensure_ascii=False)
        for row in frame.itertuples(index=False, name=None)
    ]
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""

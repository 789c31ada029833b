"""Export of adjudicated verdicts (CSV, JSONL, manifest) and the round trip back into a database.

An exported CSV is also a valid responses file: uploading it stores its input columns as a run
and restores its human verdicts, so review work can move between machines. Every reviewer's
current verdict travels in one JSON column (:data:`VERDICTS_COLUMN`), because the one-line human
summary cannot carry a conflict back. Spreadsheet formula neutralisation (a leading ``'``) is
reversible and undone on the way back in; the JSON cell always starts with ``[`` so it is never
touched by it.
"""

from __future__ import annotations

import argparse
import codecs
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

import scoring
from scoring import verdicts
from scoring.cli import fail, guarded, register
from scoring.db import database_url, make_engine
from scoring.errors import InputError
from scoring.judge import stored_labels
from scoring.store import ROW_COLUMNS, get_run, load_scored

EXPORT_COLUMNS = [
    "exact_correct", "overlap_correct", "matching_words", "total_golden_words", "bucket",
    "human_verdict", "reviewers", "reason", "note", "final_verdict", "final_source", "reviewed_at",
]  # fmt: skip
#: Every reviewer's current verdict on the row: a JSON list of objects with :data:`VERDICT_FIELDS`
#: (JSON text in CSV, empty when nobody reviewed the row; a JSON array in JSONL). Not part of
#: :data:`EXPORT_COLUMNS`, which tell an export from an input file, so older exports still count.
VERDICTS_COLUMN = "human_verdicts"
VERDICT_FIELDS = ("reviewer", "verdict", "reason", "note", "reviewed_at")
JUDGE_COLUMN = "judge_label"
DERIVED_COLUMNS = frozenset([*EXPORT_COLUMNS, VERDICTS_COLUMN, JUDGE_COLUMN])
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
    "UTC ISO 8601 with microseconds. CSV: the list as JSON text, an empty cell when nobody reviewed the "
    "row (the cell starts with '[' and is never neutralised). JSONL: a JSON array.",
    "summary_columns": "human_verdict, reviewers, reason, note and reviewed_at summarise this list in one "
    "line per row (conflict when reviewers disagree); uploading a file with this column restores this "
    "column, and refuses a row whose human_verdict or reviewers disagree with it.",
    "restore": "Uploading the CSV records each listed verdict unless that reviewer's current verdict on the "
    "item already has the same verdict, reason and note, or is newer than the listed one; so uploading "
    "the same export again, or into the database it came from, records nothing. Nothing is undone.",
}


# --------------------------------------------------------------------------- building


def _format_time(values: pd.Series) -> pd.Series:
    stamps = pd.to_datetime(values, utc=True)
    return stamps.dt.strftime(TIME_FORMAT).fillna("").astype(object)


def _input_names(extras: list[str], added: set[str]) -> dict[str, str]:
    """Rename input extras that collide with export columns (``note`` -> ``note_input``)."""
    taken = set(ROW_COLUMNS) | set(extras) | added
    renames: dict[str, str] = {}
    for col in extras:
        if col in added:
            new = f"{col}_input"
            while new in taken:
                new += "_"
            taken.add(new)
            renames[col] = new
    return renames


def _verdict_lists(current: pd.DataFrame, keys: pd.Series) -> pd.Series:
    """Each row's reviewers' current verdicts, as lists of dicts (sorted by reviewer), for the export."""
    by_key: dict[str, list[dict]] = {}
    if not current.empty:
        cur = current.sort_values(["item_key", "reviewer"], kind="stable")
        times = pd.to_datetime(cur["reviewed_at"], utc=True).dt.strftime(PRECISE_TIME_FORMAT)
        for key, reviewer, verdict, reason, note, when in zip(
            cur["item_key"], cur["reviewer"], cur["verdict"], cur["reason"].fillna(""), cur["note"].fillna(""),
            times.where(times.notna(), ""),
        ):  # fmt: skip
            values = (str(reviewer), str(verdict), str(reason), str(note), str(when))
            by_key.setdefault(str(key), []).append(dict(zip(VERDICT_FIELDS, values)))
    lists = [[dict(d) for d in by_key.get(str(k), ())] for k in keys]
    return pd.Series(lists, index=keys.index, dtype=object)


def build_export(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
) -> pd.DataFrame:
    """Every row of a run in input order: input columns, both metrics, human and final verdicts,
    and every reviewer's own verdict in :data:`VERDICTS_COLUMN` (lists of dicts).

    An input column named like an export column is kept under ``<name>_input``.
    Raises :class:`InputError` when the run does not exist.
    """
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    scored = load_scored(engine, run_id)
    current = verdicts.current_verdicts(engine, scored["item_key"])
    final = verdicts.final_verdicts(scored, verdicts.human_summary(current), judge_labels, judge_settles)
    final["reviewed_at"] = _format_time(final["reviewed_at"])
    final[VERDICTS_COLUMN] = _verdict_lists(current, final["item_key"])
    added = [*EXPORT_COLUMNS, VERDICTS_COLUMN, *([JUDGE_COLUMN] if judge_labels is not None else [])]
    extras = list(info.extra_columns)
    renames = _input_names(extras, set(added))
    inputs = scored[[*ROW_COLUMNS, *extras]].rename(columns=renames)  # final's 'note' is the reviewers'
    out = pd.concat([inputs, final[added]], axis=1).reset_index(drop=True)
    for col in ("exact_correct", "overlap_correct"):
        out[col] = out[col].astype(bool)
    for col in ("matching_words", "total_golden_words"):
        out[col] = out[col].astype("int64")
    return out


def _verdicts_text(value: object) -> str:
    """A :data:`VERDICTS_COLUMN` cell as CSV text: compact JSON, "" for nobody."""
    if isinstance(value, list | tuple):
        return json.dumps(list(value), ensure_ascii=False, separators=(",", ":")) if value else ""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _cell_text(values: pd.Series) -> pd.Series:
    """Text of a column as written to CSV: True/False, integers, JSON for the verdict lists, "" for missing."""
    if pd.api.types.is_bool_dtype(values):
        return values.map({True: "True", False: "False"}).astype(object)
    if str(values.name) == VERDICTS_COLUMN:
        return values.map(_verdicts_text).astype(object)
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


def _unneutralise_name(name: str) -> str:
    return name[1:] if _NEUTRALISED.match(name) else name


def to_csv_bytes(frame: pd.DataFrame, bom: bool = False) -> bytes:
    """UTF-8 CSV (CRLF rows, minimal quoting) with formula-like cells neutralised."""
    out = pd.DataFrame({i: neutralise(_cell_text(frame.iloc[:, i])) for i in range(frame.shape[1])})
    out.columns = [_neutralise_name(str(c)) for c in frame.columns]
    data = out.to_csv(index=False, lineterminator="\r\n").encode("utf-8")
    return codecs.BOM_UTF8 + data if bom else data


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


def manifest(
    engine: Engine,
    run_id: int,
    frame: pd.DataFrame,
    data: bytes | None = None,
    judge_settles: bool = False,
) -> dict:
    """What an export contains and how it was made; ``data`` (the exported bytes) adds its sha256."""
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")

    def counts(col: str, labels: tuple[str, ...]) -> dict[str, int]:
        found = frame[col].value_counts() if col in frame.columns else pd.Series(dtype=int)
        return {label: int(found.get(label, 0)) for label in labels}

    result = {
        "tool": "answer-review scoring",
        "tool_version": scoring.__version__,
        "exported_at": datetime.now(UTC).strftime(TIME_FORMAT),
        "run": {
            "id": info.id, "name": info.name, "model": info.model, "language": info.language,
            "filename": info.filename, "sha256": info.sha256, "n_rows": info.n_rows,
            "uploaded_at": info.uploaded_at.strftime(TIME_FORMAT) if info.uploaded_at else "",
        },  # fmt: skip
        "rows": len(frame),
        "columns": [str(c) for c in frame.columns],
        "protocols": PROTOCOLS,
        "judge_labels": JUDGE_COLUMN in frame.columns,
        "judge_settles": bool(judge_settles),
        "counts": {
            "final_source": counts("final_source", verdicts.FINAL_SOURCES),
            "final_verdict": counts("final_verdict", verdicts.FINAL_VERDICTS),
            "human_verdict": counts("human_verdict", (*verdicts.VERDICTS, verdicts.CONFLICT)),
        },
    }
    if VERDICTS_COLUMN in frame.columns:
        result["human_verdicts"] = VERDICTS_FORMAT
    if data is not None:
        result["export_sha256"] = hashlib.sha256(data).hexdigest()
    return result


# --------------------------------------------------------------------------- round trip


class _Mark(NamedTuple):
    """One reviewer's verdict read back from an export."""

    reviewer: str
    verdict: str
    reason: str
    note: str
    reviewed_at: datetime | None


def _parse_time(text: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text)
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _where(pos: int, column: str | None = None) -> str:
    return f"Data row {pos} of the exported file" + (f", column {column!r}" if column else "")


def _short(text: str, limit: int = 60) -> str:
    """A repr of untrusted text short enough for an error message."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _json_kind(value: object) -> str:
    kinds = {dict: "object", list: "list", str: "string", bool: "true/false", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def _parse_verdicts_cell(cell: object, pos: int) -> list[_Mark]:
    """The verdicts in one :data:`VERDICTS_COLUMN` cell (JSON text, or a list from a JSONL record).

    The cell is untrusted text: anything but a list of well-formed verdicts raises
    :class:`InputError` naming the row and the column, never a traceback.
    """
    where = _where(pos, VERDICTS_COLUMN)
    if isinstance(cell, list | tuple):
        items: object = list(cell)
    else:
        text = "" if cell is None or (isinstance(cell, float) and cell != cell) else str(cell)
        if not text.strip():
            return []
        try:
            items = json.loads(text)
        except RecursionError:
            raise InputError(f"{where}: the JSON is nested too deeply to be a list of verdicts.") from None
        except ValueError as exc:  # json.JSONDecodeError, or an integer too long to read
            raise InputError(f"{where}: not valid JSON ({exc}).") from None
    if not isinstance(items, list):
        raise InputError(f"{where}: expected a JSON list of verdicts, found a JSON {_json_kind(items)}.")
    marks: list[_Mark] = []
    for n, item in enumerate(items, start=1):
        at = f"{where}, verdict {n}"
        if not isinstance(item, dict):
            fields = ", ".join(VERDICT_FIELDS)
            raise InputError(f"{at}: expected an object with {fields}, found a JSON {_json_kind(item)}.")
        values: dict[str, str] = {}
        for field in VERDICT_FIELDS:
            value = item.get(field)
            if value is not None and not isinstance(value, str):
                raise InputError(f"{at}: {field} must be text, found a JSON {_json_kind(value)}.")
            values[field] = value or ""
        try:
            name = verdicts.check_reviewer(values["reviewer"])
            verdict = verdicts.check_verdict(values["verdict"])
            reason = verdicts.check_reason(values["reason"])
        except ValueError as exc:
            raise InputError(f"{at}: {exc}") from None
        when = _parse_time(values["reviewed_at"])
        if when is None and values["reviewed_at"].strip():
            raise InputError(f"{at}: reviewed_at {_short(values['reviewed_at'])} is not an ISO 8601 time.")
        if any(m.reviewer == name for m in marks):
            raise InputError(f"{at}: reviewer {_short(name)} is listed twice.")
        marks.append(_Mark(name, verdict, reason, values["note"].strip(), when))
    return marks


def _summary_marks(verdict_cell: object, names_cell: object, reason: object, note: object, when: object,
                   pos: int) -> Sequence[_Mark]:  # fmt: skip
    """The verdicts of an export without :data:`VERDICTS_COLUMN`, read from its summary columns.

    A ``conflict`` row names its reviewers but not who said what, so it yields nothing.
    """
    verdict = str(verdict_cell).strip().lower()
    if verdict not in verdicts.VERDICTS:
        if verdict in ("", verdicts.CONFLICT):
            return ()
        raise InputError(f"{_where(pos)}: human_verdict {verdict!r} is not one of correct, wrong, conflict or empty.")
    names = [n.strip() for n in str(names_cell).split(";") if n.strip()]
    if not names:
        raise InputError(f"{_where(pos)}: human_verdict is {verdict!r} but no reviewer is named in 'reviewers'.")
    try:
        names = [verdicts.check_reviewer(name) for name in names]
        reasons = verdicts.split_per_reviewer(str(reason), names)
        notes = verdicts.split_per_reviewer(str(note), names)
        stamp = _parse_time(str(when))
        return [_Mark(n, verdict, verdicts.check_reason(reasons[n]), notes[n].strip(), stamp) for n in names]
    except ValueError as exc:
        raise InputError(f"{_where(pos)}: {exc}") from None


def _exported_marks(exported: pd.DataFrame) -> list[Sequence[_Mark]]:
    """Per row, the verdicts an upload restores: :data:`VERDICTS_COLUMN` when the file has it,
    else (older exports) the summary columns."""
    if VERDICTS_COLUMN in exported.columns:
        # Most rows of a large run are unreviewed: their empty cells skip the parser.
        return [
            () if cell == "" else _parse_verdicts_cell(cell, pos)
            for pos, cell in enumerate(exported[VERDICTS_COLUMN].tolist(), start=1)
        ]
    return [
        _summary_marks(*cells, pos)
        for pos, cells in enumerate(
            zip(*(exported[c].tolist() for c in ("human_verdict", "reviewers", "reason", "note", "reviewed_at"))),
            start=1,
        )
    ]  # fmt: skip


def _check_exported(exported: pd.DataFrame) -> None:
    """Refuse, before anything is stored, verdict cells that could not be restored.

    With :data:`VERDICTS_COLUMN` present it is what is restored; a row whose human_verdict or
    reviewers say otherwise was edited on one side only, and guessing which side is meant would
    silently drop an edit, so it is refused.
    """
    rows = _exported_marks(exported)
    if VERDICTS_COLUMN not in exported.columns:
        return
    for pos, (marks, shown, names_cell) in enumerate(
        zip(rows, exported["human_verdict"].tolist(), exported["reviewers"].tolist()), start=1
    ):
        if not marks and shown == "" and names_cell == "":
            continue
        found = {m.verdict for m in marks}
        expected = "" if not found else next(iter(found)) if len(found) == 1 else verdicts.CONFLICT
        names = {n.strip() for n in str(names_cell).split(";") if n.strip()}
        if str(shown).strip().lower() != expected or names != {m.reviewer for m in marks}:
            listed = "; ".join(f"{m.reviewer}: {m.verdict}" for m in marks) or "no verdict"
            raise InputError(
                f"{_where(pos)}: human_verdict {_short(str(shown))} and reviewers {_short(str(names_cell))} do not "
                f"match column {VERDICTS_COLUMN!r} ({_short(listed, 120)}). Edit both to agree, or delete the "
                f"{VERDICTS_COLUMN!r} column to restore from human_verdict, reviewers, reason and note alone."
            )


def split_exported(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(input columns, export-derived columns or None) of an uploaded table.

    A table is an export when it has every column of :data:`EXPORT_COLUMNS`; then the ``'``
    added by CSV neutralisation is removed from every cell and header, and the verdict cells are
    checked (:class:`InputError` names the first bad row and column). Any other table is returned
    as is.
    """
    if not set(EXPORT_COLUMNS) <= {str(c) for c in frame.columns}:
        return frame, None
    clean = pd.DataFrame({i: unneutralise(frame.iloc[:, i]) for i in range(frame.shape[1])}, index=frame.index)
    clean.columns = [_unneutralise_name(str(c)) for c in frame.columns]
    derived = [c for c in clean.columns if c in DERIVED_COLUMNS]
    inputs = clean[[c for c in clean.columns if c not in DERIVED_COLUMNS]]
    exported = clean[derived].reset_index(drop=True)
    _check_exported(exported)
    return inputs.astype(str), exported


def _as_utc(value: object) -> datetime | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize(UTC) if stamp.tzinfo is None else stamp.tz_convert(UTC)
    return stamp.to_pydatetime()


def restore_verdicts(engine: Engine, run_id: int, scored: pd.DataFrame, exported_part: pd.DataFrame) -> int:
    """Record the exported human verdicts (rows aligned with ``scored``, which needs ``item_key``)
    that the database does not hold yet; returns how many marks were recorded.

    With :data:`VERDICTS_COLUMN` every reviewer's verdict is restored with its own reason, note
    and time, conflicts included. A verdict is skipped when that reviewer's current verdict on the
    item has the same verdict, reason and note (whatever its time), or is newer than the exported
    one (work done since the export is not reverted by an older file). So restoring the same
    file twice, or into the database it came from, adds nothing. Older exports (summary columns
    only) restore as before: each named reviewer's verdict unless equal to the current one; a
    ``conflict`` row carries no per-reviewer verdicts and is skipped. Nothing is ever undone.
    """
    if len(exported_part) != len(scored):
        raise InputError(f"The export has {len(exported_part)} rows but the run has {len(scored)}.")
    keys = scored["item_key"].astype(str).tolist()
    rows = _exported_marks(exported_part)
    newer_wins = VERDICTS_COLUMN in exported_part.columns
    current = verdicts.current_verdicts(engine, keys)
    have: dict[tuple[str, str], tuple[str, str, str, datetime | None]] = {
        (str(k), str(r)): (str(v), str(re_ or ""), str(n or ""), _as_utc(t))
        for k, r, v, re_, n, t in zip(
            current["item_key"], current["reviewer"], current["verdict"], current["reason"], current["note"],
            current["reviewed_at"],
        )  # fmt: skip
    }
    marks: list[dict] = []
    for key, row in zip(keys, rows):
        for mark in row:
            held = have.get((key, mark.reviewer))
            if held is not None:
                if held[:3] == (mark.verdict, mark.reason, mark.note):
                    continue
                if newer_wins and mark.reviewed_at is not None and held[3] is not None and held[3] > mark.reviewed_at:
                    continue
            have[(key, mark.reviewer)] = (mark.verdict, mark.reason, mark.note, mark.reviewed_at)
            marks.append(
                {
                    "item_key": key, "run_id": run_id, "reviewer": mark.reviewer, "verdict": mark.verdict,
                    "reason": mark.reason, "note": mark.note, "reviewed_at": mark.reviewed_at,
                }  # fmt: skip
            )
    return verdicts.record_marks(engine, marks)


# --------------------------------------------------------------------------- CLI


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, type=int, help="id of the run to export")
    parser.add_argument("--out", required=True, help="output file; the manifest goes to OUT.manifest.json")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv", help="file format (default csv)")
    parser.add_argument("--bom", action="store_true", help="start the CSV with a UTF-8 BOM (for Excel)")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--judge", action="store_true", help="add the stored judge label of each row (judge_label)")
    parser.add_argument(
        "--judge-settles", action="store_true",
        help="let a CORRECT/INCORRECT judge label settle overlap_only rows without a human verdict (implies --judge)",
    )  # fmt: skip


def stored_judge_labels(engine: Engine, run_id: int) -> dict[str, str]:
    """The latest stored judge label of each item of a run (any model), for the export."""
    if get_run(engine, run_id) is None:
        raise InputError(f"No run with id {run_id}.")
    return stored_labels(engine, load_scored(engine, run_id)["item_key"], prompt_version=None)


def open_existing(url: str) -> Engine:
    """An engine on an existing database; a SQLite file that does not exist is an input error
    (creating an empty database for a mistyped path would hide the mistake)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"Not a database URL: {url!r}.") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        if not Path(parsed.database).is_file():
            raise InputError(f"No database at {parsed.database!r}.")
    try:
        return make_engine(url)
    except SQLAlchemyError as exc:
        shown = parsed.render_as_string(hide_password=True)
        raise InputError(f"Cannot open the database {shown!r}: {exc.__class__.__name__}.") from None


@register("export", "adjudicated verdicts of a run as CSV or JSONL, with a manifest", _configure)
def cmd_export(args: argparse.Namespace) -> int:
    """``python -m scoring export --run ID --out F``: the file plus ``F.manifest.json``."""
    if args.bom and args.format != "csv":
        return fail("--bom applies to CSV only.")

    def body() -> None:
        engine = open_existing(args.db or database_url())
        labels = stored_judge_labels(engine, args.run) if args.judge or args.judge_settles else None
        frame = build_export(engine, args.run, judge_labels=labels, judge_settles=args.judge_settles)
        data = to_csv_bytes(frame, bom=args.bom) if args.format == "csv" else to_jsonl_bytes(frame)
        out = Path(args.out)
        side = Path(f"{args.out}.manifest.json")
        info = manifest(engine, args.run, frame, data=data, judge_settles=args.judge_settles)
        info["format"] = args.format
        try:
            out.write_bytes(data)
            side.write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"Cannot write {str(exc.filename or out)!r}: {exc.strerror or exc}.") from None
        sources = ", ".join(f"{k} {v}" for k, v in info["counts"]["final_source"].items())
        print(f"wrote {len(frame)} rows to {out} ({sources}); manifest {side}")

    return guarded(body)

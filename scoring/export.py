"""Export of adjudicated verdicts (CSV, JSONL, manifest) and the round trip back into a database.

An exported CSV is also a valid responses file: uploading it stores its input columns as a run
and restores its human verdicts, so review work can move between machines. Spreadsheet formula
neutralisation (a leading ``'``) is reversible and undone on the way back in.
"""

from __future__ import annotations

import argparse
import codecs
import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

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
JUDGE_COLUMN = "judge_label"
DERIVED_COLUMNS = frozenset([*EXPORT_COLUMNS, JUDGE_COLUMN])
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
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


def build_export(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
) -> pd.DataFrame:
    """Every row of a run in input order: input columns, both metrics, human and final verdicts.

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
    added = [*EXPORT_COLUMNS, *([JUDGE_COLUMN] if judge_labels is not None else [])]
    extras = list(info.extra_columns)
    renames = _input_names(extras, set(added))
    inputs = scored[[*ROW_COLUMNS, *extras]].rename(columns=renames)  # final's 'note' is the reviewers'
    out = pd.concat([inputs, final[added]], axis=1).reset_index(drop=True)
    for col in ("exact_correct", "overlap_correct"):
        out[col] = out[col].astype(bool)
    for col in ("matching_words", "total_golden_words"):
        out[col] = out[col].astype("int64")
    return out


def _cell_text(values: pd.Series) -> pd.Series:
    """Text of a column as written to CSV: True/False, integers, "" for missing."""
    if pd.api.types.is_bool_dtype(values):
        return values.map({True: "True", False: "False"}).astype(object)
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
    if data is not None:
        result["export_sha256"] = hashlib.sha256(data).hexdigest()
    return result


# --------------------------------------------------------------------------- round trip


def _parse_time(text: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def _check_exported(exported: pd.DataFrame) -> None:
    """Refuse, before anything is stored, verdict cells that could not be restored."""
    allowed = {"", *verdicts.VERDICTS, verdicts.CONFLICT}
    for pos, (verdict, names_cell, reason) in enumerate(
        zip(exported["human_verdict"], exported["reviewers"], exported["reason"]), start=1
    ):
        verdict = str(verdict).strip().lower()
        where = f"Data row {pos} of the exported file"
        if verdict not in allowed:
            raise InputError(f"{where}: human_verdict {verdict!r} is not one of correct, wrong, conflict or empty.")
        if verdict not in verdicts.VERDICTS:
            continue
        names = [n.strip() for n in str(names_cell).split(";") if n.strip()]
        if not names:
            raise InputError(f"{where}: human_verdict is {verdict!r} but no reviewer is named in 'reviewers'.")
        try:
            for name in names:
                verdicts.check_reviewer(name)
            for value in verdicts.split_per_reviewer(str(reason), names).values():
                verdicts.check_reason(value)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None


def split_exported(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(input columns, export-derived columns or None) of an uploaded table.

    A table is an export when it has every column of :data:`EXPORT_COLUMNS`; then the ``'``
    added by CSV neutralisation is removed from every cell and header, and the verdict cells are
    checked (:class:`InputError` names the first bad row). Any other table is returned as is.
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


def restore_verdicts(engine: Engine, run_id: int, scored: pd.DataFrame, exported_part: pd.DataFrame) -> int:
    """Record the exported human verdicts (rows aligned with ``scored``) that differ from the
    database's current ones, for each reviewer named; returns how many marks were recorded.

    A verdict equal to the reviewer's current one (verdict, reason and note) is not recorded
    again, so restoring the same file twice adds nothing. Conflicting rows carry no verdict of
    their own and are not restored. Restored marks keep the exported ``reviewed_at``.
    """
    if len(exported_part) != len(scored):
        raise InputError(f"The export has {len(exported_part)} rows but the run has {len(scored)}.")
    keys = scored["item_key"].astype(str).tolist()
    current = verdicts.current_verdicts(engine, keys)
    have = {
        (k, r): (v, re_, n)
        for k, r, v, re_, n in zip(current["item_key"], current["reviewer"], current["verdict"], current["reason"],
                                   current["note"])
    }
    marks: list[dict] = []
    for key, verdict, names_cell, reason, note, when in zip(
        keys, exported_part["human_verdict"], exported_part["reviewers"], exported_part["reason"],
        exported_part["note"], exported_part["reviewed_at"],
    ):  # fmt: skip
        verdict = str(verdict).strip().lower()
        if verdict not in verdicts.VERDICTS:
            continue
        names = [n.strip() for n in str(names_cell).split(";") if n.strip()]
        reasons = verdicts.split_per_reviewer(str(reason), names)
        notes = verdicts.split_per_reviewer(str(note), names)
        for name in names:
            wanted = (verdict, verdicts.check_reason(reasons[name]), notes[name].strip())
            if have.get((key, name)) == wanted:
                continue
            have[(key, name)] = wanted
            marks.append(
                {
                    "item_key": key, "run_id": run_id, "reviewer": name, "verdict": wanted[0],
                    "reason": wanted[1], "note": wanted[2], "reviewed_at": _parse_time(str(when)),
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

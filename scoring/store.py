"""Uploaded runs in the database: saved once (deduplicated by sha256), scored once at upload.

Scoring at upload and storing the verdicts beside the rows is what keeps every dashboard click
independent of the run's size: pages read stored columns, they never re-score.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd
from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoring.db import writer
from scoring.items import item_key
from scoring.loader import load_bytes
from scoring.models import Run, RunRow
from scoring.report import score_frame

LANGUAGES = (
    "english", "hindi", "tamil", "bengali", "bangla", "telugu", "marathi", "gujarati", "kannada",
    "malayalam", "odia", "oriya", "punjabi", "assamese", "urdu", "sanskrit", "nepali", "konkani",
    "maithili", "sindhi", "kashmiri", "manipuri", "bodo", "dogri", "santali",
)  # fmt: skip
SAMPLE_PATH = Path(__file__).resolve().parent.parent / "sample_data" / "sample_run.csv"
ROW_COLUMNS = ["question", "answer", "Domain", "response"]


@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    model: str
    language: str
    filename: str
    sha256: str
    uploaded_at: datetime
    n_rows: int
    extra_columns: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SaveResult:
    run: RunInfo
    created: bool
    warnings: list[str]
    frame: pd.DataFrame | None = None  # the parsed upload (None when the run already existed)
    restored: int = 0  # human verdicts restored from an uploaded export


def guess_model_language(filename: str) -> tuple[str, str]:
    """``my_model_hindi.csv`` -> (``my_model``, ``Hindi``); unknown parts leave the language empty."""
    stem = Path(filename).stem
    parts = [p for p in re.split(r"[_\-\s.]+", stem) if p]
    language = ""
    for i, part in enumerate(parts):
        if part.lower() in LANGUAGES:
            language = part.capitalize()
            parts = parts[:i] + parts[i + 1 :]
            break
    return "_".join(parts), language


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _info(run: Run) -> RunInfo:
    return RunInfo(
        id=run.id,
        name=run.name,
        model=run.model,
        language=run.language,
        filename=run.filename,
        sha256=run.sha256,
        uploaded_at=run.uploaded_at,
        n_rows=run.n_rows,
        extra_columns=json.loads(run.extra_columns or "[]"),
    )


def find_run_by_sha(engine: Engine, sha: str) -> RunInfo | None:
    with Session(engine) as session:
        run = session.scalars(select(Run).where(Run.sha256 == sha)).first()
        return _info(run) if run else None


def _row_records(frame: pd.DataFrame, extra: list[str]) -> list[dict]:
    """Rows ready to insert (``run_id`` is set once the run exists), with their stored verdicts."""
    scored = score_frame(frame)
    extras = (
        [json.dumps(rec, ensure_ascii=False) for rec in frame[extra].to_dict("records")]
        if extra
        else ["{}"] * len(frame)
    )
    records = []
    for idx, (q, a, d, r, ex, exact, overlap, match, total, blank, buck) in enumerate(
        zip(
            frame["question"], frame["answer"], frame["Domain"], frame["response"], extras,
            scored["exact_correct"], scored["overlap_correct"], scored["matching_words"],
            scored["total_golden_words"], scored["is_blank"], scored["bucket"],
        )  # fmt: skip
    ):
        records.append(
            {
                "row_idx": idx, "item_key": item_key(q, a, r), "question": q,
                "answer": a, "domain": d, "response": r, "extra": ex, "exact_correct": bool(exact),
                "overlap_correct": bool(overlap), "matching_words": int(match),
                "total_golden_words": int(total), "is_blank": bool(blank), "bucket": buck,
            }  # fmt: skip
        )
    return records


def save_run(
    engine: Engine,
    data: bytes,
    filename: str,
    name: str | None = None,
    model: str | None = None,
    language: str | None = None,
) -> SaveResult:
    """Parse, score and store an upload; identical bytes open the existing run instead.

    Raises :class:`scoring.errors.InputError` for bad input, before anything is written.
    """
    sha = sha256_bytes(data)
    existing = find_run_by_sha(engine, sha)
    if existing:
        return SaveResult(existing, False, [])
    loaded = load_bytes(data, filename)
    # An uploaded export: its derived columns are not input, its human verdicts are restored.
    from scoring.export import restore_verdicts, split_exported  # (export imports this module)

    frame, exported = split_exported(loaded.frame)
    extra_columns = [c for c in frame.columns if c not in ROW_COLUMNS]
    guessed_model, guessed_language = guess_model_language(filename)
    # Scored before the write transaction: the write lock is held for the inserts only, so
    # reviewers marking rows elsewhere never wait for a large upload to be scored.
    records = _row_records(frame, extra_columns)
    try:
        with writer(engine).begin() as conn:
            run_id = conn.execute(
                insert(Run).values(
                    name=name or Path(filename).stem,
                    model=guessed_model if model is None else model,
                    language=guessed_language if language is None else language,
                    filename=filename,
                    sha256=sha,
                    n_rows=len(frame),
                    extra_columns=json.dumps(extra_columns, ensure_ascii=False),
                )
            ).inserted_primary_key[0]
            for record in records:
                record["run_id"] = run_id
            for start in range(0, len(records), 20_000):
                conn.execute(insert(RunRow), records[start : start + 20_000])
    except IntegrityError:
        # The same bytes were saved by someone else meanwhile (two first starts, two uploads).
        existing = find_run_by_sha(engine, sha)
        if existing is None:
            raise
        return SaveResult(existing, False, [])
    restored = 0
    if exported is not None:
        keys = pd.DataFrame({"item_key": [r["item_key"] for r in records]})
        restored = restore_verdicts(engine, run_id, keys, exported)
    info = get_run(engine, run_id)
    assert info is not None
    return SaveResult(info, True, loaded.warnings, frame, restored)


def list_runs(engine: Engine) -> list[RunInfo]:
    """All runs, newest first."""
    with Session(engine) as session:
        return [_info(r) for r in session.scalars(select(Run).order_by(Run.uploaded_at.desc(), Run.id.desc()))]


def get_run(engine: Engine, run_id: int) -> RunInfo | None:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        return _info(run) if run else None


def update_run_meta(engine: Engine, run_id: int, name: str, model: str, language: str) -> None:
    """Edit the guessed name, model and language of a run."""
    with writer(engine).begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(name=name, model=model, language=language))


def count_runs(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Run)).scalar_one())


def load_scored(engine: Engine, run_id: int) -> pd.DataFrame:
    """A run's rows with stored verdicts, in upload order, extra columns expanded.

    Columns: row_idx, item_key, question, answer, Domain, response, exact_correct,
    overlap_correct, matching_words, total_golden_words, is_blank, bucket, then extras.
    """
    stmt = select(RunRow).where(RunRow.run_id == run_id).order_by(RunRow.row_idx)
    with engine.connect() as conn:
        frame = pd.read_sql(stmt, conn)
    frame = frame.rename(columns={"domain": "Domain"})
    for col in ("exact_correct", "overlap_correct", "is_blank"):
        frame[col] = frame[col].astype(bool)
    info = get_run(engine, run_id)
    extra_cols = info.extra_columns if info else []
    if extra_cols:
        extras = pd.DataFrame([json.loads(e) for e in frame["extra"]], columns=extra_cols, dtype=str)
        frame = pd.concat([frame.reset_index(drop=True), extras], axis=1)
    return frame.drop(columns=["extra", "run_id"])


def ensure_sample(engine: Engine, path: Path = SAMPLE_PATH) -> RunInfo | None:
    """On an empty database, load the bundled sample so a first start shows real charts."""
    if count_runs(engine):
        return None
    data = path.read_bytes()
    languages = "English, Hindi, Tamil, Bengali"
    return save_run(engine, data, path.name, name="Sample run", model="sample-model", language=languages).run

"""Export of adjudicated verdicts: every row of a run with its metrics, human, judge and final
verdicts (:func:`build_export`), its manifest, and the judge labels it may carry. The file format
and reading an export back live in :mod:`scoring.core.export_format`; restoring its verdicts in
:mod:`scoring.store.restore`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

import scoring
from scoring import review
from scoring.core.errors import InputError
from scoring.core.export_format import (
    DERIVED_COLUMNS,
    EXPORT_COLUMNS,
    JUDGE_COLUMN,
    PROTOCOLS,
    TIME_FORMAT,
    VERDICTS_COLUMN,
    VERDICTS_FORMAT,
    format_time,
    neutralise,
    split_exported,
    to_csv_bytes,
    to_jsonl_bytes,
    unneutralise,
    verdict_lists,
)
from scoring.judge import stored_labels
from scoring.store import ROW_COLUMNS, get_run, load_scored, make_engine
from scoring.store.restore import restore_verdicts

#: From this many rows the Export page prepares the file first, showing its phases, then offers
#: the download (a million rows take seconds to build; a silent button gets clicked again).
PREPARE_ROWS = 100_000

#: The export's public names, wherever they are implemented (pages and tests use ``export.X``).
__all__ = [
    "DERIVED_COLUMNS", "EXPORT_COLUMNS", "JUDGE_COLUMN", "PREPARE_ROWS", "VERDICTS_COLUMN", "build_export",
    "manifest", "neutralise", "open_existing", "restore_verdicts", "split_exported", "stored_judge_labels",
    "to_csv_bytes", "to_jsonl_bytes", "unneutralise",
]  # fmt: skip


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
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """Every row of a run in input order: input columns, both metrics, human and final verdicts,
    and every reviewer's own verdict in :data:`VERDICTS_COLUMN` (lists of dicts).

    An input column named like an export column is kept under ``<name>_input``.
    Raises :class:`InputError` when the run does not exist. ``progress(phase, done, total)``
    hears "loading" and "verdicts" (the page's status for a large run).
    """
    report = progress or (lambda phase, done, total: None)
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    report("loading", 0, info.n_rows)
    scored = load_scored(engine, run_id)
    report("verdicts", 0, len(scored))
    current = review.current_verdicts(engine, scored["item_key"])
    final = review.final_verdicts(scored, review.human_summary(current), judge_labels, judge_settles)
    final["reviewed_at"] = format_time(final["reviewed_at"])
    final[VERDICTS_COLUMN] = verdict_lists(current, final["item_key"])
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
            "final_source": counts("final_source", review.FINAL_SOURCES),
            "final_verdict": counts("final_verdict", review.FINAL_VERDICTS),
            "human_verdict": counts("human_verdict", (*review.VERDICTS, review.CONFLICT)),
        },
    }
    if VERDICTS_COLUMN in frame.columns:
        result["human_verdicts"] = VERDICTS_FORMAT
    if data is not None:
        result["export_sha256"] = hashlib.sha256(data).hexdigest()
    return result


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



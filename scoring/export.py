"""Export of adjudicated verdicts: every row of a run with its metrics, human, judge and final
verdicts (:func:`build_export`), its manifest, and the judge labels it may carry. The file format
and reading an export back live in :mod:`scoring.core.export_format`; restoring its verdicts in
:mod:`scoring.store.restore`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import polars as pl
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

import scoring
from scoring import review
from scoring.core.errors import InputError
from scoring.core.export_format import (
    ADJUDICATION_EXPORT,
    DERIVED_COLUMNS,
    EXPORT_COLUMNS,
    JUDGE_COLUMN,
    ORDER_COLUMNS,
    PROTOCOLS,
    TIME_FORMAT,
    VERDICTS_COLUMN,
    VERDICTS_FORMAT,
    format_time,
    neutralise,
    split_exported,
    table_csv_bytes,
    to_csv_bytes,
    to_jsonl_bytes,
    unneutralise,
    verdict_lists,
    verdicts_text,
)
from scoring.core.export_order import ORDER_FORMAT, SEED_COLUMN, SKIPS_COLUMN, skips_text
from scoring.core.export_parquet import MANIFEST_KEY, parquet_manifest, table_parquet_bytes
from scoring.store import (
    ROW_COLUMNS,
    RunInfo,
    describe_failure,
    display_url,
    get_run,
    judge_cache,
    judge_choice,
    load_scored,
    load_table,
    make_engine,
)
from scoring.store.judge_choice import RunLabels
from scoring.store.restore import restore_verdicts
from scoring.store.run_table import EXTRA_PREFIX

#: The columns :func:`scoring.review.final_verdicts` adds that the export carries.
FINAL_COLUMNS = ["human_verdict", "reviewers", "reason", "note", "final_verdict", "final_source", "reviewed_at"]
#: From this many rows the Export page prepares the file first, showing its phases, then offers
#: the download (a million rows take seconds to build; a silent button gets clicked again).
PREPARE_ROWS = 100_000

#: The export's public names, wherever they are implemented (pages and tests use ``export.X``).
__all__ = [
    "DERIVED_COLUMNS", "EXPORT_COLUMNS", "JUDGE_COLUMN", "MANIFEST_KEY", "PREPARE_ROWS", "SEED_COLUMN",
    "SKIPS_COLUMN", "VERDICTS_COLUMN",
    "build_export", "export_table", "manifest", "neutralise", "open_existing", "parquet_export", "parquet_manifest",
    "restore_verdicts", "split_exported", "stored_judge_labels", "stored_run_labels", "table_csv_bytes",
    "table_parquet_bytes", "to_csv_bytes", "to_jsonl_bytes", "unneutralise",
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


def _added_columns(with_judge: bool) -> list[str]:
    """The export's columns after the input's, in order."""
    return [*EXPORT_COLUMNS, VERDICTS_COLUMN, *ORDER_COLUMNS, *ADJUDICATION_EXPORT,
            *([JUDGE_COLUMN] if with_judge else [])]  # fmt: skip


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
    """Every row of a run in input order: input columns, both metrics, human and final verdicts,
    every reviewer's own verdict in :data:`VERDICTS_COLUMN` (lists of dicts), and the review
    order: the run's seed and the rows its queue served without a verdict
    (:mod:`scoring.core.export_order`).

    An input column named like an export column is kept under ``<name>_input``.
    Raises :class:`InputError` when the run does not exist. ``progress(phase, done, total)``
    hears "loading" and "verdicts" (the page's status for a large run).
    """
    report = progress or (lambda phase, done, total: None)
    info = _require_run(engine, run_id)
    report("loading", 0, info.n_rows)
    scored = load_scored(engine, run_id)
    report("verdicts", 0, len(scored))
    current = review.current_verdicts(engine, scored["item_key"])
    decisions = review.adjudications(engine, scored["item_key"])
    final = review.final_verdicts(scored, review.human_summary(current), judge_labels, judge_settles, decisions)
    final["reviewed_at"] = format_time(final["reviewed_at"])
    final[VERDICTS_COLUMN] = verdict_lists(current, final["item_key"], review.served_keys(engine, run_id))
    final[SEED_COLUMN] = info.review_seed
    final[SKIPS_COLUMN] = final["item_key"].astype(str).map(_skips(engine, run_id)).fillna("").astype(object)
    added = _added_columns(judge_labels is not None)
    extras = list(info.extra_columns)
    renames = _input_names(extras, set(added))
    sources = [_extra_source(scored.columns, name) for name in extras]
    inputs = scored[[*ROW_COLUMNS, *sources]]  # final's 'note' is the reviewers'
    inputs.columns = [*ROW_COLUMNS, *(renames.get(name, name) for name in extras)]
    out = pd.concat([inputs, final[added]], axis=1).reset_index(drop=True)
    for col in ("exact_correct", "overlap_correct"):
        out[col] = out[col].astype(bool)
    for col in ("matching_words", "total_golden_words"):
        out[col] = out[col].astype("int64")
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
    """:func:`build_export` as polars text columns, for the CSV file: the same rows and cells
    (``test_export`` checks the bytes agree), about five times faster on a million rows.

    The rules are not restated here. Rows someone reviewed (a few of a large run) go through
    :func:`scoring.review.final_verdicts` as they are; every other row's final verdict depends
    only on its bucket and judge label, so the rule is applied once per distinct pair of those
    and joined back.
    """
    report = progress or (lambda phase, done, total: None)
    info = _require_run(engine, run_id)
    report("loading", 0, info.n_rows)
    table = load_table(engine, run_id)
    report("verdicts", 0, table.height)
    current = review.current_verdicts(engine, table["item_key"])  # polars keys: no conversion
    served = review.served_keys(engine, run_id)
    summary = review.human_summary(current)
    decisions = review.adjudications(engine, table["item_key"])
    labels = dict(judge_labels or {})
    label = table["item_key"].replace_strict(labels, default="", return_dtype=pl.String) if labels else None
    keyed = table.select("item_key", "bucket").with_columns(_label=label if label is not None else pl.lit(""))
    touched = [*summary.index.astype(str), *decisions.index.astype(str)]
    reviewed = keyed["item_key"].is_in(pl.Series(touched, dtype=pl.String).implode())
    derived = [*FINAL_COLUMNS, *ADJUDICATION_EXPORT, *([JUDGE_COLUMN] if judge_labels is not None else [])]
    # Rows nobody reviewed: one row per (bucket, judge label) through the same rule.
    combos = keyed.filter(~reviewed).select("bucket", "_label").unique(maintain_order=True)
    combos = combos.with_columns(item_key=pl.format("combo:{}", pl.int_range(pl.len())))
    combo_labels = dict(zip(combos["item_key"], combos["_label"])) if judge_labels is not None else None
    ruled = review.final_verdicts(combos.to_pandas(), summary.iloc[:0], combo_labels, judge_settles, decisions.iloc[:0])
    ruled["reviewed_at"] = format_time(ruled["reviewed_at"])
    ruled_pl = pl.from_pandas(ruled[["bucket", "_label", *derived]].astype(str))
    out = keyed.join(ruled_pl, on=["bucket", "_label"], how="left", maintain_order="left").select(derived)
    skips = keyed["item_key"].replace_strict(_skips(engine, run_id), default="", return_dtype=pl.String)
    out = out.with_columns(
        pl.lit("").alias(VERDICTS_COLUMN), pl.lit(str(info.review_seed)).alias(SEED_COLUMN), skips.alias(SKIPS_COLUMN)
    )
    where = reviewed.arg_true()
    if not where.is_empty():  # the reviewed rows, exactly as build_export computes them
        rows = keyed.filter(reviewed).to_pandas()
        part = review.final_verdicts(rows, summary, labels if judge_labels is not None else None, judge_settles,
                                     decisions)  # fmt: skip
        part["reviewed_at"] = format_time(part["reviewed_at"])
        part[VERDICTS_COLUMN] = verdict_lists(current, part["item_key"], served).map(verdicts_text)
        out = out.with_columns(
            out[col].scatter(where, pl.Series(part[col].astype(str).tolist(), dtype=pl.String))
            for col in [*derived, VERDICTS_COLUMN]
        )
    added = _added_columns(judge_labels is not None)
    extras = list(info.extra_columns)
    renames = _input_names(extras, set(added))
    inputs = table.select(
        *ROW_COLUMNS,
        *(pl.col(_extra_source(table.columns, name)).alias(renames.get(name, name)) for name in extras),
    )
    metrics = table.select("exact_correct", "overlap_correct", "matching_words", "total_golden_words", "bucket")
    return pl.concat([inputs, metrics, out], how="horizontal").select(*inputs.columns, *added)


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
        found = dict(frame[col].value_counts().iter_rows()) if isinstance(frame, pl.DataFrame) else (
            frame[col].value_counts().to_dict())  # fmt: skip
        return {label: int(found.get(label, 0)) for label in labels}

    result = {
        "tool": "answer-review scoring",
        "tool_version": scoring.__version__,
        "exported_at": datetime.now(UTC).strftime(TIME_FORMAT),
        "run": {
            "id": info.id, "name": info.name, "model": info.model, "language": info.language,
            "filename": info.filename, "sha256": info.sha256, "n_rows": info.n_rows,
            "uploaded_at": info.uploaded_at.strftime(TIME_FORMAT) if info.uploaded_at else "",
            "review_seed": info.review_seed,
        },  # fmt: skip
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


def parquet_export(engine: Engine, run_id: int, table: pl.DataFrame, judge_settles: bool = False,
                   judge_config: str | None = None) -> tuple[bytes, dict]:  # fmt: skip
    """An export table (:func:`export_table`) as a Parquet file and its manifest.

    The file holds the manifest (``format`` "parquet") in its key-value metadata
    (:data:`MANIFEST_KEY`); the manifest returned, for the ``.manifest.json`` beside the file, is
    the same with the file's sha256 added (a file cannot hold its own hash).
    """
    info = {**manifest(engine, run_id, table, judge_settles=judge_settles, judge_config=judge_config),
            "format": "parquet"}  # fmt: skip
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


def open_existing(url: str) -> Engine:
    """An engine on an existing database; a SQLite file that does not exist is an input error
    (creating an empty database for a mistyped path would hide the mistake)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        # Not repeated in the message: an unparsable URL may still hold a password.
        raise InputError("Not a database URL: it could not be parsed.") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        if not Path(parsed.database).is_file():
            raise InputError(f"No database at {parsed.database!r}.")
    try:
        return make_engine(url)
    except SQLAlchemyError as exc:
        reason = _driver_reason(exc, parsed.password)
        found = describe_failure(exc)  # what the driver's reason means, and what to do
        said = f" ({reason}): {found.message}" if found is not None else f": {reason}"
        raise InputError(f"Cannot open the database {display_url(url)!r}{said}") from None


def _driver_reason(exc: SQLAlchemyError, password: str | None) -> str:
    """The driver's own first line ("password authentication failed", "Connection refused"), so a
    wrong password and a stopped server read differently; the password is masked should a driver
    ever echo it."""
    original = getattr(exc, "orig", None)
    line = str(original or exc).strip().splitlines()[0] if str(original or exc).strip() else ""
    if password:
        line = line.replace(str(password), "***")
    return f"{exc.__class__.__name__}: {line[:300]}" if line else f"{exc.__class__.__name__}."



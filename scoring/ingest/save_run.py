"""Ingesting a file into a run: read once, scored once at upload, stored, and an uploaded export's
human verdicts restored.

Scoring at upload and storing the verdicts beside the rows is what keeps every dashboard click
independent of the run's size: pages read stored columns, they never re-score. How the rows are
written (short transactions, the run hidden until complete, a failed save removed) is
:func:`scoring.store.runs.insert_run`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from sqlalchemy import Engine

from scoring.core.order import seed_from_sha
from scoring.core.report import rows_per_domain
from scoring.core.row_language import row_languages
from scoring.ingest.read_upload import read_upload
from scoring.ingest.restore_export import Restored, restore_export
from scoring.ingest.run_names import guess_model_language
from scoring.store import runs
from scoring.store.run_table import scored_rows, to_parts
from scoring.store.runs import NewRun, RunInfo, sha256_bytes

#: ``progress(phase, done, total)``: phases "reading", "scoring", "saving" (rows).
Progress = Callable[[str, int, int], None]
#: ``preview(rows_per_domain)``: heard once the file is read, before it is scored
#: (:func:`scoring.core.report.rows_per_domain`).
Preview = Callable[[list[tuple[str, int]]], None]


@dataclass(frozen=True)
class SaveResult:
    run: RunInfo
    created: bool
    warnings: list[str]
    table: pl.DataFrame | None = None  # the parsed input columns (None when the run already existed)
    restored: int = 0  # human verdicts restored from an uploaded export
    decisions: int = 0  # adjudicators' decisions restored from it
    #: Of ``restored``, the verdicts of an export without its review seed, which the estimate
    #: cannot count as a random sample (:func:`scoring.core.export_order.unordered_note` says why).
    unordered: int = 0
    skips: int = 0  # skips restored: rows its queue served that nobody holds a verdict on
    #: The run's rows as :func:`scoring.store.load_table` reads them (None when the run already
    #: existed): a reader in this process need not read back what it just saved.
    rows: pl.DataFrame | None = None


def save_run(
    engine: Engine,
    data: bytes,
    filename: str,
    name: str | None = None,
    model: str | None = None,
    language: str | None = None,
    progress: Progress | None = None,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
    preview: Preview | None = None,
) -> SaveResult:
    """Parse, score and store an upload; identical bytes open the existing run instead.
    ``columns``: the column mapping (canonical name -> the file's field), stored with the run;
    ``companions``: files uploaded with it (lm-evaluation-harness's ``results_*.json``).

    Raises :class:`scoring.core.errors.InputError` for bad input, before anything is written. The
    rows go in short transactions and the run appears only once all of them are in; on any
    failure (an interrupt included) what was written is removed and the exception re-raised.
    A concurrent save of the same bytes waits for this one and opens its run. ``progress`` hears
    of each phase (for the upload page's status), ``preview`` of the rows per domain as soon as
    the file is read (the page shows them while a large file is scored). An uploaded export restores its verdicts and
    gives the run its review seed (:mod:`scoring.core.export_order`); without one, the result's
    ``unordered`` counts the verdicts the estimate cannot count as a random sample.
    """
    report = progress or (lambda phase, done, total: None)
    sha = sha256_bytes(data)
    existing = runs.find_run_by_sha(engine, sha)
    if existing:
        return SaveResult(existing, False, [])
    report("reading", 0, 0)
    upload = read_upload(data, filename, columns, companions)
    table = upload.table
    if preview is not None:
        preview(rows_per_domain(table))
    guessed_model, guessed_language = guess_model_language(filename)
    guessed_model = upload.model or guessed_model
    # Scored before any write: the write lock is held for the inserts only, so reviewers
    # marking rows elsewhere never wait for a large upload to be scored.
    report("scoring", 0, table.height)
    run_language = guessed_language if language is None else language
    languages = row_languages(table, run_language, upload.language_from)
    rows = scored_rows(table, upload.extra_columns, languages.values)
    parts = to_parts(rows)
    new = NewRun(
        name=name or Path(filename).stem,
        model=guessed_model if model is None else model,
        language=run_language if language is not None else languages.run_language(run_language),
        filename=filename,
        sha256=sha,
        n_rows=table.height,
        extra_columns=upload.extra_columns,
        review_seed=seed_from_sha(sha) if upload.seed is None else upload.seed,
        source_fields=upload.source_fields,
        column_map=upload.columns,
        language_source=languages.source,
        languages=tuple(languages.values.unique().to_list()),
    )
    report("saving", 0, table.height)
    saved = (lambda done, total: report("saving", table.height * done // total, table.height)) if progress else None
    run_id, created = runs.insert_run(engine, new, parts, saved)
    del parts  # the stored file (tens of MB on a million rows): not needed once written
    if not created:
        existing = runs.get_run(engine, run_id)
        assert existing is not None
        return SaveResult(existing, False, [])
    restored = Restored()
    if upload.exported is not None:
        restored = restore_export(
            engine, run_id, rows.select("item_key").to_pandas(), upload.exported, in_order=upload.seed is not None
        )
    info = runs.get_run(engine, run_id)
    assert info is not None
    unordered = restored.verdicts if upload.exported is not None and upload.seed is None else 0
    return SaveResult(
        info,
        True,
        upload.warnings,
        table,
        restored.verdicts,
        restored.decisions,
        unordered,
        restored.skips,
        runs.saved_as_loaded(rows, new),
    )

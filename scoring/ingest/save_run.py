"""Ingesting a file into runs: read once, scored once at upload, stored, and an uploaded export's
human verdicts restored. A file holding several models becomes one run per model
(:mod:`scoring.ingest.file_parts`); the same bytes, or the same rows in another encoding or order,
open the run stored already instead of storing it again.

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

from scoring.core.errors import InputError
from scoring.core.file_models import FILE_ROW, with_file_rows
from scoring.core.order import seed_from_sha
from scoring.core.report import rows_per_domain
from scoring.ingest.file_parts import Found, Part, cut, look_up, several_models
from scoring.ingest.read_upload import ReadUpload, read_upload
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
    #: how the run was found: saved now, the same bytes, or the same rows in another encoding or order
    found: Found = "created"
    #: the model the file names for these rows when it holds several, else None
    model: str | None = None
    file_rows: int = 0  #: how many of the file's rows are this run's (0: not read, identical bytes)


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
    """:func:`save_file`'s first run: the file's only one, or its first model's."""
    return save_file(engine, data, filename, name, model, language, progress, columns, companions, preview)[0]


def save_file(
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
    split: bool | None = True,
) -> list[SaveResult]:
    """Parse, score and store an upload: one run, or one per model when its model column names
    several, in the order the file first names them. ``split``: True cuts such a file, False
    saves it as one run whatever the column holds, None raises
    :class:`scoring.ingest.file_parts.SeveralModels` before anything is written (unless every
    model is stored already, or these bytes were cut before). Identical bytes open the existing
    run, and so do the same rows in another encoding or order (each result's ``found``).
    ``columns``: the column mapping (canonical name -> the file's field), stored with the run;
    ``companions``: files uploaded with it (lm-evaluation-harness's ``results_*.json``).

    Raises :class:`scoring.core.errors.InputError` for bad input, before anything is written. The
    rows go in short transactions and a run appears only once all of them are in; on any
    failure (an interrupt included) what was written is removed, with the file's runs saved
    before it, and the exception re-raised: a file is saved whole or not at all. A concurrent
    save of the same bytes waits for this one and opens its run. ``progress`` hears of each
    phase (for the upload page's status), ``preview`` of the rows per domain as soon as the file
    is read (the page shows them while a large file is scored). An uploaded export restores its
    verdicts and gives the run its review seed (:mod:`scoring.core.export_order`); without one,
    the result's ``unordered`` counts the verdicts the estimate cannot count as a random sample.
    """
    report = progress or (lambda phase, done, total: None)
    sha = sha256_bytes(data)
    existing = runs.find_run_by_sha(engine, sha)
    if existing:
        return [SaveResult(existing, False, [], found="identical")]
    report("reading", 0, 0)
    upload = read_upload(data, filename, columns, companions)
    models = cut(upload, split is not False)
    if len(models) > 1 and model is not None:
        raise InputError(f"The file holds {len(models)} models: one model name cannot be given to all of them.")
    guessed_model, guessed_language = guess_model_language(filename)
    run_language = guessed_language if language is None else language
    parts = look_up(engine, upload, models, sha, guessed_model, run_language, model)
    if split is None and len(parts) > 1 and not all(p.found for p in parts) and not runs.runs_of_file(engine, sha):
        raise several_models(upload, models)
    if preview is not None:
        preview(rows_per_domain(upload.table))
    saved: list[SaveResult] = []
    try:
        for part in parts:
            named = (filename, name, language, run_language)
            saved.append(_save_part(engine, upload, part, sha, named, progress, first=not saved))
    except BaseException:
        runs.remove_new_runs(engine, [s.run.id for s in saved if s.created])
        raise
    return saved


def _save_part(
    engine: Engine,
    upload: ReadUpload,
    part: Part,
    file_sha: str,
    named: tuple[str, str | None, str | None, str],
    progress: Progress | None,
    first: bool,
) -> SaveResult:
    """Store one part of ``upload`` as a run, unless :func:`look_up` found it stored. ``named``:
    the file's name, the caller's run name and language (None: the file's, the rows') and the
    language the rows fall back on (the file name's). ``first``: the file's warnings go with
    this part's result."""
    filename, name, language, run_language = named
    report = progress or (lambda phase, done, total: None)
    model = part.models.model if part.several else None
    if part.found is not None:
        return SaveResult(part.found, False, [], found=part.how, model=model, file_rows=part.table.height)
    table, extra_columns = part.table, upload.extra_columns
    if part.several:  # the run numbers its rows 1, 2, 3...: each keeps its place in the file
        table = with_file_rows(table, part.models.rows)
        extra_columns = [*extra_columns, *([] if FILE_ROW in extra_columns else [FILE_ROW])]
    # Scored before any write: the write lock is held for the inserts only, so reviewers
    # marking rows elsewhere never wait for a large upload to be scored.
    report("scoring", 0, table.height)
    rows = scored_rows(table, extra_columns, part.languages.values)
    parts = to_parts(rows)
    stem = name or Path(filename).stem
    if part.several:  # named for its model: two runs of one file are told apart in every run list
        stem = f"{part.model} ({stem})" if part.models.model else f"{stem}, rows without a model"
    new = NewRun(
        name=stem,
        model=part.model,
        language=language if language is not None else part.languages.run_language(run_language),
        filename=filename,
        sha256=part.sha256,
        n_rows=table.height,
        extra_columns=extra_columns,
        review_seed=seed_from_sha(part.sha256) if upload.seed is None else upload.seed,
        source_fields=upload.source_fields,
        column_map=upload.columns,
        language_source=part.languages.source,
        languages=tuple(part.languages.values.unique().to_list()),
        file_sha256=file_sha if part.several else None,
        content_sha256=part.content,
    )
    report("saving", 0, table.height)
    height = table.height
    saved = (lambda done, total: report("saving", height * done // total, height)) if progress else None
    run_id, created = runs.insert_run(engine, new, parts, saved)
    del parts  # the stored file (tens of MB on a million rows): not needed once written
    if not created:
        existing = runs.get_run(engine, run_id)
        assert existing is not None
        return SaveResult(existing, False, [], found="identical", model=model, file_rows=height)
    restored = Restored()
    if upload.exported is not None:
        exported = upload.exported
        if part.several:  # the export's rows of this model, aligned with the run's
            exported = exported.iloc[part.models.rows.to_numpy()].reset_index(drop=True)
        keyed = rows.select("item_key").to_pandas()
        restored = restore_export(engine, run_id, keyed, exported, in_order=upload.seed is not None)
    info = runs.get_run(engine, run_id)
    assert info is not None
    unordered = restored.verdicts if upload.exported is not None and upload.seed is None else 0
    return SaveResult(
        info,
        True,
        upload.warnings if first else [],
        table,
        restored.verdicts,
        restored.decisions,
        unordered,
        restored.skips,
        runs.saved_as_loaded(rows, new),
        "created",
        model,
        height,
    )

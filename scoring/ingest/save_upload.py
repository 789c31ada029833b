"""The Upload page's one action: save a file as a run, as the page means it.

Beyond :func:`scoring.ingest.save_run.save_run`: a file whose fields need a mapping is read with
the mapping remembered for exactly these fields, when a run was uploaded with one (a team's second
file from the same harness needs no choosing); identical bytes (or the same rows) of an archived run
bring that run back from the archive (the team wants it back); and a file holding several models is
cut into one run per model only once the user has seen what it holds
(:class:`scoring.ingest.file_parts.SeveralModels`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import polars as pl
from sqlalchemy import Engine

from scoring.core.loader import MissingColumns
from scoring.ingest.file_parts import Found, SeveralModels
from scoring.ingest.save_run import Preview, Progress, SaveResult, save_file
from scoring.store import RunInfo, archived_at, remembered_columns, restore_run

#: How the upload's run was found: saved now, identical to an archived run (restored from the
#: archive), or identical to a listed run (opened).
Opened = Literal["created", "restored", "identical"]


@dataclass(frozen=True)
class ModelRun:
    """One run an upload became or opened (a file holding several models: one per model)."""

    run: RunInfo
    found: Found  #: saved now, the same bytes, or the same rows in another encoding or order
    unarchived: bool = False  #: it was archived and is restored from the archive
    model: str | None = None  #: the file's model for these rows (None: the file holds one model)
    file_rows: int = 0  #: how many of the file's rows these are (0: not read, identical bytes)


@dataclass(frozen=True)
class UploadOutcome:
    """What one upload did, for the page to say."""

    run: RunInfo
    opened: Opened
    #: the remembered column mapping the file was read with (empty: none was needed or used)
    remembered: dict[str, str] = field(default_factory=dict)
    restored: int = 0  #: human verdicts restored from an uploaded export
    skips: int = 0  #: skips restored from it
    decisions: int = 0  #: adjudicators' decisions restored from it
    #: of ``restored``, the verdicts the estimate leaves out (:func:`scoring.core.export_order.unordered_note`)
    unordered: int = 0
    warnings: list[str] = field(default_factory=list)  #: the loader's warnings about the file
    #: the run's rows as :func:`scoring.store.load_table` reads them, when saved now (else None)
    rows: pl.DataFrame | None = field(default=None, repr=False)
    #: every run the file became or opened, in the file's order (``run`` is the first's); one for
    #: a file of one model
    runs: tuple[ModelRun, ...] = ()


def save_upload(
    engine: Engine,
    data: bytes,
    name: str,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
    progress: Progress | None = None,
    preview: Preview | None = None,
    split: bool | None = None,
) -> UploadOutcome:
    """Save the uploaded file ``name`` (:func:`scoring.ingest.save_run.save_file`).

    Without ``columns``, a file lacking the required fields is read again with the mapping
    remembered for its fields (:func:`scoring.store.remembered_columns`), if any. Identical bytes
    or the same rows of an archived run restore it from the archive. ``split``: whether a file
    holding several models is saved as one run per model (True) or as one run (False); None
    asks first. Raises :class:`scoring.core.loader.MissingColumns` when the fields still need
    choosing, :class:`scoring.ingest.file_parts.SeveralModels` when ``split`` is None and the file
    holds several models (its ``columns`` are the mapping to save it with), and
    :class:`scoring.core.errors.InputError` for any other bad input; nothing is written then.
    """
    remembered: dict[str, str] = {}

    def save(mapping: Mapping[str, str] | None) -> list[SaveResult]:
        try:
            return save_file(
                engine,
                data,
                name,
                progress=progress,
                columns=mapping,
                companions=companions,
                preview=preview,
                split=split,
            )
        except SeveralModels as exc:
            exc.columns = dict(mapping or {})  # the page saves it with the same mapping once asked
            raise

    try:
        results = save(columns)
    except MissingColumns as exc:
        remembered = {} if columns else remembered_columns(engine, exc.fields)
        if not remembered:
            raise
        results = save(remembered)
    made = tuple(_opened(engine, result) for result in results)
    first = results[0]
    opened: Opened = "created" if first.created else "restored" if made[0].unarchived else "identical"
    return UploadOutcome(
        first.run,
        opened,
        remembered,
        sum(r.restored for r in results),
        sum(r.skips for r in results),
        sum(r.decisions for r in results),
        sum(r.unordered for r in results),
        [w for r in results for w in r.warnings],
        first.rows,
        made,
    )


def _opened(engine: Engine, result: SaveResult) -> ModelRun:
    """One run of the upload, restored from the archive when it was found there."""
    unarchived = not result.created and archived_at(engine, result.run.id) is not None
    if unarchived:
        restore_run(engine, result.run.id)
    return ModelRun(result.run, result.found, unarchived, result.model, result.file_rows)

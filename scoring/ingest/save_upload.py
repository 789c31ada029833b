"""The Upload page's one action: save a file as a run, as the page means it.

Beyond :func:`scoring.ingest.save_run.save_run`: a file whose fields need a mapping is read with
the mapping remembered for exactly these fields, when a run was uploaded with one (a team's second
file from the same harness needs no choosing); and identical bytes of an archived run bring that
run back from the archive (the team wants it back).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import polars as pl
from sqlalchemy import Engine

from scoring.core.loader import MissingColumns
from scoring.ingest.save_run import Preview, Progress, save_run
from scoring.store import RunInfo, archived_at, remembered_columns, restore_run

#: How the upload's run was found: saved now, identical to an archived run (restored from the
#: archive), or identical to a listed run (opened).
Opened = Literal["created", "restored", "identical"]


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


def save_upload(
    engine: Engine,
    data: bytes,
    name: str,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
    progress: Progress | None = None,
    preview: Preview | None = None,
) -> UploadOutcome:
    """Save the uploaded file ``name`` (:func:`scoring.ingest.save_run.save_run`).

    Without ``columns``, a file lacking the required fields is read again with the mapping
    remembered for its fields (:func:`scoring.store.remembered_columns`), if any. Identical bytes
    of an archived run restore it from the archive. Raises
    :class:`scoring.core.loader.MissingColumns` when the fields still need choosing, and
    :class:`scoring.core.errors.InputError` for any other bad input; nothing is written then.
    """
    remembered: dict[str, str] = {}
    try:
        result = save_run(
            engine, data, name, progress=progress, columns=columns, companions=companions, preview=preview
        )
    except MissingColumns as exc:
        remembered = {} if columns else remembered_columns(engine, exc.fields)
        if not remembered:
            raise
        result = save_run(
            engine, data, name, progress=progress, columns=remembered, companions=companions, preview=preview
        )
    opened: Opened = "created"
    if not result.created:
        opened = "identical"
        if archived_at(engine, result.run.id) is not None:
            restore_run(engine, result.run.id)
            opened = "restored"
    return UploadOutcome(
        result.run,
        opened,
        remembered,
        result.restored,
        result.skips,
        result.decisions,
        result.unordered,
        list(result.warnings),
        result.rows,
    )

"""An upload cut into the runs it becomes: one per model its model column names
(:mod:`scoring.core.file_models`), each looked up before anything is scored or written.

Each part is found stored already when its bytes are (the file's sha256 for a file of one model,
else one derived from it and the model) or when its rows are (:mod:`scoring.ingest.same_rows`).
A file holding several models is cut only when the caller says so: the Upload page shows
"2 models: A (300 rows), B (300 rows)" first (:class:`SeveralModels`) and saves on the user's word.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import polars as pl
from sqlalchemy import Engine

from scoring.core.file_models import ModelRows, model_field, models_line, models_of
from scoring.core.harness import KINDS
from scoring.core.row_language import RowLanguages, row_languages
from scoring.ingest.read_upload import ReadUpload
from scoring.ingest.same_rows import same_rows, upload_content
from scoring.store import runs
from scoring.store.runs import RunInfo

#: How an upload's run was found: saved now, the same bytes stored already, or the same rows
#: stored already from a file in another encoding, order or format.
Found = Literal["created", "identical", "same_rows"]


class SeveralModels(Exception):
    """The file holds several models and the caller has not said whether to save one run per
    model: nothing was written. :attr:`line` says what the file holds, before any saving."""

    def __init__(self, models: list[ModelRows], from_harness: bool, field: str) -> None:
        self.models = models
        self.from_harness = from_harness
        self.field = field
        self.columns: dict[str, str] = {}  #: the column mapping the file was read with (set by the Upload's save)
        super().__init__(self.line)

    @property
    def line(self) -> str:
        """``2 models: A (300 rows), B (300 rows)``."""
        return models_line([m.named for m in self.models])

    @property
    def source(self) -> str:
        """Where the models' names come from, in words."""
        return "the harness log's metadata" if self.from_harness else f"the file's column {self.field!r}"


@dataclass(frozen=True)
class Part:
    """One run's share of an upload, looked up: its rows and, when stored already, its run."""

    models: ModelRows  #: its model and rows ("" for a file of one model named by no column)
    several: bool  #: the file holds several models (this part is one of them)
    table: pl.DataFrame  #: its input rows, in file order
    sha256: str  #: the run's sha256: the file's, or for one of several models derived from it
    languages: RowLanguages
    content: str  #: :mod:`scoring.core.content_hash` of its rows
    model: str  #: the run's model: the column's, else the harness's metadata, else the file name's
    found: RunInfo | None = None
    how: Found = "created"

    @property
    def exported_rows(self) -> pl.Series | None:
        """Its rows' places in the file when the file holds several models (None: all of them)."""
        return self.models.rows if self.several else None


def part_sha256(file_sha: str, model: str) -> str:
    """The sha256 of one model's run of a file holding several: unique per file and model."""
    return hashlib.sha256(f"{file_sha}\nmodel\n{model}".encode()).hexdigest()


def cut(upload: ReadUpload, split: bool) -> list[ModelRows]:
    """The upload's models (:func:`scoring.core.file_models.models_of`), or all its rows as one
    when ``split`` is False (the user said the column does not name models)."""
    models = models_of(upload.table)
    if len(models) > 1 and not split:
        return [ModelRows("", pl.int_range(0, upload.table.height, dtype=pl.Int64, eager=True))]
    return models


def several_models(upload: ReadUpload, models: list[ModelRows]) -> SeveralModels:
    """The question to ask before cutting ``upload`` into ``models``' runs."""
    return SeveralModels(models, upload.format in KINDS, model_field(upload.table.columns) or "")


def look_up(
    engine: Engine,
    upload: ReadUpload,
    models: list[ModelRows],
    file_sha: str,
    guessed_model: str,
    run_language: str,
    model: str | None,
) -> list[Part]:
    """Each part of ``upload`` with the run it is stored as already, if any: by its bytes, else by
    its rows. ``model``: the caller's name for a file of one model (None: the file's, else
    ``guessed_model``); ``run_language``: the language its rows fall back on."""
    several = len(models) > 1
    parts = []
    for rows in models:
        table = upload.table.gather(rows.rows) if several else upload.table
        sha = part_sha256(file_sha, rows.model) if several else file_sha
        languages = row_languages(table, run_language, upload.language_from)
        content = upload_content(table, upload.extra_columns, languages.values if languages.from_file else None)
        named = model if model is not None and not several else (rows.model or upload.model or guessed_model)
        part = Part(rows, several, table, sha, languages, content, named)
        identical = runs.find_run_by_sha(engine, sha) if several else None
        if identical is not None:
            part = Part(rows, several, table, sha, languages, content, named, identical, "identical")
        else:
            found = same_rows(engine, content, table.height, named)
            if found is not None:
                part = Part(rows, several, table, sha, languages, content, named, found, "same_rows")
        parts.append(part)
    return parts

"""Each row's language: from the file's language column (or a harness log's metadata), else the
run's language, else the row's script, named as a script ("Devanagari", "Tamil script"), never
guessed as a language: Devanagari is Hindi, Marathi, Nepali or Sanskrit, and the Latin script is
English or a romanised answer in any language.

The script is the Unicode block holding most of the letters (vowel signs and viramas included,
digits and dandas not) of the golden answer and the question, counted a column at a time from
the rows' UTF-8 bytes by compiled code (:mod:`scoring.core.script_kernel`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from scoring.core.language_names import normalise_language_column, one_language
from scoring.core.slices import by_slices

LANGUAGE = "language"
#: Header names (any case, trimmed) that hold a row's language when nothing is mapped, first found wins.
LANGUAGE_FIELDS = ("language", "lang")
#: Where a run's row languages came from (``runs.language_source``; NULL for runs stored before).
FROM_METADATA, FROM_RUN, FROM_SCRIPT = "metadata", "run", "script"
COLUMN_PREFIX = "column:"


def scripts(question: pl.Series, answer: pl.Series) -> pl.Series:
    """Per row, the script of most letters of ``answer`` and ``question`` together (ties: the
    order of :data:`~scoring.core.script_names.SCRIPTS`); ``"Unknown script"`` where neither has a letter (digits,
    punctuation, nothing).

    Counted from the rows' UTF-8 bytes by compiled code
    (:func:`scoring.core.script_kernel.count_scripts`), a slice of rows per thread: a regular
    expression per script costs polars a microsecond or more per row and script, half a minute
    for a million Hindi rows. The kernel's module is imported here, not above: it loads numba.
    """
    kernel = importlib.import_module("scoring.core.script_kernel")
    return by_slices(pl.DataFrame({"question": question, "answer": answer}), kernel.script_names)


def warm_up_scripts() -> threading.Thread:
    """Load :func:`scripts`' kernel (numba, then its machine code from the cache: about a second of
    CPU) on a daemon thread, so that a server's first upload pays none of it. A failure here is
    left for the real call to report."""

    def run() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module("scoring.core.script_kernel").warm_up()

    thread = threading.Thread(target=run, name="scripts-warm-up", daemon=True)
    thread.start()
    return thread


def script_of(question: str, answer: str) -> str:
    """:func:`scripts` of one row."""
    return scripts(pl.Series([question], dtype=pl.String), pl.Series([answer], dtype=pl.String)).item()


@dataclass(frozen=True)
class RowLanguages:
    """A run's row languages and where they came from (``column:<field>``, ``metadata``, ``run``
    or ``script``: the first of the chain that gave any row its language)."""

    values: pl.Series
    source: str

    @property
    def from_file(self) -> bool:
        return from_file(self.source)

    def run_language(self, guessed: str) -> str:
        """The run's language (``runs.language``) when nobody typed one: with languages from the
        file, the one every row shares, else "" (a mixed run); otherwise ``guessed`` (the file's
        name's, as before rows had a language)."""
        if not self.from_file:
            return guessed
        found = self.values.unique()
        return str(found.item()) if len(found) == 1 else ""


def from_file(source: str | None) -> bool:
    """Whether ``source`` (``runs.language_source``) says the languages came from the file."""
    return source == FROM_METADATA or (source or "").startswith(COLUMN_PREFIX)


def row_languages(table: pl.DataFrame, run_language: str = "", from_file: str | None = None) -> RowLanguages:
    """Each row's language: its cell of ``table``'s :data:`LANGUAGE` column (normalised), where
    not blank; else ``run_language`` when it names one language; else the row's script.
    ``from_file``: how the loader found the column (:attr:`~scoring.core.loader.LoadedRun.language_from`)."""
    height = table.height
    given = (
        normalise_language_column(table[LANGUAGE])
        if LANGUAGE in table.columns
        else pl.repeat("", height, dtype=pl.String, eager=True)
    )
    single = one_language(run_language)
    blank = (given == "").arg_true()
    source = from_file if from_file and len(blank) < height else (FROM_RUN if single else FROM_SCRIPT)
    if blank.is_empty():
        return RowLanguages(given.alias(LANGUAGE), source)
    if single:
        fill = pl.repeat(single, len(blank), dtype=pl.String, eager=True)
    elif len(blank) == height:  # no row has one: every row's script, without copying the texts
        return RowLanguages(scripts(table["question"], table["answer"]).alias(LANGUAGE), source)
    else:
        fill = scripts(table["question"].gather(blank), table["answer"].gather(blank))
    return RowLanguages(given.scatter(blank, fill).alias(LANGUAGE), source)


def language_field(columns: Sequence[str], mapping: Mapping[str, str]) -> str | None:
    """The file's field holding row languages: the one mapped to :data:`LANGUAGE`, else the first
    header named like one of :data:`LANGUAGE_FIELDS` (any case, trimmed)."""
    if LANGUAGE in mapping:
        return mapping[LANGUAGE]
    taken = set(mapping.values())
    lowered = {str(c).strip().lower(): str(c) for c in reversed(columns) if c not in taken}
    return next((lowered[name] for name in LANGUAGE_FIELDS if name in lowered), None)


def take_language(table: pl.DataFrame, field: str | None, harness: bool) -> tuple[pl.DataFrame, str | None]:
    """``table`` (canonical names already given) with its language column named :data:`LANGUAGE`
    and normalised, and where it came from: ``metadata`` for a harness log's own field, else
    ``column:<field>``; (``table``, None) when the file has none."""
    if field is None:
        return table, None
    if LANGUAGE not in table.columns:  # a header such as ``lang``: not a canonical name
        table = table.rename({c: LANGUAGE for c in table.columns if c.strip() == field.strip()})
    table = table.with_columns(normalise_language_column(table[LANGUAGE]).alias(LANGUAGE))
    return table, FROM_METADATA if harness and field == LANGUAGE else f"{COLUMN_PREFIX}{field.strip()}"


def fill_languages(rows: pl.DataFrame, run_language: str, source: str | None, extra_prefix: str) -> pl.DataFrame:
    """Stored rows with their :data:`LANGUAGE` column as every reader sees it, right after
    ``Domain``. Rows that took their language from the file keep it. Rows that did not (the run's
    language or the script at upload) follow the run's language as it is now, so naming it later
    on the Upload page renames them. A run stored before rows had a language (no column) takes
    it from an input column named ``language`` or ``lang`` (stored under ``extra_prefix``), else the
    run's, else the script."""
    if LANGUAGE in rows.columns and (from_file(source) or source is None):  # None: a source lost to a downgrade
        return rows
    single = one_language(run_language)
    if source is None:  # stored before rows had a language
        extras = [c.removeprefix(extra_prefix) for c in rows.columns if c.startswith(extra_prefix)]
        found = language_field(extras, {})
        if found is not None:
            given = rows.select(pl.col(extra_prefix + found).alias(LANGUAGE))
            filled = row_languages(given.hstack(rows.select("question", "answer")), single).values
            return _placed(rows.with_columns(filled))
    if single:
        return _placed(rows.with_columns(pl.lit(single, dtype=pl.String).alias(LANGUAGE)))
    if LANGUAGE in rows.columns and source == FROM_SCRIPT:
        return rows
    return _placed(rows.with_columns(scripts(rows["question"], rows["answer"]).alias(LANGUAGE)))


def _placed(rows: pl.DataFrame) -> pl.DataFrame:
    """:data:`LANGUAGE` right after ``Domain``."""
    others = [c for c in rows.columns if c != LANGUAGE]
    at = others.index("Domain") + 1 if "Domain" in others else len(others)
    return rows.select(*others[:at], LANGUAGE, *others[at:])

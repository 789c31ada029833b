"""Each row's language: from the file's language column (or a harness log's metadata), else the
run's language, else the row's script, named as a script ("Devanagari", "Tamil script"), never
guessed as a language: Devanagari is Hindi, Marathi, Nepali or Sanskrit, and the Latin script is
English or a romanised answer in any language.

The script is the Unicode block holding most of the letters (vowel signs and viramas included,
digits and dandas not) of the golden answer and the question. Everything here is polars, column
at a time: a million rows of English need no per-row work at all (ASCII text is Latin or has no
letter), and Indic rows a dozen vectorised counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from scoring.core.language_names import normalise_languages, one_language

LANGUAGE = "language"
#: Header names (any case, trimmed) that hold a row's language when nothing is mapped, first found wins.
LANGUAGE_FIELDS = ("language", "lang")
#: Where a run's row languages came from (``runs.language_source``; NULL for runs stored before).
FROM_METADATA, FROM_RUN, FROM_SCRIPT = "metadata", "run", "script"
COLUMN_PREFIX = "column:"
LATIN, UNKNOWN_SCRIPT, OTHER_SCRIPT = "Latin", "Unknown script", "Other script"
_LETTER = r"\p{L}\p{M}"
#: Script name -> its Unicode block(s), in the order a tie is broken.
SCRIPT_BLOCKS: dict[str, str] = {
    "Devanagari": r"\x{0900}-\x{097F}\x{A8E0}-\x{A8FF}",
    "Bengali script": r"\x{0980}-\x{09FF}",
    "Tamil script": r"\x{0B80}-\x{0BFF}",
    "Telugu script": r"\x{0C00}-\x{0C7F}",
    "Kannada script": r"\x{0C80}-\x{0CFF}",
    "Malayalam script": r"\x{0D00}-\x{0D7F}",
    "Gujarati script": r"\x{0A80}-\x{0AFF}",
    "Gurmukhi": r"\x{0A00}-\x{0A7F}",
    "Odia script": r"\x{0B00}-\x{0B7F}",
    "Arabic script": r"\x{0600}-\x{06FF}\x{0750}-\x{077F}\x{08A0}-\x{08FF}\x{FB50}-\x{FDFF}\x{FE70}-\x{FEFF}",
    LATIN: r"\p{Latin}",
}
_PATTERNS = {name: f"[[{block}]&&[{_LETTER}]]" for name, block in SCRIPT_BLOCKS.items()}
_PATTERNS[OTHER_SCRIPT] = f"[[{_LETTER}]&&[^{''.join(SCRIPT_BLOCKS.values())}]]"
_NAMES = list(_PATTERNS)


def scripts(question: pl.Series, answer: pl.Series) -> pl.Series:
    """Per row, the script of most letters of ``answer`` and ``question`` together (ties: the
    order of :data:`SCRIPT_BLOCKS`); :data:`UNKNOWN_SCRIPT` where neither has a letter (digits,
    punctuation, nothing)."""
    text = pl.DataFrame({"a": answer.fill_null(""), "q": question.fill_null("")}).select(
        pl.concat_str("a", "q", separator=" ").alias("text")
    )["text"]
    ascii_text = ~text.str.contains(r"[^\x00-\x7F]")
    out = pl.select(
        pl.when(text.str.contains("[A-Za-z]")).then(pl.lit(LATIN)).otherwise(pl.lit(UNKNOWN_SCRIPT)).alias("script")
    )["script"]
    wide = (~ascii_text).arg_true()
    if wide.is_empty():
        return out
    counts = pl.DataFrame({"text": text.gather(wide)}).select(
        pl.concat_list(pl.col("text").str.count_matches(p) for p in _PATTERNS.values()).alias("n")
    )["n"]
    found = pl.select(
        pl.when(counts.list.max() > 0)
        .then(counts.list.arg_max().replace_strict(dict(enumerate(_NAMES)), return_dtype=pl.String))
        .otherwise(pl.lit(UNKNOWN_SCRIPT))
    ).to_series()
    return out.scatter(wide, found)


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
        table.select(normalise_languages(pl.col(LANGUAGE)))[LANGUAGE]
        if LANGUAGE in table.columns
        else pl.Series(LANGUAGE, [""] * height, dtype=pl.String)
    )
    single = one_language(run_language)
    blank = (given == "").arg_true()
    source = from_file if from_file and len(blank) < height else (FROM_RUN if single else FROM_SCRIPT)
    if blank.is_empty():
        return RowLanguages(given.alias(LANGUAGE), source)
    if single:
        fill = pl.Series([single] * len(blank), dtype=pl.String)
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
    table = table.with_columns(normalise_languages(pl.col(LANGUAGE)).alias(LANGUAGE))
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

"""Each row's language: from the file's language column (or a harness log's metadata), else the
run's language, else the row's script, named as a script ("Devanagari", "Tamil script"), never
guessed as a language: Devanagari is Hindi, Marathi, Nepali or Sanskrit, and the Latin script is
English or a romanised answer in any language.

The script is the Unicode block holding most of the letters (vowel signs and viramas included,
digits and dandas not) of the golden answer and the question. Everything here works a column at a
time: ASCII rows are Latin or have no letter; the others are counted from their UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from scoring.core.language_names import normalise_language_column, one_language
from scoring.core.slices import by_slices

LANGUAGE = "language"
#: Header names (any case, trimmed) that hold a row's language when nothing is mapped, first found wins.
LANGUAGE_FIELDS = ("language", "lang")
#: Where a run's row languages came from (``runs.language_source``; NULL for runs stored before).
FROM_METADATA, FROM_RUN, FROM_SCRIPT = "metadata", "run", "script"
COLUMN_PREFIX = "column:"
LATIN, UNKNOWN_SCRIPT, OTHER_SCRIPT = "Latin", "Unknown script", "Other script"
#: The Indic blocks, each 128 code points from U+0900 on, in Unicode order (block = code point >> 7).
INDIC_BLOCKS = (
    "Devanagari",
    "Bengali script",
    "Gurmukhi",
    "Gujarati script",
    "Odia script",
    "Tamil script",
    "Telugu script",
    "Kannada script",
    "Malayalam script",
)
ARABIC = "Arabic script"
#: Every script a row can be named by, in the order a tie is broken (Indic first, then Latin).
SCRIPTS = (*INDIC_BLOCKS, LATIN, ARABIC, OTHER_SCRIPT)
_FIRST_INDIC_BLOCK = 0x0900 >> 7
_CHUNK_ROWS = 100_000  #: rows whose bytes are classified at once (a few tens of MB of work arrays)


def scripts(question: pl.Series, answer: pl.Series) -> pl.Series:
    """Per row, the script of most letters of ``answer`` and ``question`` together (ties: the
    order of :data:`SCRIPTS`); :data:`UNKNOWN_SCRIPT` where neither has a letter (digits,
    punctuation, nothing).

    Rows of ASCII text need only two length counts and one search (Latin, or no letter). The
    others are counted from their UTF-8 bytes, with numpy over the Arrow buffers, by block (see
    :func:`_letter_codes`): a regular expression per script costs polars a microsecond or more
    per row and script, half a minute for a million Hindi rows.
    """
    question, answer = question.fill_null(""), answer.fill_null("")
    wide = (
        (question.str.len_bytes() != question.str.len_chars().cast(pl.UInt32))
        | (answer.str.len_bytes() != answer.str.len_chars().cast(pl.UInt32))
    ).arg_true()
    latin = question.str.contains("[A-Za-z]") | answer.str.contains("[A-Za-z]")
    out = pl.select(pl.when(pl.lit(latin)).then(pl.lit(LATIN)).otherwise(pl.lit(UNKNOWN_SCRIPT))).to_series()
    if wide.is_empty():
        return out
    both = pl.DataFrame({"question": question.gather(wide), "answer": answer.gather(wide)})
    return out.scatter(wide, by_slices(both, _most_letters, _CHUNK_ROWS))  # all rows' counts: 200 MB


def _most_letters(rows: pl.DataFrame) -> pl.Series:
    """:func:`scripts` of rows that are not all ASCII."""
    counts = _letter_counts(rows["question"]) + _letter_counts(rows["answer"])
    found = np.where(counts.max(axis=1) > 0, np.array(SCRIPTS, dtype=object)[counts.argmax(axis=1)], UNKNOWN_SCRIPT)
    return pl.Series(found.tolist(), dtype=pl.String)


def _letter_counts(column: pl.Series) -> np.ndarray:
    """Letters per row (rows x :data:`SCRIPTS`), counted on the column's UTF-8 bytes (a slice of at
    most :data:`_CHUNK_ROWS` rows: :func:`scripts` slices them)."""
    array = column.to_arrow()
    array = (array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array).cast(pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = (
        np.frombuffer(array.buffers()[2], dtype=np.uint8) if array.buffers()[2] is not None else np.zeros(0, np.uint8)
    )
    rows = len(array)
    codes = _letter_codes(data[offsets[0] : offsets[rows]])
    width = len(SCRIPTS) + 1  # code 0: no letter starts at the byte
    keys = np.repeat(np.arange(0, rows * width, width, dtype=np.int32), np.diff(offsets)) + codes
    return np.bincount(keys, minlength=rows * width).reshape(-1, width)[:, 1:]


def _lead_codes() -> np.ndarray:
    """:func:`_letter_codes` of each byte value on its own (a letter of one or two bytes, or the
    lead byte of a three-byte letter outside U+0800-U+0FFF)."""
    table = np.zeros(256, dtype=np.uint8)
    latin, arabic, other = (SCRIPTS.index(name) + 1 for name in (LATIN, ARABIC, OTHER_SCRIPT))
    table[[*range(0x41, 0x5B), *range(0x61, 0x7B), *range(0xC3, 0xCA)]] = latin
    table[[*range(0xD8, 0xDC), 0xDD]] = arabic
    table[[*range(0xCE, 0xD8), 0xDC, 0xDE, 0xDF, 0xE1, *range(0xE3, 0xEE)]] = other
    return table


_LEAD_CODES = _lead_codes()


def _letter_codes(b: np.ndarray) -> np.ndarray:
    """For each byte of UTF-8 text, 1 + the index in :data:`SCRIPTS` of the letter it starts, or 0.

    A letter of an Indic block is any code point of the block but its digits and dandas (offsets
    0x64-0x6F of each block): vowel signs and viramas count with their letters. Latin: ASCII
    letters and U+00C0-U+024F; Arabic: U+0600-U+06FF and U+0750-U+077F; other scripts: Greek to
    Hebrew, U+0D80-U+0FFF (Sinhala, Thai...), U+1000-U+1FFF and U+3000-U+D7FF (CJK, Hangul),
    by their lead bytes. Punctuation and symbols (U+2000-U+2FFF), digits and emoji count as none.
    """
    codes = _LEAD_CODES[b]
    lead = np.flatnonzero(b[:-2] == 0xE0)  # U+0800-U+0FFF: the Indic blocks among them
    point = ((b[lead + 1].astype(np.int32) & 0x3F) << 6) | (b[lead + 2] & 0x3F)
    block = (point >> 7) - _FIRST_INDIC_BLOCK
    offset = point & 0x7F
    letter = (block >= 0) & (block < len(INDIC_BLOCKS)) & ((offset < 0x64) | (offset > 0x6F))
    codes[lead] = np.where(letter, block + 1, np.where(point >= 0x0D80, SCRIPTS.index(OTHER_SCRIPT) + 1, 0))
    return codes


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

"""Which rows a reviewer can read: the languages each reviewer reads, and the one rule that hands
them rows (a Tamil row goes to people who read Tamil; a reviewer who set no language gets any).

A row's language is a language's name ("Tamil", from the file or the run) or, when nothing named
it, the script of its letters ("Tamil script", "Devanagari": :mod:`scoring.core.row_language`).
A reader of a language reads the rows named by it and the rows in its script; a row with no
letters at all ("Unknown script": digits, punctuation) is anyone's. Names are compared as
:func:`scoring.core.language_names.normalise_language` spells them, so "ta", "tam" and "Tamil"
are one language.

The languages are kept per reviewer in the database (:mod:`scoring.store.reader_table`), so they
hold in every session and on every machine the reviewer opens the queue from.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from scoring.core.language_names import normalise_language
from scoring.core.script_names import ARABIC, INDIC_BLOCKS, LATIN, UNKNOWN_SCRIPT
from scoring.core.verdict_rules import check_reviewer
from scoring.store.reader_table import read_languages, write_languages

#: A script a row is named by when nothing named its language -> the languages written in it.
SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    INDIC_BLOCKS[0]: ("Hindi", "Marathi", "Nepali", "Sanskrit", "Konkani", "Maithili", "Bodo", "Dogri"),
    INDIC_BLOCKS[1]: ("Bengali", "Assamese", "Manipuri"),
    INDIC_BLOCKS[2]: ("Punjabi",),
    INDIC_BLOCKS[3]: ("Gujarati",),
    INDIC_BLOCKS[4]: ("Odia",),
    INDIC_BLOCKS[5]: ("Tamil",),
    INDIC_BLOCKS[6]: ("Telugu",),
    INDIC_BLOCKS[7]: ("Kannada",),
    INDIC_BLOCKS[8]: ("Malayalam",),
    LATIN: ("English",),
    ARABIC: ("Urdu", "Sindhi", "Kashmiri"),
}
#: The longest language name kept (the column's width).
MAX_NAME = 100


def clean_languages(values: Iterable[str]) -> tuple[str, ...]:
    """``values`` as kept: each normalised (a code as its name), blanks dropped, each once, sorted.
    Raises ValueError naming a value that cannot be a language's name (too long, a control
    character), so the page and the command line can say which."""
    kept: dict[str, str] = {}
    for raw in values:
        name = normalise_language(str(raw))
        if not name:
            continue
        if len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
            raise ValueError(f"{name[:40]!r} is not a language's name (at most {MAX_NAME} printable characters).")
        kept.setdefault(name.casefold(), name)
    return tuple(sorted(kept.values(), key=str.casefold))


@functools.lru_cache(maxsize=4096)
def folded(name: str) -> str:
    """A language's name as compared here: normalised (a code as its name), case-folded."""
    return normalise_language(name).casefold()


@functools.lru_cache(maxsize=4096)
def readers_of(row_language: str) -> frozenset[str]:
    """The languages (:func:`folded`) whose readers can read a row of ``row_language``; empty for
    a row without letters (anyone can)."""
    if row_language in ("", UNKNOWN_SCRIPT):
        return frozenset()
    written = SCRIPT_LANGUAGES.get(row_language, ())
    return frozenset({folded(row_language), *(name.casefold() for name in written)})


def reads(row_languages: np.ndarray, reader: Collection[str]) -> np.ndarray:
    """Per row, whether a reviewer who reads ``reader`` can read it: every row when ``reader`` is
    empty (no language set: any row); else the rows of those languages, in their scripts, or
    without letters. Worked out once per distinct row language (a scope holds a handful)."""
    rows = np.asarray(row_languages, dtype=object)
    if not len(reader):
        return np.ones(len(rows), dtype=bool)
    mine = {folded(str(name)) for name in reader}
    codes, distinct = pd.factorize(rows)
    ok = np.array([not readers_of(str(lang)) or bool(readers_of(str(lang)) & mine) for lang in distinct], dtype=bool)
    return ok[codes] if len(distinct) else np.zeros(len(rows), dtype=bool)


def reviewer_languages(engine: Engine, reviewer: str) -> tuple[str, ...]:
    """The languages ``reviewer`` reads, as they set them (none: any row is theirs)."""
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    return read_languages(engine, name) if name else ()


def set_reviewer_languages(engine: Engine, reviewer: str, languages: Iterable[str]) -> tuple[str, ...]:
    """Keep ``languages`` (:func:`clean_languages`) as the ones ``reviewer`` reads, replacing
    earlier ones (none: any row); returns what is kept."""
    name = check_reviewer(reviewer)
    kept = clean_languages(languages)
    write_languages(engine, name, kept)
    return kept

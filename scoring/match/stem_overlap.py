"""Stemmed word overlap: the spec's word-overlap rule on word stems, for the languages a stemmer knows.

Optional, beside the spec's two metrics (which never change). Both sides are tokenised exactly as
the spec's word overlap does (lowercase, split on whitespace, strip edge punctuation, drop empty
words: :func:`scoring.core.protocols.word_set`); each word is then replaced by its stem from
``snowballstemmer`` (no model or download; it runs PyStemmer's C build of the same algorithms
where that is installed) for the row's language, and the golden
stems must all be among the response's::

    stem_overlap(a, r) = stems(words(a), lang) <= stems(words(r), lang)

**Only English, Hindi, Tamil and Nepali are stemmed** (:mod:`scoring.match.languages`: Snowball
has no stemmer for Bengali, Telugu, Kannada, Malayalam, Marathi, Gujarati and the rest). A row in
any other language, with no language, or with a script named in place of a language
("Devanagari", "Tamil script") is *not stemmed*: its verdict is the spec's word overlap
(:func:`scoring.match.languages.stemmed` says which). The Hindi stemmer is a light suffix stripper
("A Lightweight Stemmer for Hindi"); the Tamil one strips case and plural endings and sometimes
more than a linguist would (கோவில் "temple" stems to கோ while கோவில்கள் stems to கோவில்: the
tests show it).

A word stems the same wherever it appears, so :func:`stem_overlap_column` stems each distinct
word once per algorithm.
"""

from __future__ import annotations

import threading

import numpy as np
import polars as pl
import snowballstemmer

from scoring.core.compiled_utf8 import utf8_of
from scoring.core.protocols import is_blank, word_set
from scoring.match.char_tables import char_tables
from scoring.match.languages import algorithm
from scoring.match.pairs import Pairs, pairs_of
from scoring.match.text_kernels import Words, stem_verdicts, word_ids

_LOCAL = threading.local()


def _stemmer(name: str) -> snowballstemmer.stemmer:
    """This thread's stemmer for ``name``: PyStemmer's (C) where it is installed, which
    ``snowballstemmer`` itself prefers, else the pure-Python one (the same algorithms, the same
    stems: tests/test_stemmer_parity.py). One per thread: a stemmer object keeps state."""
    made = _LOCAL.__dict__.setdefault("stemmers", {})
    if name not in made:
        made[name] = snowballstemmer.stemmer(name)
    return made[name]


def stem_words(words: frozenset[str], language: str | None) -> frozenset[str]:
    """Each word's stem (the word itself where the language has no stemmer)."""
    name = algorithm(language)
    if name is None:
        return words
    stem = _stemmer(name).stemWord
    return frozenset(stem(w) for w in words)


def stem_overlap(answer: str, response: str | None, language: str | None) -> bool:
    """Every golden stem among the response's stems; a blank response fails (as in the spec)."""
    if is_blank(response):
        return False
    return stem_words(word_set(answer), language) <= stem_words(word_set(response), language)


# ---------------------------------------------------------------- columns


def stem_table(words: list[str], algorithms: list[str]) -> np.ndarray:
    """``out[w, g]``: an id of word ``w``'s stem for algorithm ``g`` (0: no stemming, the word's
    own id; ``g`` > 0: ``algorithms[g - 1]``), equal for two words exactly when their stems are.
    Every word is stemmed by every algorithm named: one ``stemWords`` call each."""
    out = np.empty((len(words), len(algorithms) + 1), dtype=np.int32)
    out[:, 0] = np.arange(len(words), dtype=np.int32)
    for g, name in enumerate(algorithms, start=1):
        ids: dict[str, int] = {}
        out[:, g] = [ids.setdefault(s, len(ids)) for s in _stemmer(name).stemWords(words)]
    return out


def _tables() -> tuple[np.ndarray, np.ndarray]:
    tables = char_tables()
    return tables.flags, tables.lower


def stem_overlap_column(
    answers: pl.Series, responses: pl.Series, languages: pl.Series, overlap: pl.Series | None = None
) -> pl.Series:
    """:func:`stem_overlap` of every row (``stem_overlap_correct``), equal to it row for row
    (:func:`stem_overlap_pairs`)."""
    return stem_overlap_pairs(pairs_of(answers, responses), languages, overlap)


def stem_overlap_pairs(pairs: Pairs, languages: pl.Series, overlap: pl.Series | None = None) -> pl.Series:
    """:func:`stem_overlap_column` of rows read once (:func:`scoring.match.pairs.pairs_of`).

    The spec's words of the distinct golden answers and of the responses are found and numbered
    by compiled code (:func:`scoring.match.text_kernels.word_ids`), each distinct word stemmed
    once per algorithm, and the stems compared as numbers (:func:`stem_verdicts`). A row the
    spec's overlap passes (``overlap``, when given) passes here too: its golden words are response
    words, so their stems are response stems; only the other rows are read. A row holding a
    character whose lowercasing Python does differently (Σ, İ) is scored by :func:`stem_overlap`.
    """
    golden, which, n = pairs.golden, pairs.which, len(pairs.which)
    langs = languages.cast(pl.String).fill_null("")
    found = {v: algorithm(v) for v in langs.unique().to_list()}
    names = sorted({a for a in found.values() if a is not None})
    code = {v: 0 if a is None else names.index(a) + 1 for v, a in found.items()}
    algs = langs.replace_strict(code, return_dtype=pl.Int64).to_numpy()
    passed = np.zeros(n, dtype=np.bool_) if overlap is None else overlap.fill_null(False).to_numpy().astype(np.bool_)
    rows = np.flatnonzero(~passed)
    words, tables = Words(), _tables()
    g_words = word_ids(utf8_of(golden), np.arange(len(golden)), tables, words)
    r_words = word_ids(pairs.texts, rows, tables, words)
    stems = stem_table(words.strings(), names)
    verdict = passed.copy()
    verdict[rows] = ~r_words[3] & stem_verdicts(rows, which, algs, g_words[:2], r_words[:2], stems)
    python = np.zeros(n, dtype=np.bool_)
    python[rows[r_words[2]]] = True
    python[rows[g_words[2][which[rows]]]] = True
    where = np.flatnonzero(python)
    if where.size:
        triples = zip(
            golden.gather(which[where]).to_list(),
            pairs.responses.gather(where).to_list(),
            langs.gather(where).to_list(),
        )
        verdict[where] = [stem_overlap(a, r, lang) for a, r, lang in triples]
    return pl.Series("stem_overlap_correct", verdict, dtype=pl.Boolean)

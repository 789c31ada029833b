"""Normalised exact: the spec's exact-substring test after a named normalisation of both sides.

Optional, beside the spec's two metrics (which never change). The spec's exact test is
``answer.lower() in response.lower()`` with a blank response failing; this matcher is the same
test on :func:`normalize_answer` of each side::

    normalize_answer(t) = collapse_whitespace(casefold(strip_edge_punctuation(
                              fold_nukta(nfc(remove_invisible(t))))))

Each step is one function below. Invisible characters go first, so that NFC can compose what they
kept apart (Tamil கெ + ZWNJ + ா is கொ once the ZWNJ goes). Nukta letters are folded after NFC, to
the decomposed form (consonant + U+093C), on both sides: NFC *recomposes* U+0929, U+0931 and
U+0934 but leaves U+0958-U+095F decomposed (composition exclusions), so only folding after NFC
gives one spelling of each. Punctuation (ASCII and every Unicode ``P*`` character, the danda
U+0964/U+0965 included: :data:`scoring.core.protocols.PUNCTUATION`) is stripped at word edges, so
inner punctuation (``co-operate``) stays. The golden answer is thus stripped too (the spec's is
not). As in the spec, an empty normalised golden answer is found in any non-blank response.

:func:`norm_exact_column` gives the same verdicts for whole columns, every step done in one
compiled pass per text (:mod:`scoring.match.text_kernels`; see :func:`norm_exact_pairs` for the
rows it hands back to Python). :func:`column_patterns` spells two of its character sets as regexes.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from scoring.core.columnar import patterns
from scoring.core.compiled_utf8 import utf8_of
from scoring.core.protocols import PUNCTUATION, is_blank
from scoring.core.unicode_tables import runs
from scoring.match.char_tables import INVISIBLE_CHARS, char_tables
from scoring.match.pairs import Pairs, pairs_of
from scoring.match.text_kernels import norm_all, norm_rows

#: Zero-width joiner and non-joiner, soft hyphen, byte-order mark (zero-width no-break space),
#: word joiner and zero-width space: they change rendering or line breaking, not the word.
INVISIBLE = INVISIBLE_CHARS
#: Precomposed nukta letters NFC keeps (NNNA, RRA, LLLA) -> consonant + nukta U+093C. The other
#: nukta letters (U+0958-U+095F, Bengali U+09DC/09DD/09DF...) are composition exclusions: NFC
#: already decomposes them, so after NFC every nukta letter is consonant + nukta.
NUKTA_FOLD = {"\u0929": "\u0928\u093c", "\u0931": "\u0930\u093c", "\u0934": "\u0933\u093c"}
_INVISIBLE_TABLE = dict.fromkeys(map(ord, INVISIBLE))
_NUKTA_TABLE = str.maketrans(NUKTA_FOLD)
#: Slices of rows normalised, on threads (the machines here have 2 cores).
SLICES, THREADS = 8, 2


def remove_invisible(text: str) -> str:
    """ZWJ, ZWNJ, soft hyphen, BOM, word joiner and zero-width space removed."""
    return text.translate(_INVISIBLE_TABLE)


def nfc(text: str) -> str:
    """Unicode canonical composition (NFC), so a precomposed and a decomposed spelling agree."""
    return unicodedata.normalize("NFC", text)


def fold_nukta(text: str) -> str:
    """Every nukta letter as consonant + U+093C (after NFC: see the module docstring)."""
    return text.translate(_NUKTA_TABLE)


def strip_edge_punctuation(text: str) -> str:
    """Words (split on whitespace) without leading and trailing punctuation; empty words dropped."""
    return " ".join(word for word in (w.strip(PUNCTUATION) for w in text.split()) if word)


def casefold(text: str) -> str:
    """Python's full case folding (``ß`` -> ``ss``); a no-op for Indic scripts."""
    return text.casefold()


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace as one space, none at the ends."""
    return " ".join(text.split())


def normalize_answer(text: str) -> str:
    """Every step in order (see the module docstring)."""
    return collapse_whitespace(casefold(strip_edge_punctuation(fold_nukta(nfc(remove_invisible(text))))))


def norm_exact(answer: str, response: str | None) -> bool:
    """The spec's exact-substring test on the normalised pair; a blank response fails."""
    if is_blank(response):
        return False
    return normalize_answer(answer) in normalize_answer(response)


# ---------------------------------------------------------------- regexes and columns


def _class_of(chars: str) -> str:
    flags = bytearray(sys.maxunicode + 1)
    for ch in chars:
        flags[ord(ch)] = 1
    return (
        "[" + "".join(f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in runs(flags)) + "]"
    )


def casefold_special() -> str:
    """Characters whose ``casefold()`` is not their ``lower()`` (``ß``, Cherokee, ligatures...),
    plus Σ and ς (lowercasing Σ depends on its neighbours; folding never gives ς). Found block by
    block: most blocks of 512 code points fold as they lower and are passed over whole."""
    found = ["Σ", "ς"]
    for start in range(0, sys.maxunicode + 1, 512):
        block = "".join(map(chr, range(start, min(start + 512, sys.maxunicode + 1))))
        if block.casefold() != block.lower():
            found += [ch for ch in block if ch.casefold() != ch.lower()]
    return "".join(sorted(set(found)))


@functools.cache
def column_patterns() -> dict[str, str]:
    """Regexes built from the running Python's tables, for polars code and the tests: ``python``
    matches a character whose case a polars path must leave to Python (casefold differs from
    lower, Σ/ς whose lowercasing depends on context, or unassigned in Python's Unicode version:
    polars' case tables are newer); ``nfc`` where NFC might change a text (:func:`nfc_unsure`:
    the plain quick check, which the compiled one refines)."""
    return {"python": f"{_class_of(casefold_special())}|{patterns()['unassigned']}", "nfc": nfc_unsure()}


#: Where Python's Unicode version assigns characters (planes 0-3 and 14); the rest is unassigned:
#: canonical combining class 0 and NFC quick check "yes".
ASSIGNED = (range(0x32000), range(0xE0000, 0xE1000))


def nfc_unsure() -> str:
    """A regex matching where NFC might change a text, from Python's tables (UAX #15's quick
    check): a character NFC never keeps (quick check "no": NFC changes it alone), one that may
    compose with the character before it (quick check "maybe": the second of a two-character
    canonical decomposition NFC recomposes, and Hangul medial vowels and final consonants), or two
    non-starters (combining class not 0) in a row, which NFC might reorder. A text with none of
    these passes the quick check, so NFC leaves it as it is."""
    unsure, marks = [], []
    for ch in map(chr, (c for part in ASSIGNED for c in part)):
        if unicodedata.combining(ch):
            marks.append(ch)
        if unicodedata.normalize("NFC", ch) != ch:
            unsure.append(ch)
            continue
        parts = unicodedata.decomposition(ch).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            unsure.append(chr(int(parts[1], 16)))
    unsure += map(chr, [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)])  # Hangul V and T jamo
    mark = _class_of("".join(marks))
    return f"{_class_of(''.join(unsure))}|{mark}{mark}"


def normalized(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """:func:`normalize_answer` of every text (a null as ""), as code points one after another
    and where each starts: compiled (:func:`scoring.match.text_kernels.norm_all`), the texts it
    flags done by :func:`normalize_answer` itself and put in their place."""
    t, utf8 = char_tables(), utf8_of(texts)
    cps, at, python = norm_all(utf8.data, utf8.offsets, t.flags, t.ccc, t.fold, t.pairs)
    rows = np.flatnonzero(python)
    if rows.size == 0:
        return cps, at
    done = [normalize_answer(text) for text in texts.cast(pl.String).fill_null("").gather(rows).to_list()]
    lengths = np.array([len(d) for d in done], dtype=np.int64)
    added = np.zeros(len(at), dtype=np.int64)
    added[rows + 1] = lengths
    flat = np.frombuffer("".join(done).encode("utf-32-le"), dtype=np.uint32)
    return np.insert(cps, np.repeat(at[rows], lengths), flat), at + np.cumsum(added)


def norm_exact_column(answers: pl.Series, responses: pl.Series) -> pl.Series:
    """:func:`norm_exact` of every row (``norm_exact_correct``), equal to it row for row."""
    return norm_exact_pairs(pairs_of(answers, responses))


def norm_exact_pairs(pairs: Pairs) -> pl.Series:
    """:func:`norm_exact_column` of rows read once (:func:`scoring.match.pairs.pairs_of`).

    Distinct golden answers are normalised once (:func:`normalized`); each response is normalised
    and searched by compiled code (:func:`scoring.match.text_kernels.norm_rows`), :data:`SLICES`
    slices of rows on :data:`THREADS` threads. A row it flags (NFC might change the response, or a
    character folds to several) is scored by :func:`norm_exact` itself.
    """
    cps, at = normalized(pairs.golden)
    t, texts, which, rows = char_tables(), pairs.texts, pairs.which, len(pairs.which)
    verdict, python = np.zeros(rows, dtype=np.bool_), np.zeros(rows, dtype=np.bool_)
    tables = (t.flags, t.ccc, t.fold, t.pairs)
    step = max(1, -(-rows // SLICES))

    def part(lo: int) -> None:
        norm_rows(texts.data, texts.offsets, lo, min(lo + step, rows), which, cps, at, tables, verdict, python)

    with ThreadPoolExecutor(THREADS) as pool:  # the kernel releases the GIL
        list(pool.map(part, range(0, rows, step)))
    where = np.flatnonzero(python)
    if where.size:
        answers = pairs.golden.gather(which[where]).to_list()
        verdict[where] = [norm_exact(a, r) for a, r in zip(answers, pairs.responses.gather(where).to_list())]
    return pl.Series("norm_exact_correct", verdict, dtype=pl.Boolean)

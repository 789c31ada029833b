"""Character F-score: sacrebleu's sentence-level chrF of the response against the golden answer.

Optional, beside the spec's two metrics (which never change). The parameters are chrF's defaults in
``sacrebleu.metrics.CHRF`` (:data:`CHRF_PARAMS`: character n-grams of order 1 to 6, no word
n-grams, beta 2 so recall weighs four times precision, case-sensitive, whitespace removed before
the n-grams are taken, sacreBLEU's effective-order averaging). A row is correct when its score
(0-100) is at least the team's threshold (:data:`scoring.match.settings.CHRF_THRESHOLD_SETTING`);
a blank response fails, as in the spec. chrF rewards shared character n-grams, so an inflected form
(``Amalaka`` for ``amalak``) scores high; it also falls with the response's length (precision), so
a long answer that contains the golden one can score low. sacrebleu downloads nothing for chrF (a
test runs it with the network refused).

Per row, sacrebleu counts every n-gram in Python (about 0.1 ms a row). :func:`chrf_column` gives
the same verdicts for whole columns: the n-grams are counted and scored by compiled code
(:mod:`scoring.match.chrf_count`) on two threads, the score with sacrebleu's own operations
(:func:`scoring.match.chrf_count.f_score`), so the floats are the same. A pair too long to count
in memory (:data:`BIG`) is scored by sacrebleu itself. :func:`counts` and :func:`golden_ngrams`
spell the counting out in plain Python, for the tests to check the compiled code against.
"""

from __future__ import annotations

import functools
import importlib
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from scoring.core.compiled_utf8 import Utf8
from scoring.core.protocols import is_blank
from scoring.match import CHRF_PARAMS
from scoring.match.chrf_count import ORDER, chrf_verdicts, golden_tables, strip_whitespace
from scoring.match.pairs import Pairs, pairs_of

if TYPE_CHECKING:
    from sacrebleu.metrics.chrf import CHRF

#: Rows counted at a time (memory: their code points, 4 bytes each), and chunks at once.
CHUNK, THREADS = 100_000, 2
#: A pair whose two lengths multiply past this (memory to count it: 8 bytes each) goes to sacrebleu.
BIG = 1 << 24


@functools.cache
def _metric() -> CHRF:
    """sacrebleu's scorer, imported on first use: the column path never needs it but for pairs
    past :data:`BIG` (a tenth of a second of imports spared)."""
    return importlib.import_module("sacrebleu.metrics.chrf").CHRF(**CHRF_PARAMS)


def chrf_score(answer: str, response: str) -> float:
    """sacrebleu's sentence chrF (0-100) of ``response`` against the golden ``answer``."""
    return _metric().sentence_score(response, [answer]).score


def chrf_correct(answer: str, response: str | None, threshold: float) -> bool:
    """Score at least ``threshold``; a blank response fails."""
    if is_blank(response):
        return False
    return chrf_score(answer, response) >= threshold


# ---------------------------------------------------------------- columns


def counts(hyp_len: np.ndarray, ref_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row and order, the n-grams of each side (sacrebleu counts none for the response where
    the golden answer has none of that order)."""
    n = np.arange(1, ORDER + 1)
    ref = np.maximum(ref_len[:, None] - n + 1, 0)
    hyp = np.where(ref > 0, np.maximum(hyp_len[:, None] - n + 1, 0), 0)
    return hyp.astype(float), ref.astype(float)


def golden_ngrams(answer: str) -> list[tuple[int, str, int, bool]]:
    """(order, n-gram, times in the answer, whether it overlaps itself) of each distinct n-gram of
    ``answer`` with its whitespace removed (a self-overlapping n-gram: ``aa``, ``aba``)."""
    text = "".join(answer.split())
    out = []
    for n in range(1, ORDER + 1):
        grams: dict[str, int] = {}
        for i in range(len(text) - n + 1):
            grams[text[i : i + n]] = grams.get(text[i : i + n], 0) + 1
        out += [(n, g, c, any(g[:k] == g[-k:] for k in range(1, n))) for g, c in grams.items()]
    return out


def chrf_column(answers: pl.Series, responses: pl.Series, threshold: float) -> pl.Series:
    """:func:`chrf_correct` of every row (``chrf_correct``), equal to it row for row."""
    return chrf_pairs(pairs_of(answers, responses), threshold)


def chrf_pairs(pairs: Pairs, threshold: float) -> pl.Series:
    """:func:`chrf_column` of rows read once (:func:`scoring.match.pairs.pairs_of`): counted and
    scored by compiled code (:func:`scoring.match.chrf_count.chrf_verdicts`), :data:`CHUNK` rows
    at a time on :data:`THREADS` threads; a pair past :data:`BIG` is scored by sacrebleu itself."""
    golden, which, rows = pairs.golden, pairs.which, len(pairs.which)
    ref = golden_tables(strip_whitespace(golden))
    verdict = np.zeros(rows, dtype=bool)

    def chunk(start: int) -> None:
        part = slice(start, min(start + CHUNK, rows))
        texts = Utf8(pairs.texts.data, pairs.texts.offsets[start : part.stop + 1])
        got, big = chrf_verdicts(texts, ref, which[part], BIG, threshold)
        for i in np.flatnonzero(big):
            got[i] = chrf_correct(golden[int(which[start + i])], pairs.responses[start + int(i)], threshold)
        verdict[part] = got

    with ThreadPoolExecutor(THREADS) as pool:  # the counting releases the GIL
        list(pool.map(chunk, range(0, rows, CHUNK)))
    return pl.Series("chrf_correct", verdict, dtype=pl.Boolean)

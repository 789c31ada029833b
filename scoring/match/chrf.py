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
the same verdicts for whole columns: the n-grams are counted by compiled code
(:mod:`scoring.match.chrf_count`) on two threads, and the score is computed from the counts with
sacrebleu's own operations (:func:`f_score`), so the floats are the same. A pair too long to count
in memory (:data:`BIG`) is scored by sacrebleu itself.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
from sacrebleu.metrics.chrf import CHRF

from scoring.core.columnar import patterns
from scoring.core.protocols import is_blank
from scoring.match.chrf_count import match_counts, strip_whitespace

#: sacrebleu's defaults, named so the docs and the result can say them.
CHRF_PARAMS = {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False}
ORDER, BETA = CHRF_PARAMS["char_order"], CHRF_PARAMS["beta"]
EPS = 1e-16  # sacrebleu's, for an order with nothing to count
#: Rows counted at a time (memory: their code points, 4 bytes each), and chunks at once.
CHUNK, THREADS = 100_000, 2
#: A pair whose two lengths multiply past this (memory to count it: 8 bytes each) goes to sacrebleu.
BIG = 1 << 24


@functools.cache
def _metric() -> CHRF:
    return CHRF(**CHRF_PARAMS)


def chrf_score(answer: str, response: str) -> float:
    """sacrebleu's sentence chrF (0-100) of ``response`` against the golden ``answer``."""
    return _metric().sentence_score(response, [answer]).score


def chrf_correct(answer: str, response: str | None, threshold: float) -> bool:
    """Score at least ``threshold``; a blank response fails."""
    if is_blank(response):
        return False
    return chrf_score(answer, response) >= threshold


# ---------------------------------------------------------------- numpy / polars


def f_score(hyp: np.ndarray, ref: np.ndarray, match: np.ndarray) -> np.ndarray:
    """sacrebleu's ``CHRF._compute_f_score`` (effective order) for rows of per-order counts
    (each array rows x :data:`ORDER`), operation for operation, so the floats are the same."""
    factor = BETA**2
    rows = hyp.shape[0]
    avg_prec, avg_rec, effective = np.zeros(rows), np.zeros(rows), np.zeros(rows)
    for n in range(ORDER):
        h, r, m = hyp[:, n], ref[:, n], match[:, n]
        prec = np.divide(m, h, out=np.full(rows, EPS), where=h > 0)
        rec = np.divide(m, r, out=np.full(rows, EPS), where=r > 0)
        use = (h > 0) & (r > 0)
        avg_prec = np.where(use, avg_prec + prec, avg_prec)
        avg_rec = np.where(use, avg_rec + rec, avg_rec)
        effective += use
    some = effective > 0
    avg_prec = np.divide(avg_prec, effective, out=np.zeros(rows), where=some)
    avg_rec = np.divide(avg_rec, effective, out=np.zeros(rows), where=some)
    top = (1 + factor) * avg_prec * avg_rec
    bottom = (factor * avg_prec) + avg_rec
    score = np.divide(top, bottom, out=np.zeros(rows), where=(avg_prec + avg_rec) != 0)
    return np.where((avg_prec + avg_rec) != 0, 100 * score, 0.0)


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
    rows = len(answers)
    golden = answers.cast(pl.String).fill_null("")
    distinct = golden.unique(maintain_order=True)
    which = golden.replace_strict(distinct, pl.int_range(distinct.len(), dtype=pl.Int64, eager=True)).to_numpy()
    text = responses.cast(pl.String)
    blank = (text.is_null() | text.str.contains(patterns()["blank"])).fill_null(True).to_numpy()
    ref = strip_whitespace(distinct)
    ref_len = np.diff(ref[1])
    verdict = np.zeros(rows, dtype=bool)

    def chunk(start: int) -> None:
        part = slice(start, min(start + CHUNK, rows))
        hyp = strip_whitespace(text[part])
        hyp_len, row_ref = np.diff(hyp[1]), ref_len[which[part]]
        hyp_n, ref_n = counts(hyp_len, row_ref)
        big = hyp_len * row_ref > BIG
        count = np.flatnonzero(~blank[part] & ~big)
        match = match_counts(hyp, ref, which[part], count)
        got = verdict[part]
        got[count] = f_score(hyp_n[count], ref_n[count], match) >= threshold
        for i in np.flatnonzero(~blank[part] & big):
            got[i] = chrf_correct(golden[start + int(i)], text[start + int(i)], threshold)

    with ThreadPoolExecutor(THREADS) as pool:  # the counting releases the GIL
        list(pool.map(chunk, range(0, rows, CHUNK)))
    return pl.Series("chrf_correct", verdict, dtype=pl.Boolean)

"""chrF's character n-gram counts and score for many rows at once, compiled (numba).

sacreBLEU's chrF removes whitespace (``"".join(text.split())``) and counts, per order n, the
n-grams of each side (overlapping) and the matched ones, ``sum(min(hyp[g], ref[g]) for g in ref)``,
then scores them (:func:`f_score`). This module computes the same integers and floats for whole
columns:

- :func:`strip_whitespace`: every text without the characters ``str.split()`` splits on, as one
  array of code points and the offsets of each text;
- :func:`chrf_verdicts`: per row, the score against the threshold. For each position ``j`` of the
  golden answer it keeps the response positions where the golden n-gram starting at ``j`` occurs:
  for n = 1 from one pass over the response (each character looked up among the golden answer's
  distinct characters), for each next order by keeping those followed by the next golden
  character, so every count is exact (self-overlapping n-grams included). A golden n-gram is
  counted once, at its first position, at most as often as it occurs in the golden answer. A row
  whose response contains the whole golden answer matches every golden n-gram as often as it
  occurs: its counts are the golden answer's, without the walk. The score is sacreBLEU's
  ``CHRF._compute_f_score``, operation for operation, so the floats are the same.

Compiled with numba on first use and cached beside this file (:func:`scoring.match.utf8.compiled`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from scoring.core.columnar import WHITESPACE
from scoring.match.utf8 import compiled, utf8_of

#: chrF's character n-gram orders and beta (sacrebleu's defaults ``char_order`` and ``beta``).
ORDER, BETA = 6, 2
STEP = ORDER + 1
#: ``SPACE[c]``: whether code point ``c`` (below ``len(SPACE)``) is whitespace for ``str.split()``.
SPACE = np.zeros(max(map(ord, WHITESPACE)) + 1, dtype=np.bool_)
SPACE[[ord(c) for c in WHITESPACE]] = True


@compiled
def _strip(
    data: np.ndarray, offsets: np.ndarray, space: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """UTF-8 texts (``data[offsets[i]:offsets[i + 1]]``) as code points without whitespace."""
    out = np.empty(offsets[-1] - offsets[0], np.uint32)
    at = np.zeros(offsets.shape[0], np.int64)
    c, top = 0, space.shape[0]
    for i in range(offsets.shape[0] - 1):
        k, end = offsets[i], offsets[i + 1]
        while k < end:
            b = np.uint32(data[k])
            if b < 0x80:
                cp, k = b, k + 1
            elif b < 0xE0:
                cp, k = ((b & 0x1F) << 6) | (data[k + 1] & 0x3F), k + 2
            elif b < 0xF0:
                cp = ((b & 0x0F) << 12) | ((data[k + 1] & 0x3F) << 6) | (data[k + 2] & 0x3F)
                k += 3
            else:
                cp = ((b & 0x07) << 18) | ((data[k + 1] & 0x3F) << 12) | ((data[k + 2] & 0x3F) << 6)
                cp |= data[k + 3] & 0x3F
                k += 4
            if cp >= top or not space[cp]:
                out[c] = cp
                c += 1
        at[i + 1] = c
    return out[:c], at


@compiled
def _golden(
    r: np.ndarray, first: np.ndarray, times: np.ndarray, nxt: np.ndarray
) -> None:  # pragma: no cover - compiled
    """Per order and position of the golden answer ``r``: whether its n-gram starts there first
    (``first``), and how often that n-gram occurs in ``r`` (``times``); ``nxt[j]``: the next
    position holding the character at ``j`` (-1: none)."""
    rl = r.shape[0]
    same = np.empty((rl, rl), np.bool_)  # golden n-gram at k == golden n-gram at j
    for n in range(1, ORDER + 1):
        grams = rl - n + 1
        for j in range(max(grams, 0)):
            first[j, n - 1], times[j, n - 1] = True, 0
            for k in range(grams):
                same[k, j] = (r[k] == r[j]) if n == 1 else (same[k, j] and r[k + n - 1] == r[j + n - 1])
                if same[k, j]:
                    times[j, n - 1] += 1
                    if k < j:
                        first[j, n - 1] = False
            if n == 1:
                nxt[j] = -1
                for k in range(j + 1, rl):
                    if same[k, j]:
                        nxt[j] = k
                        break


@compiled
def _inside(h: np.ndarray, hs: int, hl: int, r: np.ndarray, rs: int, rl: int) -> bool:  # pragma: no cover
    """Whether ``r[rs:rs + rl]`` (not empty) occurs in ``h[hs:hs + hl]``."""
    for p in range(hs, hs + hl - rl + 1):
        if h[p] == r[rs]:
            k = 1
            while k < rl and h[p + k] == r[rs + k]:
                k += 1
            if k == rl:
                return True
    return False


@compiled
def _f(hyp: np.ndarray, ref: np.ndarray, match: np.ndarray) -> float:  # pragma: no cover - compiled
    """sacreBLEU's ``CHRF._compute_f_score`` (effective order) of one row's per-order counts."""
    factor = BETA**2
    avg_prec, avg_rec, effective = 0.0, 0.0, 0
    for n in range(ORDER):
        if hyp[n] > 0 and ref[n] > 0:
            avg_prec += match[n] / hyp[n]
            avg_rec += match[n] / ref[n]
            effective += 1
    if effective == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective
        avg_rec /= effective
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= (factor * avg_prec) + avg_rec
        return 100 * score
    return 0.0


@compiled
def _f_rows(hyp: np.ndarray, ref: np.ndarray, match: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty(hyp.shape[0])
    for i in range(hyp.shape[0]):
        out[i] = _f(hyp[i], ref[i], match[i])
    return out


def f_score(hyp: np.ndarray, ref: np.ndarray, match: np.ndarray) -> np.ndarray:
    """sacreBLEU's chrF score of rows of per-order counts (each array rows x :data:`ORDER`)."""
    return _f_rows(*(np.ascontiguousarray(a, dtype=np.float64) for a in (hyp, ref, match)))


@compiled
def _verdicts(
    hyp: np.ndarray,
    hyp_at: np.ndarray,
    golden: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    which: np.ndarray,
    big: int,
    threshold: float,
    out: tuple[np.ndarray, np.ndarray],
) -> None:  # pragma: no cover - compiled
    """Each response ``i`` of ``hyp`` against golden answer ``which[i]``: its score at least
    ``threshold`` (``verdict``), or, a pair past ``big``, left to the caller (``big_rows``)."""
    ref, ref_at, first, times, nxt = golden
    verdict, big_rows = out
    longest = 1
    for a in range(ref_at.shape[0] - 1):
        longest = max(longest, ref_at[a + 1] - ref_at[a])
    cap = 2
    while cap < 2 * longest:
        cap *= 2
    slot_cp, slot_j = np.full(cap, -1, np.int64), np.empty(cap, np.int64)
    # reach[j * STEP + l]: response positions agreeing with the golden at j for exactly l characters
    reach = np.zeros(longest * STEP, np.int64)
    hyp_n, ref_n, match = np.zeros(ORDER), np.zeros(ORDER), np.zeros(ORDER)
    for i in range(which.shape[0]):  # no slices here: each costs a reference count, twice
        hs, hl, a = hyp_at[i], hyp_at[i + 1] - hyp_at[i], which[i]
        s, rl = ref_at[a], ref_at[a + 1] - ref_at[a]
        if hl == 0:  # blank: nothing but whitespace
            continue
        if hl * rl > big:
            big_rows[i] = True
            continue
        for n in range(ORDER):
            ref_n[n] = max(rl - n, 0)
            hyp_n[n] = max(hl - n, 0) if ref_n[n] > 0 else 0
            match[n] = 0
        if rl > 0 and _inside(hyp, hs, hl, ref, s, rl):
            for n in range(ORDER):
                match[n] = ref_n[n]
        elif rl > 0:
            mask = 1  # a table of the golden's distinct characters -> first position, at most half full
            while mask + 1 < 2 * rl:
                mask = 2 * mask + 1
            for j in range(rl * STEP):
                reach[j] = 0
            for j in range(rl):
                if first[s + j, 0]:
                    q = ref[s + j] & mask
                    while slot_cp[q] >= 0:
                        q = (q + 1) & mask
                    slot_cp[q], slot_j[q] = ref[s + j], j
            for p in range(hl):  # each golden position with this character: how far they agree
                c = hyp[hs + p]
                q = c & mask
                while slot_cp[q] >= 0:
                    if slot_cp[q] == c:
                        j = slot_j[q]
                        while j >= 0:
                            most = min(ORDER, rl - j, hl - p)
                            length = 1
                            while length < most and hyp[hs + p + length] == ref[s + j + length]:
                                length += 1
                            reach[j * STEP + length] += 1
                            j = nxt[s + j]
                        break
                    q = (q + 1) & mask
            for q in range(mask + 1):
                slot_cp[q] = -1
            for j in range(rl):
                found = 0  # response positions agreeing with the golden at j for n characters or more
                for n in range(min(ORDER, rl - j), 0, -1):
                    found += reach[j * STEP + n]
                    if first[s + j, n - 1]:
                        match[n - 1] += min(found, times[s + j, n - 1])
        verdict[i] = _f(hyp_n, ref_n, match) >= threshold


def golden_tables(ref: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
    """The golden answers from :func:`strip_whitespace` with what :func:`chrf_verdicts` needs of
    each: ``first``, ``times`` and ``nxt`` (:func:`_golden`)."""
    cps, at = ref
    first, times = np.zeros((cps.shape[0], ORDER), np.bool_), np.zeros((cps.shape[0], ORDER), np.int64)
    nxt = np.zeros(cps.shape[0], np.int64)
    _goldens(cps, at, first, times, nxt)
    return cps, at, first, times, nxt


@compiled
def _goldens(
    cps: np.ndarray, at: np.ndarray, first: np.ndarray, times: np.ndarray, nxt: np.ndarray
) -> None:  # pragma: no cover - compiled
    for a in range(at.shape[0] - 1):
        s, e = at[a], at[a + 1]
        _golden(cps[s:e], first[s:e], times[s:e], nxt[s:e])


def strip_whitespace(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The texts (a null as "") as one array of code points with whitespace removed, as chrF removes
    it, and where each text starts (``len(texts) + 1`` offsets). Read from the texts' UTF-8 bytes
    in Arrow's buffers, without a Python string per row."""
    return _strip(*utf8_of(texts), SPACE)


def chrf_verdicts(
    hyp: tuple[np.ndarray, np.ndarray], golden: tuple[np.ndarray, ...], which: np.ndarray, big: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each response of ``hyp`` (:func:`strip_whitespace`) against golden answer ``which[i]`` of
    ``golden`` (:func:`golden_tables`): whether its chrF is at least ``threshold`` (a blank
    response: no), and which pairs were left out as past ``big`` (their two lengths multiplied;
    the memory to count a pair is 8 bytes each) for the caller to score."""
    verdict, big_rows = np.zeros(which.shape[0], np.bool_), np.zeros(which.shape[0], np.bool_)
    _verdicts(*hyp, golden, which.astype(np.int64), big, float(threshold), (verdict, big_rows))
    return verdict, big_rows

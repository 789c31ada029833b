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

Compiled with numba on first use and cached beside this file (:func:`scoring.core.compiled_utf8.compiled`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from scoring.core.columnar import WHITESPACE
from scoring.core.compiled_utf8 import Utf8, compiled, utf8_of

#: chrF's character n-gram orders and beta (sacrebleu's defaults ``char_order`` and ``beta``).
ORDER, BETA = 6, 2
#: Slots of the per-row table from a code point's low bits to its distinct golden character.
TABLE = 1024
#: ``SPACE[c]``: whether code point ``c`` (below ``len(SPACE)``) is whitespace for ``str.split()``.
SPACE = np.zeros(max(map(ord, WHITESPACE)) + 1, dtype=np.bool_)
SPACE[[ord(c) for c in WHITESPACE]] = True


@compiled
def _strip_row(
    data: np.ndarray, k: int, end: int, space: np.ndarray, out: np.ndarray, at: int
) -> int:  # pragma: no cover - compiled
    """The UTF-8 text ``data[k:end]`` as code points without whitespace, written from ``out[at]``:
    how many."""
    c, top = at, space.shape[0]
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
    return c - at


@compiled
def _strip(
    data: np.ndarray, offsets: np.ndarray, space: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """UTF-8 texts (``data[offsets[i]:offsets[i + 1]]``) as code points without whitespace."""
    out = np.empty(offsets[-1] - offsets[0], np.uint32)
    at = np.zeros(offsets.shape[0], np.int64)
    for i in range(offsets.shape[0] - 1):
        at[i + 1] = at[i] + _strip_row(data, offsets[i], offsets[i + 1], space, out, at[i])
    return out[: at[-1]], at


@compiled
def _golden(
    r: np.ndarray, first: np.ndarray, times: np.ndarray, dix: np.ndarray, dch: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Per order and position of the golden answer ``r``: whether its n-gram starts there first
    (``first``), and how often that n-gram occurs in ``r`` (``times``); its distinct characters
    (``dch``, in order of first appearance) and which one stands at each position (``dix``):
    how many distinct characters."""
    rl, distinct = r.shape[0], 0
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
        if n == 1:  # each position's distinct character, before the next orders overwrite ``same``
            for j in range(rl):
                dix[j] = -1
                for k in range(j):
                    if same[k, j]:
                        dix[j] = dix[k]
                        break
                if dix[j] < 0:
                    dix[j], dch[distinct] = distinct, r[j]
                    distinct += 1
    return distinct


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
def _popcount(x: np.uint64) -> int:  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@compiled
def _verdicts(
    data: np.ndarray,
    offsets: np.ndarray,
    golden: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    which: np.ndarray,
    big: int,
    threshold: float,
    out: tuple[np.ndarray, np.ndarray],
) -> None:  # pragma: no cover - compiled
    """Each response (UTF-8 ``data[offsets[i]:offsets[i + 1]]``) against golden answer
    ``which[i]``: its score at least ``threshold`` (``verdict``), or, a pair past ``big``, left to
    the caller (``big_rows``).

    Per row, one bit set per response position for each distinct golden character found there
    (``bits``, ``words`` 64-bit words each; position by position: no branch on the character);
    then for each golden position ``j`` and order ``n``, the positions where the response holds
    the golden n-gram starting at ``j`` are the AND of those sets shifted by 0 to n - 1."""
    ref, ref_at, first, times, dix, dch, distinct = golden
    verdict, big_rows = out
    longest, size = 1, 1
    for i in range(which.shape[0]):
        a, most = which[i], offsets[i + 1] - offsets[i]  # at most one code point a byte
        rl = ref_at[a + 1] - ref_at[a]
        longest = max(longest, most)
        most = min(most, big // rl) if rl > 0 else 0
        size = max(size, (distinct[a] + 1) * ((most + 63) // 64 + 1))
    h, bits, run = np.empty(longest, np.uint32), np.zeros(size, np.uint64), np.zeros(size, np.uint64)
    table = np.full(TABLE, -1, np.int64)
    chars = np.empty(size, np.int64)  # the row's distinct golden characters, then -1
    hyp_n, ref_n, match = np.zeros(ORDER), np.zeros(ORDER), np.zeros(ORDER)
    one = np.uint64(1)
    for i in range(which.shape[0]):
        hl = _strip_row(data, offsets[i], offsets[i + 1], SPACE, h, 0)
        a = which[i]
        s, rl, nd = ref_at[a], ref_at[a + 1] - ref_at[a], distinct[a]
        if hl == 0:  # blank: nothing but whitespace
            continue
        if hl * rl > big:
            big_rows[i] = True
            continue
        for n in range(ORDER):
            ref_n[n] = max(rl - n, 0)
            hyp_n[n] = max(hl - n, 0) if ref_n[n] > 0 else 0
            match[n] = 0
        if rl > 0 and _inside(h, 0, hl, ref, s, rl):
            for n in range(ORDER):
                match[n] = ref_n[n]
        elif rl > 0:
            words = (hl + 63) // 64
            for q in range((nd + 1) * words):
                bits[q] = 0
            clash = False  # two distinct golden characters with the same table slot
            for d in range(nd):
                clash = clash or table[dch[s + d] & (TABLE - 1)] >= 0
                table[dch[s + d] & (TABLE - 1)] = d
                chars[d] = dch[s + d]
            chars[nd] = -1  # nd: no golden character (matches no code point)
            for p in range(hl):
                c = h[p]
                d = table[c & (TABLE - 1)]
                if clash:
                    for e in range(nd):
                        d = e if chars[e] == c else d
                d = nd if d < 0 else d
                d = d if chars[d] == c else nd  # selects, not branches: the data decides them
                bits[d * words + (p >> 6)] |= one << np.uint64(p & 63)
            for d in range(nd):
                table[dch[s + d] & (TABLE - 1)] = -1
            if words == 1:  # most responses: one word a character, no loop over words
                for j in range(rl):
                    run1 = bits[dix[s + j]]
                    for n in range(1, min(ORDER, rl - j) + 1):
                        if n > 1:
                            run1 &= bits[dix[s + j + n - 1]] >> np.uint64(n - 1)
                        found = _popcount(run1)
                        if found == 0:
                            break
                        if first[s + j, n - 1]:
                            match[n - 1] += min(found, times[s + j, n - 1])
                verdict[i] = _f(hyp_n, ref_n, match) >= threshold
                continue
            for j in range(rl):
                base = dix[s + j] * words
                for w in range(words):
                    run[w] = bits[base + w]
                for n in range(1, min(ORDER, rl - j) + 1):
                    found = 0
                    if n > 1:  # and the golden's n-th character n - 1 positions on
                        src, shift = dix[s + j + n - 1] * words, np.uint64(n - 1)
                        for w in range(words):
                            v = bits[src + w] >> shift
                            if w + 1 < words:
                                v |= bits[src + w + 1] << (np.uint64(64) - shift)
                            run[w] &= v
                    for w in range(words):
                        found += _popcount(run[w])
                    if found == 0:
                        break
                    if first[s + j, n - 1]:
                        match[n - 1] += min(found, times[s + j, n - 1])
        verdict[i] = _f(hyp_n, ref_n, match) >= threshold


def golden_tables(ref: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
    """The golden answers from :func:`strip_whitespace` with what :func:`chrf_verdicts` needs of
    each (:func:`_golden`): ``first``, ``times``, ``dix``, ``dch`` (at the answer's own offsets)
    and how many distinct characters each has."""
    cps, at = ref
    first, times = np.zeros((cps.shape[0], ORDER), np.bool_), np.zeros((cps.shape[0], ORDER), np.int64)
    dix, dch = np.zeros(cps.shape[0], np.int64), np.zeros(cps.shape[0], np.int64)
    distinct = np.zeros(at.shape[0] - 1, np.int64)
    _goldens(cps, at, (first, times, dix, dch), distinct)
    return cps, at, first, times, dix, dch, distinct


@compiled
def _goldens(
    cps: np.ndarray, at: np.ndarray, out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], distinct: np.ndarray
) -> None:  # pragma: no cover - compiled
    first, times, dix, dch = out
    for a in range(at.shape[0] - 1):
        s, e = at[a], at[a + 1]
        distinct[a] = _golden(cps[s:e], first[s:e], times[s:e], dix[s:e], dch[s:e])


def strip_whitespace(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The texts (a null as "") as one array of code points with whitespace removed, as chrF removes
    it, and where each text starts (``len(texts) + 1`` offsets). Read from the texts' UTF-8 bytes
    in Arrow's buffers, without a Python string per row."""
    return _strip(*utf8_of(texts), SPACE)


def chrf_verdicts(
    texts: Utf8, golden: tuple[np.ndarray, ...], which: np.ndarray, big: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each response (UTF-8) against golden answer ``which[i]`` of ``golden`` (:func:`golden_tables`):
    whether its chrF is at least ``threshold`` (a blank response: no), and which pairs were left
    out as past ``big`` (their two lengths multiplied; the memory to count a pair is a bit each,
    the time to count it up to eight times that) for the caller to score."""
    verdict, big_rows = np.zeros(which.shape[0], np.bool_), np.zeros(which.shape[0], np.bool_)
    _verdicts(*texts, golden, which.astype(np.int64), big, float(threshold), (verdict, big_rows))
    return verdict, big_rows

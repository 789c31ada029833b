"""chrF's character n-gram counts for many rows at once, compiled (numba).

sacreBLEU's chrF removes whitespace (``"".join(text.split())``) and counts, per order n, the
n-grams of each side (overlapping) and the matched ones, ``sum(min(hyp[g], ref[g]) for g in ref)``.
This module computes the same integers for whole columns:

- :func:`strip_whitespace`: every text without the characters ``str.split()`` splits on, as one
  array of code points and the offsets of each text;
- :func:`match_counts`: per row and order, the matched n-grams. For each position ``j`` of the
  golden answer it keeps the response positions where the golden n-gram starting at ``j`` occurs:
  for n = 1 by comparing characters, for each next order by keeping those followed by the next
  golden character, so every count is exact (self-overlapping n-grams included). A golden n-gram
  is counted once, at its first position, at most as often as it occurs in the golden answer.
  A row whose response contains the whole golden answer matches every golden n-gram as often as
  it occurs: its counts are the golden answer's, without the walk.

Compiled with numba on first use and cached beside this file (``cache=True``): the first process
on a machine pays a few seconds to compile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import polars as pl
import pyarrow as pa

from scoring.core.columnar import WHITESPACE

#: chrF's character n-gram orders (sacrebleu's default ``char_order``).
ORDER = 6
#: ``SPACE[c]``: whether code point ``c`` (below ``len(SPACE)``) is whitespace for ``str.split()``.
SPACE = np.zeros(max(map(ord, WHITESPACE)) + 1, dtype=np.bool_)
SPACE[[ord(c) for c in WHITESPACE]] = True


def compiled(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba, its machine code cached beside the module (or in numba's
    user-wide cache) so later processes skip the compile; where neither is writable (a read-only
    checkout run by another user) numba refuses to cache at all, and each process compiles anew."""
    try:
        return numba.njit(cache=True, nogil=True)(func)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True)(func)


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
def _golden(r: np.ndarray, first: np.ndarray, times: np.ndarray) -> None:  # pragma: no cover - compiled
    """Per order and position of the golden answer ``r``: whether its n-gram starts there first
    (``first``), and how often that n-gram occurs in ``r`` (``times``)."""
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


@compiled
def _row(
    h: np.ndarray, r: np.ndarray, first: np.ndarray, times: np.ndarray, pos: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``out[n - 1]``: the matched n-grams of the response ``h`` against the golden ``r``.
    ``pos[j, :cnt[j]]``: where the response holds the golden n-gram starting at ``j``."""
    hl, rl = h.shape[0], r.shape[0]
    cnt = np.zeros(rl, np.int64)
    for j in range(rl):
        c, ch = 0, r[j]
        for p in range(hl):
            if h[p] == ch:
                pos[j, c] = p
                c += 1
        cnt[j] = c
    for n in range(1, ORDER + 1):
        grams = rl - n + 1
        if grams <= 0 or hl - n + 1 <= 0:
            break
        total = 0
        for j in range(grams):
            if n > 1 and cnt[j] > 0:
                c, ch = 0, r[j + n - 1]
                for t in range(cnt[j]):
                    p = pos[j, t]
                    if p + n - 1 < hl and h[p + n - 1] == ch:
                        pos[j, c] = p
                        c += 1
                cnt[j] = c
            if first[j, n - 1]:
                total += min(cnt[j], times[j, n - 1])
        out[n - 1] = total


@compiled
def _inside(h: np.ndarray, r: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether ``r`` occurs in ``h`` (``r`` not empty)."""
    rl = r.shape[0]
    for p in range(h.shape[0] - rl + 1):
        if h[p] == r[0]:
            k = 1
            while k < rl and h[p + k] == r[k]:
                k += 1
            if k == rl:
                return True
    return False


@compiled
def _rows(
    hyp: np.ndarray,
    hyp_at: np.ndarray,
    ref: np.ndarray,
    ref_at: np.ndarray,
    rows: np.ndarray,
    which: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    first = np.zeros((ref.shape[0], ORDER), np.bool_)
    times = np.zeros((ref.shape[0], ORDER), np.int64)
    for a in range(ref_at.shape[0] - 1):
        s, e = ref_at[a], ref_at[a + 1]
        _golden(ref[s:e], first[s:e], times[s:e])
    size = 0
    for t in range(rows.shape[0]):
        i, a = rows[t], which[rows[t]]
        size = max(size, (hyp_at[i + 1] - hyp_at[i]) * (ref_at[a + 1] - ref_at[a]))
    buffer = np.empty(size, np.int64)
    for t in range(rows.shape[0]):
        i, a = rows[t], which[rows[t]]
        s, e = ref_at[a], ref_at[a + 1]
        h, r = hyp[hyp_at[i] : hyp_at[i + 1]], ref[s:e]
        if e == s or h.shape[0] == 0:
            continue
        if _inside(h, r):
            for n in range(1, ORDER + 1):
                out[t, n - 1] = max(e - s - n + 1, 0)
            continue
        pos = buffer[: (e - s) * h.shape[0]].reshape((e - s, h.shape[0]))
        _row(h, r, first[s:e], times[s:e], pos, out[t])


def strip_whitespace(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The texts (a null as "") as one array of code points with whitespace removed, as chrF removes
    it, and where each text starts (``len(texts) + 1`` offsets). Read from the texts' UTF-8 bytes
    in Arrow's buffers, without a Python string per row."""
    arrow = texts.cast(pl.String).fill_null("").to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    _, offsets, data = arrow.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[arrow.offset : arrow.offset + len(arrow) + 1]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(1, np.uint8)
    return _strip(data, offsets, SPACE)


def match_counts(
    hyp: tuple[np.ndarray, np.ndarray], ref: tuple[np.ndarray, np.ndarray], which: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """For each of ``rows`` (response ``i`` of ``hyp`` against golden answer ``which[i]`` of
    ``ref``, both from :func:`strip_whitespace`), per order, the matched n-grams as sacrebleu
    counts them: ``len(rows)`` x :data:`ORDER` floats. Memory: the largest row's two lengths
    multiplied (8 bytes each), so the caller keeps huge pairs out."""
    out = np.zeros((rows.shape[0], ORDER), dtype=np.int64)
    if rows.shape[0]:
        _rows(*hyp, *ref, rows.astype(np.int64), which.astype(np.int64), out)
    return out.astype(float)

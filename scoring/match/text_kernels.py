"""Compiled (numba) passes over UTF-8 texts for normalised exact and stemmed word overlap.

Each reads a text's bytes once, decodes code points and looks each up in
:mod:`scoring.match.char_tables`, doing in one pass what the per-row functions do in several
(they stay the definition; the column functions hand back to them every row flagged here):

- :func:`norm_rows` / :func:`norm_all`: :func:`scoring.match.norm_exact.normalize_answer` (invisible
  characters removed, NFC, nukta folded, edge punctuation stripped, casefold, one space between
  words) and, for :func:`norm_rows`, the substring test against the normalised golden answer. NFC
  is not computed: a text is passed only where NFC provably leaves it alone (UAX #15's quick check,
  refined for the second of a composable pair: it must follow a starter that has no decomposition
  and that it does not compose with), else the row is flagged. A character whose case folding is
  not one character also flags the row;
- :func:`word_ids`: the spec's words (:func:`scoring.core.protocols.word_set`: lowercase, split on
  whitespace, edge punctuation stripped, empties dropped), each interned as a small integer (a
  hash table comparing the code points, so two words share an id exactly when they are equal);
  :func:`stem_verdicts`: every golden word's stem among the response's.

Helpers calling each other live in this one module: numba's cache notices a change to the file of
the function it compiled, not to another file it calls into.
"""

from __future__ import annotations

import numpy as np

from scoring.core.compiled_utf8 import compiled
from scoring.match.char_tables import (
    DECOMPOSES,
    FOLD_PY,
    INVISIBLE,
    LOWER_PY,
    MAYBE,
    NFC_NO,
    NUKTA_LETTER,
    PUNCT,
    SIZE,
    SPACE,
)

#: The nukta the precomposed nukta letters NFC keeps (U+0929, U+0931, U+0934: each its
#: consonant's code point plus one) are folded to follow their consonant with.
NUKTA = 0x93C
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


@compiled
def _decode(data: np.ndarray, k: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """The code point whose UTF-8 starts at ``data[k]``, and where the next one starts."""
    b = np.int64(data[k])
    if b < 0x80:
        return b, k + 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(data[k + 1]) & 0x3F), k + 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((np.int64(data[k + 1]) & 0x3F) << 6) | (np.int64(data[k + 2]) & 0x3F), k + 3
    cp = ((b & 0x07) << 18) | ((np.int64(data[k + 1]) & 0x3F) << 12) | ((np.int64(data[k + 2]) & 0x3F) << 6)
    return cp | (np.int64(data[k + 3]) & 0x3F), k + 4


@compiled
def _contains(hay: np.ndarray, hay_len: int, needle: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether ``needle`` occurs in ``hay[:hay_len]`` (an empty needle occurs everywhere)."""
    n = needle.shape[0]
    if n == 0:
        return True
    for p in range(hay_len - n + 1):
        if hay[p] == needle[0]:
            k = 1
            while k < n and hay[p + k] == needle[k]:
                k += 1
            if k == n:
                return True
    return False


@compiled
def _composes(prev: int, prev_ccc: int, cp: int, flags: np.ndarray, pairs: np.ndarray) -> bool:  # pragma: no cover
    """Whether NFC might change the text at ``cp``, the second of some composable pair, after
    ``prev`` (of combining class ``prev_ccc``): unless ``prev`` is a starter with no decomposition
    that ``cp`` does not compose with."""
    if prev_ccc != 0 or flags[prev] & DECOMPOSES:
        return True
    key = prev * SIZE + cp
    at = np.searchsorted(pairs, key)
    return at < pairs.shape[0] and pairs[at] == key


@compiled
def _normalize(
    data: np.ndarray,
    start: int,
    end: int,
    flags: np.ndarray,
    ccc: np.ndarray,
    fold: np.ndarray,
    pairs: np.ndarray,
    out: np.ndarray,
) -> tuple[int, bool, bool]:  # pragma: no cover - compiled
    """``normalize_answer`` of ``data[start:end]`` into ``out`` (never longer than the bytes):
    (its length, whether Python must do the row, whether the text is blank)."""
    n, blank, kept = 0, True, -1  # kept: just past the word's last non-punctuation (-1: no word yet)
    prev, prev_ccc = -1, 0
    k = start
    while k < end:
        cp, k = _decode(data, k)
        f = flags[cp]
        if f == 0:  # the common case, a plain character: only case-folded (a quarter faster)
            blank = False
            if kept < 0 and n > 0:
                out[n] = 32
                n += 1
            out[n] = fold[cp]
            n += 1
            kept = n
            prev, prev_ccc = cp, 0
            continue
        if not f & SPACE:
            blank = False
        if f & INVISIBLE:
            continue
        c = ccc[cp]  # NFC's quick check (UAX #15), inline: called per character, it costs tenfold
        if f & (FOLD_PY | NFC_NO) or (c != 0 and prev_ccc > c):
            return n, True, blank
        if f & MAYBE and prev >= 0 and _composes(prev, prev_ccc, cp, flags, pairs):
            return n, True, blank
        prev, prev_ccc = cp, c
        if f & SPACE:
            if kept >= 0:
                n, kept = kept, -1
            continue
        if f & PUNCT and kept < 0:
            continue  # leading punctuation
        if kept < 0 and n > 0:
            out[n] = 32
            n += 1
        if f & NUKTA_LETTER:
            out[n], out[n + 1] = cp - 1, NUKTA
            n += 2
        else:
            out[n] = fold[cp]
            n += 1
        if not f & PUNCT:
            kept = n
    if kept >= 0:
        n = kept
    return n, False, blank


@compiled
def norm_all(
    data: np.ndarray, offsets: np.ndarray, flags: np.ndarray, ccc: np.ndarray, fold: np.ndarray, pairs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """Every text normalised: code points, where each starts, and the rows Python must do (empty)."""
    rows = offsets.shape[0] - 1
    out = np.empty(max(offsets[-1] - offsets[0], 1), np.uint32)
    at, python = np.zeros(rows + 1, np.int64), np.zeros(rows, np.bool_)
    n = 0
    for i in range(rows):
        m, py, _ = _normalize(data, offsets[i], offsets[i + 1], flags, ccc, fold, pairs, out[n:])
        python[i] = py
        n += 0 if py else m
        at[i + 1] = n
    return out[:n], at, python


@compiled
def norm_rows(
    data: np.ndarray,
    offsets: np.ndarray,
    lo: int,
    hi: int,
    which: np.ndarray,
    golden: np.ndarray,
    golden_at: np.ndarray,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    verdict: np.ndarray,
    python: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Rows ``lo:hi``: the normalised golden answer ``which[i]`` in the normalised response, not
    blank (``verdict``), or the row flagged for Python (``python``)."""
    flags, ccc, fold, pairs = tables
    size = 1
    for i in range(lo, hi):
        size = max(size, offsets[i + 1] - offsets[i])
    buf = np.empty(size, np.uint32)
    for i in range(lo, hi):
        n, py, blank = _normalize(data, offsets[i], offsets[i + 1], flags, ccc, fold, pairs, buf)
        if py:
            python[i] = True
        elif not blank:
            a = which[i]
            verdict[i] = _contains(buf, n, golden[golden_at[a] : golden_at[a + 1]])


class Words:
    """The interned words so far (:func:`word_ids`): a hash table of word ids (``slots``, -1 for
    none, kept at most half full), each word's hash, its code points in ``arena`` from
    ``word_at[w]`` to ``word_at[w + 1]``; ``count`` words."""

    def __init__(self) -> None:
        self.slots = np.full(1 << 12, -1, np.int64)
        self.hashes = np.empty(1 << 11, np.uint64)
        self.word_at = np.zeros((1 << 11) + 1, np.int64)
        self.arena = np.empty(1 << 14, np.uint32)
        self.count = 0

    def room(self, words: int, cps: int) -> None:
        """Make room for ``words`` more words of ``cps`` code points in all."""
        need = self.count + words
        if need >= self.hashes.shape[0]:
            size = max(2 * self.hashes.shape[0], need + 1)
            self.hashes = np.concatenate((self.hashes, np.empty(size - self.hashes.shape[0], np.uint64)))
            self.word_at = np.concatenate((self.word_at, np.zeros(size - self.word_at.shape[0] + 1, np.int64)))
        if 2 * need > self.slots.shape[0]:
            cap = self.slots.shape[0]
            while 2 * need > cap:
                cap *= 2
            self.slots = _rehash(self.hashes, self.count, cap)
        used = self.word_at[self.count]
        if used + cps > self.arena.shape[0]:
            size = max(2 * self.arena.shape[0], used + cps)
            self.arena = np.concatenate((self.arena, np.empty(size - self.arena.shape[0], np.uint32)))

    def strings(self) -> list[str]:
        """The words as Python strings, in id order."""
        at = self.word_at[: self.count + 1].tolist()
        text = self.arena[: at[-1]].tobytes().decode("utf-32-le")
        return [text[at[w] : at[w + 1]] for w in range(self.count)]


@compiled
def _rehash(hashes: np.ndarray, count: int, cap: int) -> np.ndarray:  # pragma: no cover - compiled
    slots = np.full(cap, -1, np.int64)
    for u in range(count):
        s = np.int64(hashes[u] & np.uint64(cap - 1))
        while slots[s] >= 0:
            s = (s + 1) & (cap - 1)
        slots[s] = u
    return slots


@compiled
def _words(
    data: np.ndarray,
    offsets: np.ndarray,
    rows: np.ndarray,
    start: int,
    tables: tuple[np.ndarray, np.ndarray],
    table: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    count: int,
    out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Texts ``rows[start:]`` into ``out`` (``tok_at``, ``toks``, ``python``, ``blank``, see
    :func:`word_ids`), words interned in ``table`` (``slots``, ``hashes``, ``word_at``,
    ``arena``: :class:`Words`, holding ``count``), until a text might not fit: (the next row to do,
    the words now held). No array is grown here: grown inside the loop, numba's code is fivefold
    slower."""
    flags, lower = tables
    slots, hashes, word_at, arena = table
    tok_at, toks, python, blank = out
    cap, size = slots.shape[0], 1
    for t in range(start, rows.shape[0]):
        size = max(size, offsets[rows[t] + 1] - offsets[rows[t]])
    word = np.empty(size, np.uint32)
    for t in range(start, rows.shape[0]):
        k, end = offsets[rows[t]], offsets[rows[t] + 1]
        nt = tok_at[t]
        if 2 * (count + end - k) > cap or word_at[count] + end - k > arena.shape[0]:
            return t, count
        if count + end - k >= hashes.shape[0] or nt + end - k > toks.shape[0]:
            return t, count
        m = kept = 0  # the word's length so far; up to its last non-punctuation
        while True:
            cp, f = -1, SPACE  # past the end: a word boundary
            if k < end:
                cp, k = _decode(data, k)
                f = flags[cp]
                if f & LOWER_PY:
                    python[t] = True
                    break
                if not f & SPACE:
                    blank[t] = False
            if not f & SPACE:
                if not (f & PUNCT and m == 0):  # leading punctuation is dropped
                    word[m] = lower[cp]
                    m += 1
                    kept = m if not f & PUNCT else kept
                continue
            if kept > 0:  # intern word[:kept]
                h = np.uint64(FNV_OFFSET)
                for q in range(kept):
                    h = (h ^ np.uint64(word[q])) * np.uint64(FNV_PRIME)
                h ^= h >> np.uint64(29)  # FNV's low bits alone cluster: mix the high ones in
                s = np.int64(h & np.uint64(cap - 1))
                while True:
                    w = slots[s]
                    if w < 0:
                        break
                    if hashes[w] == h and word_at[w + 1] - word_at[w] == kept:
                        same, base = True, word_at[w]
                        for q in range(kept):
                            if arena[base + q] != word[q]:
                                same = False
                                break
                        if same:
                            break
                    s = (s + 1) & (cap - 1)
                if w < 0:  # a new word
                    w, base = count, word_at[count]
                    arena[base : base + kept] = word[:kept]
                    word_at[count + 1], hashes[count], slots[s] = base + kept, h, count
                    count += 1
                toks[nt] = w
                nt += 1
            m = kept = 0
            if k >= end:
                break
        tok_at[t + 1] = tok_at[t] if python[t] else nt
    return rows.shape[0], count


def word_ids(
    texts: tuple[np.ndarray, np.ndarray], rows: np.ndarray, tables: tuple[np.ndarray, np.ndarray], words: Words
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The spec's words of texts ``rows`` (UTF-8 ``data``, ``offsets``) as word ids, interned in
    ``words``; ``tables``: :mod:`scoring.match.char_tables`' ``flags`` and ``lower``.

    Returns ``tok_at`` (where each text's ids start, one more than the rows), ``toks`` (the ids in
    order, repeats kept), ``python`` (texts Python must do: a character whose lowercasing is not
    one plain character, or Σ) and ``blank`` (whitespace only).
    """
    data, offsets = texts
    tok_at = np.zeros(rows.shape[0] + 1, np.int64)
    toks = np.empty(max(16, int(offsets[-1] - offsets[0]) // 4), np.int32)
    python, blank = np.zeros(rows.shape[0], np.bool_), np.ones(rows.shape[0], np.bool_)
    done = 0
    while done < rows.shape[0]:
        longest = int(offsets[rows[done] + 1] - offsets[rows[done]])
        words.room(longest, longest)
        if tok_at[done] + longest > toks.shape[0]:
            toks = np.concatenate((toks, np.empty(max(toks.shape[0], longest), np.int32)))
        table = (words.slots, words.hashes, words.word_at, words.arena)
        done, words.count = _words(data, offsets, rows, done, tables, table, words.count, (tok_at, toks, python, blank))
    return tok_at, toks[: tok_at[-1]], python, blank


@compiled
def stem_verdicts(
    rows: np.ndarray,
    which: np.ndarray,
    algs: np.ndarray,
    golden: tuple[np.ndarray, np.ndarray],
    responses: tuple[np.ndarray, np.ndarray],
    stems: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled
    """For each of ``rows`` (response ``t`` of ``responses`` is row ``rows[t]``): every stem of its
    golden answer's words among its response words' stems (``stems[word, algorithm]``)."""
    g_at, g_toks = golden
    r_at, r_toks = responses
    out = np.zeros(rows.shape[0], np.bool_)
    for t in range(rows.shape[0]):
        a, g = which[rows[t]], algs[rows[t]]
        ok = True
        for u in range(g_at[a], g_at[a + 1]):
            s, found = stems[g_toks[u], g], False
            for v in range(r_at[t], r_at[t + 1]):
                if stems[r_toks[v], g] == s:
                    found = True
                    break
            if not found:
                ok = False
                break
        out[t] = ok
    return out

"""The spec's two deterministic protocols, applied to one pair or to whole columns.

The per-pair functions are the reference (they read like the spec); the column functions are
the fast path used everywhere else and must agree with them on every row.
"""

from __future__ import annotations

import multiprocessing
import os
import string
import sys
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

#: ASCII punctuation plus every Unicode ``P*`` character, so the danda and curly quotes strip
#: like ``.`` does. ``string.punctuation`` alone misses them; category P alone misses ``+$<=>^|~```.
PUNCTUATION: str = "".join(
    sorted(
        set(string.punctuation)
        | {chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)).startswith("P")}
    )
)

BUCKETS: tuple[str, ...] = ("both_pass", "both_fail", "exact_only", "overlap_only")

#: Characters the ``--normalize`` diagnostic deletes: zero-width and format characters.
_FORMAT_CHARS = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD}


def is_blank(response: str | None) -> bool:
    """A missing or whitespace-only response is blank: it never passes, and is counted apart."""
    return response is None or not response.strip()


def exact_substring(answer: str, response: str | None) -> bool:
    """Spec protocol 1: ``answer.lower() in response.lower()`` and nothing else."""
    if is_blank(response):
        return False
    return answer.lower() in response.lower()


def word_set(text: str) -> frozenset[str]:
    """Lowercase, split on whitespace, strip edge punctuation, drop empty tokens."""
    stripped = (tok.strip(PUNCTUATION) for tok in text.lower().split())
    return frozenset(tok for tok in stripped if tok)


@dataclass(frozen=True)
class OverlapResult:
    is_correct: bool
    matching_words: int
    total_golden_words: int


def word_overlap(answer: str, response: str | None) -> OverlapResult:
    """Spec protocol 2: the golden word set must be a subset of the response word set."""
    golden = word_set(answer)
    if is_blank(response):
        return OverlapResult(False, 0, len(golden))
    matching = len(golden & word_set(response))
    return OverlapResult(matching == len(golden), matching, len(golden))


def bucket(exact: bool, overlap: bool) -> str:
    """Agreement bucket of one row: which of the two metrics passed it."""
    if exact:
        return "both_pass" if overlap else "exact_only"
    return "overlap_only" if overlap else "both_fail"


def normalize_text(text: str) -> str:
    """Diagnostic only: NFC, zero-width/format characters removed, native digits to ASCII."""
    text = unicodedata.normalize("NFC", text)
    out = []
    for ch in text:
        if ord(ch) in _FORMAT_CHARS or unicodedata.category(ch) == "Cf":
            continue
        if ch.isdigit() and not ch.isascii():
            digit = unicodedata.digit(ch, None)
            if digit is not None:
                out.append(str(digit))
                continue
        out.append(ch)
    # NFC again: removing a ZWNJ or soft hyphen can leave a decomposed sequence behind
    # (Tamil கெ + ZWNJ + ா is கொ once the ZWNJ goes), and both sides must end in NFC.
    return unicodedata.normalize("NFC", "".join(out))


def normalize_pair(answer: str, response: str) -> tuple[str, str]:
    """Diagnostic only: normalise both sides and strip the golden answer."""
    return normalize_text(answer).strip(), normalize_text(response)


@dataclass
class ColumnScores:
    """Verdicts for whole columns, one entry per row, in input order.

    NumPy arrays (bool, int64, object for ``bucket``) rather than lists: a frame takes them as
    columns without converting a million Python objects again.
    """

    exact_correct: np.ndarray
    overlap_correct: np.ndarray
    matching_words: np.ndarray
    total_golden_words: np.ndarray
    is_blank: np.ndarray
    bucket: np.ndarray


_PUNCT_SET: frozenset[str] = frozenset(PUNCTUATION)
#: Bucket by ``2 * exact + overlap``; the same mapping as :func:`bucket`.
_BUCKET_BY_CODE = np.array(["both_fail", "overlap_only", "exact_only", "both_pass"], dtype=object)


def _bounded(text: str, start: int, end: int, punct: frozenset[str] = _PUNCT_SET) -> bool:
    """Whether ``text[start:end]`` is flanked by punctuation only, then whitespace or an end.

    For a span that neither starts nor ends with whitespace or punctuation, this means the span
    survives ``split()`` plus edge stripping as whole token(s) of ``text``.
    """
    while start and text[start - 1] in punct:
        start -= 1
    if start and not text[start - 1].isspace():
        return False
    size = len(text)
    while end < size and text[end] in punct:
        end += 1
    return end == size or text[end].isspace()


def _has_token(text: str, word: str, start: int, punct: frozenset[str] = _PUNCT_SET) -> bool:
    """Whether ``word`` is in ``word_set(text)``, for a word of a word set and ``text`` as scored.

    ``start`` is the first occurrence of ``word`` in ``text``; every occurrence is tried. The
    common outcomes (between plain spaces, or glued to a letter) are settled inline.
    """
    size = len(text)
    width = len(word)
    while start >= 0:
        end = start + width
        after = text[end] if end < size else " "
        if after == " " or after in punct or after.isspace():
            before = text[start - 1] if start else " "
            if before == " " and after == " ":
                return True
            if (before in punct or before.isspace()) and _bounded(text, start, end):
                return True
        start = text.find(word, start + 1)
    return False


def _golden(answer: str) -> tuple[str, tuple[str, ...], int, bool, bool, bool]:
    """Once per distinct golden answer: what scoring a response against it needs.

    Returns the lowercased answer, its word set and size, whether the lowercased answer is a plain
    phrase (clean words joined by single spaces), whether that phrase is one word, and whether it
    is caseless. Caseless means every character is its own upper and lower case and is not
    U+0307, the one character that lowercasing produces (from ``İ``) without being cased itself.
    Lowercasing a response then cannot create, remove or move the boundaries of an occurrence
    (lowercasing only touches cased characters, which are never whitespace or punctuation and
    never lower into them; ``test_protocols`` checks this over all of Unicode), so the response
    need not be lowercased at all: the costliest step for Indic text, where it is a no-op.
    """
    lowered = answer.lower()
    tokens = lowered.split()
    words = tuple(word_set(answer))
    phrase = bool(tokens) and lowered == " ".join(tokens) and all(t == t.strip(PUNCTUATION) for t in tokens)
    caseless = lowered.upper() == lowered == lowered.lower() and "\u0307" not in lowered
    return lowered, words, len(words), phrase, phrase and len(tokens) == 1, caseless


def score_columns(
    answers: Sequence[str], responses: Sequence[str | None], normalize: bool = False
) -> ColumnScores:
    """Both protocols over whole columns; agrees with the per-pair functions on every row."""
    return _finish(*_raw_scores(answers, responses, normalize))


def _raw_scores(
    answers: Sequence[str], responses: Sequence[str | None], normalize: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(exact verdicts, matching golden words or -1 for a blank response, golden word counts).

    Speed matters here (a million rows per run), and splitting every response into tokens is
    what makes the naive way slow, so responses are never split:

    - golden answers repeat, so what they need is computed once per distinct answer
      (:func:`_golden`), including whether responses need lowercasing at all;
    - each golden word is found as a substring and accepted when that occurrence is a whole
      token once edge punctuation is stripped (:func:`_has_token`);
    - when the golden answer is a plain phrase of clean words (the common case), one search
      settles both protocols if it hits a whole-token occurrence (every word is then present),
      and a one-word answer that is not a substring cannot be a token either.
    """
    if normalize:
        pairs = [normalize_pair(a, r) for a, r in zip(answers, responses)]
        answers = [p[0] for p in pairs]
        responses = [p[1] for p in pairs]
    cache = {answer: _golden(answer) for answer in set(answers)}
    goldens = list(map(cache.__getitem__, answers))
    exact_out: list[bool] = []
    match_out: list[int] = []  # -1 marks a blank response
    add_exact, add_match = exact_out.append, match_out.append
    bounded, has_token = _bounded, _has_token
    for (golden_lower, golden_words, total, phrase, single, caseless), response in zip(goldens, responses):
        if not response or response.isspace():
            add_exact(False)
            add_match(-1)
            continue
        text = response if caseless else response.lower()
        start = text.find(golden_lower)
        add_exact(start >= 0)
        if phrase:
            if start >= 0:
                end = start + len(golden_lower)
                # Between plain spaces is the common case; anything else goes the long way.
                if (
                    (not start or text[start - 1] == " ") and (end == len(text) or text[end] == " ")
                ) or bounded(text, start, end):
                    add_match(total)
                    continue
            elif single:
                add_match(0)
                continue
        matching = 0
        size = len(text)
        for word in golden_words:
            start = text.find(word)
            if start < 0:
                continue
            end = start + len(word)
            if ((not start or text[start - 1] == " ") and (end == size or text[end] == " ")) or has_token(
                text, word, start
            ):
                matching += 1
        add_match(matching)
    exact = np.array(exact_out, dtype=bool)
    match = np.array(match_out, dtype=np.int64)
    totals = np.fromiter((g[2] for g in goldens), dtype=np.int64, count=len(goldens))
    return exact, match, totals


def _finish(exact: np.ndarray, match: np.ndarray, totals: np.ndarray) -> ColumnScores:
    """Overlap verdict, blanks and buckets from the raw per-row results, all vectorised."""
    blank = match < 0
    match[blank] = 0
    overlap = (match == totals) & ~blank
    buckets = _BUCKET_BY_CODE[2 * exact.astype(np.int8) + overlap]
    return ColumnScores(exact, overlap, match, totals, blank, buckets)


#: Below this many rows a second process costs more than it saves.
PARALLEL_MIN_ROWS = 200_000
_SHARED: tuple[Sequence[str], Sequence[str | None], bool] | None = None


def _score_chunk(bounds: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    assert _SHARED is not None
    answers, responses, normalize = _SHARED
    start, end = bounds
    return _raw_scores(answers[start:end], responses[start:end], normalize)


def _can_fork() -> bool:
    # Forking a process that runs other threads (a Streamlit server) can deadlock the child, so
    # only a single-threaded process (the command line) splits the work.
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def score_columns_parallel(
    answers: Sequence[str],
    responses: Sequence[str | None],
    normalize: bool = False,
    workers: int | None = None,
) -> ColumnScores:
    """:func:`score_columns` split over forked worker processes for large inputs.

    Rows are independent, so chunks scored apart and concatenated give the same verdicts. The
    children inherit the columns through fork (nothing is pickled on the way in) and send back
    three compact NumPy arrays per chunk. Small inputs, one core, or a multi-threaded caller take the serial path.
    """
    global _SHARED
    workers = workers or min(os.cpu_count() or 1, 8)
    if workers < 2 or len(answers) < PARALLEL_MIN_ROWS or not _can_fork():
        return score_columns(answers, responses, normalize)
    step = -(-len(answers) // workers)
    bounds = [(i, min(i + step, len(answers))) for i in range(0, len(answers), step)]
    _SHARED = (answers, responses, normalize)
    try:
        pool = multiprocessing.get_context("fork").Pool(len(bounds))
        try:
            parts = pool.map(_score_chunk, bounds)
        finally:
            pool.close()
            pool.join()  # its helper threads end here, so a later call may fork again
    finally:
        _SHARED = None
    return _finish(*(np.concatenate([p[i] for p in parts]) for i in range(3)))


def missing_golden_words(answer: str, response: str) -> list[str]:
    """Golden words the response lacks, in the golden answer's order (for display)."""
    have = word_set(response or "")
    seen: list[str] = []
    for tok in answer.lower().split():
        tok = tok.strip(PUNCTUATION)
        if tok and tok not in have and tok not in seen:
            seen.append(tok)
    return seen


def iter_tokens(text: str) -> Iterable[tuple[int, int, str]]:
    """Whitespace tokens of ``text`` with their spans and their stripped, lowercased form."""
    pos = 0
    for raw in text.split():
        start = text.index(raw, pos)
        end = start + len(raw)
        pos = end
        yield start, end, raw.lower().strip(PUNCTUATION)

"""The spec's two deterministic protocols, applied to one pair or to whole columns.

The per-pair functions are the reference (they read like the spec); the column functions are
the fast path used everywhere else and must agree with them on every row.
"""

from __future__ import annotations

import string
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
    return "".join(out)


def normalize_pair(answer: str, response: str) -> tuple[str, str]:
    """Diagnostic only: normalise both sides and strip the golden answer."""
    return normalize_text(answer).strip(), normalize_text(response)


@dataclass
class ColumnScores:
    """Verdicts for whole columns, one entry per row, in input order."""

    exact_correct: list[bool]
    overlap_correct: list[bool]
    matching_words: list[int]
    total_golden_words: list[int]
    is_blank: list[bool]
    bucket: list[str]


def score_columns(
    answers: Sequence[str], responses: Sequence[str], normalize: bool = False
) -> ColumnScores:
    """Both protocols over whole columns.

    Golden answers repeat across rows and model runs, so their word sets are computed once per
    distinct answer; response tokens are stripped through a per-call cache for the same reason.
    """
    if normalize:
        pairs = [normalize_pair(a, r) for a, r in zip(answers, responses)]
        answers = [p[0] for p in pairs]
        responses = [p[1] for p in pairs]
    punct = PUNCTUATION
    golden_cache: dict[str, tuple[str, frozenset[str]]] = {}
    token_cache: dict[str, str] = {}
    exact_out: list[bool] = []
    overlap_out: list[bool] = []
    match_out: list[int] = []
    total_out: list[int] = []
    blank_out: list[bool] = []
    bucket_out: list[str] = []
    for answer, response in zip(answers, responses):
        cached = golden_cache.get(answer)
        if cached is None:
            lowered = answer.lower()
            cached = (lowered, word_set(answer))
            golden_cache[answer] = cached
        golden_lower, golden_words = cached
        total = len(golden_words)
        if not response or response.isspace():
            exact_out.append(False)
            overlap_out.append(False)
            match_out.append(0)
            total_out.append(total)
            blank_out.append(True)
            bucket_out.append("both_fail")
            continue
        resp_lower = response.lower()
        exact = golden_lower in resp_lower
        if total:
            words = set()
            for tok in resp_lower.split():
                stripped = token_cache.get(tok)
                if stripped is None:
                    stripped = tok.strip(punct)
                    token_cache[tok] = stripped
                words.add(stripped)
            matching = len(golden_words & words)
        else:
            matching = 0
        overlap = matching == total
        exact_out.append(exact)
        overlap_out.append(overlap)
        match_out.append(matching)
        total_out.append(total)
        blank_out.append(False)
        bucket_out.append(bucket(exact, overlap))
    return ColumnScores(exact_out, overlap_out, match_out, total_out, blank_out, bucket_out)


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

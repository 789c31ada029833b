"""The spec's two deterministic protocols for one pair, and the ``--normalize`` diagnostic.

The per-pair functions here are the reference: they read like the spec. Whole columns are
scored by :mod:`scoring.core.columnar` on polars, which must agree with them on every row.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from scoring.core.unicode_tables import chars, tables

#: ASCII punctuation plus every Unicode ``P*`` character, so the danda and curly quotes strip
#: like ``.`` does. ``string.punctuation`` alone misses them; category P alone misses ``+$<=>^|~```.
PUNCTUATION: str = chars(tables()["punctuation"])

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

"""Optional matchers beside the spec's two metrics (issue 29), for Indic morphology.

The spec's exact substring and word overlap never change (:mod:`scoring.core.protocols`). A team may
switch these on per run and measure each against people (:mod:`scoring.estimate.matcher_quality`):

- ``norm_exact`` (:mod:`.norm_exact`): the spec's exact test after NFC, invisible characters
  removed, nukta letters folded one way, edge punctuation stripped, case folded;
- ``stem_overlap`` (:mod:`.stem_overlap`): the spec's word overlap on Snowball stems; English,
  Hindi, Tamil and Nepali only, other languages are not stemmed (:mod:`.languages`);
- ``chrf`` (:mod:`.chrf`): sacrebleu's sentence chrF at least a threshold the team sets.

Each has a per-row function (the definition) and a column function equal to it row for row, run
by compiled code; :func:`scoring.match.scorers.score_matchers` adds the chosen matchers' verdict
columns to a scored table. This package root holds only their names and settings: importing it
loads neither sacrebleu nor numba, so a command that scores without matchers does not wait for them.
"""

from __future__ import annotations

from collections.abc import Iterable

from scoring.core.errors import InputError
from scoring.match.languages import NOT_STEMMED_NOTE, STEMMED_LANGUAGES, algorithm, stemmed, stemming_by_language
from scoring.match.settings import chrf_threshold, target_precision

#: The optional matchers, in the order reports show them.
MATCHERS: tuple[str, ...] = ("norm_exact", "stem_overlap", "chrf")
#: Matcher -> its verdict column.
MATCHER_COLUMNS: dict[str, str] = {name: f"{name}_correct" for name in MATCHERS}
TITLES: dict[str, str] = {
    "norm_exact": "Normalised exact",
    "stem_overlap": "Stemmed word overlap",
    "chrf": "Character F-score (chrF)",
}
#: The column a table's row language is read from.
LANGUAGE_COLUMN = "language"
#: sacrebleu's chrF defaults (``sacrebleu.metrics.CHRF``), named so the docs and the result can say them.
CHRF_PARAMS = {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False}

__all__ = [
    "CHRF_PARAMS",
    "LANGUAGE_COLUMN",
    "MATCHERS",
    "MATCHER_COLUMNS",
    "NOT_STEMMED_NOTE",
    "STEMMED_LANGUAGES",
    "TITLES",
    "algorithm",
    "chrf_threshold",
    "parse_matchers",
    "stemmed",
    "stemming_by_language",
    "target_precision",
]


def parse_matchers(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"norm_exact,chrf"`` (or a list) as matcher names in :data:`MATCHERS` order; "" or None:
    none. An unknown name is an :class:`InputError` naming the known ones."""
    if text is None:
        return ()
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = [n for n in names if n not in MATCHERS]
    if unknown:
        raise InputError(f"Unknown matcher {unknown[0]!r}: choose from {', '.join(MATCHERS)} (comma-separated).")
    return tuple(m for m in MATCHERS if m in names)

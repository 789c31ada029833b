"""Optional matchers beside the spec's two metrics (issue 29), for Indic morphology.

The spec's exact substring and word overlap never change (:mod:`scoring.core.protocols`). A team may
switch these on per run and measure each against people (:mod:`scoring.estimate.matcher_quality`):

- ``norm_exact`` (:mod:`.norm_exact`): the spec's exact test after NFC, invisible characters
  removed, nukta letters folded one way, edge punctuation stripped, case folded;
- ``stem_overlap`` (:mod:`.stem_overlap`): the spec's word overlap on Snowball stems; English,
  Hindi, Tamil and Nepali only, other languages are not stemmed;
- ``chrf`` (:mod:`.chrf`): sacrebleu's sentence chrF at least a threshold the team sets.

Each has a per-row function (the definition) and a column function on polars equal to it row for
row; :func:`score_matchers` adds the chosen matchers' verdict columns to a scored table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from scoring.core.errors import InputError
from scoring.match.chrf import CHRF_PARAMS, chrf_column, chrf_correct, chrf_score
from scoring.match.norm_exact import norm_exact, norm_exact_column, normalize_answer
from scoring.match.settings import chrf_threshold, target_precision
from scoring.match.stem_overlap import (
    NOT_STEMMED_NOTE,
    STEMMED_LANGUAGES,
    algorithm,
    stem_overlap,
    stem_overlap_column,
    stemmed,
)

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

__all__ = [
    "CHRF_PARAMS",
    "LANGUAGE_COLUMN",
    "MATCHERS",
    "MATCHER_COLUMNS",
    "NOT_STEMMED_NOTE",
    "STEMMED_LANGUAGES",
    "TITLES",
    "algorithm",
    "chrf_column",
    "chrf_correct",
    "chrf_score",
    "chrf_threshold",
    "match_row",
    "norm_exact",
    "norm_exact_column",
    "normalize_answer",
    "parse_matchers",
    "score_matchers",
    "stem_overlap",
    "stem_overlap_column",
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


def match_row(name: str, answer: str, response: str | None, language: str | None, threshold: float) -> bool:
    """One matcher's verdict on one row (the definition the column functions equal)."""
    if name == "norm_exact":
        return norm_exact(answer, response)
    if name == "stem_overlap":
        return stem_overlap(answer, response, language)
    return chrf_correct(answer, response, threshold)


def score_matchers(
    table: pl.DataFrame,
    names: Sequence[str],
    threshold: float | None = None,
    answer: str = "answer",
    response: str = "response",
    overlap: pl.Series | None = None,
) -> pl.DataFrame:
    """One boolean column per matcher named (``<name>_correct``), a row per row of ``table``.

    The row's language is the ``language`` column when ``table`` has one (else no row is stemmed);
    ``overlap``: the spec's word-overlap verdicts of these same rows, when known: the stemmer is
    spared the rows it passes (their stems match too).
    ``threshold``: chrF's, by default the setting's (:func:`chrf_threshold`).
    """
    answers, responses = table[answer], table[response]
    out = []
    for name in names:
        if name == "norm_exact":
            out.append(norm_exact_column(answers, responses))
        elif name == "stem_overlap":
            languages = (
                table[LANGUAGE_COLUMN]
                if LANGUAGE_COLUMN in table.columns
                else pl.repeat(None, table.height, dtype=pl.String, eager=True)
            )
            out.append(stem_overlap_column(answers, responses, languages, overlap))
        elif name == "chrf":
            out.append(chrf_column(answers, responses, chrf_threshold() if threshold is None else threshold))
        else:
            raise InputError(f"Unknown matcher {name!r}: choose from {', '.join(MATCHERS)}.")
    return pl.DataFrame(out)


def stemming_by_language(languages: pl.Series | Iterable[str | None]) -> dict[str, bool]:
    """Each distinct language (as written; "" for none) and whether its rows are stemmed."""
    values = (
        languages.cast(pl.String).fill_null("").unique().to_list() if isinstance(languages, pl.Series) else languages
    )
    return {str(v or ""): stemmed(v) for v in sorted({str(v or "") for v in values})}

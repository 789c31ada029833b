"""The optional matchers run: one row (:func:`match_row`) or whole tables (:func:`score_matchers`).

Imported only where matchers are asked for: it loads sacrebleu and the compiled kernels (numba),
which :mod:`scoring.match` itself does not.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from scoring.core.errors import InputError
from scoring.match import LANGUAGE_COLUMN, MATCHERS, chrf_threshold
from scoring.match.chrf import chrf_correct, chrf_pairs
from scoring.match.norm_exact import norm_exact, norm_exact_pairs
from scoring.match.pairs import pairs_of
from scoring.match.stem_overlap import stem_overlap, stem_overlap_pairs


def match_row(name: str, answer: str, response: str | None, language: str | None, threshold: float) -> bool:
    """One matcher's verdict on one row (the definition the column functions equal)."""
    if name == "norm_exact":
        return norm_exact(answer, response)
    if name == "stem_overlap":
        return stem_overlap(answer, response, language)
    return chrf_correct(answer, response, threshold)


def warm_up() -> None:
    """Every matcher once on a two-row table: numba's start-up, the compiled kernels and the
    character tables loaded, so a caller can get this done while it reads its file."""
    table = pl.DataFrame(
        {"answer": ["Deul", "किताब"], "response": ["the deula", "किताबें।"], LANGUAGE_COLUMN: ["en", "hi"]},
        schema={"answer": pl.String, "response": pl.String, LANGUAGE_COLUMN: pl.String},
    )
    score_matchers(table, MATCHERS, threshold=50.0, overlap=pl.Series([False, False]))


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
    pairs = pairs_of(table[answer], table[response])  # read once for all the matchers
    out = []
    for name in names:
        if name == "norm_exact":
            out.append(norm_exact_pairs(pairs))
        elif name == "stem_overlap":
            languages = (
                table[LANGUAGE_COLUMN]
                if LANGUAGE_COLUMN in table.columns
                else pl.repeat(None, table.height, dtype=pl.String, eager=True)
            )
            out.append(stem_overlap_pairs(pairs, languages, overlap))
        elif name == "chrf":
            out.append(chrf_pairs(pairs, chrf_threshold() if threshold is None else threshold))
        else:
            raise InputError(f"Unknown matcher {name!r}: choose from {', '.join(MATCHERS)}.")
    return pl.DataFrame(out)

"""Paired differences between models, per language, on the questions both answered.

Each pair of models is matched on its own (the shared id column when both have one, else the
question and golden answer text), so a third model's missing rows never shrink a pair. The
source is the one Compare leads with (:data:`scoring.compare.answer.PREFERRED`: adjudicated
verdicts where both have them, else the judge, else exact substring), and each language's p-values
are Holm-adjusted across its pairs, as Compare adjusts across runs. One model per content, as the
head-to-head on the estimated truth counts them (:mod:`scoring.core.same_content`): a re-upload of
the same rows under another name is named and enters no pair, so it cannot inflate Holm's family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import polars as pl

from scoring.compare.answer import PREFERRED, pair_sentence
from scoring.compare.compared_runs import Run
from scoring.compare.matching import default_key, match_runs
from scoring.compare.paired import paired_comparisons
from scoring.core.same_content import duplicate_sentences, one_per_content
from scoring.core.stats import holm_adjust
from scoring.estimate.group_estimate import NO_LANGUAGE, groups_key


@dataclass(frozen=True)
class LanguagePair:
    """Model A against model B in one language (``difference`` = A - B), or why they cannot be."""

    language: str
    model_a: str
    model_b: str
    source: str
    n: int
    difference: float | None
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float | None
    sentence: str

    def as_dict(self) -> dict:
        return asdict(self)


def _in_language(run: Run, language: str) -> Run:
    return Run(run.label, run.table.filter(groups_key(run.table) == language), run.sources, run.judge)


def _pair(language: str, a: Run, b: Run) -> LanguagePair | None:
    if not a.n_rows or not b.n_rows:
        return None
    choice = default_key([a, b])
    found = {c.source: c for c in paired_comparisons(match_runs([a, b], choice.key, choice.by_id))}
    source = next((s for s in PREFERRED if s in found and found[s].n), None)
    if source is None:
        return None
    c = found[source]
    return LanguagePair(language, a.label, b.label, source, c.n, c.difference, c.ci_low, c.ci_high, c.p_value, None, "")


@dataclass(frozen=True)
class LanguagePairs:
    """The pairs of :func:`language_pairs` and the models left out of them as duplicates
    ([(duplicate, the model whose rows it repeats)])."""

    pairs: list[LanguagePair]
    duplicates: list[tuple[str, str]]

    def duplicate_sentences(self) -> list[str]:
        return duplicate_sentences(self.duplicates)


def language_pairs(models: Sequence[Run]) -> LanguagePairs:
    """Per language (sorted), every pair of ``models`` (each a :class:`Run` labelled with the
    model, its rows carrying ``language``) with matched questions there; a model holding the same
    rows as an earlier one is left out and named."""
    kept, duplicates = one_per_content(models, [m.table for m in models], [m.label for m in models])
    languages = sorted({v for m in kept for v in groups_key(m.table).to_list()}, key=lambda v: (v == NO_LANGUAGE, v))
    out: list[LanguagePair] = []
    for language in languages:
        runs = [_in_language(m, language) for m in kept]
        pairs = [p for a, b in combinations(runs, 2) if (p := _pair(language, a, b)) is not None]
        adjusted = holm_adjust([p.p_value for p in pairs]) if len(pairs) > 1 else [None] * len(pairs)
        for p, q in zip(pairs, adjusted, strict=True):
            row = {**p.as_dict(), "p_holm": q, "run_a": p.model_a, "run_b": p.model_b}
            sentence = f"{language}: {pair_sentence(row)}"
            out.append(LanguagePair(**{**p.as_dict(), "p_holm": q, "sentence": sentence}))
    return LanguagePairs(out, duplicates)


#: How the pairs are computed, beside them on the page and in --json.
PAIRS_METHOD = (
    "Per language, each pair of models matched on the questions both answered (a shared id column, else question "
    "and golden answer text); the verdict source is the adjudicated one where both have it, else the LLM judge, "
    "else exact substring; Newcombe's paired 95% interval, exact McNemar test, Holm's step-down adjustment across "
    "a language's pairs. One model per content: a model holding the same rows as another (in any order or "
    "encoding) is named and left out of every pair."
)


def pairs_frame(pairs: Sequence[LanguagePair]) -> pl.DataFrame:
    schema = {
        "language": pl.String,
        "model_a": pl.String,
        "model_b": pl.String,
        "source": pl.String,
        "n": pl.Int64,
        "difference": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "p_value": pl.Float64,
        "p_holm": pl.Float64,
        "sentence": pl.String,
    }
    return pl.DataFrame([p.as_dict() for p in pairs], schema=schema)

"""Cached data of the Matchers page: every matcher's figures against people for a stored run
(:func:`scoring.estimate.matcher_quality.matcher_quality` on
:func:`scoring.estimate.stored_matchers.stored_matcher_sample`), kept per (database, run, verdict
revision, judge revision, chrF threshold) in the server's per-run cache, as the estimate's are. The
recommendation is recomputed for the target the page's control holds (it costs nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from scoring.estimate.matcher_quality import (
    MatcherFigures,
    Recommendation,
    figures_table,
    matcher_quality,
    recommendations,
)
from scoring.estimate.stored_matchers import stored_matcher_sample
from ui import estimate_data, state


@dataclass(frozen=True)
class MatchersReport:
    """A run's matcher figures (all rows, then each language), as a table, and the reviewed count."""

    figures: list[MatcherFigures]
    table: pl.DataFrame
    reviewed: int

    def recommendations(self, target: float) -> list[Recommendation]:
        return recommendations(self.figures, target)


def report(run_id: int, threshold: float) -> MatchersReport:
    """Run ``run_id``'s report at chrF ``threshold`` (computed once per revision of its verdicts)."""

    def compute() -> MatchersReport:
        _, sample = stored_matcher_sample(state.engine(), run_id, threshold)
        figures = matcher_quality(sample)
        return MatchersReport(figures, figures_table(figures), int(sample["reviewed"].sum()))

    key = ("matchers", run_id, *estimate_data.revisions(), threshold)
    return state.run_cache().get(key, compute)

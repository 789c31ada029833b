"""Cached data of the Matchers page: every matcher's figures against people for a stored run
(:func:`scoring.estimate.matcher_quality.matcher_quality` on
:func:`scoring.estimate.stored_matchers.stored_matcher_sample`), kept per (database, run, verdict
revision, judge revision, chrF threshold) in the server's per-run cache, as the estimate's are. The
recommendation is recomputed for the target the page's control holds (it costs nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from scoring.core.metric_names import METRIC_COLUMNS
from scoring.estimate.matcher_quality import (
    MatcherFigures,
    Recommendation,
    figures_table,
    matcher_quality,
    recommendations,
)
from scoring.estimate.stored_matchers import run_matchers, save_run_matchers, stored_matcher_sample
from scoring.store import database_url
from ui import estimate_data, state


@dataclass(frozen=True)
class MatchersReport:
    """A run's matcher figures (all rows, then each language), as a table, and the reviewed count."""

    figures: list[MatcherFigures]
    table: pl.DataFrame
    reviewed: int

    def recommendations(self, target: float) -> list[Recommendation]:
        return recommendations(self.figures, target)


def report(run_id: int, threshold: float, matchers: tuple[str, ...]) -> MatchersReport:
    """Run ``run_id``'s report at chrF ``threshold``, the spec's two beside ``matchers`` (computed
    once per revision of its verdicts)."""

    def compute() -> MatchersReport:
        _, sample = stored_matcher_sample(state.engine(), run_id, threshold)
        figures = matcher_quality(sample, [*METRIC_COLUMNS, *matchers])
        return MatchersReport(figures, figures_table(figures), int(sample["reviewed"].sum()))

    # the database in the key: a server (or a test process) may open another database with a run of the same id
    key = ("matchers", database_url(), run_id, *estimate_data.revisions(), threshold, matchers)
    return state.run_cache().get(key, compute)


def switched_on(run_id: int) -> tuple[str, ...]:
    """The optional matchers switched on for the run (every one until a team saves a choice)."""
    return run_matchers(state.engine(), run_id)


def save(run_id: int, names: list[str]) -> tuple[str, ...]:
    """Switch ``names`` on for the run, at once (the report's default set from now on)."""
    return save_run_matchers(state.engine(), run_id, names)

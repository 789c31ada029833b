"""Everything the Overview and ``python -m scoring estimate`` show for one run, from its final
verdicts: raw metric accuracy, the adjudicated figure and the estimated true accuracy side by
side per domain, each metric against the reviewers, and the review plan for a half-width.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import DEFAULT_HALF_WIDTH, Z95
from scoring.core.verdict_rules import AdjudicatedRow, adjudicated_accuracy
from scoring.estimate.estimator import FIGURE_TYPES, AccuracyEstimate, estimate_accuracy
from scoring.estimate.evidence import TO_REVIEW
from scoring.estimate.group_estimate import GROUP_METHOD, LANGUAGE, estimate_groups, groups_key, groups_of
from scoring.estimate.metric_quality import MetricQuality, metric_quality
from scoring.estimate.planner import ReviewPlan, plan_review
from scoring.estimate.sample import SAMPLE_RULE, reviewed_sample
from scoring.estimate.strata import build_strata

#: Columns of :meth:`RunEstimate.comparison` (``raw_judge`` only when the run has judge labels).
COMPARISON_COLUMNS = (
    "scope",
    "rows",
    "reviewed",
    "raw_exact",
    "raw_overlap",
    "raw_judge",
    "adjudicated_low",
    "adjudicated_high",
    "adjudicated_ci_low",
    "adjudicated_ci_high",
    "estimate",
    "ci_low",
    "ci_high",
    "shown",
    "needed",
    TO_REVIEW,
)

#: Columns of :attr:`RunEstimate.by_language`: the comparison's without the adjudicated ones.
LANGUAGE_COLUMNS = tuple(c for c in COMPARISON_COLUMNS if not c.startswith("adjudicated"))


@dataclass(frozen=True)
class RunEstimate:
    """One run's figures (see the module); ``sample`` is the table they were computed from."""

    sample: pl.DataFrame
    raw: pl.DataFrame  # scope, rows, raw_exact, raw_overlap, raw_judge (share of judged rows CORRECT)
    adjudicated: list[AdjudicatedRow]
    accuracy: AccuracyEstimate
    metrics: list[MetricQuality]
    plan: ReviewPlan

    @property
    def has_judge(self) -> bool:
        return any(m.metric == "judge" for m in self.metrics)

    def comparison(self) -> pl.DataFrame:
        """One row per domain (sorted) and ``combined``: :data:`COMPARISON_COLUMNS`, the one table
        (and chart) of raw, adjudicated and estimated accuracy side by side. A scope without an
        interval has no estimate (None) and says what to review (``what_to_review``)."""
        adjudicated = pl.DataFrame(
            [(r.domain, r.accuracy_low, r.accuracy_high, r.ci_low, r.ci_high) for r in self.adjudicated],
            schema=["scope", "adjudicated_low", "adjudicated_high", "adjudicated_ci_low", "adjudicated_ci_high"],
            orient="row",
        )
        estimated = self.accuracy.table().select(
            "scope", "reviewed", "estimate", "ci_low", "ci_high", "shown", "needed", TO_REVIEW
        )
        table = self.raw.join(adjudicated, on="scope", how="left").join(estimated, on="scope", how="left")
        columns = [c for c in COMPARISON_COLUMNS if c != "raw_judge" or self.has_judge]
        return table.select(columns)

    @cached_property
    def languages(self) -> list[str]:
        """The run's row languages (sorted); empty when its rows carry none."""
        return groups_of(self.sample, LANGUAGE)

    @property
    def multilingual(self) -> bool:
        return len(self.languages) > 1

    @cached_property
    def by_language(self) -> pl.DataFrame:
        """One row per language (sorted): :data:`LANGUAGE_COLUMNS`, each language's raw metric
        accuracy and its estimated true accuracy (:mod:`scoring.estimate.group_estimate`)."""
        if not self.languages:
            return pl.DataFrame(schema=dict.fromkeys(LANGUAGE_COLUMNS, pl.String))
        raw = raw_accuracy(self.sample, LANGUAGE, combined=False)
        found = [e.as_dict() for e in estimate_groups(self.sample, LANGUAGE)]
        estimated = pl.DataFrame(found, schema_overrides=FIGURE_TYPES).select(
            "scope", "reviewed", "estimate", "ci_low", "ci_high", "shown", "needed", TO_REVIEW
        )
        table = raw.join(estimated, on="scope", how="left")
        return table.select([c for c in LANGUAGE_COLUMNS if c != "raw_judge" or self.has_judge])

    @cached_property
    def random_sample(self) -> dict:
        """What the random-sample rule (:data:`SAMPLE_RULE`) kept and left out: rows in the
        estimate, rows of the sample whose truth is missing and what they cost in width (points of
        the combined interval), and the rows reviewed by hand (1-based row numbers). Computed once
        per figures, which the pages keep per verdict revision, not on every rerun."""
        sample = self.sample
        by_hand = sample.filter(pl.col("by_hand")).sort("row_idx")["row_idx"].to_list()
        return {
            "rule": SAMPLE_RULE,
            "in_estimate": int(sample["reviewed"].sum()),
            "missing": int(sample["missing"].sum()),
            "missing_width": self.accuracy.combined.missing_width,
            "by_hand": len(by_hand),
            "by_hand_rows": [int(i) + 1 for i in by_hand],
        }

    def as_dict(self) -> dict:
        languages = {"by_language": self.by_language.to_dicts(), "language_method": GROUP_METHOD}
        return {
            "random_sample": self.random_sample,
            "comparison": self.comparison().to_dicts(),
            **(languages if self.multilingual else {}),
            "estimate": self.accuracy.as_dict(),
            "metrics": [m.as_dict() for m in self.metrics],
            "plan": self.plan.as_dict(),
        }


def raw_accuracy(sample: pl.DataFrame, by: str = "Domain", combined: bool = True) -> pl.DataFrame:
    """Each metric's raw accuracy per domain (or per value of ``by``, sorted) and ``combined``:
    share of rows it passes; the judge's is the share of judged rows labelled CORRECT (null when
    none is judged)."""
    figures = [
        pl.len().alias("rows"),
        pl.col("exact_correct").mean().alias("raw_exact"),
        pl.col("overlap_correct").mean().alias("raw_overlap"),
        pl.col("judge_correct").cast(pl.Float64).mean().alias("raw_judge"),
    ]
    if by == LANGUAGE:
        sample = sample.with_columns(pl.Series(LANGUAGE, groups_key(sample)))
    per_domain = sample.group_by(by).agg(figures).sort(by).rename({by: "scope"})
    parts = [per_domain, sample.select(figures).select(pl.lit(COMBINED).alias("scope"), pl.all())]
    table = pl.concat(parts if combined else parts[:1], how="vertical_relaxed")
    return table.with_columns(pl.col("rows").cast(pl.Int64))


def run_estimate(
    final: pd.DataFrame | pl.DataFrame,
    half_width: float = DEFAULT_HALF_WIDTH,
    z: float = Z95,
    rank: np.ndarray | None = None,
    served: np.ndarray | None = None,
) -> RunEstimate:
    """All of a run's figures from its final verdicts (:func:`scoring.review.final_verdicts`'s
    frame, judge labels optional): see :class:`RunEstimate`. ``rank`` and ``served`` (per row)
    apply the random-sample rule (:func:`scoring.estimate.reviewed_sample`)."""
    # The text of unsettled rows is read by nothing here (what-if reads the reviewed rows).
    sample = reviewed_sample(final, rank, served, all_text=False)
    strata = build_strata(sample)
    adjudicated_input = (
        final.select("Domain", "final_verdict").to_pandas() if isinstance(final, pl.DataFrame) else (final)
    )
    return RunEstimate(
        sample=sample,
        raw=raw_accuracy(sample),
        adjudicated=adjudicated_accuracy(adjudicated_input),
        accuracy=estimate_accuracy(strata, z),
        metrics=metric_quality(sample, z, strata),
        plan=plan_review(strata, half_width, z),
    )

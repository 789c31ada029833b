"""The judge-assisted figures of a run beside its human-only ones: the estimate (:mod:`.ppi`) and
the plan (:mod:`.ppi_plan`) from the same sample, one table per scope with both estimates, and a
sample's judge labels swapped for one model's (``python -m scoring estimate --judge-model M``).

Kept apart from :mod:`.summary` so a run without judge labels computes, shows and prints exactly
what it did before: :func:`judge_figures` is None for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from scoring.core.stats import DEFAULT_HALF_WIDTH, Z95
from scoring.core.verdict_rules import judge_correct
from scoring.estimate.evidence import TO_REVIEW
from scoring.estimate.ppi import PPI_METHOD, JudgeAssisted, JudgeInputs, judge_assisted_arrays, judge_inputs
from scoring.estimate.ppi_plan import JudgePlan, plan_arrays

#: The judge plans the reviews once it has labelled this share of the run's rows: labels on a few
#: rows change the estimate little, and the human-only planner stays the one a user knows.
PLANS_FROM = 0.5
#: Columns of :meth:`JudgeFigures.comparison`.
JUDGED_COLUMNS = (
    "scope",
    "rows",
    "reviewed",
    "judged",
    "human_estimate",
    "human_ci_low",
    "human_ci_high",
    "judge_estimate",
    "judge_ci_low",
    "judge_ci_high",
    "effective_reviews",
    "uses_judge",
    "shown",
    "needed",
    TO_REVIEW,
)


@dataclass(frozen=True)
class JudgeFigures:
    """A run's judge-assisted estimate and plan (``model``: whose labels, to name wherever it is shown)."""

    estimate: JudgeAssisted
    plan: JudgePlan
    model: str | None = None
    method: str = PPI_METHOD

    @property
    def plans(self) -> bool:
        """Whether the judge has labelled enough of the run (:data:`PLANS_FROM`) to plan with."""
        c = self.estimate.combined
        return c.rows > 0 and c.judged >= PLANS_FROM * c.rows

    def comparison(self, human: pl.DataFrame) -> pl.DataFrame:
        """Per domain and combined (:data:`JUDGED_COLUMNS`): the human-only estimate (``human``:
        :meth:`scoring.estimate.AccuracyEstimate.table`) beside the judge-assisted one; both
        figures None where there is no interval yet (the same reviews give both one)."""
        judged = self.estimate.table().select(
            "scope",
            "rows",
            "judged",
            pl.col("reviewed"),
            judge_estimate="estimate",
            judge_ci_low="ci_low",
            judge_ci_high="ci_high",
            effective_reviews="effective_reviews",
            uses_judge="uses_judge",
            shown="shown",
            needed="needed",
            what_to_review=TO_REVIEW,
        )
        ours = human.select("scope", human_estimate="estimate", human_ci_low="ci_low", human_ci_high="ci_high")
        return judged.join(ours, on="scope", how="left", maintain_order="left").select(JUDGED_COLUMNS)

    def as_dict(self) -> dict:
        return {"model": self.model, **self.estimate.as_dict(), "plan": self.plan.as_dict(), "plans": self.plans}


def judge_figures(
    sample: pl.DataFrame | JudgeInputs | None,
    half_width: float = DEFAULT_HALF_WIDTH,
    model: str | None = None,
    z: float = Z95,
) -> JudgeFigures | None:
    """The judge-assisted estimate and plan of a sample (:func:`scoring.estimate.reviewed_sample`,
    or its :func:`scoring.estimate.ppi.judge_inputs` when the caller keeps them for several
    half-widths), None when the judge labelled none of its rows."""
    found = judge_inputs(sample) if isinstance(sample, pl.DataFrame) else sample
    if found is None:
        return None
    arrays = (found.strata, found.truth, found.judge, found.missing)
    return JudgeFigures(judge_assisted_arrays(*arrays, z), plan_arrays(*arrays, half_width, z), model)


def with_labels(sample: pl.DataFrame, labels: Mapping[str, str]) -> pl.DataFrame:
    """``sample`` with its ``judge_correct`` read from ``labels`` (item key -> judge label) instead."""
    found = pl.DataFrame(
        {"item_key": list(labels), "_label": list(labels.values())}, schema={"item_key": pl.String, "_label": pl.String}
    )
    joined = sample.join(found, on="item_key", how="left", maintain_order="left")
    return joined.with_columns(judge_correct=judge_correct(pl.col("_label"))).drop("_label")

"""How many more rows of one language to review for an interval of +-h points in that language,
and exactly which: "review 23 more Tamil rows of the random sample for +-5 points in Tamil".

A language's figure is estimated as a run of its own rows (:mod:`.group_estimate`: its rows of
the random sample, stratified by bucket x domain), so its plan is the human-only planner's
(:func:`scoring.estimate.planner.plan_review`, Neyman allocation with the finite-population
correction, rates at the one-sided bound of the bucket's pooled share) on that language's rows
alone, and its rows are each stratum's first unreviewed rows of that language in the run's review
order (:func:`scoring.estimate.planner.next_rows`): a prefix of the language's own order, so a
random sample of the language. At least :data:`~scoring.estimate.evidence.MIN_DOMAIN_REVIEWED`
rows of the language are planned (or all of them): below that the figure shows no interval.

What it costs the whole run's figure: the run's random sample is the prefix of each stratum's
order up to the last row the queue served, so rows of other languages before the language's rows
in a stratum count as missing (their truth unknown: the combined interval spans them) until they
are reviewed too. The page and ``docs/statistics.md`` say so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from scoring.core.errors import InputError
from scoring.core.language_names import normalise_language
from scoring.core.stats import DEFAULT_HALF_WIDTH
from scoring.estimate.evidence import MIN_DOMAIN_REVIEWED
from scoring.estimate.group_estimate import LANGUAGE, groups_key, groups_of
from scoring.estimate.planner import ReviewPlan, next_rows, plan_review
from scoring.estimate.strata import build_strata

LANGUAGE_PLAN_METHOD = (
    "the human-only planner (Neyman allocation over bucket x domain, rates at the one-sided 77% Wilson bound of "
    "the bucket's pooled reviewed share) on the language's rows alone, as its figure is estimated; at least "
    f"{MIN_DOMAIN_REVIEWED} of its rows; each stratum's first unreviewed rows of the language in the run's review "
    "order"
)


@dataclass(frozen=True)
class LanguagePlan:
    """The plan for +-``half_width`` in ``language`` (``plan``: per stratum of the language's rows)
    and the rows it asks for next (``rows``: row_idx, item_key, bucket, Domain, rank, conflict, in
    the queue's order), out of the language's ``size`` rows."""

    language: str
    half_width: float
    size: int
    plan: ReviewPlan
    rows: pl.DataFrame
    method: str = LANGUAGE_PLAN_METHOD

    def sentence(self) -> str:
        """The plan in one plain sentence (the page's and the command line's)."""
        points, lang = f"±{self.half_width * 100:g} points", self.language
        if self.rows.is_empty():
            return (
                f"Nothing left to review for {points} in {lang}: every planned {lang} row of the random sample "
                "is reviewed. Ask for a narrower interval to plan more."
            )
        return (
            f"Review {self.rows.height:,} more {lang} rows of the random sample for {points} in {lang} (expected "
            f"±{self.plan.expected_half_width * 100:.1f} points in {lang} once they are reviewed, if the assumed "
            f"rates hold; {self.plan.reviewed:,} of its {self.size:,} rows are reviewed)."
        )

    def as_dict(self) -> dict:
        return {
            "language": self.language,
            "half_width": self.half_width,
            "rows_of_language": self.size,
            "reviewed": self.plan.reviewed,
            "planned": self.plan.planned,
            "remaining": self.rows.height,
            "expected_half_width": self.plan.expected_half_width,
            "next_rows": (self.rows["row_idx"] + 1).to_list(),
            "sentence": self.sentence(),
            "method": self.method,
        }


def plan_language(
    sample: pl.DataFrame,
    language: str,
    half_width: float = DEFAULT_HALF_WIDTH,
    seed: int | None = None,
) -> LanguagePlan:
    """The plan for +-``half_width`` in ``language`` (a name or code: "ta" is Tamil) from a run's
    sample (its ``language`` column; ranks from its ``rank`` column, else the run's ``seed``).
    Raises :class:`InputError` naming the run's languages when ``language`` is not one of them."""
    known = groups_of(sample, LANGUAGE)
    wanted = language.strip()
    if wanted not in known and normalise_language(wanted) in known:  # "ta", "tam": Tamil
        wanted = normalise_language(wanted)
    if wanted not in known:
        found = ", ".join(known) or "none: its rows carry no language"
        raise InputError(f"No row of this run is in {wanted!r}: its languages are {found}.")
    part = sample.filter(groups_key(sample, LANGUAGE) == wanted)
    strata = build_strata(part)
    plan = plan_review(strata, half_width)
    floor = min(MIN_DOMAIN_REVIEWED, part.height)
    narrower = half_width
    while plan.planned < floor and narrower > 1e-4:  # a figure needs that many rows before it shows one
        narrower /= 2
        plan = plan_review(strata, narrower)
    ranks = part["rank"] if "rank" in part.columns else None
    ranked = ranks is not None and ranks.null_count() == 0
    rows = next_rows(part, plan, seed=None if ranked else seed, rank=ranks.to_numpy() if ranked else None)
    if narrower != half_width:  # asked for +-h: planned for fewer would show no figure
        plan = replace(plan, half_width=half_width)
    return LanguagePlan(wanted, half_width, part.height, plan, rows)


def language_plan_text(found: LanguagePlan, shown: int = 20) -> str:
    """The plan as the command line prints it: the sentence, the first ``shown`` rows to review
    (1-based, in the queue's order) and the method."""
    lines = [f"Plan for {found.language}: {found.sentence()}"]
    if not found.rows.is_empty():
        numbers = (found.rows["row_idx"] + 1).to_list()
        more = f" and {len(numbers) - shown:,} more" if len(numbers) > shown else ""
        lines.append(f"rows to review next: {', '.join(map(str, numbers[:shown]))}{more}")
    lines.append(f"method: {found.method}")
    return "\n".join(lines)

"""The estimate's figures in plain words, shared by the pages and the command line: what to review
where an estimate has no interval yet (:mod:`scoring.estimate.evidence`), what a review plan gives
once done, and what the judge's labels did to the interval. One wording in every place, so the
page and ``python -m scoring estimate`` tell one story."""

from __future__ import annotations

from collections.abc import Sequence

from scoring.core.formatting import percent
from scoring.core.report import COMBINED
from scoring.estimate.strata import MIN_REVIEWED

#: How a scope without an interval is named where it is the whole run.
THE_RUN = "the run"


def to_get_one(scope: str, needed: int, buckets: Sequence[str] = ()) -> str:
    """What an estimate without a 95% interval shows instead of a number: the reviews of the
    random sample that would give it one (:func:`scoring.estimate.evidence.shortfall`), e.g.
    "Review at least 12 more rows of the random sample in Art (at least 2 in each of: both_pass,
    both_fail) to get an estimate." ``scope``: a domain, a language, or ``combined``."""
    where = "" if scope in (COMBINED, THE_RUN) else f" in {scope}"
    each = f" (at least {MIN_REVIEWED} in each of: {', '.join(buckets)})" if buckets else ""
    count = max(needed, 1)
    rows = "row" if count == 1 else "rows"
    return f"Review at least {count:,} more {rows} of the random sample{where}{each} to get an estimate."


def plan_sentence(
    half_width: float, planned: int, reviewed: int, remaining: int, expected: float, rows: int, assumed: int
) -> str:
    """A review plan in one sentence, the page's and the CLI's: its size and what it gives once
    done. ``expected``: the half-width the plan expects (:class:`scoring.estimate.ReviewPlan`),
    ``rows``: the run's, ``assumed``: strata planned at the prior 50% (no reviewed row in their
    bucket). Never "expected ±0.00": a plan of every row counts the accuracy, and a plan with
    nothing reviewed behind it says what it assumes."""
    head = (
        f"Review plan for ±{half_width * 100:g} points: {planned:,} rows planned in all, {reviewed:,} reviewed, "
        f"{remaining:,} remaining"
    )
    return f"{head}; {plan_outcome(expected, planned, rows, assumed)}."


def plan_outcome(expected: float, planned: int, rows: int, assumed: int) -> str:
    """What a plan gives once its rows are reviewed (see :func:`plan_sentence`)."""
    if rows and planned >= rows:
        return "that is every row of the run: the accuracy is then counted, with no sampling error"
    said = f"expected interval once they are reviewed ±{expected * 100:.2f} points, if the assumed rates hold"
    if assumed:
        said += (
            f"; the {assumed:,} strata whose bucket has no reviewed row yet are assumed at 50%, the widest case: "
            "plan again once they have some"
        )
    return said


def points(low: float, high: float) -> str:
    """An interval's half-width as "±4.2 points"."""
    return f"±{(high - low) * 50:.1f} points"


def bracket(estimate: float, low: float, high: float) -> str:
    """ "61.5% [56.2%, 66.2%]"."""
    return f"{percent(estimate)} [{percent(low)}, {percent(high)}]"


def judge_sentence(judged: dict, human: dict) -> str:
    """One or two plain sentences on the combined figures: whether the judge's labels narrow the
    interval, by how much, and what the reviews are then worth. ``judged``: a
    :class:`scoring.estimate.ppi.JudgedEstimate` as a dict; ``human``: the human-only estimate
    (``estimate``, ``ci_low``, ``ci_high``) of the same rows."""
    h = bracket(human["estimate"], human["ci_low"], human["ci_high"])
    if not judged["uses_judge"]:
        return (
            f"The judge's labels do not narrow the interval here, so the figure is the human-only one: {h}. "
            "They add nothing the metrics' buckets and the reviewed rows do not already say (a judge that "
            "agrees with the buckets, or too few reviewed rows to check it against)."
        )
    j = bracket(judged["estimate"], judged["ci_low"], judged["ci_high"])
    worth = max(0.0, judged["effective_reviews"] - judged["reviewed"])
    return (
        f"With the judge's labels on {judged['judged']:,} of {judged['rows']:,} rows: {j}, "
        f"{points(judged['ci_low'], judged['ci_high'])} where the reviews alone give {h}, "
        f"{points(human['ci_low'], human['ci_high'])}. The judge is worth {worth:,.0f} reviews here: the "
        f"{judged['reviewed']:,} reviewed rows count as {judged['effective_reviews']:,.0f}."
    )

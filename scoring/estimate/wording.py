"""The estimate's figures in plain words, shared by the pages and the command line: a domain too
thinly reviewed for an interval, and what the judge's labels did to the interval. One wording in
both places, so the page and ``python -m scoring estimate`` tell one story."""

from __future__ import annotations

from scoring.core.formatting import percent


def withheld_text(scope: str, needed: int) -> str:
    """What a domain too thinly reviewed for an interval shows instead of one."""
    return f"too few reviewed rows in {scope} for an interval: review {needed:,} more"


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

"""One side of a head-to-head (:mod:`.difference`): a run's (or a model's) estimated true accuracy
on the questions it shares with the other side, and what the difference's variance needs of it.

The figure is the single-run estimate on those rows, nothing new: stratified by bucket x domain
(:func:`scoring.estimate.estimator.share_estimate`, with a language's rules when the scope is one
language: :mod:`.group_estimate`), judge-assisted where that narrows it (:mod:`.ppi`, which never
widens it), and withheld where it has no 95% interval (:mod:`.evidence`). Restricting a run's
random sample to the shared questions keeps it random: within each stratum the shared rows of the
prefix are a simple random sample of the stratum's shared rows.

What the difference needs besides: the estimate's standard error and the degrees of freedom it
rests on; how far the rows of the random sample still missing a verdict can move the point; and,
per shared question, the verdict where a person settled it, else its stratum's share standing in
for it with that share's binomial variance (the question part of the difference's variance).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from scoring.core.report import COMBINED
from scoring.estimate.estimator import Estimate, share_estimate
from scoring.estimate.evidence import MAX_BORROWED, has_interval, withhold
from scoring.estimate.group_estimate import GROUP_MAX_BORROWED
from scoring.estimate.ppi import judge_assisted_arrays, sample_arrays
from scoring.estimate.sample import check_sample
from scoring.estimate.strata import (
    NONE,
    OWN,
    Strata,
    build_strata,
    pooled_shares,
    shares,
    shrunk_variances,
    weights,
)
from scoring.estimate.wording import to_get_one

#: The column of a side's sample naming each row's shared question (the same text in both sides).
QUESTION = "shared_question"
#: The column naming each row's question family: the same question asked in several languages
#: shares one (a column the user maps, or the dataset's question id); else the question itself.
FAMILY = "question_family"


@dataclass(frozen=True)
class Side:
    """A run's (or model's) estimated true accuracy on the shared questions of a scope.

    ``estimate``/``ci_low``/``ci_high`` are the single-run figure (None without an interval: then
    ``what_to_review`` says what would give one). ``standard_error`` is the one the difference
    uses: judge-assisted where ``uses_judge`` (never above ``human_standard_error``). ``df``: the
    degrees of freedom the variance rests on (reviewed rows less one per stratum).
    ``low_shift``/``high_shift``: how far the point moves with every missing row of the random
    sample wrong / right."""

    label: str
    scope: str
    rows: int
    reviewed: int
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    standard_error: float
    human_standard_error: float
    uses_judge: bool
    df: float
    missing: int = 0
    low_shift: float = 0.0
    high_shift: float = 0.0
    shown: bool = True
    needed: int = 0
    review_buckets: tuple[str, ...] = ()

    @property
    def what_to_review(self) -> str | None:
        """What to review to get this side's estimate (None once it has its interval)."""
        where = COMBINED if self.scope == COMBINED else self.scope
        return None if has_interval(self) else to_get_one(where, self.needed, self.review_buckets)

    def as_dict(self) -> dict:
        return withhold({**asdict(self), "review_buckets": list(self.review_buckets)}, self.what_to_review or "")


def degrees_of_freedom(strata: Strata, k: np.ndarray, target: np.ndarray | None = None) -> float:
    """The reviewed rows less one per stratum with a variance, over the cells ``target`` selects:
    the degrees of freedom of the estimate's variance (as
    :func:`scoring.estimate.estimator.small_sample_z` counts them); infinite when none."""
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    n = strata.reviewed
    use = inside & (shrunk_variances(strata, k) > 0) & (n >= 2)
    return float(np.sum(n[use] - 1)) if use.any() else float("inf")


def _pooled(strata: Strata) -> np.ndarray:
    """Per cell, its bucket's pooled reviewed share (0.5 where the bucket has none)."""
    n = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    k = np.bincount(strata.bucket, weights=strata.correct, minlength=strata.groups)
    return np.divide(k, n, out=np.full(strata.groups, 0.5), where=n > 0)[strata.bucket]


def _shifts(strata: Strata, target: np.ndarray | None, point: Estimate, group: bool) -> tuple[float, float]:
    """How far the point moves with every missing row of the random sample wrong, and right."""
    miss = strata.missing_counts()
    if not miss.sum():
        return 0.0, 0.0
    borrowed = GROUP_MAX_BORROWED if group else MAX_BORROWED
    wrong = share_estimate(strata.imputed(False), strata.correct, target, point.scope, max_borrowed=borrowed)
    right = share_estimate(strata.imputed(True), strata.correct + miss, target, point.scope, max_borrowed=borrowed)
    return max(0.0, point.estimate - wrong.estimate), max(0.0, right.estimate - point.estimate)


def side_figure(
    sample: pl.DataFrame, label: str, scope: str = COMBINED, group: bool = False
) -> tuple[Side, pl.DataFrame]:
    """``label``'s figure on ``sample`` (its rows of one scope's shared questions, with
    :data:`QUESTION` and :data:`FAMILY`), and per row: ``QUESTION``, ``FAMILY``, ``value`` (the
    settled verdict 1/0, else the stratum's share), ``spread`` (0 where settled, else the share's
    binomial variance at the estimate's shrunk share), ``rate`` (the stratum's share) and
    ``known`` (settled). ``group``: the scope is one
    language (its rules: Student's t, up to half its rows on a borrowed rate)."""
    check_sample(sample)
    strata = build_strata(sample)
    target = np.ones(len(strata.size), dtype=bool) if group else None
    borrowed = GROUP_MAX_BORROWED if group else MAX_BORROWED
    human = share_estimate(strata, strata.correct, target, scope, withhold=True, max_borrowed=borrowed)
    shown = has_interval(human)
    point, se, low, high = human.estimate, human.standard_error, human.ci_low, human.ci_high
    truth, judge, missing = sample_arrays(sample)
    judged = shown and not np.isnan(judge).all()
    assisted = judge_assisted_arrays(strata, truth, judge, missing).combined if judged else None
    uses = assisted is not None and assisted.uses_judge and assisted.standard_error < se
    if uses and assisted is not None:  # the judge-assisted figure, as the True accuracy page leads with it
        point, se, low, high = assisted.estimate, assisted.standard_error, assisted.ci_low, assisted.ci_high
    low_shift, high_shift = _shifts(strata, target, human, group)
    side = Side(
        label=label,
        scope=scope,
        rows=human.rows,
        reviewed=human.reviewed,
        estimate=point if shown else None,
        ci_low=low if shown else None,
        ci_high=high if shown else None,
        standard_error=se,
        human_standard_error=human.standard_error,
        uses_judge=uses,
        df=degrees_of_freedom(strata, strata.correct, target),
        missing=human.missing,
        low_shift=low_shift,
        high_shift=high_shift,
        shown=shown,
        needed=human.needed,
        review_buckets=human.review_buckets,
    )
    return side, _values(sample, strata)


def _values(sample: pl.DataFrame, strata: Strata) -> pl.DataFrame:
    """Per row: its question, family, settled verdict or its stratum's share, and that share's
    binomial variance where the verdict is not known (:func:`side_figure`)."""
    w = weights(strata)
    rate = np.where(w.status == OWN, shares(strata, strata.correct), np.where(w.status == NONE, 0.5, _pooled(strata)))
    # the stratum's own share, Jeffreys-smoothed so an all-correct stratum keeps a little variance
    own = (strata.correct + 0.5) / (strata.reviewed + 1.0)
    centre = np.where(w.status == OWN, own, pooled_shares(strata, strata.correct))
    spread = centre * (1 - centre)
    truth = sample["truth"].cast(pl.Float64).to_numpy()
    known = ~np.isnan(truth)
    cell = strata.row_cell
    return pl.DataFrame(
        {
            QUESTION: sample[QUESTION].cast(pl.String),
            FAMILY: sample[FAMILY].cast(pl.String),
            "value": np.where(known, np.nan_to_num(truth), rate[cell]),
            "spread": np.where(known, 0.0, spread[cell]),
            "rate": rate[cell],
            "known": known,
        }
    )

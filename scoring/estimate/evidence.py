"""No figure before its evidence (issue 36): the one rule that decides whether an estimate may be
printed, and what to review where it may not.

Why a rule of its own: an estimate without a 95% interval is not a weaker claim, it is a guess
dressed as one. Below the evidence minimums the point estimate is mostly assumption: a bucket with
no reviewed row counts at the prior 0.5, and a thinly reviewed domain borrows its buckets' rates
from other domains. Thirteen triage rows (all overlap-only) made "Estimated true accuracy 50.2%"
of a run three quarters of whose rows nobody had looked at, printed beside "not yet"; a reader
takes the number and leaves the words. So every place that prints an estimate (True accuracy's
headline, tables and chart, the Overview, the Model x language cells, ``python -m scoring
estimate`` and ``table`` with their JSON and CSV) asks :func:`has_interval`, and where it says no
prints no number but what to review to get one (:func:`scoring.estimate.wording.to_get_one`).

The minimums are the estimator's own, unchanged (their coverage is simulated in
``tests/test_small_runs.py`` and ``tests/test_language_estimate.py``); :func:`shortfall` turns
them into reviews:

- every bucket with rows in the scope has a reviewed row (else those rows span 0 to 1: a bound,
  not a 95% interval); :data:`~scoring.estimate.strata.MIN_REVIEWED` of each is asked for, the
  fewest that let a stratum stand on its own;
- at least :data:`MIN_DOMAIN_REVIEWED` reviewed rows of the scope (or all of its rows);
- at most :data:`MAX_BORROWED` of its rows take a rate borrowed from their bucket (a language:
  :data:`~scoring.estimate.group_estimate.GROUP_MAX_BORROWED`).

The rows asked for are the most any one minimum needs, so a count is a floor: reviewing them in
the planner's order (the audit scope, at least two per stratum) meets all three at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from scoring.core.protocols import BUCKETS
from scoring.estimate.strata import MIN_REVIEWED, OWN, Strata, Weights, weights

#: A scope shows an interval once this many of its rows are reviewed (or all of them)...
MIN_DOMAIN_REVIEWED = 10
#: ...and at most this share of its rows take a rate borrowed from their bucket. A small domain
#: whose rows are all borrowed cannot show that it behaves unlike its buckets: its interval covered
#: 0.67 on 300-row runs.
MAX_BORROWED = 0.2
#: The figures of an estimate's row (as a dict) that are printed only with an interval.
FIGURES = ("estimate", "ci_low", "ci_high", "half_width")
#: The key of an estimate's row (as a dict, JSON) saying what to review when it has no interval.
TO_REVIEW = "what_to_review"


@dataclass(frozen=True)
class Shortfall:
    """What a scope lacks for an interval: at least ``rows`` more reviews of its random sample,
    among them :data:`~scoring.estimate.strata.MIN_REVIEWED` in each of ``buckets`` (those with
    no reviewed row). ``rows`` 0: it has an interval."""

    rows: int = 0
    buckets: tuple[str, ...] = ()


def shortfall(
    strata: Strata, target: np.ndarray | None = None, w: Weights | None = None, max_borrowed: float = MAX_BORROWED
) -> Shortfall:
    """What the rows ``target`` selects (a domain, a language; None: the whole run) lack for an
    interval (see the module): the most reviews any one minimum asks for, and the buckets with
    rows in the scope but no reviewed row anywhere in the run."""
    w = weights(strata, target) if w is None else w
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    rows, reviewed = float(strata.size[inside].sum()), float(strata.reviewed[inside].sum())
    if rows == 0 or reviewed >= rows:
        return Shortfall()
    n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    size = np.bincount(strata.bucket, weights=np.where(inside, strata.size, 0.0), minlength=strata.groups)
    empty = (n_bucket == 0) & (size > 0)
    buckets = tuple(BUCKETS[b] for b in np.flatnonzero(empty))
    for_buckets = float(np.sum(np.minimum(MIN_REVIEWED, size[empty])))
    short = max(0.0, min(MIN_DOMAIN_REVIEWED, rows) - reviewed)
    fallen = inside & (w.status != OWN)
    left = np.where(fallen, strata.size - strata.reviewed, 0.0)
    borrowed, extra = float(left.sum()) / rows, 0.0
    for cell in np.argsort(-left):  # the largest borrowed cells first, each to MIN_REVIEWED rows
        if borrowed <= max_borrowed or left[cell] <= 0:
            break
        extra += max(0.0, min(MIN_REVIEWED, strata.size[cell]) - strata.reviewed[cell])
        borrowed -= left[cell] / rows
    needed = int(np.ceil(max(short, extra, for_buckets)))
    if w.unknown > 0:  # rows spanning 0 to 1: never an interval, whatever the counts say
        needed = max(needed, 1)
    return Shortfall(needed, buckets)


def has_interval(figure: object) -> bool:
    """Whether an estimate may be printed at all: it has a 95% interval. The one question every
    surface asks before it prints an estimated figure (see the module for why).

    ``figure``: an :class:`~scoring.estimate.Estimate`, a judge-assisted estimate, a Model x
    language cell, a metric's corrected accuracy (anything with ``shown`` and/or ``needed``), or
    one of their rows as a dict. ``needed`` > 0 or ``shown`` False: it has none yet."""
    if isinstance(figure, Mapping):
        shown, needed = figure.get("shown", True), figure.get("needed", 0)
    else:
        shown, needed = getattr(figure, "shown", True), getattr(figure, "needed", 0)
    return bool(shown) and not needed


def printed(row: Mapping, key: str = "estimate") -> float | None:
    """``row[key]`` where :func:`has_interval` allows it, else None (nothing to print)."""
    return row.get(key) if has_interval(row) else None


def withhold(row: dict, sentence: str, keys: tuple[str, ...] = FIGURES) -> dict:
    """``row`` (an estimate as a dict) as every output carries it: without an interval its
    figures (``keys``) are None and :data:`TO_REVIEW` says what to review (``sentence``); with
    one, :data:`TO_REVIEW` is None. The JSON, the CSV and the tables all read these rows."""
    if has_interval(row):
        return {**row, TO_REVIEW: None}
    return {**row, **dict.fromkeys((k for k in keys if k in row), None), TO_REVIEW: sentence}

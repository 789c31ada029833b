"""The plan for a decision: how many of the shared questions to review, per language, in each of
two runs, to tell the two models apart when they differ by at least the smallest difference worth
knowing, with the power asked for, and exactly which rows.

The head-to-head's variance (:mod:`.difference`) is the two sides' review variances plus the
questions' own part, read off the pilot with each bucket's domains pooled
(:func:`pilot_question_part`: a pilot's thin strata overstate it) and with the two models'
pairing guessed from their judge labels (:func:`judge_correlation`). Reviews shrink only the
first: the questions' part is what these questions can tell at best (every row reviewed), so a
plan first asks whether even that reaches the power (else it says so, with the smallest
difference these questions can tell apart, and plans nothing: more questions would help, not
more reviews). Otherwise the review variances get what is left of ``(difference / c)²``, ``c``
the standardised difference at which Holm's step-down over the ``family_size`` comparisons of
the page finds a given one in the right direction with the asked power (all of them assumed at
the smallest difference; one comparison alone: ``z(1 - alpha/2) + z(power)``).

The rows: Neyman allocation over both runs' strata at once (bucket x domain of each run's rows of
the language; ``n_h`` proportional to ``W_h S_h`` with one scale for both runs, which reaches the
summed variance with the fewest reviews), each stratum's rate its bucket's pooled reviewed share,
Jeffreys-smoothed (:func:`planning_rate`; the prior 0.5 where the bucket has none),
its variance scaled by what the judge's labels leave of
it (:func:`judge_factors`, read over each bucket's domains pooled) in strata planned to 20 reviewed rows or
more, at least what is reviewed (and 2 per stratum), at least 10 rows of the language; then each
stratum's first unreviewed rows in the run's review order (:func:`scoring.estimate.planner.next_rows`),
so each run's reviewed rows stay its random sample. The plan's power is taken as it is, with no
margin: a plan that overshoots asks for reviews nobody needs, and the simulation
(``tests/bench_decision.py``) checks that the power planned is the power found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import polars as pl

from scoring.core.stats import Z95
from scoring.estimate.difference import ALPHA, MIN_PAIRED, question_part
from scoring.estimate.evidence import MIN_DOMAIN_REVIEWED
from scoring.estimate.planner import ReviewPlan, allocate, next_rows, stratified_variance
from scoring.estimate.ppi import JUDGE_MIN_REVIEWED, sample_arrays
from scoring.estimate.ppi_plan import variance_factors
from scoring.estimate.side import QUESTION, side_figure
from scoring.estimate.strata import MIN_REVIEWED, Strata, build_strata

DEFAULT_DIFFERENCE = 0.03  #: the smallest difference worth knowing unless told (3 points)
DEFAULT_POWER = 0.8
#: The least share of a bucket's variance a plan counts on the judge to leave (:func:`judge_factors`):
#: what a judge right 95% of the time leaves at best (a bucket right half the time: 1 - 0.9² = 0.19).
#: A pilot's ten rows of a bucket on which the judge was never wrong read as none left, which
#: would plan that bucket no reviews at all.
JUDGE_LEAVES_AT_LEAST = 0.2
POWER_DRAWS = 40_000  #: Monte Carlo draws behind Holm's power (its error about 0.002)
DECISION_PLAN_METHOD = (
    "The head-to-head's variance is both runs' review variances plus the questions' own part; reviews shrink only "
    "the first, so a plan first checks that reviewing every shared question would reach the power (else it plans "
    "nothing and names the smallest difference these questions can tell apart). Otherwise: Neyman allocation over "
    "both runs' bucket x domain strata at once (one scale for both), each stratum's rate its bucket's pooled "
    "reviewed share (Jeffreys-smoothed), its variance scaled by what the judge's labels leave of it where they "
    "narrow it (read over each bucket's domains pooled: a pilot's strata are too thin), the questions' part read "
    "with each bucket's domains pooled and the two models' pairing guessed from their judge labels; enough that "
    "Holm's step-down over the page's comparisons, all at the smallest difference worth knowing, finds this one "
    "in the right direction with the asked power; each stratum's first unreviewed rows in the run's review order."
)


@lru_cache(maxsize=256)
def holm_power(c: float, family_size: int = 1, alpha: float = ALPHA) -> float:
    """The chance that Holm's step-down over ``family_size`` comparisons, each with a statistic
    ~ N(c, 1), finds the first one ahead in the right direction (one alone: exact; more: Monte
    Carlo with a fixed seed, so the same question gets the same answer)."""
    normal = NormalDist()
    if family_size <= 1:
        return normal.cdf(c - normal.inv_cdf(1 - alpha / 2))
    rng = np.random.default_rng(20240)
    t = rng.normal(c, 1.0, (POWER_DRAWS, family_size))
    # Holm's k-th smallest p is compared with alpha / (m - k + 1): the k-th largest |t| with its z.
    limits = np.array([normal.inv_cdf(1 - alpha / (2 * (family_size - k))) for k in range(family_size)])
    order = np.argsort(-np.abs(t), axis=1)
    passed = np.cumprod(np.take_along_axis(np.abs(t), order, axis=1) >= limits, axis=1).astype(bool)
    rejected = np.zeros_like(passed)
    np.put_along_axis(rejected, order, passed, axis=1)
    return float(np.mean(rejected[:, 0] & (t[:, 0] > 0)))


@lru_cache(maxsize=64)
def needed_ratio(power: float = DEFAULT_POWER, family_size: int = 1, alpha: float = ALPHA) -> float:
    """The standardised difference ``c`` (difference over its standard error) at which
    :func:`holm_power` reaches ``power``."""
    low, high = 0.0, 12.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if holm_power(round(mid, 6), family_size, alpha) < power else (low, mid)
    return high


@dataclass(frozen=True)
class SidePlan:
    """One run's (or model's) part of a decision plan in one scope: its rows of the shared questions,
    reviewed so far (of its random sample), planned in all, and the rows to review next
    (``next``: row_idx, item_key, bucket, Domain, rank, conflict, in its review order)."""

    label: str
    rows: int
    reviewed: int
    planned: int
    next: pl.DataFrame = field(repr=False)

    @property
    def remaining(self) -> int:
        return self.next.height

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "rows": self.rows,
            "reviewed": self.reviewed,
            "planned": self.planned,
            "remaining": self.remaining,
            "next_rows": (self.next["row_idx"] + 1).to_list(),
        }


@dataclass(frozen=True)
class DecisionPlan:
    """Reviews for telling ``a`` and ``b`` apart in ``scope`` at ``difference`` with ``power``.

    ``reachable`` False: even every shared question reviewed in both runs leaves the questions'
    own variance too large (then nothing is planned, and ``smallest_difference`` is the least
    these questions can tell apart with that power). ``expected_power``/``expected_half_width``:
    once the planned rows are reviewed, if the assumed rates hold."""

    scope: str
    difference: float
    power: float
    family_size: int
    questions: int
    a: SidePlan
    b: SidePlan
    reachable: bool
    expected_power: float
    expected_half_width: float
    smallest_difference: float
    method: str = DECISION_PLAN_METHOD

    @property
    def remaining(self) -> int:
        return self.a.remaining + self.b.remaining

    def as_dict(self) -> dict:
        keys = ("scope", "difference", "power", "family_size", "questions", "reachable", "expected_power")
        return {
            **{k: getattr(self, k) for k in keys},
            "expected_half_width": self.expected_half_width,
            "smallest_difference": self.smallest_difference,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "remaining": self.remaining,
            "method": self.method,
        }


@dataclass(frozen=True)
class SideModel:
    """What the allocation reads of one side: its strata, per stratum the variance of a row
    without and with the judge, and the least each stratum keeps."""

    strata: Strata
    rate: np.ndarray
    base: np.ndarray
    judged: np.ndarray
    low: np.ndarray

    def variance(self, n: np.ndarray) -> float:
        per_row = np.where(n >= JUDGE_MIN_REVIEWED, self.judged, self.base)
        return stratified_variance(self.strata.size, per_row, n)


def planning_rate(correct: np.ndarray, reviewed: np.ndarray) -> np.ndarray:
    """Per bucket, its pooled reviewed share Jeffreys-smoothed (``(k + 0.5) / (n + 1)``; 0.5 with
    none reviewed). The raw share of a pilot's few rows, all right, gives a stratum no variance and
    so no reviews: plans read off 30 pilot reviews then reached 0.68 where they promised 0.80
    (``tests/bench_decision.py``); a margin toward 0.5 as wide as the single-run planner's
    overshot (0.85-0.88). The smoothed share lands within a few points of the promise."""
    return np.where(reviewed > 0, (correct + 0.5) / (reviewed + 1.0), 0.5)


def judge_factors(sample: pl.DataFrame, truth: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """Per bucket, the share of its variance the judge's labels leave
    (:func:`scoring.estimate.ppi_plan.variance_factors`), read with the bucket's domains pooled
    into one stratum, and at least :data:`JUDGE_LEAVES_AT_LEAST`. A pilot's bucket x domain
    strata hold two or three reviewed rows each: the verdict-label covariance read per stratum
    from so few rows left most of the variance (0.89 of both_pass's, 0.54 of both_fail's; 40 pilot
    reviews of 1,000 rows in ``tests/decision_sim.py``) where, with 300 rows reviewed, the fit
    leaves 0.77 and 0.39; pooled over domains the pilot reads 0.81 and 0.37. Planned with the
    per-stratum factors, the plan promised 0.80 and reached 0.92."""
    pooled = build_strata(sample.with_columns(Domain=pl.lit("all")))
    return np.maximum(variance_factors(pooled, truth, judge), JUDGE_LEAVES_AT_LEAST)


def side_model(sample: pl.DataFrame) -> SideModel:
    """The allocation's view of one side (see the module)."""
    strata = build_strata(sample)
    n_b = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
    k_b = np.bincount(strata.bucket, weights=strata.correct, minlength=strata.groups)
    rate = planning_rate(k_b, n_b)[strata.bucket]
    base = rate * (1 - rate)
    truth, judge, _ = sample_arrays(sample)
    factor = np.ones(strata.groups) if np.isnan(judge).all() else judge_factors(sample, truth, judge)
    low = np.maximum(strata.reviewed + strata.missing_counts(), np.minimum(MIN_REVIEWED, strata.size))
    return SideModel(strata, rate, base, base * factor[strata.bucket], np.minimum(low, strata.size))


def _side_plan(label: str, sample: pl.DataFrame, model: SideModel, planned: np.ndarray) -> SidePlan:
    strata = model.strata
    reviewed = strata.reviewed.astype(np.int64)
    table = strata.cells.select("bucket", "Domain", "size", "reviewed").with_columns(
        planned=pl.Series(planned, dtype=pl.Int64),
        remaining=pl.Series(planned - reviewed, dtype=pl.Int64),
        rate=pl.Series(model.rate),
        prior=pl.lit(False),
        observed=pl.lit(None, dtype=pl.Float64),
    )
    plan = ReviewPlan(0.0, int(planned.sum()), int(reviewed.sum()), int((planned - reviewed).sum()), 0.0, table)
    rank = sample["rank"].to_numpy() if sample["rank"].null_count() == 0 else None
    rows = next_rows(sample, plan, rank=rank, seed=None if rank is not None else 0)
    return SidePlan(label, sample.height, int(strata.reviewed.sum()), int(planned.sum()), rows)


def pilot_question_part(sample_a: pl.DataFrame, sample_b: pl.DataFrame, scope: str, group: bool) -> float:
    """The questions' part of the difference's variance (:func:`scoring.estimate.difference.question_part`)
    as the plan expects it once its rows are reviewed, read off the pilot with each bucket's
    domains pooled. A pilot's bucket x domain strata hold two or three reviewed rows each, so an
    unreviewed row's stand-in variance sits at a share pulled toward one half: the questions' part
    read per stratum was 2.36 points (40 pilot reviews of 1,000 questions), against 2.09 once 250
    rows per run are reviewed; pooled over domains the pilot reads 2.18."""
    pooled = [s.with_columns(Domain=pl.lit("all")) for s in (sample_a, sample_b)]
    _, values_a = side_figure(pooled[0], "A", scope, group)
    _, values_b = side_figure(pooled[1], "B", scope, group)
    return question_part(values_a, values_b, judge_correlation(sample_a, sample_b)).variance


def judge_correlation(sample_a: pl.DataFrame, sample_b: pl.DataFrame) -> float:
    """The correlation of the two sides' judge labels around their buckets' shares, over the shared
    questions both labelled (0 below :data:`scoring.estimate.difference.MIN_PAIRED` of them or
    without spread): the plan's guess of the correlation the head-to-head will read off the
    questions both runs' reviews settle (two pilots of 40 random rows of 1,000 share one or two).
    The judge's own mistakes are independent between the runs, so its correlation is the
    verdicts' shrunk toward 0 (0.06 against 0.12 in ``tests/decision_sim.py``): the plan counts
    on less of the pairing than the figure will show, not more."""

    def residual(sample: pl.DataFrame) -> pl.DataFrame:
        label = pl.col("judge_correct").cast(pl.Float64)
        return sample.select(QUESTION, (label - label.mean().over("bucket")).alias("r")).drop_nulls()

    joined = residual(sample_a).join(residual(sample_b), on=QUESTION, suffix="_b")
    if joined.height < MIN_PAIRED:
        return 0.0
    ra, rb = joined["r"].to_numpy(), joined["r_b"].to_numpy()
    scale = float(np.sqrt(np.sum(ra * ra) * np.sum(rb * rb)))
    return float(np.clip(np.sum(ra * rb) / scale, -1.0, 1.0)) if scale > 0 else 0.0


def plan_decision(
    sample_a: pl.DataFrame,
    sample_b: pl.DataFrame,
    label_a: str,
    label_b: str,
    scope: str,
    difference: float = DEFAULT_DIFFERENCE,
    power: float = DEFAULT_POWER,
    family_size: int = 1,
    group: bool = True,
) -> DecisionPlan:
    """The plan for telling A and B apart in ``scope`` (each sample: that side's rows of the scope,
    :data:`scoring.estimate.side.QUESTION` beside the estimator's columns and the review ``rank``);
    see the module."""
    if not 0 < difference < 1 or not 0 < power < 1:
        raise ValueError("The difference and the power are shares between 0 and 1 (0.03, 0.8).")
    shared = sorted(set(sample_a[QUESTION].to_list()) & set(sample_b[QUESTION].to_list()))
    sample_a, sample_b = (s.filter(pl.col(QUESTION).is_in(shared)) for s in (sample_a, sample_b))
    questions = pilot_question_part(sample_a, sample_b, scope, group)
    c = needed_ratio(power, family_size)
    ma, mb = side_model(sample_a), side_model(sample_b)
    k = len(ma.strata.size)
    budget = (difference / c) ** 2 - questions if math.isfinite(questions) else -1.0
    smallest = c * math.sqrt(questions) if math.isfinite(questions) else 1.0

    def variance(n: np.ndarray) -> float:
        return ma.variance(n[:k].astype(float)) + mb.variance(n[k:].astype(float))

    low = np.concatenate([ma.low, mb.low])
    size = np.concatenate([ma.strata.size, mb.strata.size])
    if budget <= 0:  # not reachable: only the random samples' missing rows, which are asked for anyway
        held = [m.strata.reviewed + m.strata.missing_counts() for m in (ma, mb)]
        planned = np.minimum(np.concatenate(held), size).astype(np.int64)
    else:
        spread = np.sqrt(np.concatenate([ma.judged, mb.judged]))
        planned = allocate(size, np.zeros_like(size), spread, low, Z95 * math.sqrt(budget), Z95, variance)
        floor = min(MIN_DOMAIN_REVIEWED, len(shared))
        scale = 1.0
        while min(planned[:k].sum(), planned[k:].sum()) < floor and scale > 1e-4:
            scale /= 2  # a figure shows no interval below the floor: ask for a narrower one until it is met
            planned = allocate(size, np.zeros_like(size), spread, low, Z95 * math.sqrt(budget) * scale, Z95, variance)
    held_questions = questions if math.isfinite(questions) else 1.0
    expected_se = math.sqrt(max(variance(planned.astype(float)), 0.0) + held_questions)
    return DecisionPlan(
        scope=scope,
        difference=difference,
        power=power,
        family_size=family_size,
        questions=len(shared),
        a=_side_plan(label_a, sample_a, ma, planned[:k]),
        b=_side_plan(label_b, sample_b, mb, planned[k:]),
        reachable=budget > 0,
        expected_power=holm_power(round(difference / expected_se, 6), family_size) if expected_se > 0 else 1.0,
        expected_half_width=Z95 * expected_se,
        smallest_difference=smallest,
    )

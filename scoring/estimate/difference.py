"""Two runs (or two models) head to head on their estimated true accuracies: the difference on the
questions both answered, its 95% interval and its test, and the Holm adjustment over the pairs a
page compares.

What the interval is about. Each side's own figure (:mod:`.side`) is the true accuracy of its
rows. The difference is a claim about the models: which one answers questions like these better.
So its variance has two parts (Miller 2024, "Adding Error Bars to Evals"):

- *the reviews*: each side's estimate on the shared questions errs by its own standard error (the
  single-run estimate, stratified by bucket x domain, judge-assisted where that narrows it). Two
  runs' random samples are drawn by separate seeds (each run's review order hashes its own item
  keys), so these errors are independent and their variances add;
- *the questions*: another set of questions like these would give another difference. Its
  variance is the spread over the questions of the per-question difference ``Y_A - Y_B`` over
  their number, **paired** (a question's two verdicts taken together: a question both models get
  wrong costs nothing) and **clustered by question family** (a question asked in several
  languages counts once, its languages' differences summed: the cluster-robust standard error).
  A verdict is known where a person settled the row; elsewhere the stratum's share stands in for
  it and that share's binomial variance is added per row (rows independent given their stratum).
  Where both runs' reviews cover a question its difference is known exactly: there the pairing
  shows in full.

Interval: the difference ± Student's t on the degrees of freedom of the three parts
(Satterthwaite: each side's reviewed rows less one per stratum, the families less one) times the
standard error, widened by what the rows of either random sample still missing a verdict could
do. The p-value is the same t's (so the interval excludes 0 exactly when p < 0.05). With several
comparisons (:func:`adjust`), Holm's step-down adjusts the p-values over the family, and each
interval is drawn at the level that makes it exclude 0 exactly when its adjusted p is below 0.05:
"ahead" is one rule, never an interval excluding 0 beside a p above 0.05. No difference is
computed before both sides have their interval (:mod:`.evidence`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from statistics import NormalDist

import numpy as np
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import holm_adjust
from scoring.estimate.estimator import t_quantile
from scoring.estimate.evidence import has_interval
from scoring.estimate.side import FAMILY, QUESTION, Side, side_figure

ALPHA = 0.05
DIFFERENCE_METHOD = (
    "The difference of the two estimated true accuracies (each the single-run estimate on the shared questions: "
    "stratified by bucket x domain, judge-assisted where that narrows it), ± Student's t times a standard error "
    "with two parts: each side's review error (independent random samples, so their variances add) and the "
    "questions' own spread (the per-question difference of the two verdicts, paired, clustered by question family: "
    "a settled verdict where a person decided the row, else its stratum's share plus that share's binomial "
    "variance), on Satterthwaite's degrees of freedom; widened by what rows of either random sample still missing "
    "a verdict could do. Several comparisons: Holm's step-down over the family, each interval drawn at the level "
    "that excludes 0 exactly when its adjusted p is below 0.05. No figure before both sides have their interval."
)


#: Questions settled on both sides from which the two sides' residual correlation is read; below
#: it none is assumed (each side's unknown verdicts vary independently: the wider case).
MIN_PAIRED = 20


@dataclass(frozen=True)
class QuestionPart:
    """The questions' part of the variance: clustered by family and not (``variance``,
    ``unclustered``), on ``questions`` shared questions in ``families`` families, of which
    ``both_known`` have a settled verdict on both sides (where the pairing is observed);
    ``correlation``: of the two sides' verdicts around their strata's shares on those questions,
    applied to the questions neither side has settled (0 below :data:`MIN_PAIRED` of them)."""

    variance: float
    unclustered: float
    questions: int
    families: int
    both_known: int
    correlation: float = 0.0


def residual_correlation(joined: pl.DataFrame) -> tuple[float, int]:
    """(correlation, questions): of the two sides' settled verdicts less their strata's shares, on
    the questions both sides settled (``known``/``known_b``), clipped to [-1, 1]; 0 below
    :data:`MIN_PAIRED` such questions or without spread."""
    both = joined.filter(pl.col("known") & pl.col("known_b"))
    if both.height < MIN_PAIRED:
        return 0.0, both.height
    ra = (both["value"] - both["rate"]).to_numpy()
    rb = (both["value_b"] - both["rate_b"]).to_numpy()
    scale = float(np.sqrt(np.sum(ra * ra) * np.sum(rb * rb)))
    return (float(np.clip(np.sum(ra * rb) / scale, -1.0, 1.0)) if scale > 0 else 0.0), both.height


def question_part(values_a: pl.DataFrame, values_b: pl.DataFrame, fallback_correlation: float = 0.0) -> QuestionPart:
    """:class:`QuestionPart` from the two sides' per-question values (:func:`scoring.estimate.side.side_figure`),
    joined on :data:`QUESTION`; a question's family is side A's. Where neither side settled a
    question, its two unknown verdicts vary together by the correlation the settled pairs show
    (``fallback_correlation`` below :data:`MIN_PAIRED` of them: a plan's guess, 0 for a figure)."""
    columns = [QUESTION, "value", "spread", "rate", "known"]
    joined = values_a.join(values_b.select(columns), on=QUESTION, how="inner", suffix="_b")
    n = joined.height
    if n < 2:
        return QuestionPart(float("inf"), float("inf"), n, n, 0)
    rho, known = residual_correlation(joined)
    if known < MIN_PAIRED:
        rho = fallback_correlation
    d = (joined["value"] - joined["value_b"]).to_numpy()
    va, vb = joined["spread"].to_numpy(), joined["spread_b"].to_numpy()
    spread = float(np.sum(va + vb - 2 * rho * np.sqrt(va * vb)))
    dev = d - d.mean()
    _, family = np.unique(joined[FAMILY].to_numpy().astype(str), return_inverse=True)
    sums = np.bincount(family, weights=dev)
    g = len(sums)
    clustered = (g / (g - 1) * float(np.sum(sums**2)) + spread) / n**2 if g > 1 else float("inf")
    plain = (n / (n - 1) * float(np.sum(dev**2)) + spread) / n**2
    return QuestionPart(clustered, plain, n, g, known, rho)


def satterthwaite(parts: Sequence[tuple[float, float]]) -> float:
    """Degrees of freedom of a sum of variances, each (variance, its degrees of freedom)."""
    total = sum(v for v, _ in parts)
    denominator = sum(v * v / df for v, df in parts if v > 0 and math.isfinite(df) and df > 0)
    if total <= 0 or denominator <= 0:
        return float("inf")
    return total * total / denominator


def t_for_level(df: float, level: float) -> float:
    """Student's t quantile for a two-sided ``level`` (0.95: 1.96 on infinite df), as
    :func:`scoring.estimate.estimator.t_quantile` approximates it."""
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    return t_quantile(df, z) if math.isfinite(df) else z


def two_sided_p(statistic: float, df: float) -> float:
    """The two-sided p of ``|statistic|`` on Student's t with ``df``, through the same quantile
    function the intervals use (so an interval at level L excludes 0 exactly when p < 1 - L)."""
    t = abs(statistic)
    if not math.isfinite(t):
        return 0.0
    if not math.isfinite(df):
        return math.erfc(t / math.sqrt(2))
    low, high = 0.0, max(t, 1.0)
    while t_quantile(df, high) < t:
        high *= 2
    for _ in range(80):
        mid = (low + high) / 2
        low, high = (mid, high) if t_quantile(df, mid) < t else (low, mid)
    return math.erfc(high / math.sqrt(2))


@dataclass(frozen=True)
class Difference:
    """Side A against side B in one scope (``difference`` = A - B), or why not yet.

    ``ci_low``/``ci_high``: the 95% interval; ``adjusted_low``/``adjusted_high``: drawn at the level
    its Holm-adjusted p calls for (the 95% one alone: equal). ``ahead`` names the side ahead when the
    adjusted interval excludes 0. The figures are None until both sides have their interval
    (``shown`` False: each side's ``what_to_review`` says what would give it one)."""

    scope: str
    a: Side
    b: Side
    questions: int
    families: int
    both_known: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    standard_error: float | None
    review_standard_error: float | None
    question_standard_error: float | None
    unclustered_standard_error: float | None
    df: float | None
    p_value: float | None
    p_holm: float | None = None
    family_size: int = 1
    adjusted_low: float | None = None
    adjusted_high: float | None = None
    shown: bool = True
    method: str = DIFFERENCE_METHOD

    @property
    def ahead(self) -> str | None:
        """The label of the side ahead (its adjusted interval excludes 0), else None."""
        if not self.shown or self.adjusted_low is None or self.adjusted_high is None:
            return None
        if self.adjusted_low > 0:
            return self.a.label
        if self.adjusted_high < 0:
            return self.b.label
        return None

    @property
    def half_width(self) -> float | None:
        return None if self.ci_low is None or self.ci_high is None else (self.ci_high - self.ci_low) / 2

    def _half(self, question_se: float | None) -> float | None:
        """The 95% half-width with ``question_se`` as the questions' part (before clipping to ±1)."""
        if not self.shown or question_se is None or self.review_standard_error is None:
            return None
        shifts = self.a.low_shift + self.a.high_shift + self.b.low_shift + self.b.high_shift
        se = math.sqrt(self.review_standard_error**2 + question_se**2)
        return _t(self) * se + shifts / 2

    @property
    def unclustered_half_width(self) -> float | None:
        """The half-width with every question its own family (what clustering is compared with)."""
        return self._half(self.unclustered_standard_error)

    @property
    def clustered_half_width(self) -> float | None:
        """The half-width as computed, clustered by family (before clipping to ±1)."""
        return self._half(self.question_standard_error)

    @property
    def clustering_widened(self) -> bool:
        """Whether clustering by question family made the interval wider (by 0.05 points or more)."""
        plain, own = self.unclustered_half_width, self.clustered_half_width
        return plain is not None and own is not None and own - plain >= 0.0005

    def as_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("a", "b")}
        return {
            **out,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "ahead": self.ahead,
            "half_width": self.half_width,
            "unclustered_half_width": self.unclustered_half_width,
            "clustered_half_width": self.clustered_half_width,
            "clustering_widened": self.clustering_widened,
        }


def _t(diff: Difference) -> float:
    return t_for_level(diff.df if diff.df is not None else float("inf"), 1 - ALPHA)


def _toward_zero(diff: float, a: Side, b: Side) -> float:
    """How far missing rows can pull the difference toward 0 (and past it)."""
    return a.low_shift + b.high_shift if diff >= 0 else a.high_shift + b.low_shift


def _bounds(diff: float, se: float, t: float, a: Side, b: Side) -> tuple[float, float]:
    low = diff - t * se - (a.low_shift + b.high_shift)
    high = diff + t * se + (a.high_shift + b.low_shift)
    return max(-1.0, low), min(1.0, high)


def difference_of(
    a: Side, b: Side, values_a: pl.DataFrame, values_b: pl.DataFrame, scope: str = COMBINED
) -> Difference:
    """The difference of two sides already figured (:func:`scoring.estimate.side.side_figure`)."""
    part = question_part(values_a, values_b)
    base = {"scope": scope, "a": a, "b": b, "questions": part.questions, "families": part.families}
    if not (has_interval(a) and has_interval(b)) or not math.isfinite(part.variance):
        empty = dict.fromkeys(
            ("difference", "ci_low", "ci_high", "standard_error", "review_standard_error", "df", "p_value"), None
        )
        return Difference(
            **base,
            both_known=part.both_known,
            **empty,
            question_standard_error=None,
            unclustered_standard_error=None,
            shown=False,
        )
    review = a.standard_error**2 + b.standard_error**2
    variance = review + part.variance
    df = satterthwaite([(part.variance, part.families - 1), (a.standard_error**2, a.df), (b.standard_error**2, b.df)])
    se = math.sqrt(variance)
    diff = float(a.estimate or 0.0) - float(b.estimate or 0.0)
    t = t_for_level(df, 1 - ALPHA)
    low, high = _bounds(diff, se, t, a, b)
    nearer = max(0.0, abs(diff) - _toward_zero(diff, a, b))
    p = two_sided_p(nearer / se, df) if se > 0 else float(nearer == 0)
    return Difference(
        **base,
        both_known=part.both_known,
        difference=diff,
        ci_low=low,
        ci_high=high,
        standard_error=se,
        review_standard_error=math.sqrt(review),
        question_standard_error=math.sqrt(part.variance),
        unclustered_standard_error=math.sqrt(part.unclustered),
        df=df,
        p_value=p,
        adjusted_low=low,
        adjusted_high=high,
    )


def estimate_difference(
    sample_a: pl.DataFrame,
    sample_b: pl.DataFrame,
    label_a: str,
    label_b: str,
    scope: str = COMBINED,
    group: bool = False,
) -> Difference:
    """A against B on the questions both samples hold (each sample: one side's rows of the scope,
    :data:`QUESTION` and :data:`FAMILY` beside the estimator's columns; a question absent from
    the other side is left out of both). ``group``: the scope is one language (its rules)."""
    shared = set(sample_a[QUESTION].to_list()) & set(sample_b[QUESTION].to_list())
    keep = pl.col(QUESTION).is_in(sorted(shared))
    a, values_a = side_figure(sample_a.filter(keep), label_a, scope, group)
    b, values_b = side_figure(sample_b.filter(keep), label_b, scope, group)
    return difference_of(a, b, values_a, values_b, scope)


def adjust(differences: Sequence[Difference], alpha: float = ALPHA) -> list[Difference]:
    """The family's differences with Holm's adjustment: over those shown (a withheld one claims
    nothing), each's ``p_holm`` and its interval at the level ``1 - alpha p / p_holm`` (excluding 0
    exactly when ``p_holm < alpha``). One comparison alone is left as it is."""
    shown = [i for i, d in enumerate(differences) if d.shown and d.p_value is not None]
    out = list(differences)
    m = len(shown)
    if m < 2:
        return [replace(d, family_size=max(m, 1)) if d.shown else d for d in out]
    p = [float(differences[i].p_value or 0.0) for i in shown]
    adjusted = holm_adjust(p)
    steps = {i: m - rank for rank, i in enumerate(sorted(range(m), key=lambda j: p[j]))}
    for j, i in enumerate(shown):
        d = differences[i]
        factor = adjusted[j] / p[j] if p[j] > 0 else float(steps[j])
        level = 1 - alpha / max(factor, 1.0)
        t = t_for_level(d.df if d.df is not None else float("inf"), level)
        low, high = _bounds(float(d.difference or 0.0), float(d.standard_error or 0.0), t, d.a, d.b)
        out[i] = replace(d, p_holm=adjusted[j], family_size=m, adjusted_low=low, adjusted_high=high)
    return out

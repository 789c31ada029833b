"""Interval estimates and agreement statistics, written out so they can be checked by hand.

Worked numbers in the tests come from the notes: Wilson 412/500 -> [0.7882, 0.8549],
McNemar b=12 c=3 -> 0.0352, kappa [[80,10],[5,105]] -> 0.8477.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
#: The half-width (a share: 0.05 is +-5 points) a plan aims for unless told, on the page and in
#: ``python -m scoring estimate`` alike: a run's first plan, a pilot of a few dozen rows, before a
#: finer one (once a plan is put in the audit scope, its half-width is kept with the run and offered
#: instead: :func:`scoring.estimate.stored_run.planned_half_width`).
DEFAULT_HALF_WIDTH = 0.05


def range_with_unknowns(correct: int, unknown: int, n: int) -> tuple[float, float, float, float]:
    """A share whose ``unknown`` rows may go either way: (low, high, ci_low, ci_high), the low end
    counting them wrong and the high end right; the interval is the Wilson lower bound of the low
    end and the Wilson upper bound of the high end (sampling error and the unknown rows together)."""
    low = correct / n if n else 0.0
    high = (correct + unknown) / n if n else 0.0
    return low, high, wilson_interval(correct, n)[0], wilson_interval(correct + unknown, n)[1]


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval; unlike the normal interval it stays inside [0, 1] at 0/n."""
    if n <= 0:
        return (0.0, 0.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At k = 0 (k = n) the bound is exactly 0 (1); rounding would otherwise give 5.6e-17 or
    # 0.9999999999999999, an interval that excludes its own point estimate.
    low = 0.0 if k <= 0 else max(0.0, centre - half)
    high = 1.0 if k >= n else min(1.0, centre + half)
    return (low, high)


def _binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so large n does not overflow."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_half_n = n * math.log(0.5)
    lg_n1 = math.lgamma(n + 1)
    terms = [lg_n1 - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n for i in range(k + 1)]
    top = max(terms)
    return math.exp(top) * math.fsum(math.exp(t - top) for t in terms)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value for discordant counts b (A right, B wrong) and c."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * _binom_cdf_half(min(b, c), n))


def cohen_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa of a square agreement table (rows rater 1, columns rater 2).

    Returns None when chance agreement is 1 (both raters used one label only): kappa is then
    undefined, and showing 0 or 1 would mislead.
    """
    total = sum(sum(row) for row in table)
    if total == 0:
        return None
    size = len(table)
    p_o = sum(table[i][i] for i in range(size)) / total
    rows = [sum(table[i]) / total for i in range(size)]
    cols = [sum(table[i][j] for i in range(size)) / total for j in range(size)]
    p_e = sum(r * c for r, c in zip(rows, cols))
    if math.isclose(p_e, 1.0):
        return None
    return (p_o - p_e) / (1 - p_e)


def raw_agreement(table: Sequence[Sequence[int]]) -> float | None:
    """Share of items on the diagonal; shown beside kappa because kappa alone misleads."""
    total = sum(sum(row) for row in table)
    if total == 0:
        return None
    return sum(table[i][i] for i in range(len(table))) / total


def agreement_table(a: Sequence[bool], b: Sequence[bool]) -> list[list[int]]:
    """2x2 table [[both true, a true b false], [a false b true, both false]]."""
    table = [[0, 0], [0, 0]]
    for x, y in zip(a, b):
        table[0 if x else 1][0 if y else 1] += 1
    return table


def paired_phi(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's (1998) corrected estimate of the correlation between two paired proportions.

    ``a`` both right, ``b`` first right only, ``c`` second right only, ``d`` both wrong. With
    ``A = ad - bc``: ``(A - n/2) / sqrt(product of the four margins)`` when ``A > n/2``, 0 when
    ``0 <= A <= n/2``, ``A / sqrt(...)`` when ``A < 0``. When a margin is 0 (one run right on every
    row, or wrong on every row) the correlation is undefined: 0 is used, as Newcombe does.
    """
    n = a + b + c + d
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    cross = a * d - b * c
    if cross > n / 2:
        return (cross - n / 2) / math.sqrt(margins)
    if cross >= 0:
        return 0.0
    return cross / math.sqrt(margins)


def newcombe_paired_interval(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, float]:
    """95% interval for p1 - p2 of paired proportions, Newcombe's hybrid score method 10.

    p1 = (a+b)/n and p2 = (a+c)/n, so the difference is (b-c)/n. The Wilson intervals of p1 and
    p2 are combined by square-and-add, corrected by :func:`paired_phi` for the pairing (a naive
    independent-samples interval would be too wide when the runs agree on most rows). Bounds are
    kept inside [-1, 1]. With no rows (n = 0) nothing is known: (-1, 1).
    """
    n = a + b + c + d
    if n <= 0:
        return (-1.0, 1.0)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, z)
    l2, u2 = wilson_interval(a + c, n, z)
    phi = paired_phi(a, b, c, d)
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    diff = (b - c) / n
    return (max(-1.0, diff - delta), min(1.0, diff + epsilon))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the input order: the i-th smallest of m p-values is
    multiplied by m - i + 1, made non-decreasing along that order, and capped at 1. It keeps the
    chance of any false "significant" below alpha across all the tests, without Bonferroni's cost."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


# --------------------------------------------------------------------------- estimating true accuracy (issue 13)


def wilson_centre(k: float, n: float, z: float = Z95) -> float:
    """Wilson (Agresti-Coull) centre ``(k + z²/2)/(n + z²)``: never 0 or 1, so a variance built
    on it does not vanish when every reviewed row of a stratum agreed. 0.5 when ``n`` is 0."""
    return (k + z * z / 2) / (n + z * z)


def wilson_adjusted_variance(k: float, n: float, size: float, z: float = Z95) -> float:
    """Variance of a stratum's share ``k/n`` reviewed out of ``size`` rows: ``p~(1-p~)/(n+z²)``
    at the Wilson centre ``p~``, times the finite-population correction ``1 - n/size``.

    Zero only when the stratum is fully reviewed (a census has no sampling error). 3 of 10
    correct out of 100: p~ = 0.3555, variance 0.3555 x 0.6445 / 13.84 x 0.9 = 0.014898.
    """
    if size <= 0:
        return 0.0
    p = wilson_centre(k, n, z)
    return p * (1 - p) / (n + z * z) * max(0.0, 1 - n / size)


def wilson_from_share(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a share ``p`` over a (possibly fractional, effective) ``n``.

    For an estimate from a weighted sample, ``n`` is its effective sample size ``p(1-p)/var``
    (Kish); with ``n`` = 0 nothing is known: (0, 1).
    """
    if n <= 0:
        return (0.0, 1.0)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def rogan_gladen(raw: float, sensitivity: float, specificity: float) -> float | None:
    """True share from a classifier's raw positive share: ``(raw + Sp - 1)/(Se + Sp - 1)``,
    clipped to [0, 1]. None when ``Se + Sp <= 1`` (the metric is no better than chance: the
    correction is undefined). raw 0.80, Se 0.90, Sp 0.85 -> 0.65/0.75 = 0.8667."""
    youden = sensitivity + specificity - 1
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (raw + specificity - 1) / youden))

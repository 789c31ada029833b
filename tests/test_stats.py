"""Statistics against the worked numbers in the notes, plus the edges where formulas misbehave."""

from __future__ import annotations

import math

import pytest

from scoring.core.stats import (
    _binom_cdf_half,
    agreement_table,
    cohen_kappa,
    mcnemar_exact,
    raw_agreement,
    wilson_interval,
)

# ------------------------------------------------------------------------------- Wilson


def test_wilson_worked_example_412_of_500() -> None:
    low, high = wilson_interval(412, 500)
    assert low == pytest.approx(0.7882, abs=5e-5)
    assert high == pytest.approx(0.8549, abs=5e-5)


def test_wilson_zero_of_twenty() -> None:
    """The normal interval collapses to [0, 0] here; Wilson does not."""
    low, high = wilson_interval(0, 20)
    assert low == 0.0
    assert high == pytest.approx(0.161, abs=5e-4)


def test_wilson_is_symmetric() -> None:
    for k, n in [(0, 20), (3, 7), (412, 500), (1, 1)]:
        low, high = wilson_interval(k, n)
        mirror_low, mirror_high = wilson_interval(n - k, n)
        assert low == pytest.approx(1 - mirror_high, abs=1e-12)
        assert high == pytest.approx(1 - mirror_low, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 12, 20, 233, 1000, 10**6])
def test_wilson_interval_contains_the_estimate_at_the_extremes(n: int) -> None:
    """0/n must start at exactly 0 and n/n end at exactly 1, not 5.6e-17 or 0.9999999999999999."""
    assert wilson_interval(0, n)[0] == 0.0
    assert wilson_interval(n, n)[1] == 1.0
    for k in {0, 1, n // 2, n - 1, n}:
        low, high = wilson_interval(k, n)
        assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_matches_the_formula_with_z_196() -> None:
    """The notes' formula, written out independently (z = 1.96 agrees to 4 decimals)."""
    k, n, z = 59, 233, 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = wilson_interval(k, n)
    assert low == pytest.approx(centre - half, abs=1e-4)
    assert high == pytest.approx(centre + half, abs=1e-4)


def test_wilson_narrows_with_more_data() -> None:
    widths = [(lambda lo_hi: lo_hi[1] - lo_hi[0])(wilson_interval(n // 2, n)) for n in (10, 100, 1000, 10000)]
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] < 0.02


def test_wilson_empty_sample() -> None:
    assert wilson_interval(0, 0) == (0.0, 0.0)


# ------------------------------------------------------------------------------- McNemar


def test_mcnemar_worked_example() -> None:
    assert mcnemar_exact(12, 3) == pytest.approx(0.0352, abs=5e-5)
    assert mcnemar_exact(3, 12) == mcnemar_exact(12, 3)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),  # no discordant rows: no evidence either way
        (5, 5, 1.0),  # capped at 1
        (0, 10, 2 * 0.5**10),
        (1, 0, 1.0),
        (5, 2, 58 / 128),
    ],
)
def test_mcnemar_small_cases(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_large_counts_do_not_overflow() -> None:
    p = mcnemar_exact(5000, 5400)
    assert 0.0 < p < 0.01  # 400 more on one side of 10,400 is clearly significant
    assert mcnemar_exact(5000, 5010) > 0.9
    assert math.isfinite(mcnemar_exact(100_000, 100_100))


def test_binomial_cdf_sums_to_one() -> None:
    assert _binom_cdf_half(-1, 10) == 0.0
    assert _binom_cdf_half(10, 10) == 1.0
    assert _binom_cdf_half(5, 10) == pytest.approx(638 / 1024)
    assert _binom_cdf_half(2, 7) == pytest.approx(29 / 128)


# ------------------------------------------------------------------------------- kappa


def test_kappa_worked_example() -> None:
    assert cohen_kappa([[80, 10], [5, 105]]) == pytest.approx(0.8477, abs=5e-5)
    assert raw_agreement([[80, 10], [5, 105]]) == pytest.approx(0.925)


def test_high_agreement_low_kappa_paradox() -> None:
    """95% raw agreement, kappa below zero: why raw agreement is always shown beside kappa."""
    table = [[190, 5], [5, 0]]
    assert raw_agreement(table) == pytest.approx(0.95)
    assert cohen_kappa(table) == pytest.approx(-0.026, abs=5e-4)


def test_kappa_perfect_and_chance() -> None:
    assert cohen_kappa([[50, 0], [0, 50]]) == pytest.approx(1.0)
    assert cohen_kappa([[25, 25], [25, 25]]) == pytest.approx(0.0)
    assert cohen_kappa([[0, 50], [50, 0]]) == pytest.approx(-1.0)


def test_kappa_undefined_cases_return_none() -> None:
    assert cohen_kappa([[10, 0], [0, 0]]) is None  # one label only: chance agreement is 1
    assert cohen_kappa([[0, 0], [0, 0]]) is None
    assert raw_agreement([[0, 0], [0, 0]]) is None


def test_kappa_three_labels_by_hand() -> None:
    table = [[10, 2, 0], [1, 8, 1], [0, 2, 6]]
    total = 30
    p_o = 24 / total
    rows = [12 / total, 10 / total, 8 / total]
    cols = [11 / total, 12 / total, 7 / total]
    p_e = sum(r * c for r, c in zip(rows, cols))
    assert cohen_kappa(table) == pytest.approx((p_o - p_e) / (1 - p_e))


# ------------------------------------------------------------------------------- tables


def test_agreement_table_layout() -> None:
    a = [True, True, True, False, False, True]
    b = [True, False, True, True, False, False]
    assert agreement_table(a, b) == [[2, 2], [1, 1]]
    assert agreement_table([], []) == [[0, 0], [0, 0]]


def test_agreement_table_feeds_kappa() -> None:
    a = [True] * 80 + [True] * 10 + [False] * 5 + [False] * 105
    b = [True] * 80 + [False] * 10 + [True] * 5 + [False] * 105
    table = agreement_table(a, b)
    assert table == [[80, 10], [5, 105]]
    assert cohen_kappa(table) == pytest.approx(0.8477, abs=5e-5)

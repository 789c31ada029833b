"""scoring.core.formatting: the one way numbers read on the pages (percent, p-values, missing values)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scoring.core.formatting import MISSING, decimal, interval, is_missing, maybe, p_value, percent, share


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.6463, "64.6%"),
        (0.0, "0.0%"),
        (1.0, "100.0%"),
        (1 / 3, "33.3%"),
        (0.99999, "100.0%"),
        (np.float64(0.5), "50.0%"),
        (None, MISSING),
        (math.nan, MISSING),
        (pd.NA, MISSING),
    ],
)
def test_percent(value: object, expected: str) -> None:
    assert percent(value) == expected


def test_percent_digits() -> None:
    assert percent(0.6463, 2) == "64.63%"
    assert percent(0.6463, 0) == "65%"


def test_share_and_interval() -> None:
    assert share(21, 40) == "52.5%"
    assert share(0, 0) == MISSING
    assert interval(0.391, 0.862) == "39.1% to 86.2%"
    assert interval(None, 0.5) == MISSING


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (0.5811, "p = 0.5811"),
        (0.0352, "p = 0.0352"),
        (1.0, "p = 1"),
        (0.0001, "p = 0.0001"),
        (0.00012345, "p = 0.0001234"),
        (9.99e-5, "p < 0.0001"),
        (1e-300, "p < 0.0001"),
        (0.0, "p < 0.0001"),
        (None, f"p = {MISSING}"),
        (math.nan, f"p = {MISSING}"),
    ],
)
def test_p_value(p: object, expected: str) -> None:
    assert p_value(p) == expected


def test_p_value_never_says_zero_or_uses_exponents() -> None:
    for p in (0.0, 1e-20, 3e-5, 1e-4, 0.00123, 0.05, 0.9999):
        text = p_value(p)
        assert text not in ("p = 0", "p = 0.0") and "e-" not in text, text


def test_maybe_and_decimal() -> None:
    assert maybe(None) == MISSING
    assert maybe(float("nan")) == MISSING
    assert maybe(3) == "3"
    assert maybe(0.25, percent) == "25.0%"
    assert maybe("", str) == ""  # an empty string is a value, not a missing one
    assert decimal(0.4) == "0.400"
    assert decimal(None) == MISSING


def test_is_missing() -> None:
    assert is_missing(None) and is_missing(math.nan) and is_missing(pd.NA) and is_missing(pd.NaT)
    assert not is_missing(0) and not is_missing(0.0) and not is_missing("None") and not is_missing(False)

"""Golden answers and responses read once for every matcher run on a table (:func:`pairs_of`).

The responses are handed to the compiled kernels as their UTF-8 bytes
(:func:`scoring.core.compiled_utf8.utf8_of`); the golden answers are few and distinct.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from scoring.core.compiled_utf8 import Utf8, utf8_of


class Pairs(NamedTuple):
    """Rows of golden answer and response as every column function reads them, made once
    (:func:`pairs_of`) when several matchers run on one table."""

    golden: pl.Series  # the distinct golden answers (a null as "")
    which: np.ndarray  # int64: each row's golden answer, an index into ``golden``
    responses: pl.Series  # as given, nulls kept
    texts: Utf8  # the responses' UTF-8 (a null as "")


def pairs_of(answers: pl.Series, responses: pl.Series) -> Pairs:
    golden, which = distinct(answers)
    text = responses.cast(pl.String)
    return Pairs(golden, which, text, utf8_of(text))


def distinct(texts: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """The distinct texts (nulls as "") in first-seen order, and each row's index among them."""
    values = texts.cast(pl.String).fill_null("")
    unique = values.unique(maintain_order=True)
    which = values.replace_strict(unique, pl.int_range(unique.len(), dtype=pl.Int64, eager=True))
    return unique, which.to_numpy().astype(np.int64, copy=False)

"""Whole-column work done a slice of rows at a time.

Hashing or classifying a million rows in one polars or numpy call builds its temporaries for every
row at once (the seeded keys and their hex digests, JSON arrays of the text, a rows x scripts count
matrix): 100-200 MB each at an upload's peak. A slice of :data:`SLICE_ROWS` rows holds a tenth of
that, at the same speed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import polars as pl

SLICE_ROWS = 100_000
Rows = TypeVar("Rows", pl.DataFrame, pl.Series)


def by_slices(rows: Rows, work: Callable[[Rows], pl.Series], size: int = SLICE_ROWS) -> pl.Series:
    """``work`` of each slice of ``rows`` (``size`` rows at a time), concatenated in order; an
    empty ``rows`` is one empty slice, so the result keeps ``work``'s type."""
    return pl.concat([work(rows.slice(start, size)) for start in range(0, max(len(rows), 1), size)], rechunk=True)

"""Whole-column work done a slice of rows at a time, slices side by side on the machine's cores.

Hashing or classifying a million rows in one polars or numpy call builds its temporaries for every
row at once (the seeded keys and their hex digests, JSON arrays of the text, a rows x scripts count
matrix): 100-200 MB each at an upload's peak. A slice of :data:`SLICE_ROWS` rows holds a tenth of
that. Slices run in :data:`SLICE_WORKERS` threads: polars and numpy release the GIL while they
work, and a single slice's hash or count keeps one core busy (item keys on a million rows: 1.4 s
one slice after another, 0.9 s two at a time on two cores).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import polars as pl

SLICE_ROWS = 100_000
#: Slices worked on at once: one per core, at most four (each holds its slice's temporaries).
SLICE_WORKERS = max(1, min(4, os.cpu_count() or 1))
Rows = TypeVar("Rows", pl.DataFrame, pl.Series)


def by_slices(rows: Rows, work: Callable[[Rows], pl.Series], size: int = SLICE_ROWS) -> pl.Series:
    """``work`` of each slice of ``rows`` (``size`` rows at a time), concatenated in order; an
    empty ``rows`` is one empty slice, so the result keeps ``work``'s type. ``work`` must not
    share state between calls: slices run in threads."""
    starts = range(0, max(len(rows), 1), size)
    if len(starts) == 1 or SLICE_WORKERS == 1:
        return pl.concat([work(rows.slice(start, size)) for start in starts], rechunk=True)
    with ThreadPoolExecutor(SLICE_WORKERS, thread_name_prefix="slices") as pool:
        return pl.concat(list(pool.map(lambda start: work(rows.slice(start, size)), starts)), rechunk=True)

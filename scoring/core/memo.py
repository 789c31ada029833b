"""A least-recently-used cache bounded by the bytes its values hold, not by how many there are.

The dashboard keeps whole runs in memory for speed. Counting entries does not bound memory when
one run has 1,000 rows and the next 1,000,000 (the server reached 7.4 GiB idle that way); a byte
budget does. Pure: the pages' module makes one per server process.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import polars as pl

T = TypeVar("T")
DEFAULT_BUDGET = 1024**3  # 1 GiB


def estimate_bytes(value: Any, _depth: int = 0) -> int:
    """Roughly what ``value`` keeps alive: exact for frames, arrays and strings, summed over the
    fields of containers and dataclasses (three levels deep: a comparison holds runs that hold
    frames); polars frames by their own estimate."""
    if isinstance(value, pl.DataFrame | pl.Series):
        return int(value.estimated_size())
    if isinstance(value, pd.DataFrame):
        return int(value.index.memory_usage()) + sum(_column_bytes(value[c]) for c in value.columns)
    if isinstance(value, pd.Series):
        return int(value.index.memory_usage()) + _column_bytes(value)
    if isinstance(value, pd.Index):
        return _column_bytes(pd.Series(value, copy=False))
    if isinstance(value, np.ndarray):
        return _array_bytes(value)
    if isinstance(value, str | bytes):
        return sys.getsizeof(value)
    if _depth >= 3:
        return sys.getsizeof(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (getattr(value, f.name) for f in dataclasses.fields(value))
        return sys.getsizeof(value) + sum(estimate_bytes(v, _depth + 1) for v in fields)
    if isinstance(value, dict):
        pairs = _sampled(value.items(), len(value))
        sizes = sum(estimate_bytes(k, _depth + 1) + estimate_bytes(v, _depth + 1) for k, v in pairs)
        return sys.getsizeof(value) + _scaled(sizes, len(pairs), len(value))
    if isinstance(value, list | tuple | set | frozenset):
        items = _sampled(value, len(value))
        return sys.getsizeof(value) + _scaled(sum(estimate_bytes(v, _depth + 1) for v in items), len(items), len(value))
    return sys.getsizeof(value)


def _sampled(items: Iterable[Any], n: int) -> list[Any]:
    """At most about :data:`SAMPLE` of a container's ``n`` items, evenly spread: walking every
    entry of a 200,000-key dict cost 1.6 s on each cache store of a review scope."""
    step = max(1, n // SAMPLE)
    return list(itertools.islice(items, 0, None, step))


def _scaled(total: int, measured: int, n: int) -> int:
    return int(total * n / measured) if measured else 0


#: Python objects measured per object column; the rest is extrapolated (exact sizing of a
#: million strings took a second, on every recomputation of an adjudicated frame).
SAMPLE = 2_000


def _array_bytes(values: np.ndarray) -> int:
    if values.dtype != object or not len(values):
        return int(values.nbytes)
    flat = values.ravel()
    step = max(1, len(flat) // SAMPLE)
    sample = flat[::step]
    return int(values.nbytes + sum(sys.getsizeof(v) for v in sample) * len(flat) / len(sample))


def _column_bytes(column: pd.Series) -> int:
    if column.dtype == object:
        return _array_bytes(column.to_numpy())
    return int(column.memory_usage(index=False, deep=True))


class ByteBudgetCache:
    """Values by key, least recently used dropped first once their sizes pass ``budget`` bytes.

    A value larger than the whole budget is returned but not kept. Thread-safe; two threads
    asking for the same missing key compute it once.
    """

    def __init__(self, budget: int = DEFAULT_BUDGET, sizeof: Callable[[Any], int] = estimate_bytes) -> None:
        if budget < 0:
            raise ValueError(f"A cache budget is a number of bytes, at least 0, not {budget}.")
        self.budget = budget
        self._sizeof = sizeof
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}
        self.used = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value for ``key``, computing and keeping it on a miss."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._items:  # computed by another thread while this one waited
                    self._items.move_to_end(key)
                    return self._items[key][0]
            value = compute()
            size = self._sizeof(value)
            with self._lock:
                self._computing.pop(key, None)
                if size <= self.budget:
                    self._items[key] = (value, size)
                    self.used += size
                    self._evict()
            return value

    def _evict(self) -> None:
        while self.used > self.budget and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self.used -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.used = 0

"""Text columns as their UTF-8 bytes, for kernels compiled with numba.

A polars string column is handed to compiled code as Arrow's two buffers (:func:`utf8_of`): the
bytes of every text one after another, and where each text starts. The kernels decode code points
from the bytes themselves, so no Python string is made per row.

Kernels are compiled with numba on first use and cached beside their module (:func:`compiled`):
the first process on a machine pays a few seconds to compile; later ones load the machine code.
Importing this module imports numba (most of a second): modules that only sometimes need a kernel
reach theirs through ``importlib`` when asked (the row's script, the optional matchers).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numba
import numpy as np
import polars as pl
import pyarrow as pa

#: What numba imports, on its first compile or cache load, only to learn whether BLAS is there.
BLAS_PROBE = "scipy.linalg.cython_blas"


def load_numba_arrays() -> None:
    """Import numba's array support (``numba.np.arraymath``) ahead of its first use, its BLAS
    check answered "no" at once.

    That check imports ``scipy.linalg``: most of a second in every process that runs a kernel,
    for ``np.dot`` and ``np.linalg`` inside compiled code, which no kernel here uses. Where
    scipy's BLAS is already loaded there is nothing to save and numba imports as usual.
    """
    if BLAS_PROBE in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    sys.modules[BLAS_PROBE] = None  # an import of it now fails at once (ImportError)
    try:
        importlib.import_module("numba.np.arraymath")
    finally:
        if BLAS_PROBE in sys.modules and sys.modules[BLAS_PROBE] is None:
            del sys.modules[BLAS_PROBE]


load_numba_arrays()


class Utf8(NamedTuple):
    """Texts as UTF-8: text ``i`` is ``data[offsets[i]:offsets[i + 1]]`` (a null is "")."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # int64, one more than the texts


def compiled(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` compiled by numba, its machine code cached beside the module (or in numba's
    user-wide cache) so later processes skip the compile; where neither is writable (a read-only
    checkout run by another user) numba refuses to cache at all, and each process compiles anew."""
    try:
        return numba.njit(cache=True, nogil=True)(func)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True)(func)


def utf8_of(texts: pl.Series) -> Utf8:
    """``texts`` (nulls as "") as :class:`Utf8`, read from Arrow's buffers without a copy per row."""
    arrow = texts.cast(pl.String).fill_null("").to_arrow()
    if arrow.type != pa.large_string():
        arrow = arrow.cast(pa.large_string())
    _, offsets, data = arrow.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[arrow.offset : arrow.offset + len(arrow) + 1]
    data = np.frombuffer(data if data is not None else b"\0", dtype=np.uint8)  # read-only either way
    return Utf8(data, offsets)

"""A seeded random review order: any prefix of it, in any scope, is a simple random sample.

Each row gets a priority, the sha256 of ``"<seed>\\x1f<key>"``, and rows are reviewed in
increasing priority. The priority of a row depends on the seed and on the row only, never on
which other rows are in the scope, so:

- the order is the same in every process and after every restart (no Python ``hash()``);
- the order of a sub-scope (a domain, a bucket, an audit stratum) is the whole order restricted
  to it, and that restriction is itself a uniformly random permutation of the sub-scope: any
  prefix a reviewer gets through is a simple random sample of the scope they worked in;
- a different seed gives an unrelated order.

Ties (two equal 64-bit prefixes, about one in 10^19 pairs) fall back to the input position.
The queue orders every scope by it with the run's ``review_seed`` (:func:`seed_from_sha`), and
the planner picks the next rows of a stratum by it, so both agree on which rows come next.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import polars as pl
import polars_hash  # noqa: F401  (registers the ``chash`` namespace: sha256 in Rust)

from scoring.core.slices import by_slices

Keys = Sequence[str] | Sequence[int] | np.ndarray | pl.Series | pd.Series | pd.Index
#: Separates the seed from the key inside the hashed text (a unit separator, never in a seed).
_SEPARATOR = "\x1f"


def _keys(keys: Keys) -> pl.Series:
    """Item keys or row indices as polars text (integers in decimal)."""
    if isinstance(keys, pl.Series):
        series = keys
    elif isinstance(keys, pd.Series | pd.Index):
        series = pl.Series(pd.Series(keys).astype(str).tolist(), dtype=pl.String)
    else:
        items = keys.tolist() if isinstance(keys, np.ndarray) else list(keys)
        series = pl.Series([str(k) for k in items], dtype=pl.String)
    return series.cast(pl.String).fill_null("")


def _hashed(text: pl.Series, seed: int | str) -> pl.Series:
    """16 hex digits of ``sha256(seed, key)`` per key of ``text``."""
    hashed = pl.select(
        pl.concat_str(pl.lit(f"{seed}{_SEPARATOR}"), pl.lit(text)).chash.sha2_256().str.slice(0, 16).alias("p")
    )
    return hashed.to_series()


def review_priority(keys: Keys, seed: int | str) -> pl.Series:
    """Each key's priority (16 hex digits of ``sha256(seed, key)``): lower is reviewed first.
    Hashed a slice of keys at a time (:func:`~scoring.core.slices.by_slices`)."""
    return by_slices(_keys(keys), lambda text: _hashed(text, seed))


def review_order(keys: Keys, seed: int | str) -> np.ndarray:
    """Positions of ``keys`` in review order: ``keys[review_order(keys, seed)]`` is the order.

    Deterministic for a (seed, scope); restricting it to a sub-scope gives that sub-scope's own
    ``review_order`` (see the module's docstring).
    """
    # Sixteen hex digits sort as the 64-bit number they spell: three times faster than as text.
    number = by_slices(_keys(keys), lambda text: _hashed(text, seed).str.to_integer(base=16, dtype=pl.UInt64))
    frame = pl.DataFrame({"p": number, "i": pl.int_range(len(number), eager=True, dtype=pl.Int64)})
    return frame.sort("p", "i")["i"].to_numpy()


def review_rank(keys: Keys, seed: int | str) -> np.ndarray:
    """Each key's place in :func:`review_order` (0 = first), in the input's order."""
    order = review_order(keys, seed)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank


def seed_from_sha(sha256_hex: str) -> int:
    """A run's default review seed: from its file's sha256, so the same file gets the same order
    on every machine. An uploaded export gets the seed it carries instead (its own bytes differ
    from the original file's; see :mod:`scoring.core.export_order`)."""
    return int(sha256_hex[:8], 16) & 0x7FFFFFFF

"""Stable item keys: human and judge verdicts attach to the row's content, not to a run."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import polars_hash  # noqa: F401  (registers the ``chash`` namespace: sha256 in Rust)

from scoring.core.slices import by_slices

#: What ``json.dumps(..., ensure_ascii=False)`` escapes inside a string: the quote, the
#: backslash and the 32 control characters (short forms where JSON has them).
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES = {**{chr(cp): f"\\u{cp:04x}" for cp in range(32)}, **_SHORT}


def item_key(question: str, answer: str, response: str) -> str:
    """sha256 of (question, answer, response) as a JSON array, so no separator can collide."""
    payload = json.dumps([question, answer, response], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _json_body(text: pl.Series) -> pl.Series:
    """Each string escaped as inside a JSON string literal, byte for byte as ``json.dumps``.

    Only rows holding a character to escape (a few in a thousand) are rewritten.
    """
    index = text.str.contains(r'["\\\x00-\x1f]').arg_true()
    if index.is_empty():
        return text
    escaped = text.gather(index).str.replace_many(list(_ESCAPES), list(_ESCAPES.values()))
    return text.clone().scatter(index, escaped)


def item_keys(table: pl.DataFrame) -> pl.Series:
    """:func:`item_key` of every row of ``table`` (``question``, ``answer``, ``response``).

    The JSON arrays are built and hashed by polars (sha256 from the ``polars-hash`` plugin, in
    Rust on every core): a million rows in about a second, against ten in a Python loop. A slice
    of rows at a time (:func:`~scoring.core.slices.by_slices`): a million rows' arrays at once were
    a second copy of their text.
    """
    return by_slices(table, _hashed_rows)


def _hashed_rows(rows: pl.DataFrame) -> pl.Series:
    q, a, r = (_json_body(rows[col].fill_null("")) for col in ("question", "answer", "response"))
    payload = pl.concat_str(pl.lit('["'), q, pl.lit('","'), a, pl.lit('","'), r, pl.lit('"]'))
    return pl.select(payload.chash.sha2_256().alias("item_key")).to_series()

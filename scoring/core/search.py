"""Find rows of a run by text (question, golden answer, response) or by row number.

Pure functions (no streamlit), used by the Agreement page's row browser and the review queue's
"My verdicts" list. The text of every row is prepared once (:func:`build_index`, cache it per
run); a search is then one scan of one string in C (``str.find``) plus a little work per match,
so it stays in the milliseconds at 100,000 rows instead of re-lowercasing every cell.

Matching rules (what :func:`search_rows` documents to its callers):

- case-insensitive substring match (Unicode case folding, both sides NFC-normalised, so a
  query typed in decomposed form still finds precomposed text), over the given columns; a
  match never spans two cells or two rows;
- the query is taken literally: ``.``, ``*``, ``(`` ... are characters, not a pattern;
- surrounding whitespace in the query is ignored; an empty query matches every row;
- ``#12`` means row 12 only (1-based, as the pages print rows); a bare ``12`` matches row 12
  *and* every row whose text contains "12".
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
import pandas as pd

SEARCH_COLUMNS = ("question", "answer", "response")
_SEP = "\x00"  # between cells and rows; stripped from queries, so no match can span it
_ROW_NUMBER = re.compile(r"^(#)?\s*(\d+)$")
#: After this many matching rows the per-match loop hands over to one bounded ``find`` per
#: remaining row: a query like "e" that matches every row then costs one pass, not 100k steps.
_SWITCH = 256


def fold(text: str) -> str:
    """The form both the rows and the query are compared in: NFC, then Unicode case folding."""
    return unicodedata.normalize("NFC", text).casefold()


@dataclass(frozen=True)
class SearchIndex:
    """Every row's searchable text, folded and joined into one string, with each row's span.

    ``starts[i]:ends[i]`` is row ``i`` (position in the frame) inside ``text``;
    ``row_numbers[i]`` is its 1-based row number (``row_idx + 1`` when the frame has a
    ``row_idx`` column, else ``i + 1``).
    """

    text: str
    starts: array
    ends: array
    row_numbers: np.ndarray
    columns: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.starts)


def _cells(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame.columns:
        return [""] * len(frame)
    values = frame[column]
    return ["" if v is None or v != v else str(v) for v in values.tolist()]  # v != v: NaN


def build_index(frame: pd.DataFrame, columns: Sequence[str] = SEARCH_COLUMNS) -> SearchIndex:
    """Prepare ``frame`` for :func:`search_rows` (about 0.3 s per 100,000 rows; do it once per run).

    Missing columns and missing cells count as empty text.
    """
    cells = [_cells(frame, c) for c in columns]
    rows = [fold(_SEP.join(parts)) for parts in zip(*cells)] if cells else [""] * len(frame)
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    starts = np.zeros(len(rows), dtype=np.int64)
    if len(rows) > 1:
        starts[1:] = np.cumsum(lengths[:-1] + 1)  # + 1: the separator after each row
    ends = starts + lengths
    if "row_idx" in frame.columns:
        numbers = frame["row_idx"].to_numpy(dtype=np.int64) + 1
    else:
        numbers = np.arange(1, len(frame) + 1, dtype=np.int64)
    return SearchIndex(_SEP.join(rows), array("q", starts.tolist()), array("q", ends.tolist()), numbers, tuple(columns))


def parse_row_number(query: str) -> tuple[int | None, bool]:
    """(1-based row number the query names, whether it names *only* a row: ``#12``)."""
    match = _ROW_NUMBER.match(query.strip())
    if not match:
        return None, False
    return int(match.group(2)), match.group(1) is not None


def _text_hits(index: SearchIndex, needle: str) -> np.ndarray:
    """Sorted positions of the rows whose folded text contains ``needle`` (non-empty, folded)."""
    text, starts, ends = index.text, index.starts, index.ends
    n = len(starts)
    hits: list[int] = []
    i = 0
    while len(hits) < _SWITCH:
        j = text.find(needle, i)
        if j < 0:
            return np.asarray(hits, dtype=np.int64)
        row = bisect_right(starts, j) - 1
        hits.append(row)
        if row + 1 >= n:
            return np.asarray(hits, dtype=np.int64)
        i = starts[row + 1]  # one hit per row is enough: go on from the next row
    # A common needle: test each remaining row with one bounded find, all in C.
    rest = hits[-1] + 1
    found = np.fromiter(
        map(text.find, repeat(needle, n - rest), starts[rest:], ends[rest:]), dtype=np.int64, count=n - rest
    )
    return np.concatenate([np.asarray(hits, dtype=np.int64), rest + np.flatnonzero(found >= 0)])


def search_rows(frame: pd.DataFrame | SearchIndex, query: str, columns: Sequence[str] = SEARCH_COLUMNS) -> np.ndarray:
    """Positions (0-based, for ``frame.iloc``; sorted ascending, no repeats) of the rows that
    match ``query`` under the rules in the module docstring.

    ``frame`` may be a prepared :class:`SearchIndex` (``columns`` is then ignored): build it once
    per run and every search costs one scan of the prepared text. Given a DataFrame, the index is
    built on the spot, which is fine for a few thousand rows.
    """
    index = frame if isinstance(frame, SearchIndex) else build_index(frame, columns)
    query = query.strip()
    if not query:
        return np.arange(len(index), dtype=np.int64)
    number, only_number = parse_row_number(query)
    by_number = (
        np.flatnonzero(index.row_numbers == number).astype(np.int64)
        if number is not None
        else np.empty(0, dtype=np.int64)
    )
    if only_number:
        return by_number
    needle = fold(query).replace(_SEP, "")
    hits = _text_hits(index, needle) if needle else np.empty(0, dtype=np.int64)
    return np.union1d(by_number, hits) if len(by_number) else hits

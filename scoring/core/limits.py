"""How large a file the readers take: rows, columns and bytes once unpacked, each a setting.

A few hundred KB of gzip can unpack to millions of short rows, and a 1 MB header to 100,000
columns; parsed, scored and stored, either takes gigabytes of the server's memory (5.6 million
rows took it from 1.0 to 4.7 GB). So every reader is bounded before it builds per-row or
per-column objects: unpacking stops as soon as a limit is passed (:class:`RowCount` counts rows as
the bytes come), the header's cells are counted before a CSV is parsed, and Parquet's own metadata
says its rows and columns before anything is read. A refusal names the limit and its setting.

The defaults fit the 2-core, 23 GB machine this runs on with room for other users: two million
rows (a million-row run, the benchmarks' size, takes about 0.6 GB to save), a thousand columns,
and 2 GiB unpacked. Set ``UPLOAD_MAX_ROWS``, ``UPLOAD_MAX_COLUMNS`` and ``UPLOAD_MAX_UNPACKED_MB``
(environment, or ``.streamlit/secrets.toml``) to change them; the command line reads them too.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

import numpy as np

from scoring.core.errors import InputError
from scoring.core.settings import default_of, setting

ROWS_SETTING = "UPLOAD_MAX_ROWS"
COLUMNS_SETTING = "UPLOAD_MAX_COLUMNS"
UNPACKED_SETTING = "UPLOAD_MAX_UNPACKED_MB"
#: The defaults, from :data:`scoring.core.settings.SETTINGS`: 2,000,000 rows, 1,000 columns and
#: 2048 MiB (2 GiB, :data:`scoring.core.formats.MAX_INFLATED`) unpacked.
DEFAULT_ROWS: int = default_of(ROWS_SETTING)
DEFAULT_COLUMNS: int = default_of(COLUMNS_SETTING)
DEFAULT_UNPACKED_MB: int = default_of(UNPACKED_SETTING)
_NEWLINE, _RETURN, _QUOTE = 10, 13, 34
#: Bytes counted at a time: numpy's temporaries stay a few times this, whatever the file's size.
_WINDOW = 8 << 20


@dataclass(frozen=True)
class Limits:
    """The largest file the readers take (see the module)."""

    rows: int = DEFAULT_ROWS
    columns: int = DEFAULT_COLUMNS
    unpacked_bytes: int = DEFAULT_UNPACKED_MB << 20

    def too_many_rows(self) -> InputError:
        return InputError(
            f"The file has more than {self.rows:,} rows, the most a file may have ({ROWS_SETTING}). "
            "Split it into smaller files, or raise the limit if the machine has the memory."
        )

    def too_many_columns(self, found: int, where: str = "") -> InputError:
        """``found``: the columns counted when the limit was passed; ``where``: " by line 7"."""
        return InputError(
            f"The file has more than {self.columns:,} columns, the most a file may have "
            f"({COLUMNS_SETTING}): {found:,} found{where}. Keep the columns the review needs "
            "(question, answer, response, Domain and a few ids), or raise the limit."
        )

    def too_large_unpacked(self, what: str = "The gzip file") -> InputError:
        return InputError(
            f"{what} unpacks to more than {_size(self.unpacked_bytes)}, the most a file may unpack to "
            f"({UNPACKED_SETTING}). Split it first, or raise the limit."
        )

    def check_rows(self, rows: int) -> None:
        if rows > self.rows:
            raise self.too_many_rows()

    def check_columns(self, columns: int) -> None:
        if columns > self.columns:
            raise self.too_many_columns(columns)


def _size(size: int) -> str:
    return f"{size / (1 << 30):g} GiB" if size >= 1 << 30 else f"{size / (1 << 20):g} MiB"


def _positive(name: str, default: int) -> int:
    """A whole number above zero from the setting ``name``, else ``default`` (as the other numeric
    settings: a value that is not a number is ignored rather than stopping every upload)."""
    raw = setting(name)
    try:
        value = int(float(raw)) if raw is not None else default
    except (TypeError, ValueError, OverflowError):  # not a number, or infinite
        return default
    return value if value > 0 else default


def current(unpacked_default: int | None = None) -> Limits:
    """The limits in force, read from the settings on every call (a changed setting applies to the
    next file). ``unpacked_default``: the byte limit when none is set (the caller's own constant)."""
    unpacked = setting(UNPACKED_SETTING)
    default_bytes = unpacked_default if unpacked_default is not None else DEFAULT_UNPACKED_MB << 20
    try:
        unpacked_bytes = int(float(unpacked) * (1 << 20)) if unpacked is not None else default_bytes
    except (TypeError, ValueError, OverflowError):  # not a number, or infinite
        unpacked_bytes = default_bytes
    return Limits(
        _positive(ROWS_SETTING, DEFAULT_ROWS),
        _positive(COLUMNS_SETTING, DEFAULT_COLUMNS),
        unpacked_bytes if unpacked_bytes > 0 else default_bytes,
    )


class RowCount:
    """A text table's rows counted as its bytes go by, refused as soon as there are too many.

    Rows are line breaks outside double-quoted cells, blank lines not counted, a CSV's header line
    not a row. In a CSV a break is a LF, a CR LF or a lone CR (pandas, which reads the files polars
    declines, takes all three); a cell may hold one inside quotes. JSON lines break at LF only and
    never inside a value, and their escaped quotes are not CSV quoting, so their lines are counted
    as they are. A few lines of spaces or stray quotes can make the count differ from the parser's
    by as many rows; the parsed table's own height is checked again after
    (:func:`scoring.core.loader.read_table`).
    """

    def __init__(self, limits: Limits, kind: str) -> None:
        """``kind``: ``csv`` (quotes and CRs count, a header line), ``jsonl`` (LF lines) or ``none``."""
        self.limits, self.kind = limits, kind
        self.lines = 0
        self.inside = False  # inside a quoted cell where the last piece ended
        self.last = _NEWLINE  # the byte before the next piece (the file's start counts as a line break)
        self.open_line = False  # the last piece ended inside a line with content

    @property
    def rows(self) -> int:
        """Rows seen so far (a last line without a line break included)."""
        return self.lines + (1 if self.open_line and not self.inside else 0) - (1 if self.kind == "csv" else 0)

    def feed(self, piece: bytes | memoryview) -> None:
        """Count ``piece``'s rows; :meth:`Limits.too_many_rows` once there are more than the limit."""
        if self.kind == "none" or not len(piece):
            return
        for start in range(0, len(piece), _WINDOW):
            self._count(np.frombuffer(piece[start : start + _WINDOW], dtype=np.uint8))
            if self.rows > self.limits.rows:
                raise self.limits.too_many_rows()

    def _count(self, data: np.ndarray) -> None:
        ends = (data == _NEWLINE) | (data == _RETURN) if self.kind == "csv" else data == _NEWLINE
        where = np.flatnonzero(ends)  # every byte that ends a line or is part of its ending
        if where.size:
            prev = np.where(where >= 1, data[np.maximum(where - 1, 0)], self.last)
            breaks = ~((data[where] == _NEWLINE) & (prev == _RETURN))  # a CR LF breaks once, at its CR
            blank = (prev == _NEWLINE) | (prev == _RETURN)  # nothing since the last line ending
            counted = breaks & ~blank
            if self.kind == "csv":  # inside quotes: an odd count of quotes since the file's start
                quotes = np.flatnonzero(data == _QUOTE)
                counted &= (np.searchsorted(quotes, where) + int(self.inside)) % 2 == 0
                self.inside ^= bool(quotes.size % 2)
            self.lines += int(np.count_nonzero(counted))
            self.open_line = bool(where[-1] < data.size - 1)  # content after the last line ending
        else:
            if self.kind == "csv":
                self.inside ^= bool(np.count_nonzero(data == _QUOTE) % 2)
            self.open_line = self.open_line or bool(data.size)
        self.last = int(data[-1])


def line_endings(data: bytes) -> int:
    """Line endings of any kind (LF, CR LF, lone CR) in ``data``: at least its rows, at C speed, so
    the exact count of :class:`RowCount` runs only when this says there may be too many."""
    returns = data.count(b"\r")
    return data.count(b"\n") + (returns - data.count(b"\r\n") if returns else 0)


def text_kind(head: bytes) -> str:
    """How :class:`RowCount` counts a text file from its first line (``head``, up to its line
    break): ``jsonl`` when it is one whole JSON value starting with ``{``, ``none`` for other JSON
    (an array, or a document over several lines: its rows are counted once parsed), else ``csv``."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "none"
    if not text.startswith(b"{"):
        return "csv"
    try:
        json.loads(text.partition(b"\n")[0])
    except RecursionError:
        return "jsonl"  # a line too deep to parse is still one line: the reader names it
    except ValueError:
        return "none"
    return "jsonl"


def header_line(body: bytes) -> bytes:
    """A CSV's first line, up to its first line ending of any kind."""
    ends = [i for i in (body.find(b"\n"), body.find(b"\r")) if i >= 0]
    return body[: min(ends)] if ends else body


def header_cells(body: bytes, sep: str) -> int:
    """How many cells a CSV's header line has, quotes respected."""
    line = header_line(body).decode("utf-8", "replace").lstrip("\ufeff")
    if line.count('"') % 2:  # a header cell holding a line break: rare; count every separator
        return line.count(sep) + 1
    return len(next(csv.reader([line], delimiter=sep), []))

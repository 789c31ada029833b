"""The reference reading of a CSV: pandas' C parser, for the files polars might read differently.

:mod:`scoring.core.loader` imports this module only when :func:`scoring.core.fast_csv.read_polars`
declines a file (malformed or unusual ones), so reading a well-formed file never imports pandas.
"""

from __future__ import annotations

import csv
import io
import warnings

import pandas as pd
import polars as pl

from scoring.core.errors import InputError


def parse(text: str, sep: str) -> pd.DataFrame:
    # object dtype keeps plain Python strings: scoring iterates them, and converting Arrow-backed
    # strings back to Python objects costs more than the Arrow layout saves. The C parser reads
    # UTF-8 bytes more than twice as fast as a text stream.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                io.BytesIO(text.encode("utf-8")),
                encoding="utf-8",
                sep=sep,
                dtype=object,
                keep_default_na=False,
                na_filter=False,
                quoting=csv.QUOTE_MINIMAL,
                skip_blank_lines=True,
                engine="c",
                # A first data row longer than the header would otherwise become the index,
                # shifting every cell one column left without a word.
                index_col=False,
            )
    except pd.errors.ParserWarning:
        raise InputError(
            "The file is not a well-formed table: the first data row (line 2) has more cells than the header."
        ) from None
    except pd.errors.EmptyDataError:
        raise InputError("The file is empty: expected a header row and at least one data row.") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"The file is not a well-formed table: {_parser_detail(str(exc))}") from None


def _parser_detail(message: str) -> str:
    # pandas: "Error tokenizing data. C error: Expected 4 fields in line 3, saw 5"
    marker = "C error: "
    detail = message.split(marker, 1)[1] if marker in message else message
    return detail.strip().rstrip(".") + "."


def reference_table(text: str, sep: str) -> pl.DataFrame:
    """pandas' reading as a polars table of strings (the slow path, see the module docstring)."""
    frame = parse(text, sep)
    frame.columns = [str(c) for c in frame.columns]
    # A short row's missing cells are NaN in pandas; they become empty text like any empty cell.
    cells = {col: [v if isinstance(v, str) else None for v in frame[col]] for col in frame.columns}
    return pl.DataFrame({col: pl.Series(col, values, dtype=pl.String) for col, values in cells.items()})

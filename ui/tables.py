"""Tables as a reader sees them: one ``show_table`` for every ``st.dataframe`` of the pages.

Two things Streamlit does not do by itself:

- An empty cell is drawn as "None" by the browser, whatever the frame's formatting says, unless
  ``st.dataframe`` is given a ``placeholder``: ``show_table`` passes "—" (the app's missing mark).
- Column headers are the frame's column names. Frames keep their internal names (``ci_low``,
  ``kappa_low``: exports, the CLI's JSON and tests read them); ``show_table`` relabels them at
  display time only, through ``column_config`` labels, so the browser shows words
  ("accuracy, low", "kappa, low").
- A table wider than the page's column is cut off on the right: its last columns sit behind a
  horizontal scroll bar most readers never find (issue 37, at 1280x720). ``show_table`` narrows the
  widest columns until the table fits :data:`FIT_PX` and lets their text wrap onto more lines
  (:func:`fitted`); a table that fits is left as Streamlit draws it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import streamlit as st

from scoring.core.formatting import MISSING

#: The title of the expander that holds a page's method paragraphs (Kish, Taylor, Jeffreys, ...).
HOW = "How is this computed?"

#: Internal column names and the words shown for them (a name not here but with ``_`` in it is
#: shown by ``header``'s rule).
HEADERS: dict[str, str] = {
    "ci_low": "95% CI, low",
    "ci_high": "95% CI, high",
    "reviewed": "Reviewed rows",
    "reviewed_at": "reviewed at",
    "both_pass": "both pass",
    "exact_only": "exact only",
    "overlap_only": "overlap only",
    "both_fail": "both fail",
    "n_rows": "rows",
    "n_items": "items",
    "p_holm": "p, Holm-adjusted",
    "only_a": "only A agrees",
    "only_b": "only B agrees",
    "final_source": "final source",
    "final_verdict": "final verdict",
    "row_idx": "row",
    "item_key": "item key",
}
_SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
_ENDS = {"low": "low", "high": "high"}


def header(name: object) -> str | None:
    """The words shown for column ``name``, or None to leave it as it is.

    ``agreement_low`` -> "agreement, low"; any other snake_case name -> its words with spaces."""
    if not isinstance(name, str):
        return None
    if name in HEADERS:
        return HEADERS[name]
    if not _SNAKE.match(name):
        return None
    head, _, tail = name.rpartition("_")
    if tail in _ENDS:
        return f"{head.replace('_', ' ')}, {_ENDS[tail]}"
    return name.replace("_", " ")


def _columns(frame: Any) -> Iterable[object]:
    data = getattr(frame, "data", frame)  # a pandas Styler holds its frame in .data
    columns = getattr(data, "columns", None)
    if columns is None:
        return ()
    index_names = [n for n in getattr(getattr(data, "index", None), "names", []) or [] if n is not None]
    return [*list(columns), *index_names]


def labels_for(frame: Any, column_config: dict | None = None) -> dict:
    """``column_config`` with a word label for every snake_case (or listed) column of ``frame``;
    entries the caller gave win (including ``None``, which hides a column)."""
    config: dict = {}
    for name in _columns(frame):
        words = header(name)
        if words is not None:
            config[name] = st.column_config.Column(words)
    config.update(column_config or {})
    return config


#: The width a table may take: the main column at 1280x720 with the sidebar open is 818 px wide
#: (Streamlit's centred layout), less a margin for the grid's borders.
FIT_PX = 800
#: What a character and a cell's padding take in the grid's 14 px font (measured in chromium: the
#: sample runs' widest tables), rounded up so an estimate errs towards fitting.
CHAR_PX, PAD_PX = 7.0, 18
#: The narrowest a column is made (a percentage: "100.0%"), the most lines a cell wraps onto, and
#: a line's height. Streamlit wraps cell text only when rows are taller than 4rem (64 px).
MIN_PX, MAX_LINES, LINE_PX, WRAP_PX = 56, 4, 20, 65
#: The rows read to size a column (a table's first rows stand for it).
SAMPLE_ROWS = 500
#: The most the first column (what names each row: a domain, a model) keeps of its width.
KEY_PX = 160


def _text_px(value: object) -> float:
    """The width ``value`` takes in a cell (a float as the tables print it, at most four places)."""
    if isinstance(value, float):
        value = f"{value:.4g}"
    return len(str(value)) * CHAR_PX + PAD_PX


def fitted(frame: Any, config: dict, budget: float = FIT_PX) -> tuple[dict, int | None]:
    """``config`` with a pixel width for every shown column and the row height that lets text wrap,
    when the columns side by side would be wider than ``budget``; else ``config`` as it is and None.

    Each column wants the width of its longest cell or header. Over budget, the first column keeps
    its width (up to :data:`KEY_PX`) and every other is cut to one cap (the widest first:
    :func:`_cap`; a column never narrower than :data:`MIN_PX` unless it wants less), and a cell longer
    than its column wraps, up to :data:`MAX_LINES` lines (a header keeps one line: its full words
    are in its tooltip)."""
    data = getattr(frame, "data", frame)  # a pandas Styler holds its frame in .data
    names = [c for c in getattr(data, "columns", []) if not (c in config and config[c] is None)]
    if not names:
        return config, None
    head = data.head(SAMPLE_ROWS)  # the width of a long table's first rows: no per-rerun cost at 100k rows
    cells = {c: max((_text_px(v) for v in _values(head, c)), default=0.0) for c in names}
    labels = {c: _label(config.get(c)) or header(c) or str(c) for c in names}
    wants = {c: max(cells[c], _text_px(labels[c])) for c in names}
    if sum(wants.values()) <= budget:
        return config, None
    key, rest = names[0], names[1:]  # the first column names the rows: kept whole up to KEY_PX
    widths = {key: int(min(wants[key], KEY_PX))}
    cap = _cap([wants[c] for c in rest], budget - widths[key]) if rest else budget
    widths.update({c: int(min(wants[c], cap)) for c in rest})
    lines = max(math.ceil((cells[c] - PAD_PX) / max(1.0, widths[c] - PAD_PX)) for c in names)
    out = dict(config)
    for c in names:  # a caller's column type and format are kept; only the width is set
        given = config.get(c)
        base = dict(given) if isinstance(given, dict) else dict(st.column_config.Column(labels[c]))
        out[c] = {**base, "label": labels[c], "width": widths[c], "help": base.get("help") or labels[c]}
    height = None if lines <= 1 else max(WRAP_PX, min(lines, MAX_LINES) * LINE_PX + 8)
    return out, height


def _values(frame: Any, name: object) -> list:
    """The cells of column ``name`` (pandas or polars; a name held twice: its first column)."""
    if hasattr(frame, "iloc"):
        return frame.iloc[:, list(frame.columns).index(name)].tolist()
    return frame.get_column(str(name)).to_list()


def _label(column: object) -> str | None:
    """The label a column config already gives (a dict, as ``st.column_config`` makes them)."""
    return column.get("label") if isinstance(column, dict) else None


def _cap(wants: list[float], budget: float) -> float:
    """The largest width W (no less than :data:`MIN_PX`) such that the columns, each cut to at most
    W, fit ``budget`` (water-filling, by bisection); :data:`MIN_PX` when even that does not fit."""
    low, high = float(MIN_PX), max(wants, default=float(MIN_PX))
    for _ in range(30):
        mid = (low + high) / 2
        if sum(min(w, mid) for w in wants) <= budget:
            low = mid
        else:
            high = mid
    return low


def show_table(
    frame: Any, *, hide_index: bool = True, placeholder: str = MISSING, column_config: dict | None = None, **kwargs: Any
) -> Any:
    """``st.dataframe`` with empty cells drawn as "—", no index unless asked, word headers, and
    columns narrowed (their text wrapped) where the table would be cut off on the right.

    Returns what ``st.dataframe`` returns (the selection event with ``on_select``)."""
    config = labels_for(frame, column_config)
    # An index shown, and the tick boxes of a table whose rows can be picked, take room the frame does not list.
    budget = FIT_PX - (0 if hide_index else 120) - (40 if kwargs.get("on_select") not in (None, "ignore") else 0)
    config, row_height = fitted(frame, config, budget)
    if row_height is not None and "row_height" not in kwargs:
        kwargs["row_height"] = row_height
    return st.dataframe(frame, hide_index=hide_index, placeholder=placeholder, column_config=config, **kwargs)


#: The four agreement buckets in words (the values stay the identifiers).
BUCKET_WORDS = {
    "both_pass": "Both pass",
    "both_fail": "Both fail",
    "exact_only": "Exact only",
    "overlap_only": "Overlap only",
}


def bucket_name(bucket: str) -> str:
    """ "Overlap only" for ``overlap_only``; anything else as it is."""
    return BUCKET_WORDS.get(bucket, bucket)


def bucket_option(bucket: str, counts: dict[str, int] | None = None) -> str:
    """A bucket picker's label: its name and how many rows it holds ("Overlap only: 84")."""
    name = bucket_name(bucket)
    if counts is None or bucket not in counts:
        return name
    return f"{name}: {int(counts[bucket]):,}"

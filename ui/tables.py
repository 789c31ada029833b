"""Tables as a reader sees them: one ``show_table`` for every ``st.dataframe`` of the pages.

Two things Streamlit does not do by itself:

- An empty cell is drawn as "None" by the browser, whatever the frame's formatting says, unless
  ``st.dataframe`` is given a ``placeholder``: ``show_table`` passes "—" (the app's missing mark).
- Column headers are the frame's column names. Frames keep their internal names (``ci_low``,
  ``kappa_low``: exports, the CLI's JSON and tests read them); ``show_table`` relabels them at
  display time only, through ``column_config`` labels, so the browser shows words
  ("accuracy, low", "kappa, low").
"""

from __future__ import annotations

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


def show_table(
    frame: Any, *, hide_index: bool = True, placeholder: str = MISSING, column_config: dict | None = None, **kwargs: Any
) -> Any:
    """``st.dataframe`` with empty cells drawn as "—", no index unless asked, and word headers.

    Returns what ``st.dataframe`` returns (the selection event with ``on_select``)."""
    return st.dataframe(
        frame, hide_index=hide_index, placeholder=placeholder, column_config=labels_for(frame, column_config), **kwargs
    )


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

"""Issue 37: ``ui.tables.fitted`` narrows a table too wide for the page at 1280x720 and lets its
text wrap; a table that fits is left alone (the real-browser check is
``tests/test_browser_table_widths.py``)."""

from __future__ import annotations

import pandas as pd
import polars as pl
import streamlit as st

from ui.tables import FIT_PX, MIN_PX, WRAP_PX, fitted, labels_for

CELL = "Exact substring: 37.5% [13.7%, 69.4%] · no review"


def test_a_table_that_fits_is_left_as_streamlit_draws_it() -> None:
    frame = pd.DataFrame({"domain": ["Art"], "n": [12]})
    config = labels_for(frame)
    assert fitted(frame, config) == (config, None)


def test_a_wide_table_is_narrowed_to_the_page_and_its_text_wraps() -> None:
    frame = pl.DataFrame({"model": ["gemma"], **{f"language {i}": [CELL] for i in range(6)}})
    config, row_height = fitted(frame, labels_for(frame))
    widths = [c["width"] for c in config.values()]
    assert sum(widths) <= FIT_PX and min(widths) >= min(MIN_PX, widths[0])
    assert row_height is not None and row_height >= WRAP_PX  # Streamlit wraps only above 4rem
    assert config["language 0"]["help"] == "language 0"  # a cut header's words in its tooltip


def test_hidden_columns_and_a_callers_column_type_are_kept() -> None:
    frame = pd.DataFrame({"key": ["k"], "share": [0.5], **{f"c{i}": [CELL] for i in range(6)}})
    given = {"key": None, "share": st.column_config.NumberColumn("share", format="%.2f")}
    config, _ = fitted(frame.style, labels_for(frame, given))
    assert config["key"] is None
    assert config["share"]["type_config"]["format"] == "%.2f" and "width" in config["share"]

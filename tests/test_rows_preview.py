"""The Upload page's preview of a file just read: rows per domain, domain names shown as typed."""

from __future__ import annotations

import html

import polars as pl

from scoring.core.report import rows_per_domain
from ui.charts import rows_figure

PAYLOAD = "<img src=x onerror=alert(2)>"


def test_rows_per_domain_sorts_domains_as_the_overview_does() -> None:
    table = pl.DataFrame({"Domain": ["b", "a", PAYLOAD, "b", "", "b"]})
    assert rows_per_domain(table) == [("", 1), (PAYLOAD, 1), ("a", 1), ("b", 3)]
    assert rows_per_domain(table.clear()) == []


def test_the_preview_chart_escapes_domain_names_for_plotly() -> None:
    """Plotly reads a little HTML in labels: a domain name must show literally."""
    bar = rows_figure([(PAYLOAD, 2), ("History", 5)]).data[0]
    assert list(bar.x) == [html.escape(PAYLOAD), "History"]
    assert list(bar.y) == [2, 5]

"""Plotly figures and display tables built from ``scoring`` results (layout only, no scoring)."""

from __future__ import annotations

import html
from collections.abc import Iterable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from scoring.core.formatting import interval, percent
from scoring.core.metric_names import ADJUDICATED, EXACT, JUDGE, OVERLAP, SHORT_TITLES, SPEC_NAMES
from scoring.core.report import AccuracyRow
from scoring.core.stats import wilson_interval
from scoring.review import AdjudicatedRow
from ui import state, verdicts
from ui.tables import bucket_name

SERIES_COLOURS = {
    SHORT_TITLES[EXACT]: "#2563eb",
    SHORT_TITLES[OVERLAP]: "#f97316",
    SHORT_TITLES[JUDGE]: "#7c3aed",
    SHORT_TITLES[ADJUDICATED]: "#059669",
}
BUCKET_COLOURS = {"both_pass": "#16a34a", "exact_only": "#2563eb", "overlap_only": "#f97316", "both_fail": "#9ca3af"}


def metric_series(run_id: int) -> dict[str, list[AccuracyRow]]:
    """The two metrics' accuracy rows alone: read from the run's summary, ready while the verdicts,
    the adjudicated figures and the estimate of a large run are still being computed."""
    summary = state.summary(run_id)
    return {SHORT_TITLES[key]: summary["accuracy"][SPEC_NAMES[key]] for key in (EXACT, OVERLAP)}


def accuracy_series(run_id: int, humans: bool = True) -> tuple[dict[str, list[AccuracyRow]], list[AdjudicatedRow]]:
    """Accuracy rows per series (domains sorted, combined last) and the adjudicated pending ranges.

    ``humans=False`` (a reviewer during double-blind review) leaves out the series built on
    reviewers' verdicts: no "Adjudicated" series and an empty list of ranges.

    Adjudicated accuracy is drawn at its lower end (pending rows counted wrong) with the Wilson
    interval of that figure; the pending range (counted wrong .. counted right) is its own bar.
    """
    summary = state.summary(run_id)
    decided = verdicts.verdict_summary(run_id)
    series = metric_series(run_id)
    if decided["judge"] is not None:
        series["Judge"] = decided["judge"]
    if not humans:
        return series, []
    adjudicated = decided["adjudicated"]
    blanks = {r.domain: r.blank for r in summary["accuracy"]["exact_substring"]}
    series["Adjudicated"] = [
        AccuracyRow(r.domain, r.n, r.correct, blanks.get(r.domain, 0), r.accuracy_low, *wilson_interval(r.correct, r.n))
        for r in adjudicated
    ]
    return series, adjudicated


def _axis(rows: list[AccuracyRow]) -> list[str]:
    # Plotly interprets a little HTML in labels; escaped text displays literally.
    return [html.escape(r.domain) for r in rows]


def accuracy_figure(series: dict[str, list[AccuracyRow]], adjudicated: list[AdjudicatedRow] | None = None) -> go.Figure:
    """Grouped bars with Wilson error bars; ``adjudicated`` adds the pending-range bars."""
    pending = [(r.domain, r.accuracy_low, r.accuracy_high) for r in adjudicated or []]
    fig = go.Figure()
    for name, rows in series.items():
        fig.add_bar(
            name=name,
            x=_axis(rows),
            y=[r.accuracy for r in rows],
            marker_color=SERIES_COLOURS.get(name),
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [r.ci_high - r.accuracy for r in rows],
                "arrayminus": [r.accuracy - r.ci_low for r in rows],
            },
            customdata=[[r.correct, r.n, r.blank, r.ci_low, r.ci_high] for r in rows],
            hovertemplate=(
                "%{x}<br>" + name + ": %{y:.1%} (%{customdata[0]} of %{customdata[1]})"
                "<br>95% CI %{customdata[3]:.1%} to %{customdata[4]:.1%}<br>blank: %{customdata[2]}<extra></extra>"
            ),
        )
    if pending:
        fig.add_bar(
            name="Adjudicated, pending range",
            x=[html.escape(d) for d, _, _ in pending],
            base=[low for _, low, _ in pending],
            y=[high - low for _, low, high in pending],
            marker={"color": "rgba(5,150,105,0.25)", "line": {"color": "#059669", "width": 1}},
            marker_pattern_shape="/",
            customdata=[[low, high] for _, low, high in pending],
            hovertemplate="%{x}<br>pending counted wrong .. right: %{customdata[0]:.1%} .. %{customdata[1]:.1%}"
            "<extra></extra>",
        )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "accuracy", "tickformat": ".0%", "range": [0, 1.05]},
        xaxis={"title": "domain"},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 30},
        height=440,
    )
    return fig


def rows_figure(counts: list[tuple[str, int]]) -> go.Figure:
    """Rows per domain of a file just read (the Upload page, while it is scored)."""
    fig = go.Figure()
    fig.add_bar(
        x=[html.escape(domain) for domain, _ in counts],
        y=[n for _, n in counts],
        marker_color="#94a3b8",
        hovertemplate="%{x}<br>%{y:,} rows<extra></extra>",
    )
    fig.update_layout(yaxis={"title": "rows"}, xaxis={"title": "domain"}, margin={"t": 10}, height=240)
    return fig


def accuracy_frame(series: dict[str, list[AccuracyRow]]) -> pd.DataFrame:
    """One row per domain: n, blank, then accuracy and 95% CI for each series."""
    first = next(iter(series.values()))
    frame = pd.DataFrame(
        {"domain": [r.domain for r in first], "n": [r.n for r in first], "blank responses": [r.blank for r in first]}
    )
    for name, rows in series.items():
        by_domain = {r.domain: r for r in rows}
        frame[f"{name} correct"] = [by_domain[d].correct if d in by_domain else None for d in frame["domain"]]
        frame[f"{name} accuracy"] = [
            round(by_domain[d].accuracy, 4) if d in by_domain else None for d in frame["domain"]
        ]
        frame[f"{name} 95% CI"] = [
            interval(by_domain[d].ci_low, by_domain[d].ci_high) if d in by_domain else "" for d in frame["domain"]
        ]
    return frame


#: The short headers of the Overview's per-domain table: one column per figure and series is too
#: many for full names side by side at 1280x720 (issue 37), so the header names the series and the
#: figure in a word each, and its tooltip and the caption above it say it in full.
SHORT_SERIES = {
    SHORT_TITLES[EXACT]: "exact",
    SHORT_TITLES[OVERLAP]: "overlap",
    SHORT_TITLES[ADJUDICATED]: "adjud.",
    SHORT_TITLES[JUDGE]: "judge",
}
SHORT_FIGURES = {" accuracy": " %", " 95% CI": " CI"}
#: Shown as a share and its interval only: a series' count of correct rows is the share times the
#: rows (the frame, the CLI's ``score`` and the export keep the count).
HIDDEN_FIGURE = " correct"
SHORT_OTHERS = {
    "n": "rows",
    "blank responses": "blank",
    "Adjudicated pending": "pending",
    "Adjudicated if pending right": "if pending right",
    "Estimated true accuracy": "true %",
    "Estimate 95% CI": "true CI",
    "Judge-assisted estimate": "judge-assisted %",
    "Judge-assisted 95% CI": "judge-assisted CI",
    "Effective reviews": "worth reviews",
}


def short_headers(columns: Iterable[str]) -> dict:
    """``column_config`` giving each long column of the per-domain table a short header, its full
    name in the tooltip, and hiding the series' counts (the frame keeps every column under its full
    name: tests read them)."""
    config: dict = {}
    for name in columns:
        if any(name == series + HIDDEN_FIGURE for series in SHORT_SERIES):
            config[name] = None
            continue
        short = SHORT_OTHERS.get(name)
        for series, word in SHORT_SERIES.items():
            for figure, mark in SHORT_FIGURES.items():
                if short is None and name == series + figure:
                    short = word + mark
        if short is not None:
            config[name] = st.column_config.Column(short, help=name)
    return config


def percent_style(frame: pd.DataFrame, columns: Iterable[str] | None = None) -> Styler:
    """``frame`` for ``st.dataframe`` with shares in [0, 1] displayed as percentages ("64.6%", "—").

    The cells stay numbers (sorting works, tests read the values); only what is displayed is
    formatted, by :func:`scoring.core.formatting.percent`, the same rounding as the intervals beside
    them. (A ``NumberColumn(format="percent")`` truncates to its step instead: 0.6667 read
    "66.6%".) ``columns`` defaults to every "... accuracy" column.
    """
    names = [c for c in frame.columns if str(c).endswith("accuracy")] if columns is None else list(columns)
    return frame.style.format({c: percent for c in names if c in frame.columns})


def count_axis(title: str, top: float) -> dict:
    """A y axis that counts (rows, verdicts): whole-number ticks from 0, one per unit when the
    tallest bar is 10 or less (plotly would otherwise tick 0.5, 1, 1.5)."""
    axis = {"title": title, "tickformat": ",d", "rangemode": "tozero"}
    if top <= 10:
        axis["dtick"] = 1
    return axis


def bucket_figure(buckets: dict[str, dict[str, int]]) -> go.Figure:
    """Per-domain stacked bars of the four agreement buckets."""
    domains = [d for d in buckets if d != "combined"]
    fig = go.Figure()
    for name, colour in BUCKET_COLOURS.items():
        fig.add_bar(
            name=bucket_name(name),
            x=[html.escape(d) for d in domains],
            y=[buckets[d][name] for d in domains],
            marker_color=colour,
        )
    top = max((sum(buckets[d].get(b, 0) for b in BUCKET_COLOURS) for d in domains), default=0)
    fig.update_layout(
        barmode="stack",
        yaxis=count_axis("rows", top),
        xaxis={"title": "domain"},
        height=380,
        legend={"orientation": "h", "y": -0.25},
        margin={"t": 30},
    )
    return fig

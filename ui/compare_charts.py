"""Figures and display tables of the Compare page, built from ``scoring.compare`` results (layout
only). Every label that comes from the data (run names, domains, models, languages) is escaped
with ``html.escape``: plotly interprets a little HTML in labels, and escaped text shows literally.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import polars as pl
from pandas.io.formats.style import Styler

from scoring.compare import SOURCE_TITLES, SourceAccuracy
from scoring.core.formatting import MISSING, interval, is_missing, p_value, percent
from scoring.core.report import COMBINED
from ui.compare_data import HeatCell

#: Runs' colours: none is a metric's (ui.charts.SERIES_COLOURS) or the estimate's, so a run's bar is
#: never read as exact substring or the judge.
RUN_COLOURS = (
    "#0f766e",
    "#b91c1c",
    "#a16207",
    "#be185d",
    "#475569",
    "#0e7490",
    "#65a30d",
    "#854d0e",
    "#1e3a8a",
    "#9f1239",
)


def _rgba(colour: str, alpha: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _domains(rows: Sequence[SourceAccuracy]) -> list[str]:
    """Every run's domains sorted, then ``combined`` last: one category order for all runs."""
    named = sorted({r.domain for r in rows if r.domain != COMBINED}, key=str)
    return named + ([COMBINED] if any(r.domain == COMBINED for r in rows) else [])


def accuracy_bars(rows: Sequence[SourceAccuracy], labels: Sequence[str]) -> go.Figure:
    """Per-domain accuracy of one verdict source, bars grouped by run, 95% Wilson error bars.

    A bar stands at the accuracy with unknown verdicts counted wrong (as the Overview draws
    adjudicated accuracy); where some verdicts are unknown (pending, unjudged) a hatched bar on top
    reaches the accuracy with them counted right, and the error bar spans the Wilson lower bound of
    the first to the Wilson upper bound of the second.
    """
    fig = go.Figure()
    for i, label in enumerate(labels):
        mine = [r for r in rows if r.run == label]
        if not mine:
            continue
        colour, name, group = RUN_COLOURS[i % len(RUN_COLOURS)], html.escape(label), f"run{i}"
        fig.add_bar(
            name=name,
            x=[html.escape(r.domain) for r in mine],
            y=[r.accuracy_low for r in mine],
            offsetgroup=group,
            legendgroup=group,
            marker_color=colour,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [r.ci_high - r.accuracy_low for r in mine],
                "arrayminus": [r.accuracy_low - r.ci_low for r in mine],
            },
            customdata=[[r.correct, r.n, r.unknown, r.ci_low, r.ci_high, r.accuracy_high] for r in mine],
            hovertemplate=(
                "%{x}<br>" + name + ": %{y:.1%} (%{customdata[0]} of %{customdata[1]})"
                "<br>unknown: %{customdata[2]}<br>95% CI %{customdata[3]:.1%} to %{customdata[4]:.1%}<extra></extra>"
            ),
        )
        pending = [r for r in mine if r.unknown]
        if pending:
            fig.add_bar(
                name=f"{name}: unknown verdicts",
                x=[html.escape(r.domain) for r in pending],
                base=[r.accuracy_low for r in pending],
                y=[r.accuracy_high - r.accuracy_low for r in pending],
                offsetgroup=group,
                legendgroup=group,
                showlegend=True,
                marker={"color": _rgba(colour, 0.25), "line": {"color": colour, "width": 1}},
                marker_pattern_shape="/",
                customdata=[[r.unknown, r.accuracy_low, r.accuracy_high] for r in pending],
                hovertemplate="%{x}<br>" + name + ": %{customdata[0]} unknown; counted wrong .. right: "
                "%{customdata[1]:.1%} .. %{customdata[2]:.1%}<extra></extra>",
            )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "accuracy", "tickformat": ".0%", "range": [0, 1.05]},
        xaxis={"title": "domain", "categoryorder": "array", "categoryarray": [html.escape(d) for d in _domains(rows)]},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 30},
        height=420,
    )
    return fig


def _cell_text(acc: SourceAccuracy) -> str:
    if acc.unknown:
        return f"{percent(acc.accuracy_low)}–{percent(acc.accuracy_high)}<br>n = {acc.n} ({acc.unknown} unknown)"
    return f"{percent(acc.accuracy_low)}<br>n = {acc.n}"


def heatmap(cells: Sequence[HeatCell]) -> go.Figure:
    """Model (rows) x language (columns) of combined accuracy; a cell without a run stays empty
    (no colour, no text: its value is None, never 0). Colour: accuracy with unknown verdicts
    counted wrong; the text gives the range when some are unknown, and n."""
    models = sorted({c.model for c in cells}, key=str.lower)
    languages = sorted({c.language for c in cells}, key=str.lower)
    z: list[list[float | None]] = [[None] * len(languages) for _ in models]
    text = [[""] * len(languages) for _ in models]
    runs = [[""] * len(languages) for _ in models]
    for c in cells:
        m, lang = models.index(c.model), languages.index(c.language)
        z[m][lang] = c.accuracy.accuracy_low
        text[m][lang] = _cell_text(c.accuracy)
        runs[m][lang] = html.escape(", ".join(c.runs))
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[html.escape(v) for v in languages],
            y=[html.escape(v) for v in models],
            text=text,
            texttemplate="%{text}",
            customdata=runs,
            zmin=0,
            zmax=1,
            colorscale="Blues",
            hoverongaps=False,
            colorbar={"title": "accuracy", "tickformat": ".0%"},
            hovertemplate="model %{y}, language %{x}<br>%{text}<br>runs: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis={"title": "language", "type": "category"},
        yaxis={"title": "model", "type": "category", "autorange": "reversed"},  # the first model on top
        margin={"t": 30},
        height=120 + 70 * len(models),
    )
    return fig


def _p(p: float | None) -> str:
    return MISSING if is_missing(p) else p_value(p).removeprefix("p = ")


def _signed(x: float | None) -> str:
    return MISSING if is_missing(x) else f"{x * 100:+.1f}%"


def _signed_interval(low: float, high: float) -> str:
    return f"{low * 100:+.1f}% to {high * 100:+.1f}%"


B_COLUMN, C_COLUMN = "b (A right, B wrong)", "c (A wrong, B right)"
P_COLUMN, HOLM_COLUMN = "McNemar p", "Holm p"


def paired_frame(paired: pl.DataFrame, several: bool) -> Styler:
    """The paired table for ``st.dataframe``: numbers stay numbers (tests and sorting read them),
    shown as percentages and p-values; ``several`` (more than two runs) adds the Holm column."""
    p = paired.to_pandas()
    # Which pair and source, then the answer (difference, its interval, p), visible at 1280 px; the
    # counts after.
    frame = pd.DataFrame(
        {
            "source": p["source"].map(SOURCE_TITLES),
            "run A": p["run_a"],
            "run B": p["run_b"],
            "difference A − B": p["difference"],
            "95% CI of the difference": [_signed_interval(lo, hi) for lo, hi in zip(p["ci_low"], p["ci_high"])],
            P_COLUMN: p["p_value"],
        }
    )
    if several:
        frame[HOLM_COLUMN] = p["p_holm"]
    more = {
        "n": p["n"],
        "accuracy A": p["accuracy_a"],
        "accuracy B": p["accuracy_b"],
        B_COLUMN: p["b"],
        C_COLUMN: p["c"],
        "both right": p["both_right"],
        "both wrong": p["both_wrong"],
        "left out (verdict unknown)": p["excluded"],
    }
    for name, column in more.items():
        frame[name] = column
    return _paired_style(frame)


def _paired_style(frame: pd.DataFrame) -> Styler:
    """Accuracies as percentages, the difference signed, p-values as the page prints them."""
    formats = {"accuracy A": percent, "accuracy B": percent, "difference A − B": _signed, P_COLUMN: _p, HOLM_COLUMN: _p}
    return frame.style.format({c: f for c, f in formats.items() if c in frame.columns})


#: The paired table's columns shown in the first of its two tables (the pair and the answer, then
#: n); the second repeats the pair and holds the counts behind the answer.
PAIR = ["source", "run A", "run B"]
ANSWER = ["difference A − B", "95% CI of the difference", P_COLUMN, HOLM_COLUMN, "n"]


def paired_tables(paired: pl.DataFrame, several: bool) -> tuple[Styler, Styler]:
    """:func:`paired_frame` as two tables that each fit the page at 1280x720 (fifteen columns side
    by side do not, issue 37): the pair and the answer (difference, interval, p, n), then the pair
    and the counts (accuracies, b, c, both right, both wrong, left out)."""
    frame = paired_frame(paired, several).data
    answer = PAIR + [c for c in ANSWER if c in frame.columns]
    counts = PAIR + [c for c in frame.columns if c not in answer]
    return _paired_style(frame[answer]), _paired_style(frame[counts])


def accuracy_frame(accuracy: pl.DataFrame) -> Styler:
    """Every run's accuracy per source and domain, the range when verdicts are unknown."""
    a = accuracy.to_pandas()
    frame = pd.DataFrame(
        {
            "run": a["run"],
            "source": a["source"].map(SOURCE_TITLES),
            "domain": a["domain"],
            "n": a["n"],
            "correct": a["correct"],
            "wrong": a["wrong"],
            "unknown": a["unknown"],
            "accuracy": a["accuracy_low"],
            "accuracy, unknown counted right": a["accuracy_high"],
            "95% CI": [interval(lo, hi) for lo, hi in zip(a["ci_low"], a["ci_high"])],
        }
    )
    return frame.style.format({"accuracy": percent, "accuracy, unknown counted right": percent})

"""Figures and display tables of the estimate (the True accuracy page and the Overview), built from
``scoring.estimate`` results (layout only). Every label that comes from the data (domains,
languages, buckets) is escaped with ``html.escape``: plotly interprets a little HTML in labels,
and escaped text shows literally.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import polars as pl
import streamlit as st

from scoring import review
from scoring.core.formatting import interval, percent
from scoring.core.metric_names import EXACT, JUDGE, OVERLAP, SHORT_TITLES
from scoring.core.report import COMBINED
from scoring.core.stats import DEFAULT_HALF_WIDTH
from scoring.estimate import AccuracyEstimate, MetricQuality, ReviewPlan
from scoring.estimate.evidence import TO_REVIEW, has_interval, printed
from scoring.estimate.wording import judge_sentence
from ui import estimate_data
from ui.charts import SERIES_COLOURS, count_axis
from ui.estimate_data import RAW_SERIES, Figures

ESTIMATE = "Estimated true accuracy"
ESTIMATE_COLOUR = "#db2777"
JUDGED = "Judge-assisted estimate"
JUDGED_COLOUR = "#7c3aed"
REASON_COLOURS = {
    "paraphrase": "#2563eb",
    "inflection": "#0891b2",
    "different claim": "#f97316",
    "golden answer wrong": "#dc2626",
    "other": "#9ca3af",
}
METRIC_NAMES = {key: SHORT_TITLES[key] for key in (EXACT, OVERLAP, JUDGE)}


def _error(values: list[float | None], low: list[float | None], high: list[float | None]) -> dict:
    """Plotly's error bars of ``values``; a bar with no interval (None) gets none (no cap at all)."""
    ups = [None if h is None or v is None else h - v for v, h in zip(values, high)]
    downs = [None if lo is None or v is None else v - lo for v, lo in zip(values, low)]
    return {"type": "data", "symmetric": False, "array": ups, "arrayminus": downs}


def _add_interval_bars(
    fig: go.Figure, rows: list[dict], name: str, colour: str, cols: tuple[str, str, str], extra: str, hover: str
) -> go.Figure:
    """One bar series with its 95% interval: ``cols`` names the value, low and high columns,
    ``extra`` the column shown with ``reviewed`` in the hover text (``hover`` formats both)."""
    value, low, high = cols
    # No figure before its evidence: no bar (so no zero-width cap reading as certainty) without an
    # interval, no series without one anywhere; the table and the text say what to review.
    if not any(has_interval(r) for r in rows):
        return fig
    values = [printed(r, value) for r in rows]
    lows, highs = [printed(r, low) for r in rows], [printed(r, high) for r in rows]
    notes = ["95% CI " + interval(r[low], r[high]) if has_interval(r) else str(r.get(TO_REVIEW)) for r in rows]
    fig.add_bar(
        name=name,
        x=[html.escape(str(r["scope"])) for r in rows],
        y=values,
        marker_color=colour,
        error_y=_error(values, lows, highs),
        customdata=[[r["reviewed"], r[extra], html.escape(note)] for r, note in zip(rows, notes)],
        hovertemplate=("%{x}<br>" + name + ": %{y:.1%} " + hover + "<br>%{customdata[2]}<extra></extra>"),
    )
    return fig


def add_estimate(fig: go.Figure, comparison: pl.DataFrame) -> go.Figure:
    """``fig`` (bars per domain) with the estimated true accuracy and its 95% interval beside the
    other series, from :meth:`scoring.estimate.RunEstimate.comparison`."""
    return _add_interval_bars(
        fig,
        comparison.to_dicts(),
        ESTIMATE,
        ESTIMATE_COLOUR,
        ("estimate", "ci_low", "ci_high"),
        "rows",
        "(from %{customdata[0]} reviewed of %{customdata[1]} rows)",
    )


def add_judged(fig: go.Figure, comparison: pl.DataFrame) -> go.Figure:
    """``fig`` with the judge-assisted estimate and its 95% interval as one more series, from
    :meth:`scoring.estimate.judged.JudgeFigures.comparison`."""
    return _add_interval_bars(
        fig,
        comparison.to_dicts(),
        JUDGED,
        JUDGED_COLOUR,
        ("judge_estimate", "judge_ci_low", "judge_ci_high"),
        "effective_reviews",
        "(%{customdata[0]} reviewed, worth %{customdata[1]:,.0f})",
    )


def judged_frame(comparison: pl.DataFrame) -> pd.DataFrame:
    """Per domain and combined: the human-only estimate and the judge-assisted one side by side,
    each with its 95% interval and half-width, and the reviews the judge-assisted one is worth."""
    t = comparison.to_dicts()
    return pd.DataFrame(
        {
            "domain": [r["scope"] for r in t],
            "rows": [r["rows"] for r in t],
            "judged rows": [r["judged"] for r in t],
            "reviewed": [r["reviewed"] for r in t],
            "human-only": [r["human_estimate"] for r in t],
            "human-only 95% CI": [ci_text(r, "human_ci_low", "human_ci_high") for r in t],
            "human-only ± points": [_points(r, "human_ci_low", "human_ci_high") for r in t],
            "judge-assisted": [r["judge_estimate"] for r in t],
            "judge-assisted 95% CI": [ci_text(r, "judge_ci_low", "judge_ci_high") for r in t],
            "judge-assisted ± points": [_points(r, "judge_ci_low", "judge_ci_high") for r in t],
            "effective reviews": [round(r["effective_reviews"]) for r in t],
            "the judge narrows it": ["yes" if r["uses_judge"] else "no: human-only figure" for r in t],
        }
    )


def _points(row: dict, low: str = "ci_low", high: str = "ci_high") -> str:
    """An interval's half-width as "±4.2", empty for a figure too thinly reviewed for one."""
    return f"±{(row[high] - row[low]) * 50:.1f}" if has_interval(row) else ""


def with_judged(table: pd.DataFrame, comparison: pl.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The Overview's per-domain table with the judge-assisted estimate, its 95% interval and its
    effective reviews beside the human-only estimate, matched on the domain; and the share column."""
    by_scope = {r["scope"]: r for r in comparison.to_dicts()}
    rows = [by_scope.get(d, {}) for d in table["domain"]]
    out = table.assign(
        **{
            JUDGED: [printed(r, "judge_estimate") if r else None for r in rows],
            "Judge-assisted 95% CI": [ci_text(r, "judge_ci_low", "judge_ci_high") for r in rows],
            "Effective reviews": [round(r["effective_reviews"]) if r else None for r in rows],
        }
    )
    return out, [JUDGED]


def ci_text(row: dict, low: str = "ci_low", high: str = "ci_high") -> str:
    """A table cell's interval, or what to review to get one (no figure before its evidence)."""
    if not row:
        return ""
    if not has_interval(row):
        return str(row.get(TO_REVIEW) or "")
    return interval(row[low], row[high])


def judged_sentence(comparison: pl.DataFrame, human: dict) -> str:
    """Plain sentences: whether the judge narrows the combined interval, and what it is worth
    (:func:`scoring.estimate.wording.judge_sentence`, the CLI's words too)."""
    r = combined_row(comparison)
    judged = {**r, "estimate": r["judge_estimate"], "ci_low": r["judge_ci_low"], "ci_high": r["judge_ci_high"]}
    return judge_sentence(judged, human)


REVIEW_PAGE = "views/review.py"


def pilot_sentence(rows: int) -> str:
    """What to do before any estimate is shown: the planner's pilot (+-5 points) in words."""
    return (
        f"Review about {rows:,} rows of the random sample to estimate the true accuracy "
        f"(±{DEFAULT_HALF_WIDTH * 100:g} points)."
    )


def pilot_prompt(figs: Figures, reviewer: str | None, key: str) -> None:
    """In place of an estimate with no reviewed row of the random sample behind it: the pilot's
    size (:func:`ui.estimate_data.pilot_plan`) and a button that puts its rows in the audit scope
    (as the planner's button does) and opens that scope in the Review queue."""
    rows = estimate_data.pilot_plan(figs).remaining
    st.info(
        pilot_sentence(rows) + " No estimated true accuracy is shown until a row of it is reviewed, and none "
        "until the reviewed rows give it a 95% interval: a figure without one would be a guess."
    )
    if st.button(
        f"Start the audit: review {rows:,} rows of the random sample",
        key=key,
        type="primary",
        icon=":material/target:",
        disabled=not reviewer or rows == 0,
    ):
        estimate_data.start_pilot(figs, str(reviewer))
        st.switch_page(REVIEW_PAGE, query_params={"scope": review.AUDIT, "run": str(figs.run_id)})
    if not reviewer:
        st.caption("Type your name in the sidebar (Reviewer name): the audit scope records who planned it.")


def page_figure(figs: Figures, judged: pl.DataFrame | None = None, estimate: bool = True) -> go.Figure:
    """Raw accuracy of each metric (95% Wilson intervals) and the estimated true accuracy (its 95%
    interval), per domain and combined; the judge-assisted estimate too when ``judged`` is given
    (:meth:`scoring.estimate.judged.JudgeFigures.comparison`). ``estimate`` False: the raw
    metrics alone (no reviewed row of the random sample yet)."""
    fig = go.Figure()
    for metric, name in RAW_SERIES.items():
        part = figs.raw[figs.raw["metric"] == metric]
        if part.empty:
            continue
        values = part["share"].tolist()
        fig.add_bar(
            name=f"{name} (raw)",
            x=[html.escape(str(s)) for s in part["scope"]],
            y=values,
            marker_color=SERIES_COLOURS.get(name),
            opacity=0.55,
            error_y=_error(values, part["ci_low"].tolist(), part["ci_high"].tolist()),
            customdata=part[["correct", "n", "ci_low", "ci_high"]].to_numpy().tolist(),
            hovertemplate=(
                "%{x}<br>" + name + " passes %{y:.1%} (%{customdata[0]} of %{customdata[1]})"
                "<br>95% CI %{customdata[2]:.1%} to %{customdata[3]:.1%}<extra></extra>"
            ),
        )
    if estimate:
        add_estimate(fig, figs.estimate.comparison())
    if judged is not None:
        add_judged(fig, judged)
    fig.update_layout(
        barmode="group",
        yaxis={"title": "accuracy", "tickformat": ".0%", "range": [0, 1.05]},
        xaxis={"title": "domain"},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 30},
        height=420,
    )
    return fig


def with_estimate(table: pd.DataFrame, comparison: pl.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The Overview's one per-domain table (``charts.accuracy_frame`` plus the adjudicated
    columns) with the estimate beside it: reviewed rows, the estimate and its 95% interval,
    matched on the domain; and the added share column."""
    by_scope = {r["scope"]: r for r in comparison.to_dicts()}
    rows = [by_scope.get(d, {}) for d in table["domain"]]
    out = table.assign(
        **{
            "reviewed": [r.get("reviewed") for r in rows],
            ESTIMATE: [printed(r) if r else None for r in rows],
            "Estimate 95% CI": [ci_text(r, "ci_low", "ci_high") for r in rows],
        }
    )
    return out, [ESTIMATE]


def estimate_frame(acc: AccuracyEstimate) -> pd.DataFrame:
    """Per domain and combined: rows, reviewed, correct, estimate, its 95% interval, the half-width
    in points, and the share of rows whose bucket has no reviewed row."""
    t = acc.table().to_dicts()
    return pd.DataFrame(
        {
            "domain": [r["scope"] for r in t],
            "rows": [r["rows"] for r in t],
            "reviewed": [r["reviewed"] for r in t],
            "judged correct": [r["correct"] for r in t],
            "estimate": [printed(r) for r in t],
            "95% CI": [ci_text(r) for r in t],
            "± points": [_points(r) for r in t],
            "rows in unreviewed buckets": [r["unknown_weight"] for r in t],
        }
    )


def language_sentence(by_language: pl.DataFrame) -> str:
    """Every language's figure in one plain line (the table below it has the metrics)."""
    parts = [
        f"{r['scope']} {percent(r['estimate'])} (95% CI {ci_text(r)})"
        if has_interval(r)
        else f"{r['scope']}: no estimate yet ({ci_text(r)})"
        for r in by_language.to_dicts()
    ]
    return "Estimated true accuracy by language: " + "; ".join(parts) + "."


def language_frame(by_language: pl.DataFrame) -> pd.DataFrame:
    """Per language (:attr:`scoring.estimate.RunEstimate.by_language`): rows, reviewed, the two
    metrics' raw accuracy, the estimate and its 95% interval (or how many more reviews give one)."""
    t = by_language.to_dicts()
    return pd.DataFrame(
        {
            "language": [r["scope"] for r in t],
            "rows": [r["rows"] for r in t],
            "reviewed": [r["reviewed"] for r in t],
            "exact substring": [r["raw_exact"] for r in t],
            "word overlap": [r["raw_overlap"] for r in t],
            "estimate": [printed(r) for r in t],
            "95% CI": [ci_text(r) for r in t],
        }
    )


def raw_language_sentence(accuracy: dict[str, list]) -> str:
    """Per language, before any review, in one plain line: rows and both metrics' accuracy
    (``accuracy``: metric -> :func:`scoring.core.report.accuracy_by_domain` rows by language)."""
    exact, overlap = accuracy["exact_substring"][:-1], accuracy["word_overlap"][:-1]
    parts = [
        f"{e.domain} {e.n:,} rows, exact {percent(e.accuracy)}, overlap {percent(o.accuracy)}"
        for e, o in zip(exact, overlap, strict=True)
    ]
    return "By language (the metrics; no estimate before a review): " + "; ".join(parts) + "."


def strata_notes(acc: AccuracyEstimate) -> list[str]:
    """Plain sentences (for ``st.text``) naming the strata that fell back and the unreviewed ones."""
    notes = []
    if acc.fell_back:
        notes.append(
            "Strata with fewer than 2 reviewed rows use their bucket's pooled share across domains: "
            + "; ".join(f"{b} / {d}" for b, d in acc.fell_back)
            + "."
        )
    if acc.unreviewed:
        buckets = sorted({b for b, _ in acc.unreviewed})
        notes.append(
            "Not reviewed at all (no reviewed row in the bucket): "
            + ", ".join(buckets)
            + ". Until each has some, no estimate covering them is shown: "
            + "; ".join(f"{b} / {d}" for b, d in acc.unreviewed)
            + "."
        )
    return notes


def metrics_frame(metrics: list[MetricQuality]) -> tuple[pd.DataFrame, list[str]]:
    """One row per metric (and the judge): rows, reviewed, raw accuracy, then precision, recall,
    specificity and the Rogan-Gladen corrected accuracy, each with its 95% interval."""
    rows = []
    for m in metrics:
        row = {
            "metric": METRIC_NAMES.get(m.metric, m.metric),
            "rows": m.rows,
            "reviewed": m.reviewed,
            "raw accuracy": m.raw_accuracy,
        }
        for name, ratio in (
            ("precision", m.precision),
            ("recall", m.recall),
            ("specificity", m.specificity),
            ("corrected accuracy", m.corrected),
        ):
            row[name] = ratio.value if has_interval(ratio) else None  # no figure before its evidence
            row[f"{name} 95% CI"] = interval(ratio.ci_low, ratio.ci_high)
        row["rows covered by reviews"] = m.coverage
        rows.append(row)
    shares = ["raw accuracy", "precision", "recall", "specificity", "corrected accuracy", "rows covered by reviews"]
    frame = pd.DataFrame(rows).astype({c: float for c in shares}) if rows else pd.DataFrame()
    return frame, shares


def plan_frame(plan: ReviewPlan) -> pd.DataFrame:
    """The plan per stratum: bucket, domain, size, reviewed, planned, remaining, the rate the plan
    assumed (the bucket's, toward 0.5) and the share its reviewed rows show."""
    t = plan.strata.to_dicts()
    return pd.DataFrame(
        {
            "bucket": [r["bucket"] for r in t],
            "domain": [r["Domain"] for r in t],
            "size": [r["size"] for r in t],
            "reviewed": [r["reviewed"] for r in t],
            "planned": [r["planned"] for r in t],
            "remaining": [r["remaining"] for r in t],
            "assumed rate": ["50.0% (prior)" if r["prior"] else percent(r["rate"]) for r in t],
            "reviewed share": [percent(r["observed"]) if r["reviewed"] else "" for r in t],
        }
    )


def reasons_figure(counts: pl.DataFrame, by: str) -> go.Figure:
    """Stacked bars: how many verdicts gave each reason, per ``by`` (``Domain`` or ``language``)."""
    fig = go.Figure()
    grouped = counts.group_by(by, "reason").agg(pl.col("count").sum()).sort(by)
    top = grouped.group_by(by).agg(pl.col("count").sum())["count"].max() or 0
    for reason in grouped["reason"].unique(maintain_order=True).to_list():
        part = grouped.filter(pl.col("reason") == reason)
        fig.add_bar(
            name=html.escape(str(reason)),
            x=[html.escape(str(v)) for v in part[by]],
            y=part["count"].to_list(),
            marker_color=REASON_COLOURS.get(str(reason)),
        )
    fig.update_layout(
        barmode="stack",
        yaxis=count_axis("verdicts with this reason", top),
        legend={"orientation": "h", "y": -0.25},
        xaxis={"title": by.lower(), "type": "category", "categoryorder": "category ascending"},
        margin={"t": 30},
        height=380,
    )
    return fig


#: The what-if rule named after the command line's flag, worded for the page: (rule, what it does).
PAGE_RULES = {
    "--normalize": (
        "all four steps",
        "the four steps above together (NFC, format characters, native digits, stripped golden answer)",
    )
}


def whatif_frame(table: pl.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The what-if rules: rule, metric, what it does, reviewed rows it changes, fixes and breaks,
    the metric's estimated pass share and agreement with reviewers under it (95% intervals)."""
    t = table.to_dicts()
    words = [PAGE_RULES.get(r["rule"], (r["rule"], r["description"])) for r in t]
    frame = pd.DataFrame(
        {
            "rule": [w[0] for w in words],
            "metric": [METRIC_NAMES.get(r["metric"], r["metric"]) for r in t],
            "what it does": [w[1] for w in words],
            "reviewed rows": [r["reviewed"] for r in t],
            "verdicts changed": [r["changed"] for r in t],
            "overturns fixed": [r["fixed"] for r in t],
            "confirmed verdicts broken": [r["broken"] for r in t],
            "estimated pass share": [r["pass_share"] for r in t],
            "pass share 95% CI": [interval(r["pass_low"], r["pass_high"]) for r in t],
            "estimated agreement with reviewers": [r["agreement"] for r in t],
            "agreement 95% CI": [interval(r["agreement_low"], r["agreement_high"]) for r in t],
        }
    )
    return frame, ["estimated pass share", "estimated agreement with reviewers"]


def combined_row(comparison: pl.DataFrame) -> dict:
    """The ``combined`` row of a comparison table."""
    return comparison.filter(pl.col("scope") == COMBINED).to_dicts()[0]


def by_hand_frame(sample: pl.DataFrame) -> pd.DataFrame:
    """The rows reviewed out of the random sample: row number (1-based), bucket, domain, verdict."""
    rows = sample.filter(pl.col("by_hand")).sort("row_idx")
    return pd.DataFrame(
        {
            "row": (rows["row_idx"] + 1).to_list(),
            "bucket": rows["bucket"].to_list(),
            "domain": rows["Domain"].to_list(),
            "verdict": ["correct" if t else "wrong" for t in rows["truth"].to_list()],
        }
    )

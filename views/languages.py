"""Model x language: the table a team reports. A row per model, a column per language; each cell
the estimated true accuracy with its 95% interval where a random sample is reviewed there, else a
metric's accuracy marked as such; then who is ahead of whom in each language. During double-blind
review a reviewer who is not an adjudicator sees no cell or pair built on those runs' verdicts.

Everything is computed by :mod:`scoring.team_report` (cached in :mod:`ui.team_table_data`); this
page lays it out. Model names and languages are the uploader's text: shown through tables,
``st.text`` and escaped chart labels, never as Markdown.
"""

from __future__ import annotations

import json

import polars as pl
import streamlit as st

from scoring import store
from scoring.core.errors import InputError
from scoring.estimate.evidence import has_interval
from scoring.team_report import (
    CELL_METHOD,
    ESTIMATE,
    PAIRS_METHOD,
    cell_text,
    cells_csv_frame,
    pairs_csv_frame,
    table_figure,
    table_title,
)
from ui import compare_data, head_to_head_data, identity, run_choice, team_table_data
from ui.display import alert
from ui.downloads import download_button
from ui.tables import show_table

st.title("Model x language")
runs = run_choice.known_runs()
if not runs:
    st.info("No run yet: upload a responses file on the Upload page.")
    st.stop()
labels = {r.id: store.run_label(r) for r in runs}
chosen = st.multiselect(
    "Runs in the table", list(labels), default=list(labels), format_func=labels.get, key="lang_runs"
)
if not chosen:
    st.text("Choose at least one run.")
    st.stop()
# During double-blind review a reviewer sees no figure built on other reviewers' verdicts: the
# models of those runs show a metric in every cell, and their pairs no adjudicated verdicts.
withheld = identity.visibility().hidden(chosen)
try:
    selected = run_choice.selected_run()
    table = team_table_data.table_of(sorted(chosen), selected.id if selected else None, withheld)
except InputError as error:
    alert("error", str(error))
    st.stop()

# The lead (issue 37): per language, which model is ahead on the estimated true accuracy.
lead = head_to_head_data.estimated_truth(sorted(chosen), withheld, compare_data.revisions(), by_model=True)
with st.container(key="lang_truth"):
    st.text("\n".join(lead.lead_lines(per_language=True) or ["Choose at least two models to compare."]))
    if lead.automatic_sentences():
        st.text("\n".join(lead.automatic_sentences()))
with st.expander("How is the head-to-head computed?"):
    st.text(lead.method)

for info, _ in table.skipped:
    st.warning(f"Left out: {store.run_label(info)}: its stored rows cannot be read back (see its own pages).")
if table.withheld:
    named = ", ".join(f"#{i}" for i in sorted(table.withheld))
    alert(
        "info",
        f"Double-blind review is on for run(s) {named}: their reviewers' verdicts are shown to adjudicators only, "
        "so that no reviewer is swayed. Until then their models' cells show a metric's accuracy, not the "
        "estimated true accuracy, and their pairs compare no adjudicated verdicts.",
    )
estimated = sum(1 for c in table.cells if c.kind == ESTIMATE and has_interval(c))
waiting = sum(1 for c in table.cells if c.kind == ESTIMATE and not has_interval(c))
st.text(
    f"{len(table.models)} models x {len(table.languages)} languages: {estimated} of {len(table.cells)} cells are "
    "estimated true accuracy from reviewed rows; "
    + (
        f"{waiting} have reviewed rows but no 95% interval yet, so no figure: each says what to review to get one; "
        if waiting
        else ""
    )
    + "the others show a metric's accuracy (marked) until rows there are reviewed."
)
title = table_title(table.cells)
st.subheader(title)
grid = {"model": table.models} | {
    language: [cell_text(c) if (c := table.cell(m, language)) else "—" for m in table.models]
    for language in table.languages
}
show_table(pl.DataFrame(grid), key="lang_table")
figure = table_figure(table.models, table.languages, table.cells, title)
st.plotly_chart(figure, key="lang_heatmap")
# The chart's labels are short; what a cell without a figure needs is said here in full.
for cell in (c for c in table.cells if c.kind == ESTIMATE and not has_interval(c) and c.what_to_review):
    st.text(f"{cell.model} · {cell.language}: {cell.what_to_review}")
if table.pairs:
    st.subheader("Who is ahead, per language")
    for pair in table.pairs:
        st.text(pair.sentence)

# Every download the docs list, in view (the JSON one sat in the expander below, unseen). The
# report is built on click, from the database (a download's callable runs outside the session).
st.subheader("Downloads")
report = team_table_data.report_maker(sorted(chosen), sorted(withheld))
first, second, third = st.columns(3)
download_button(
    "The report (HTML, opens offline)",
    lambda: report("html"),
    file_name="model_language_report.html",
    mime="text/html",
    key="lang_report_html",
    where=first,
    icon=":material/description:",
)
download_button(
    "The report (Markdown)",
    lambda: report("md"),
    file_name="model_language_report.md",
    mime="text/markdown",
    key="lang_report_md",
    where=first,
)
download_button(
    "The table (CSV, percentages)",
    lambda: cells_csv_frame(table.cells).write_csv().encode(),
    file_name="model_language.csv",
    mime="text/csv",
    key="lang_csv",
    where=second,
)
download_button(
    "The sentences per language (CSV)",
    lambda: pairs_csv_frame(table.pairs).write_csv().encode(),
    file_name="model_language_pairs.csv",
    mime="text/csv",
    key="lang_pairs_csv",
    where=second,
)
download_button(
    "Everything (JSON)",
    lambda: json.dumps(table.as_dict(), ensure_ascii=False, indent=2).encode(),
    file_name="model_language.json",
    mime="application/json",
    key="lang_json",
    where=third,
)
download_button(
    "The chart (HTML)",
    lambda: figure.to_html(include_plotlyjs=True).encode(),
    file_name="model_language.html",
    mime="text/html",
    key="lang_html",
    where=third,
)
st.caption(
    "The report holds the table, the sentences, a chart per domain, the method and each run's provenance, in one "
    "file that needs no network. The chart's camera button saves it as a PNG."
)
with st.expander("How is this computed?"):
    st.text(f"Cells: {CELL_METHOD}")
    st.text(f"Pairs: {PAIRS_METHOD}")

"""Compare runs: per-run accuracy per verdict source, a model x language heatmap, paired
statistics on the matched questions, the rows that could not be matched, and the questions one
run got right and the other wrong (each openable side by side and in the review queue).

Everything is computed by ``scoring.compare`` (through the cached accessors of
:mod:`ui.compare_data`); this page lays it out. Dataset text (questions, answers, responses, run
names, domains, column names) is shown only through ``st.text``, tables, escaped HTML and escaped
chart labels, never as Markdown.
"""

from __future__ import annotations

from itertools import combinations

import pandas as pd
import polars as pl
import streamlit as st

from scoring import store
from scoring.compare import (
    ADJUSTMENT_METHOD,
    DECIDED_IN_BOTH,
    INTERVAL_METHOD,
    JUDGE,
    SOURCE_TITLES,
    TEST_METHOD,
    UNKNOWN_RULE,
    SourceAccuracy,
    lead_sentences,
)
from scoring.core.errors import InputError
from ui import compare_charts, compare_data, decision_plan_panel, head_to_head_data, identity, run_choice
from ui.display import alert, show_row
from ui.tables import HOW, show_table

REVIEW_PAGE = "views/review.py"
UNMATCHED_PAGE = 200  # unmatched rows listed per page
DISCORDANT_PAGE = 50  # discordant questions per page of the table


def _page_number(label: str, total: int, per_page: int, key: str) -> int:
    """A page picker (only when there is more than one page); 1 when the pages shrank under it."""
    pages = max(1, -(-total // per_page))
    if not 1 <= st.session_state.get(key, 1) <= pages:
        st.session_state[key] = 1
    if pages == 1:
        return 1
    return int(st.number_input(f"{label} (of {pages}; {total} rows)", 1, pages, key=key))


def _swap() -> None:
    """Read every pair the other way round (the multiselect's order is the pairs' order)."""
    st.session_state["cmp_runs"] = list(reversed(st.session_state["cmp_runs"]))


run = run_choice.require_run()
runs = {r.id: r for r in run_choice.known_runs()}
st.title("Compare runs")

# The default choice: the sidebar's run and every run sharing questions with it, worked out again
# when the sidebar's run changes (or the page was left: Streamlit then forgets the widget).
if st.session_state.get("cmp_base") != run.id or "cmp_runs" not in st.session_state:
    with st.spinner("Looking for runs that share questions with this one..."):
        sharing = [i for i in runs if i != run.id and compare_data.shared_questions(run.id, i) > 0]
    st.session_state["cmp_runs"] = [run.id, *sharing]
    st.session_state["cmp_base"] = run.id
else:
    st.session_state["cmp_runs"] = [i for i in st.session_state["cmp_runs"] if i in runs]
chosen = st.multiselect("Runs to compare", list(runs), key="cmp_runs", format_func=lambda i: store.run_label(runs[i]))
st.caption(
    "By default, the run chosen in the sidebar and every run that shares questions with it (the same id, "
    "or the same question and golden answer). Pairs read in the order chosen here, first vs second (b and "
    "c, the signs of differences), as `python -m scoring compare` reads its runs in the order "
    "given."
)
if len(chosen) >= 2:
    st.button("Reverse the order", key="cmp_swap", on_click=_swap, help="Read every pair the other way round.")
if len(chosen) < 2:
    st.info("Pick at least two runs to compare.")
    st.stop()

several = len(chosen) > 2
# During double-blind review a reviewer sees no figure built on reviewers' verdicts, and no row's verdicts.
blind = any(identity.others_hidden(i) for i in chosen)
try:
    with st.spinner("Loading and matching the runs..."):
        cmp = compare_data.comparison(
            [runs[i] for i in chosen], bool(st.session_state.get("cmp_by_id", True)), blind, compare_data.revisions()
        )
except InputError as exc:
    alert("error", str(exc))
    st.stop()
match, labels = cmp.match, cmp.labels

# --- the answer first: the estimated true accuracies head to head (scoring.team_report.head_to_head) ---
hidden = [i for i in cmp.ids if identity.others_hidden(i)]
truth = head_to_head_data.estimated_truth(cmp.ids, hidden, cmp.revs)
with st.container(key="cmp_truth"):
    st.text("\n".join(truth.lead_lines()))
    if truth.several_languages:
        st.text("\n".join(truth.lead_lines(per_language=True)[: -len(truth.duplicates) or None]))
    if truth.automatic_sentences():
        st.text("\n".join(truth.automatic_sentences()))
with st.expander("How is the head-to-head computed?"):
    st.text(truth.method)
if not blind:  # the plan reads the reviewers' verdicts (each bucket's share)
    decision_plan_panel.decision_planner(cmp.ids[0], cmp.ids[1], cmp.revs, identity.reviewer())
if cmp.comparisons:
    with st.container(key="cmp_answer"):
        st.text("\n".join(lead_sentences(cmp.paired)))
    st.caption(
        "On verdicts, not the estimated truth: each pair on the most trustworthy verdict source both runs have "
        "(adjudicated, else the LLM judge, else exact substring; rows nobody reviewed count the automatic rule's "
        "verdict); every source is in the paired table below."
    )

# --- how the rows were matched --------------------------------------------------------------------
st.subheader("Matching")
st.text(
    f"Matched on {match.key_text()}: {cmp.choice.reason}.\n{match.n_matched} questions are in every run, once each."
)
if cmp.id_column:
    st.toggle(
        "Match on the id column every run has (off: on question and golden answer text)", value=True, key="cmp_by_id"
    )
advice = match.advice()
if advice:
    alert("warning", advice)
if several:
    show_table(
        pd.DataFrame(
            [
                {"run A": labels[i], "run B": labels[j], "questions in both (once each)": n}
                for (i, j), n in match.shared.items()
            ]
        ),
        key="cmp_shared",
    )

# --- accuracy per run -------------------------------------------------------------------------------
st.subheader("Accuracy per run")
st.caption(
    "All rows of each run, per domain and combined, with 95% Wilson intervals. Where verdicts are unknown "
    "(adjudicated rows still pending, rows the judge did not decide) the bar is drawn with them counted "
    "wrong and the hatched bar above it reaches the accuracy with them counted right."
)
if blind:
    st.info(identity.BLIND_NOTE + " The adjudicated accuracy is hidden until then.")
for source in cmp.sources:
    rows = [SourceAccuracy(**r) for r in cmp.accuracy.filter(pl.col("source") == source).to_dicts()]
    if rows:
        st.markdown(f"**{SOURCE_TITLES[source]}**")  # a fixed title, not dataset text
        st.plotly_chart(compare_charts.accuracy_bars(rows, labels), key=f"cmp_bars_{source}")
        named = [f"{r.label}: Judge: {r.judge}." for r in cmp.runs if r.judge]
        if source == JUDGE and named:  # whose labels each stored run's judge source holds
            st.text("\n".join(named))
with st.expander("Accuracy table"):
    st.text(
        f"Unknown verdicts: {UNKNOWN_RULE}.\nAdjudicated: each row's final verdict as the export writes it "
        "(reviewers' verdicts and adjudicators' decisions, else the automatic rule; the judge settles no row)."
    )
    show_table(compare_charts.accuracy_frame(cmp.accuracy), key="cmp_accuracy")

# --- model x language -------------------------------------------------------------------------------
st.subheader("Model x language")
infos = [runs[i] for i in cmp.ids]
with_rows = {i.id: "language" in r.table.columns for i, r in zip(infos, cmp.runs, strict=True)}
carrying = [i for i in infos if i.model.strip() and (i.language.strip() or with_rows[i.id])]
if len(carrying) < 2:
    st.text(
        "Give at least two of these runs a model and a language (Upload page, Save details) to see them "
        "on a model x language grid."
    )
else:
    offered = [s for s in cmp.sources if any(s in r.sources for r in cmp.runs)]
    heat_source = st.radio(
        "Verdict source of the grid",
        offered,
        format_func=SOURCE_TITLES.__getitem__,
        horizontal=True,
        key="cmp_heat_source",
    )
    cells = compare_data.heat_cells(cmp, infos, heat_source or offered[0])
    st.plotly_chart(compare_charts.heatmap(cells), key="cmp_heatmap")
    st.caption(
        "Combined accuracy of each model in each language, n questions in the cell, from each row's language "
        "(a mixed file fills several cells); runs with the same model and language are pooled. An empty cell "
        "has no rows. With reviewed rows, the Model x language page shows the estimated true accuracy."
    )
    missing = [i for i in infos if i not in carrying]
    if missing:
        st.text("Not on the grid (no model or language): " + ", ".join(f"#{i.id}" for i in missing))

# --- paired comparison ------------------------------------------------------------------------------
st.subheader("Paired comparison on the matched questions")
methods = [f"Interval of the difference: {INTERVAL_METHOD}", f"Test: {TEST_METHOD}"]
if several:
    methods.append(f"Adjustment for multiple comparisons: {ADJUSTMENT_METHOD} (column Holm p)")
with st.expander(HOW):
    st.text("\n".join(methods))
if cmp.comparisons:
    with st.container(key="cmp_paired_box"):
        answer, counts = compare_charts.paired_tables(cmp.paired, several)
        show_table(answer, key="cmp_paired")
    with st.container(key="cmp_counts_box"):
        show_table(counts, key="cmp_paired_counts")
    st.caption(
        "b: questions run A got right and run B wrong; c: the reverse. Difference: accuracy of A minus "
        f"accuracy of B on the questions used. LLM judge and adjudicated pairs use {DECIDED_IN_BOTH}; "
        "the last column counts the matched questions left out."
    )
else:
    st.info("No verdict source is shared by two of these runs.")

# --- unmatched rows ---------------------------------------------------------------------------------
st.subheader("Rows not matched")
counts = match.unmatched_counts()
show_table(pd.DataFrame([{"run": label, **c} for label, c in counts.items()]), key="cmp_unmatched_counts")
total = match.unmatched.height
if total == 0:
    st.text("Every row of every run is matched.")
else:
    st.caption(
        "Duplicate key: the key occurs more than once in that run (every copy is listed). Not in every run: "
        "missing from, or repeated in, another run. Empty key: every key cell is blank."
    )
    page = _page_number("Unmatched rows page", total, UNMATCHED_PAGE, "cmp_unmatched_page")
    shown = match.unmatched.slice((page - 1) * UNMATCHED_PAGE, UNMATCHED_PAGE)
    show_table(shown.drop("run_index").to_pandas(), key="cmp_unmatched")

# --- discordant questions ---------------------------------------------------------------------------
st.subheader("Questions one run got right and the other wrong")
if blind:
    st.info(identity.BLIND_NOTE + " The questions and their verdicts are hidden until then.")
    st.stop()
if match.no_shared_rows:
    st.text("No matched questions: nothing to set side by side.")
    st.stop()
pairs = list(combinations(range(len(labels)), 2))
left, middle, right = st.columns(3)
pair = left.selectbox(
    "Runs", range(len(pairs)), key="cmp_pair", format_func=lambda k: f"{labels[pairs[k][0]]} vs {labels[pairs[k][1]]}"
)
a, b = pairs[pair or 0]
shared_sources = [s for s in cmp.sources if s in cmp.runs[a].sources and s in cmp.runs[b].sources]
source = middle.selectbox(
    "Verdict source",
    [None, *shared_sources],
    key="cmp_disc_source",
    format_func=lambda s: "All sources" if s is None else SOURCE_TITLES[s],
)
domain = right.selectbox(
    "Domain",
    [None, *cmp.domains],
    key="cmp_disc_domain",
    format_func=lambda d: "All domains" if d is None else (d or "(blank)"),
)
found = compare_data.discordant(cmp, a, b, source, domain)
st.text(f"{found.height} question-and-source rows where {labels[a]} (A) and {labels[b]} (B) disagree.")
page = _page_number("Page", found.height, DISCORDANT_PAGE, "cmp_disc_page")
shown = found.slice((page - 1) * DISCORDANT_PAGE, DISCORDANT_PAGE)

# A new filter or page starts with nothing chosen: the table gets a new key (its selection resets).
context = (cmp.ids, pair, source, domain, page)
if st.session_state.get("cmp_disc_context") != context:
    st.session_state["cmp_disc_context"] = context
    st.session_state["cmp_disc_version"] = st.session_state.get("cmp_disc_version", 0) + 1
table_key = f"cmp_disc_{st.session_state['cmp_disc_version']}"
st.session_state["cmp_disc_key"] = table_key  # where tests find the table's selection
view = pd.DataFrame(
    {
        "source": [SOURCE_TITLES[s] for s in shown["source"]],
        "right": shown["right"].to_list(),
        "wrong": shown["wrong"].to_list(),
        "Domain": shown["Domain"].to_list(),
        "question": shown["question"].to_list(),
        "golden answer": shown["answer_a"].to_list(),
        "row in A": shown["row_a"].to_list(),
        "row in B": shown["row_b"].to_list(),
    }
)
with st.container(key="cmp_disc_table"):
    event = show_table(view, on_select="rerun", selection_mode="single-row", key=table_key)
picked = [i for i in event.selection.rows if 0 <= i < shown.height]
if not picked:
    st.text("Choose a row of the table (the box at its left) to see both responses side by side.")
    st.stop()
row = shown.row(picked[0], named=True)
for column, side, index in zip(st.columns(2), ("a", "b"), (a, b)):
    with column:
        number = int(row[f"row_{side}"])
        verdict = "right" if row["right"] == labels[index] else "wrong"
        st.text(f"{labels[index]}: row {number}, {verdict} ({SOURCE_TITLES[row['source']]})")
        show_row(
            pd.Series(
                {
                    "question": row[f"question_{side}"],
                    "answer": row[f"answer_{side}"],
                    "response": row[f"response_{side}"],
                }
            )
        )
        if st.button("Open in the review queue", key=f"cmp_open_{side}", icon=":material/rule:"):
            st.switch_page(REVIEW_PAGE, query_params={"run": str(cmp.ids[index]), "row": str(number)})

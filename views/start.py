"""Start here: the three jobs the tool is for, each with its button (upload a file, settle the
rows the metrics disagree on, export the adjudicated verdicts), whether the run open is a bundled
sample, and the one action that removes every sample run. The default page of the navigation (app.py)."""

from __future__ import annotations

import csv
import io

import streamlit as st

from scoring import store
from scoring.review import job_sentence
from ui import estimate_data, run_choice, sample_runs
from ui.downloads import download_button

UPLOAD_PAGE, REVIEW_PAGE, EXPORT_PAGE = "views/upload.py", "views/review.py", "views/export.py"
TRIAGE_SCOPE = "overlap_only"  #: the queue step 2 opens: the rows the metrics disagree on
#: The template's columns: the four the scorers need, then the optional ones.
TEMPLATE_COLUMNS = ("question", "answer", "response", "Domain", "model", "language")
TEMPLATE_ROWS = (
    (
        "Which river is called the Dakshin Ganga?",
        "Godavari",
        "The Godavari is often called the Dakshin Ganga.",
        "Geography",
        "my-model",
        "English",
    ),
    ("Who wrote Gitanjali?", "Rabindranath Tagore", "It was written by Tagore.", "Literature", "my-model", "English"),
    ("भारत की राजधानी क्या है?", "नई दिल्ली", "भारत की राजधानी नई दिल्ली है।", "Geography", "my-model", "Hindi"),
)
FORMATS = (
    "CSV, TSV, JSON lines, a JSON array of objects or Parquet; the text formats may be gzipped; "
    "UTF-8 (with or without a BOM) or UTF-16 with a BOM. Logs of Inspect AI, lm-evaluation-harness and "
    "promptfoo are read as they are."
)


def template_csv() -> bytes:
    """A small responses file in the shape the Upload page reads (UTF-8 with a BOM, so spreadsheet
    programs open the Indic text correctly)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TEMPLATE_COLUMNS)
    writer.writerows(TEMPLATE_ROWS)
    return out.getvalue().encode("utf-8-sig")


def _go(page: str, **params: str) -> None:
    st.switch_page(page, query_params=params or None)


st.title("Start here")
st.write("Check a model's answers against golden answers in three steps. Each step has its page in the sidebar.")
run = run_choice.selected_run()
if run is not None and store.is_sample(run):
    st.info(
        "You are looking at a bundled sample run: a small set loaded on first start so every page has "
        "something to show. Upload your own file (step 1) to review your model: the samples then leave every "
        "run list and table, and the last box of this page removes them for good."
    )
if run is not None:
    st.text(f"Run open now: {store.run_label(run)}")  # dataset text: never Markdown
run_param = {"run": str(run.id)} if run is not None else {}

with st.container(border=True, key="start_upload"):
    st.subheader("1. Upload a file of your model's answers")
    st.markdown(
        "One row per question, with these columns (names are matched ignoring case; other names can be "
        "mapped on the Upload page):\n"
        "- `question`: the question asked;\n"
        "- `answer`: the **golden answer**;\n"
        "- `response`: the model's answer;\n"
        "- `Domain`: the subject (Art, History...), for the per-domain figures.\n\n"
        "Optional: `model`, and `language`: each row's language (`Hindi`, `hi`...; without it, the run's "
        "language, else the row's script). The run's model and language can also be set after the upload. "
        "Any other column is kept and exported back."
    )
    st.caption(f"Formats read: {FORMATS}")  # our own words, no dataset text
    c1, c2 = st.columns(2)
    download_button(
        "Download a template CSV",
        template_csv,
        file_name="responses_template.csv",
        mime="text/csv",
        key="start_template",
        where=c1,
        icon=":material/download:",
    )
    if c2.button("Upload a file", key="start_go_upload", type="primary", icon=":material/upload_file:"):
        _go(UPLOAD_PAGE, **run_param)

with st.container(border=True, key="start_review"):
    st.subheader("2. Review the rows the metrics disagree on")
    st.write(
        "Exact substring and word overlap disagree on some rows (overlap passes, exact fails): a person "
        "settles each one in the Review queue, one row at a time, with keyboard shortcuts."
    )
    st.caption(job_sentence(TRIAGE_SCOPE))  # which of the two jobs, triage or the estimate, this queue serves
    if run is None:
        st.text("No run yet: upload a file first (step 1).")
    else:
        waiting = estimate_data.overlap_waiting(run.id)
        label = f"{waiting:,} rows need a verdict: open the queue" if waiting else "None is waiting: open the queue"
        if st.button(label, key="start_go_review", type="primary", icon=":material/rule:"):
            _go(REVIEW_PAGE, scope=TRIAGE_SCOPE, **run_param)

with st.container(border=True, key="start_export"):
    st.subheader("3. Export the adjudicated verdicts")
    st.write(
        "Every row with its final verdict (a reviewer's, an adjudicator's where reviewers disagreed, else "
        "the automatic rule), as CSV, JSON lines or Parquet. An export uploads back and restores every "
        "verdict."
    )
    if st.button(
        "Export verdicts", key="start_go_export", type="primary", icon=":material/download:", disabled=run is None
    ):
        _go(EXPORT_PAGE, **run_param)

sample_runs.removal_box()

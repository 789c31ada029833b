"""Entry point: navigation, the sidebar (run picker, reviewer, database), then the current page."""

from __future__ import annotations

import streamlit as st

from scoring import store
from scoring.db import database_url
from ui import state

st.set_page_config(page_title="Answer review", page_icon=":material/fact_check:", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/bar_chart:", default=True),
    st.Page("pages/upload.py", title="Upload", icon=":material/upload_file:"),
    st.Page("pages/agreement.py", title="Agreement", icon=":material/compare_arrows:"),
    st.Page("pages/review.py", title="Review queue", icon=":material/rule:"),
    st.Page("pages/reviewers.py", title="Reviewers", icon=":material/groups:"),
    st.Page("pages/judge.py", title="Judge", icon=":material/gavel:"),
    st.Page("pages/export.py", title="Export", icon=":material/download:"),
]
nav = st.navigation(PAGES)
engine = state.engine()


def _run_label(run: store.RunInfo) -> str:
    parts = [run.name, run.model, run.language]
    return f"#{run.id} " + " · ".join(p for p in parts if p) + f" ({run.n_rows} rows)"


def _on_pick() -> None:
    state.select_run(st.session_state["run_picker"])


with st.sidebar:
    runs = store.list_runs(engine)
    ids = [r.id for r in runs]
    wanted = st.query_params.get(state.RUN_PARAM) or st.session_state.get("run_id")
    try:
        wanted = int(wanted) if wanted is not None else None
    except ValueError:
        wanted = None
    if wanted not in ids:
        if wanted is not None:
            st.warning(f"Run {wanted} does not exist; showing the newest run.")
        wanted = ids[0] if ids else None
    if wanted is not None:
        state.select_run(wanted)
        labels = {r.id: _run_label(r) for r in runs}
        st.session_state["run_picker"] = wanted
        st.selectbox("Run", ids, key="run_picker", format_func=labels.__getitem__, on_change=_on_pick)
    st.text_input(
        "Reviewer name", key="reviewer_name", bind="query-params",
        help="Marks in the review queue are saved under this name.",
    )  # fmt: skip
    url = database_url()
    st.caption("Database")
    st.code(url.replace("sqlite:///", "") if url.startswith("sqlite") else url.split("@")[-1], language=None)

nav.run()

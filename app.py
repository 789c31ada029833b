"""Entry point: navigation, the sidebar (run picker, reviewer, database), then the current page."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import streamlit as st

from scoring import store
from scoring.core.row_language import warm_up_scripts
from scoring.store import database_url, read_secrets
from ui import identity, queue_state, run_choice, sample_runs, state
from ui.display import md_escape

#: The tab's icon, served by this server: a ``:material/...:`` icon made every reviewer's browser
#: fetch it from a public font host (which fails offline and tells a third party who opened the tool).
PAGE_ICON = Path(__file__).resolve().parent / "static" / "favicon.png"

st.set_page_config(page_title="Answer review", page_icon=str(PAGE_ICON), layout="wide")

# Start here is the default page (the root URL); every other page keeps the url_path its file name
# gives it (/overview, /review, ...), so links to them and their ?run=, ?row= keep working.
PAGES = [
    st.Page("views/start.py", title="Start here", icon=":material/flag:", default=True),
    st.Page("views/overview.py", title="Overview", icon=":material/bar_chart:"),
    st.Page("views/upload.py", title="Upload", icon=":material/upload_file:"),
    st.Page("views/agreement.py", title="Agreement", icon=":material/compare_arrows:"),
    st.Page("views/compare.py", title="Compare", icon=":material/difference:"),
    st.Page("views/languages.py", title="Model x language", icon=":material/translate:"),
    st.Page("views/review.py", title="Review queue", icon=":material/rule:"),
    st.Page("views/reviewers.py", title="Reviewers", icon=":material/groups:"),
    st.Page("views/estimate.py", title="True accuracy", icon=":material/target:"),
    st.Page("views/matchers.py", title="Matchers", icon=":material/spellcheck:"),
    st.Page("views/adjudication.py", title="Adjudication", icon=":material/balance:"),
    st.Page("views/judge.py", title="Judge", icon=":material/gavel:"),
    st.Page("views/export.py", title="Export", icon=":material/download:"),
]
nav = st.navigation(PAGES, expanded=True)  # 13 pages: the default folds past 12 behind "View more"
#: The pages that apply the double-blind rule themselves (scoring.review.visibility): each shows a
#: viewer who may not see other reviewers' verdicts on a run everything else, and withholds those
#: verdicts and every figure built on them. Every other page, one added later included, is withheld
#: whole from that viewer on such a run (ui.identity.withhold_page): blind unless it says otherwise.
APPLY_BLIND_RULE = frozenset(
    {"Start here", "Upload", "Overview", "Agreement", "Compare", "Model x language", "Review queue"}
)


@st.cache_resource(show_spinner=False)
def _warm_up() -> threading.Thread:
    """Once per server process, in the background: the row-script kernel an upload runs (numba)."""
    return warm_up_scripts()


_warm_up()


def _on_pick() -> None:
    run_choice.select_run(st.session_state["run_picker"])


def _sidebar() -> None:
    """Run picker, who is reviewing, and the database (its password masked)."""
    with st.sidebar:
        run_id, warning = run_choice.resolve_run()
        if warning:
            st.warning(md_escape(warning))  # literal: it quotes the URL's ?run= text
        if run_id is not None:
            runs = run_choice.known_runs()
            labels = {r.id: store.run_label(r) for r in runs}
            st.session_state["run_picker"] = run_id
            st.selectbox("Run", list(labels), key="run_picker", format_func=labels.__getitem__, on_change=_on_pick)
            sample_runs.sidebar_toggle()
        user = identity.signed_in_user()
        if user:
            st.text(f"Signed in as {user}")
            st.button("Log out", on_click=st.logout, key="logout")
        elif "auth" in read_secrets():
            st.button("Log in to review", on_click=st.login, key="login", type="primary")
        identity.identity_panel()
        identity.keep_reviewer_in_url()
        url = database_url()
        st.caption("Database")
        st.code(store.display_url(url), language=None, wrap_lines=True)  # host and database in full, wrapped


st.session_state[identity.SCRIPT_RUNS] = st.session_state.get(identity.SCRIPT_RUNS, 0) + 1
try:
    _sidebar()
    if nav.title != "Review queue":
        queue_state.leave_queue()
    # One rule decides what this viewer may see (read once for this page run): the page applies it,
    # or, if it does not say it does, it is withheld whole on a run under double-blind review.
    if not identity.withhold_page(nav.title, run_choice.selected_run(), nav.title in APPLY_BLIND_RULE):
        nav.run()
except Exception as exc:  # a database failure is a message that names it, never a traceback
    found = store.describe_failure(exc)
    if found is None:
        raise
    if found.outage:  # the server stopped or the network went: say so, keep what is on screen
        st.error(state.UNREACHABLE)
        st.session_state["db_unreachable"] = True
    else:  # damaged, too new, full, refused: waiting will not help; say what will
        st.error(md_escape(found.message))  # literal: a damaged run's message quotes its uploaded name
if state.unreachable():
    st.sidebar.error("Database unreachable: nothing is saved until it is back.")


@st.cache_resource(show_spinner=False)
def _freeze_start_heap() -> bool:
    """Once per server process, after its first page: what every later run shares (modules,
    Streamlit, Plotly, numba) is left out of the full collection Streamlit runs after each script
    run (``runner.postScriptGC``), which walked all of it again after every click and key press."""
    gc.freeze()
    return True


_freeze_start_heap()

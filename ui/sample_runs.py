"""The bundled sample runs on the pages: the sidebar's toggle that shows them beside the team's own
runs (hidden by default, :func:`scoring.store.shown_runs`), and Start here's one button that removes
them all for good in one click (``python -m scoring runs add-samples`` loads them again). Only our
own words and run ids are shown here."""

from __future__ import annotations

import streamlit as st

from scoring import store
from ui import run_choice, state

NOTICE = "samples_notice"
#: How to bring the samples back (removal is one click, so it must be undoable).
ADD_AGAIN = "python -m scoring runs add-samples"


def sidebar_toggle() -> None:
    """ "Show the sample runs" while the database holds samples beside runs of the team's own."""
    listed = run_choice.listed_runs()
    samples = sum(1 for r in listed if r.sample)
    if samples and samples < len(listed):
        st.toggle(
            run_choice.SHOW_SAMPLES_LABEL,
            key=run_choice.SHOW_SAMPLES,
            help=f"The {samples} bundled sample runs are left out of every run list and table while the "
            "database holds runs of your own. Remove them for good on Start here.",
        )


def _selected_is_sample() -> bool:
    chosen = st.session_state.get("run_id")
    return any(r.id == chosen and r.sample for r in run_choice.listed_runs())


def removal_box() -> None:
    """Start here's box: how many sample runs the database holds, and one button that removes them
    all (no confirmation: the samples are the tool's, and one command loads them again); the
    sentence saying what it did after the rerun."""
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        st.toast(notice, icon=":material/check_circle:", duration="long")
        st.success(notice)
    samples = store.sample_runs(state.engine())
    if not samples:
        return
    count = len(samples)
    hidden = bool(run_choice.hidden_samples())
    with st.container(border=True, key="start_samples"):
        st.subheader("Sample runs")
        st.text(
            f"This database holds {count} sample runs, bundled with the tool and loaded on its first start so "
            "every page has something to show. "
            + (
                "They are hidden from every run list and table while it holds runs of your own "
                f'("{run_choice.SHOW_SAMPLES_LABEL}" in the sidebar shows them). '
                if hidden
                else ""
            )
            + "The button deletes them all for good (the verdicts given in them stay in the verdict log); "
            f"they are not loaded again unless you ask: {ADD_AGAIN}."
        )
        if st.button(f"Remove the {count} sample runs", key="remove_samples", icon=":material/delete_sweep:"):
            if _selected_is_sample():  # the page moves to the newest run left
                st.session_state.pop("run_id", None)
                st.query_params.pop(run_choice.RUN_PARAM, None)
            st.session_state[NOTICE] = store.removed_sentence(store.remove_samples(state.engine()))
            run_choice.forget_runs()
            st.rerun()

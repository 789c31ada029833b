"""The run's review guidelines on the pages: read above the review queue, written on Adjudication.

Plain text only (``st.text``): guidelines are typed by people, and Markdown would fetch images
and follow links in reviewers' browsers. Labels here are fixed strings, never the user's text.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from scoring import review, store
from ui.display import alert

_FEEDBACK = "adj_guidelines_feedback"


def show_for_reviewer(engine: Engine, run_id: int, reviewer: str) -> None:
    """The guidelines above the queue: opened the first time this reviewer meets this version
    (remembered in the database by :func:`scoring.review.guidelines_to_show`), collapsed after."""
    try:
        shown = review.guidelines_to_show(engine, run_id, reviewer or None)
    except store.DatabaseError:
        return  # the queue below says the database is unreachable
    if shown is None:
        return
    label = (
        "Review guidelines for this run (new for you: please read)"
        if shown.expanded
        else ("Review guidelines for this run")
    )
    with st.expander(label, expanded=shown.expanded):
        st.text(shown.text)
        st.text(shown.byline)


def _save(engine: Engine, run_id: int, by: str, key: str) -> None:
    """Button callback: save what the text area holds with this click (its session value)."""
    try:
        line = review.save_guidelines(engine, run_id, str(st.session_state.get(key) or ""), by)
    except (ValueError, store.DatabaseError) as exc:  # refused, too long, no name; the database
        st.session_state[_FEEDBACK] = ("error", review.guidelines.not_saved(exc))
        return
    st.session_state[_FEEDBACK] = ("success", line)


def _reuse(engine: Engine, run_id: int, by: str, key: str) -> None:
    """Button callback: copy the last run's guidelines here, saved at once, into the text area too."""
    try:
        text, line = review.reuse_guidelines(engine, run_id, by)
    except (ValueError, store.DatabaseError) as exc:
        st.session_state[_FEEDBACK] = ("error", review.guidelines.not_saved(exc))
        return
    st.session_state[key] = text
    st.session_state[_FEEDBACK] = ("success", line)


def editor(engine: Engine, run_id: int, adjudicator: str) -> None:
    """The adjudicator's editor: a text area, "Save guidelines", and "Reuse the last run's
    guidelines" when another run has different ones. Opened while the run has none."""
    key = f"adj_guidelines_{run_id}"
    try:
        if key not in st.session_state:
            st.session_state[key] = review.guidelines.current_text(engine, run_id)
        offer = review.reuse_offer(engine, run_id)
    except store.DatabaseError as exc:
        alert("error", review.guidelines.not_saved(exc, "The guidelines cannot be read"))
        return
    feedback = st.session_state.pop(_FEEDBACK, None)
    if feedback is not None:
        alert(*feedback)
    opened = feedback is not None or not st.session_state[key]
    with st.expander("Review guidelines for this run (every reviewer sees them above the queue)", expanded=opened):
        st.text_area(
            "Guidelines (plain text: Markdown, links and HTML show exactly as typed)",
            key=key,
            height=200,
            help=f"At most {review.GUIDELINES_MAX_CHARS:,} characters. Reviewers see them opened the first "
            "time, collapsed afterwards; a changed text opens again.",
        )
        c1, c2 = st.columns(2)
        c1.button(
            "Save guidelines",
            key="adj_guidelines_save",
            type="primary",
            on_click=_save,
            args=(engine, run_id, adjudicator, key),
        )
        if offer is not None:
            c2.button(
                "Reuse the last run's guidelines",
                key="adj_guidelines_reuse",
                on_click=_reuse,
                args=(engine, run_id, adjudicator, key),
            )
            st.text(offer)

"""Adjudication: an adjudicator decides the items whose reviewers disagree.

The decision becomes the row's final verdict (source "adjudicated"); the reviewers' verdicts and
every decision stay in the history and in the export. Who may adjudicate comes from
configuration (REVIEW_ADJUDICATORS); without it everyone may, as on one machine. Adjudicators also
write the run's review guidelines here (:mod:`ui.guidelines_panel`), which reviewers read above the queue.
"""

from __future__ import annotations

import streamlit as st

from scoring import review, store
from scoring.core.errors import NotSaved
from ui import guidelines_panel as guidelines
from ui import identity, run_choice, state
from ui.display import alert, md_escape, show_row
from ui.tables import show_table

run = run_choice.require_run()
engine = state.engine()
frame = state.scored(run.id)
st.title(md_escape(f"Adjudication: {run.name}"))
name = identity.reviewer()
config = identity.identity_config()
if not name:
    st.warning("Say who you are in the sidebar to adjudicate: every decision is saved under your name.")
    st.stop()
if not config.may_adjudicate(name):
    alert("error", f"{name} is not an adjudicator here (REVIEW_ADJUDICATORS): the decisions are theirs.")
    st.stop()
guidelines.editor(engine, run.id, name)

show_decided = st.toggle("Show decided items too", key="adj_decided")
table = review.adjudication_queue(frame, engine, include_decided=show_decided)
waiting = int((table["decision"] == "").sum())
st.text(f"Waiting for a decision: {waiting} item(s) of this run where reviewers disagree.")
for kind, text in st.session_state.pop("adj_feedback", []):
    alert(kind, text)
if table.empty:
    st.info("Nothing to adjudicate: no item of this run has reviewers who disagree.")
    st.stop()

labels = {
    int(r.row_idx): f"Row {int(r.row_idx) + 1}"
    + (f" (decided: {r.decision})" if r.decision else "")
    + (" (you marked it)" if review.party_to(f"{r.correct_by};{r.wrong_by}", name) else "")
    for r in table.itertuples(index=False)
}
row_idx = st.selectbox("Item", list(labels), format_func=labels.__getitem__, key="adj_row")
row = frame.iloc[row_idx]
key = str(row["item_key"])
st.text(f"Row {row_idx + 1} of the run   Domain: {row['Domain']}")
show_row(row)
st.subheader("The reviewers' verdicts")
verdicts = review.current_verdicts(engine, [key])
show_table(verdicts[["reviewer", "verdict", "reason", "note", "reviewed_at"]], key="adj_verdicts")
own = review.own_verdict_in(verdicts, name)
if own is not None and not review.adjudicate_own_allowed():
    alert("info", review.own_refusal(own))  # in place of the note and the Decide buttons
    st.stop()
if own is not None:
    alert("warning", review.own_warning(own))
note_key = f"adj_note_{key[:12]}"
st.text_input("Note on the decision (optional)", key=note_key)


def _decide(decision: str, item_key: str, row_no: int, note_key: str) -> None:
    """Save the decision with the note as the browser sent it with this click: read from the
    session state, which already holds the value typed (no Enter needed); the page's variables
    are the previous script run's."""
    note = str(st.session_state.get(note_key) or "")
    try:
        review.record_adjudication(engine, item_key, run.id, name, decision, note)
    except (store.DatabaseError, NotSaved, review.OwnDecisionRefused) as exc:
        st.session_state["adj_feedback"] = [("error", f"Not saved: {exc}")]
        return
    st.session_state["adj_feedback"] = [("success", f"Saved: row {row_no} decided {decision} by {name}.")]


c1, c2 = st.columns(2)
args = (key, row_idx + 1, note_key)
c1.button("Decide: correct", key="adj_correct", type="primary", on_click=_decide, args=("correct", *args))
c2.button("Decide: wrong", key="adj_wrong", on_click=_decide, args=("wrong", *args))

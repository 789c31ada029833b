"""The review queue: one row at a time, marked Correct or Wrong, saved the moment it is given."""

from __future__ import annotations

import streamlit as st

from scoring import verdicts
from scoring.protocols import BUCKETS
from ui import state
from ui.display import show_row, verdict_caption

run = state.require_run()

engine = state.engine()
frame = state.scored(run.id)
summary = state.summary(run.id)
reviewer = state.reviewer()

st.title(f"Review queue: {run.name}")
if not reviewer:
    st.warning("Type your name in the sidebar (Reviewer name) to mark rows: every mark is saved under it.")

c1, c2, c3 = st.columns([2, 2, 1])
bucket = c1.selectbox("Scope (bucket)", list(BUCKETS), index=list(BUCKETS).index("overlap_only"), key="q_bucket")
domain = c2.selectbox("Domain", ["All domains", *summary["domains"]], key="q_domain")
sample = c3.number_input("Random sample (0 = all)", 0, 10_000, 0, step=10, key="q_sample",
                         help="Audit a metric: review a reproducible random sample of the bucket.")
blind = st.toggle("Blind review (hide metric verdicts and judge suggestion)", key="q_blind")
scope_domain = None if domain == "All domains" else domain


def _advance(item_key: str | None = None) -> None:
    st.session_state["q_current"] = item_key
    st.session_state["q_note_rev"] = st.session_state.get("q_note_rev", 0) + 1


def _act(action: str, key: str) -> None:
    """Button callback: write the mark to the database first, then move the queue on."""
    rev = st.session_state.get("q_note_rev", 0)
    reason = st.session_state.get(f"q_reason_{rev}") or ""
    note = st.session_state.get(f"q_note_{rev}") or ""
    if action in verdicts.VERDICTS:
        verdicts.record_mark(engine, key, run.id, reviewer, action, reason, note)
        _advance()
    elif action == "skip":
        verdicts.record_skip(engine, key, run.id, reviewer)
        _advance()
    else:
        undone = verdicts.undo_last(engine, reviewer, run_id=run.id)
        st.session_state["q_undo_empty"] = undone is None
        _advance(undone)


@st.fragment
def queue_view() -> None:
    """Only this fragment reruns on a mark, and it touches one row."""
    scope = state.queue_scope(run.id, bucket, scope_domain, sample or None)
    prog = verdicts.scope_progress(scope, engine, reviewer or None)
    done, total = int(prog.iloc[-1]["reviewed"]), int(prog.iloc[-1]["n"])
    st.progress(done / total if total else 1.0, text=f"Reviewed {done} of {total} in this scope")
    with st.expander("Progress per domain"):
        st.dataframe(prog, hide_index=True)
    first = verdicts.next_in_queue(scope, engine, reviewer)
    if first is None:
        st.info("No rows in this scope.")
        return
    current_key = st.session_state.get("q_current")
    positions = frame.index[frame["item_key"] == current_key] if current_key else []
    pos = int(positions[0]) if len(positions) else first
    row = frame.loc[pos]
    mine = verdicts.current_verdicts(engine, [row["item_key"]])
    mine = mine[mine["reviewer"] == reviewer] if reviewer else mine.iloc[0:0]
    st.text(f"Row {int(row['row_idx']) + 1} of the run   Domain: {row['Domain']}")
    if not blind:
        st.text(verdict_caption(row))
        suggestion = state.judge_suggestion(row["item_key"])
        if suggestion:
            st.text(f"Judge suggests: {suggestion}")
    if len(mine):
        st.text(f"Your current verdict: {mine.iloc[0]['verdict']}")
    show_row(row)
    rev = st.session_state.get("q_note_rev", 0)
    r1, r2 = st.columns([1, 2])
    r1.selectbox("Reason (optional)", ["", *verdicts.REASONS], key=f"q_reason_{rev}")
    r2.text_input("Note (optional)", key=f"q_note_{rev}")
    b1, b2, b3, b4 = st.columns(4)
    disabled = not reviewer
    key = row["item_key"]
    b1.button("Correct (Y)", shortcut="Y", disabled=disabled, key="q_yes", type="primary",
              on_click=_act, args=("correct", key))
    b2.button("Wrong (N)", shortcut="N", disabled=disabled, key="q_no", on_click=_act, args=("wrong", key))
    b3.button("Skip (S)", shortcut="S", disabled=disabled, key="q_skip", on_click=_act, args=("skip", key))
    b4.button("Undo (U)", shortcut="U", disabled=disabled, key="q_undo", on_click=_act, args=("undo", key))
    if st.session_state.pop("q_undo_empty", False):
        st.text("Nothing to undo.")


queue_view()

"""Several reviewers: where they disagree, and how well they agree with each other and the metrics."""

from __future__ import annotations

import streamlit as st

from scoring import verdicts
from ui import state
from ui.display import agreement_block

run = state.require_run()

engine = state.engine()
frame = state.scored(run.id)
st.title(f"Reviewers: {run.name}")

current = state.current_verdicts(run.id)
if current.empty:
    st.info("No human verdicts on this run yet: mark rows in the Review queue.")
    st.stop()

per_reviewer = current.groupby("reviewer")["verdict"].value_counts().unstack(fill_value=0)
st.subheader("Verdicts per reviewer")
st.dataframe(per_reviewer, key="per_reviewer")


st.subheader("Conflicts")
conflicts = verdicts.conflicts_in(current)
if conflicts.empty:
    st.text("No item has conflicting verdicts.")
else:
    where = state.queue_scope(run.id, None, None, None).positions  # item key -> rows, built once per run
    rows = frame.iloc[[pos for key in conflicts["item_key"] for pos in where.get(key, [])]]
    shown = conflicts.merge(rows[["item_key", "row_idx", "Domain", "question", "answer", "response"]],
                            on="item_key", how="left")
    st.dataframe(shown, hide_index=True, key="conflicts")

st.subheader("Reviewer pairs")
pairs = verdicts.reviewer_agreement(current)
if not pairs:
    st.text("Agreement between reviewers needs at least two reviewers on the same items.")
for i, pair in enumerate(pairs):
    agreement_block(pair, pair.a, pair.b, key=f"pair_{i}")

st.subheader("Human verdict vs each metric")
human_vs_metric = state.verdict_summary(run.id)["human_vs_metric"]
for col, name in (("exact_correct", "exact substring"), ("overlap_correct", "word overlap")):
    agreement_block(human_vs_metric[col], "human", name, key=f"hm_{col}")

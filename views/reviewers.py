"""Several reviewers: where they disagree, and how well they agree with each other and the metrics.

One unit on this page: distinct items (a question, golden answer and response). An item that
appears on several rows of the run takes one mark for all its copies, so those extra rows are
shown as "duplicate rows", never counted as more items (the queue's progress counts rows).

Withheld whole by app.py, during double-blind review, from a reviewer who may not see the run's
verdicts (:mod:`scoring.review.visibility`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from scoring import review
from ui import run_choice, state, verdicts
from ui.display import agreement_block, md_escape
from ui.tables import show_table

run = run_choice.require_run()

frame = state.scored(run.id)
st.title(md_escape(f"Reviewers: {run.name}"))

current = verdicts.current_verdicts(run.id)
if current.empty:
    st.info("No human verdicts on this run yet: mark rows in the Review queue.")
    st.stop()

where = state.rows_of_item(run.id)  # item key -> row positions, built once per run
rows_per_item = current["item_key"].map(lambda key: len(where.get(key, ())))

waiting = review.waiting_count(frame, state.engine())
st.text(f"Waiting for adjudication: {waiting} item(s) where reviewers disagree and no adjudicator has decided.")
if waiting:
    st.page_link("views/adjudication.py", label="Open the Adjudication page", icon=":material/balance:")

st.subheader("Verdicts per reviewer")
st.caption(
    "Counts are distinct items. An item that appears on several rows of the run is marked once for all "
    "its rows; those extra rows are listed as duplicate rows. The review queue's progress counts rows: "
    "items + duplicate rows."
)
per_reviewer = (
    current.groupby("reviewer")["verdict"]
    .value_counts()
    .unstack(fill_value=0)
    .reindex(columns=list(review.VERDICTS), fill_value=0)
)
per_reviewer["items"] = per_reviewer.sum(axis=1)
per_reviewer["duplicate rows"] = (rows_per_item - 1).groupby(current["reviewer"]).sum()
carried = pd.Series(False, index=current.index)
if "run_id" in current.columns:  # the run each mark was given in (newer verdicts module)
    made_in = pd.to_numeric(current["run_id"], errors="coerce")
    carried = made_in.notna() & (made_in != run.id)
    per_reviewer["marked in another run"] = carried.groupby(current["reviewer"]).sum().astype("int64")
show_table(per_reviewer, hide_index=False, key="per_reviewer")

copies = rows_per_item.groupby(current["item_key"]).first()  # rows of the run per item with a verdict
items, covered, shared = len(copies), int(copies.sum()), int((copies > 1).sum())
st.text(
    f"All reviewers together: {items} item(s) with a verdict, on {covered} row(s) of this run; "
    f"{shared} of those items appear on more than one row."
)
if carried.any():
    lines = []
    for name, group in current[carried].groupby("reviewer", sort=True):
        runs = group["run_id"].astype("int64").value_counts().sort_index()
        where_from = ", ".join(f"{count} marked in run #{rid}" for rid, count in runs.items())
        lines.append(f"{name}: {len(group)} verdict(s) carried over from identical rows of other runs ({where_from})")
    st.text("\n".join(lines))

st.subheader("Conflicts")
conflicts = review.conflicts_in(current)
if conflicts.empty:
    st.text("No item has conflicting verdicts.")
else:
    base = {"item_key", "correct_by", "wrong_by", "reviewed_at"}
    fixed = [
        "question",
        "golden answer",
        "response",
        "Domain",
        "rows",
        "correct by",
        "wrong by",
        "last marked",
        "row_idx",
        "item_key",
    ]
    reviewers = [c for c in conflicts.columns if c not in base]
    positions = [where.get(key, []) for key in conflicts["item_key"]]
    first = frame.iloc[[p[0] for p in positions]]
    shown = pd.DataFrame(
        {
            "question": first["question"].to_numpy() if "question" in first else "",
            "golden answer": first["answer"].to_numpy(),
            "response": first["response"].to_numpy(),
            "Domain": first["Domain"].to_numpy(),
            "rows": [", ".join(str(int(frame["row_idx"].iat[p]) + 1) for p in ps) for ps in positions],
            "correct by": conflicts["correct_by"].to_numpy(),
            "wrong by": conflicts["wrong_by"].to_numpy(),
        }
    )
    for name in reviewers:  # one column per reviewer involved, holding that reviewer's verdict
        shown[name if name not in fixed else f"{name} (reviewer)"] = conflicts[name].to_numpy()
    shown["last marked"] = conflicts["reviewed_at"].to_numpy()
    shown["row_idx"] = first["row_idx"].to_numpy()  # first row, 0-based: for lookups, not shown
    shown["item_key"] = conflicts["item_key"].to_numpy()
    n_rows = sum(len(p) for p in positions)
    st.text(
        f"{len(shown)} conflict(s): items whose reviewers' current verdicts differ"
        + (f" ({n_rows} rows, counting duplicate rows)." if n_rows != len(shown) else ".")
    )
    show_table(
        shown,
        key="conflicts",
        column_config={"row_idx": None, "item_key": None, "rows": st.column_config.TextColumn("row(s)")},
    )

st.subheader("Reviewer pairs")
pairs = review.reviewer_agreement(current)
if not pairs:
    st.text("Agreement between reviewers needs at least two reviewers on the same items.")
for i, pair in enumerate(pairs):
    agreement_block(pair, pair.a, pair.b, key=f"pair_{i}")

st.subheader("Human verdict vs each metric")
human_vs_metric = verdicts.verdict_summary(run.id)["human_vs_metric"]
for col, name in (("exact_correct", "exact substring"), ("overlap_correct", "word overlap")):
    agreement_block(human_vs_metric[col], "human", name, key=f"hm_{col}")

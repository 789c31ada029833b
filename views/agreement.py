"""Where exact substring and word overlap disagree: the 2x2, buckets per domain, and the rows."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from scoring.protocols import BUCKETS, missing_golden_words
from ui import charts, state
from ui.display import agreement_block, show_row, verdict_caption

PAGE_SIZE = 10

run = state.require_run()

summary = state.summary(run.id)
combined = summary["buckets"]["combined"]
total = sum(combined.values()) or 1
st.title(f"Agreement: {run.name}")

st.subheader("Exact substring vs word overlap")
grid = pd.DataFrame(
    {
        "overlap passes": [combined["both_pass"], combined["overlap_only"]],
        "overlap fails": [combined["exact_only"], combined["both_fail"]],
    },
    index=["exact passes", "exact fails"],
)
shares = grid.map(lambda v: f"{v} ({v / total:.1%})")
st.dataframe(shares, key="two_by_two")
test = summary["mcnemar"]
st.text(
    f"McNemar exact test: exact_only = {test.exact_only}, overlap_only = {test.overlap_only}, "
    f"p = {test.p_value:.4g}"
)
st.plotly_chart(charts.bucket_figure(summary["buckets"]), key="bucket_chart")
st.dataframe(pd.DataFrame(summary["buckets"]).T.rename_axis("domain"), key="bucket_table")

st.subheader("Precision of each metric on reviewed rows")
decided = state.verdict_summary(run.id)
precision = decided["precision"]
st.dataframe(
    pd.DataFrame(
        [
            {"metric": name, "passes reviewed": reviewed, "confirmed correct": confirmed,
             "precision": None if value is None else round(value, 4)}
            for name, (confirmed, reviewed, value) in precision.items()
        ]
    ),
    hide_index=True,
    key="precision",
)
comparisons = decided["judge_comparisons"]
if comparisons:
    st.subheader("Judge vs the metrics and the human verdicts")
    for i, pair in enumerate(comparisons):
        agreement_block(pair, pair.a, pair.b, key=f"judge_pair_{i}")

st.subheader("Rows")
left, right = st.columns(2)
bucket = left.selectbox("Bucket", list(BUCKETS), index=list(BUCKETS).index("overlap_only"), key="agree_bucket")
domain = right.selectbox("Domain", ["All domains", *summary["domains"]], key="agree_domain")
frame = state.scored(run.id)
positions = state.queue_scope(run.id, bucket, None if domain == "All domains" else domain, None).row_idx
pages = max(1, -(-len(positions) // PAGE_SIZE))
page = st.number_input(f"Page (of {pages}; {len(positions)} rows)", 1, pages, 1, key="agree_page")
for pos in positions[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
    row = frame.iloc[int(pos)]
    with st.container(border=True):
        st.text(f"Row {int(row['row_idx']) + 1}   " + verdict_caption(row))
        show_row(row)
        missing = missing_golden_words(str(row["answer"]), str(row["response"]))
        st.text("Missing golden words: " + (", ".join(missing) if missing else "none"))

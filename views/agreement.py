"""Where exact substring and word overlap disagree: the 2x2, buckets per domain, and the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from scoring.core.formatting import p_value, percent, share
from scoring.core.protocols import BUCKETS, missing_golden_words
from scoring.core.search import search_rows
from scoring.store import database_url
from ui import charts, identity, judge_state, queue_state, run_choice, state, verdicts
from ui.display import agreement_block, md_escape, show_row, verdict_caption
from ui.tables import bucket_option, show_table

PAGE_SIZE = 10
ALL_BUCKETS = "All buckets"
ALL_DOMAINS = "All domains"
REVIEW_PAGE = "views/review.py"


@st.cache_resource(show_spinner=False, max_entries=64)
def _agreement_hits(url: str, run_id: int, query: str) -> np.ndarray:
    """Positions of the run's rows matching ``query`` (shared between sessions: read-only).

    The run's search index is the one the review queue's "My verdicts" uses too, built once per
    run (about 0.15 s per 100k rows); a new query then costs one scan of it.
    """
    hits = search_rows(state.search_index(run_id), query)
    hits.flags.writeable = False
    return hits


def _first_page() -> None:
    """A new bucket, domain or search starts the browser at its first page."""
    st.session_state["agree_page"] = 1


run = run_choice.require_run()

summary = state.summary(run.id)
combined = summary["buckets"]["combined"]
total = sum(combined.values())
st.title(md_escape(f"Agreement: {run.name}"))

st.subheader("Exact substring vs word overlap")
grid = pd.DataFrame(
    {
        "overlap passes": [combined["both_pass"], combined["overlap_only"]],
        "overlap fails": [combined["exact_only"], combined["both_fail"]],
    },
    index=["exact passes", "exact fails"],
)
shares = grid.map(lambda v: f"{v} ({share(v, total)})")
show_table(shares, hide_index=False, key="two_by_two")
test = summary["mcnemar"]
st.text(
    f"McNemar exact test: exact_only = {test.exact_only}, overlap_only = {test.overlap_only}, {p_value(test.p_value)}"
)
st.plotly_chart(charts.bucket_figure(summary["buckets"]), key="bucket_chart")
show_table(pd.DataFrame(summary["buckets"]).T.rename_axis("domain"), hide_index=False, key="bucket_table")
if "buckets_by_language" in summary:
    st.subheader("By language")
    st.text(f"The run's rows are in {len(summary['languages'])} languages: " + ", ".join(summary["languages"]) + ".")
    st.plotly_chart(charts.bucket_figure(summary["buckets_by_language"]), key="bucket_language_chart")
    by_language = pd.DataFrame(summary["buckets_by_language"]).T.rename_axis("language")
    show_table(by_language, hide_index=False, key="bucket_language_table")

if identity.others_hidden(run.id):  # double-blind: nothing built on reviewers' verdicts, no row's verdicts
    st.info(identity.BLIND_NOTE + " The precision on reviewed rows and the rows themselves are hidden until then.")
    st.stop()

st.subheader("Precision of each metric on reviewed rows")
decided = verdicts.verdict_summary(run.id)
precision = decided["precision"]
st.caption("Precision: the share of a metric's passes that a reviewer confirmed correct (— when none was reviewed).")
show_table(
    pd.DataFrame(
        [
            {"metric": name, "passes reviewed": reviewed, "confirmed correct": confirmed, "precision": percent(value)}
            for name, (confirmed, reviewed, value) in precision.items()
        ]
    ),
    key="precision",
)
comparisons = decided["judge_comparisons"]
if comparisons:
    st.subheader("Judge vs the metrics and the human verdicts")
    st.text(judge_state.judge_line(run.id))
    for i, pair in enumerate(comparisons):
        agreement_block(pair, pair.a, pair.b, key=f"judge_pair_{i}")

st.subheader("Rows")
left, middle, right = st.columns([1, 1, 2])
bucket = left.selectbox(
    "Bucket",
    [ALL_BUCKETS, *BUCKETS],
    index=1 + list(BUCKETS).index("overlap_only"),
    key="agree_bucket",
    on_change=_first_page,
    format_func=lambda b: f"{b}: {total:,}" if b == ALL_BUCKETS else bucket_option(b, combined),
)
domain = middle.selectbox("Domain", [ALL_DOMAINS, *summary["domains"]], key="agree_domain", on_change=_first_page)
query = right.text_input(
    "Search question, golden answer and response, or a row number",
    key="agree_search",
    placeholder="e.g. Ganga, नई दिल्ली, #12",
    help="Case-insensitive; the text is matched literally. #12 opens row 12 only; a bare 12 also finds the text.",
    on_change=_first_page,
).strip()

frame = state.scored(run.id)
scope = queue_state.queue_scope(
    run.id, None if bucket == ALL_BUCKETS else bucket, None if domain == ALL_DOMAINS else domain, None
).row_idx
scope = np.sort(scope)  # browsing follows the file's order (the queue's is a random permutation)
positions = scope
if query:
    hits = _agreement_hits(database_url(), run.id, query)
    matched = np.zeros(len(frame), dtype=bool)
    matched[hits] = True
    positions = scope[matched[scope]]  # the scope's order, narrowed to the matches
    where = "in this bucket and domain" if len(scope) < len(frame) else "in the run"
    note = f"{len(positions)} of {len(scope)} rows {where} match the search"
    if len(positions) < len(hits):
        widen = " and ".join(a for a, chosen in ((ALL_BUCKETS, bucket), (ALL_DOMAINS, domain)) if a != chosen)
        note += f"; {len(hits)} rows of the whole run match (choose {widen} to see them)"
    st.text(note + ".")

pages = max(1, -(-len(positions) // PAGE_SIZE))
if not 1 <= st.session_state.get("agree_page", 1) <= pages:
    st.session_state["agree_page"] = 1  # the run changed in the sidebar, or fewer rows match
page = st.number_input(f"Page (of {pages}; {len(positions)} rows)", 1, pages, key="agree_page")
for pos in positions[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]:
    row = frame.iloc[int(pos)]
    number = int(row["row_idx"]) + 1
    with st.container(border=True):
        st.text(f"Row {number}   " + verdict_caption(row))
        show_row(row)
        missing = missing_golden_words(str(row["answer"]), str(row["response"]))
        st.text("Missing golden words: " + (", ".join(missing) if missing else "none"))
        if st.button(f"Open row {number} in the review queue", key=f"agree_open_{number}", icon=":material/rule:"):
            st.switch_page(REVIEW_PAGE, query_params={"run": str(run.id), "row": str(number)})

"""Per-domain accuracy under each protocol, with 95% Wilson intervals, as a chart and a table."""

from __future__ import annotations

import streamlit as st

from scoring.core.formatting import interval, percent
from ui import charts, state
from ui.display import alert

run = state.require_run()

st.title(f"Overview: {run.name}")
st.caption(f"Run #{run.id} · {run.n_rows} rows · model {run.model or '?'} · language {run.language or '?'}")
for _kind, text in st.session_state.get("upload_notes", {}).get(run.id, []):
    alert("warning", text)

# During double-blind review a reviewer sees no figure built on other reviewers' verdicts.
humans = not state.others_hidden(run.id)
series, adjudicated = charts.accuracy_series(run.id, humans=humans)
st.plotly_chart(charts.accuracy_figure(series, adjudicated), key="accuracy_chart")
combined = {name: rows[-1] for name, rows in series.items()}
cols = st.columns(len(combined))
for col, (name, row) in zip(cols, combined.items()):
    col.metric(f"{name} (combined)", percent(row.accuracy), help=f"{row.correct} of {row.n}; "
               f"95% CI {interval(row.ci_low, row.ci_high)}")
table = charts.accuracy_frame(series)
columns = [c for c in table.columns if c.endswith("accuracy")]
if adjudicated:
    total = adjudicated[-1]
    st.text(
        f"Adjudicated (human verdicts, else the automatic rule): {total.pending} of {total.n} rows pending; "
        f"{percent(total.accuracy_low)} if every pending row is wrong, "
        f"{percent(total.accuracy_high)} if every one is right."
    )
    table["Adjudicated pending"] = [r.pending for r in adjudicated]
    table["Adjudicated if pending right"] = [round(r.accuracy_high, 4) for r in adjudicated]
    columns.append("Adjudicated if pending right")
else:
    st.info(state.BLIND_NOTE + " The adjudicated accuracy is hidden until then.")
st.subheader("Per domain")
if adjudicated:
    st.caption("Accuracy in percent. Adjudicated accuracy counts pending rows as wrong; the last column counts "
               "them right.")  # fmt: skip
else:
    st.caption("Accuracy in percent.")
st.dataframe(charts.percent_style(table, columns), hide_index=True, key="accuracy_table")

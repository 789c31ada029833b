"""Matchers: which matcher agrees with people, per language. Leads with the recommendation in plain
words; the figures (precision, recall, agreement with their 95% intervals, rows to review) and the
method follow. Every figure is ``python -m scoring matchers``'s.

Withheld whole by app.py, during double-blind review, from a reviewer who may not see the run's
verdicts (:mod:`scoring.review.visibility`)."""

from __future__ import annotations

import streamlit as st

from scoring import store
from scoring.core.errors import InputError
from scoring.core.formatting import percent
from scoring.estimate.matcher_quality import METHOD
from scoring.match import CHRF_PARAMS, MATCHERS, NOT_STEMMED_NOTE, TITLES, chrf_threshold, target_precision
from ui import matchers_data, run_choice
from ui.display import alert, md_escape
from ui.tables import show_table

run = run_choice.require_run()
st.title(md_escape(f"Matchers: {run.name}"))
st.caption(md_escape(store.run_caption(run)))

on = matchers_data.switched_on(run.id)
st.subheader("Matchers switched on for this run")
st.text(
    "On: "
    + (", ".join(TITLES[m] for m in on) if on else "none (the spec's two metrics only)")
    + ". The report below compares them with the spec's two metrics."
)
with st.form("match_switch"):
    picked = st.multiselect(
        "Optional matchers", list(MATCHERS), default=list(on), format_func=TITLES.get, key="match_on"
    )
    if st.form_submit_button("Save the matchers for this run"):
        on = matchers_data.save(run.id, picked)
        alert("success", "Saved: " + (", ".join(TITLES[m] for m in on) if on else "no optional matcher") + ".")

c1, c2 = st.columns(2)
target = c1.number_input(
    "Precision the matcher must reach", 0.5, 1.0, float(target_precision()), 0.01, key="match_target"
)
threshold = c2.number_input("chrF threshold (0-100)", 0.0, 100.0, float(chrf_threshold()), 1.0, key="match_threshold")
try:
    found = matchers_data.report(run.id, float(threshold), on)
except InputError as exc:
    alert("error", f"The matchers cannot be measured for this run: {exc}")
    st.stop()

st.subheader("Recommendation")
for rec in found.recommendations(float(target)):
    alert("info" if rec.too_small or rec.matcher is None else "success", f"{rec.scope}: {rec.text}")

st.subheader("Each matcher against people")
st.text(f"{found.reviewed:,} reviewed rows of the run's random sample.")
table = found.table.select(
    "scope",
    "title",
    "rows",
    "reviewed",
    *[col for col in ("pass_share", "precision", "recall", "agreement")],
    "queue",
    "stemmed",
)
shown = table.to_pandas()
for name in ("precision", "recall", "agreement"):
    low, high = found.table[f"{name}_low"].to_list(), found.table[f"{name}_high"].to_list()
    shown[name] = [
        "—" if v is None else f"{percent(v)} [{percent(lo)}, {percent(hi)}]" if lo is not None else percent(v)
        for v, lo, hi in zip(shown[name], low, high)
    ]
shown["pass_share"] = [percent(v) for v in shown["pass_share"]]
shown["stemmed"] = ["" if v is None else ("yes" if v else "no") for v in found.table["stemmed"].to_list()]
show_table(
    shown.rename(
        columns={
            "title": "matcher",
            "pass_share": "passes",
            "precision": "precision (95%)",
            "recall": "recall (95%)",
            "agreement": "agreement (95%)",
            "queue": "rows to review",
        }
    )
)
with st.expander("How these figures are computed"):
    st.text(METHOD)
    st.text(NOT_STEMMED_NOTE)
    params = ", ".join(f"{k}={v}" for k, v in CHRF_PARAMS.items())
    st.text(f"chrF: sacrebleu's sentence chrF ({params}); correct when the score is at least the threshold.")

"""Per-domain accuracy under each protocol, with 95% Wilson intervals, as a chart and a table."""

from __future__ import annotations

import streamlit as st

from scoring import store
from scoring.core.formatting import interval, percent
from scoring.core.verdict_rules import AUTO_RULE_TEXT
from scoring.estimate import ACCURACY_METHOD
from scoring.estimate.evidence import TO_REVIEW, has_interval
from scoring.estimate.ppi import PPI_METHOD
from ui import charts, estimate_data, estimate_view, identity, judge_state, run_choice, state
from ui.display import alert, md_escape
from ui.tables import HOW, show_table

run = run_choice.require_run()

st.title(md_escape(f"Overview: {run.name}"))
st.caption(md_escape(store.run_caption(run)))
uploaded = run.id in st.session_state.get("upload_notes", {})  # saved from the Upload page in this session
notes = st.session_state.get("upload_notes", {}).get(run.id, [])
for _kind, text in (note for note in notes if note[0] == "warning"):
    alert("warning", text)
saved_line = " ".join(text for kind, text in notes if kind == "success")
# What an upload opened instead of saving (the same bytes or rows), a remembered mapping, restored work.
opened_line = " ".join(text for kind, text in notes if kind == "info")

chart = st.empty()
if st.session_state.get("overview_drawn") != run.id:
    # The first view of a run draws the metrics' chart at once, then redraws it with the
    # adjudicated and estimated figures, which take seconds on a million rows.
    chart.plotly_chart(charts.accuracy_figure(charts.metric_series(run.id), []))
    st.session_state["overview_drawn"] = run.id
# During double-blind review a reviewer sees no figure built on other reviewers' verdicts.
humans = not identity.others_hidden(run.id)
# The estimate's review order, on a thread while the verdicts are summed; a run just uploaded (its
# rows still in hand, nobody has reviewed it) ranks after its chart, whose work it would slow.
ranked = humans and not state.just_saved(run.id)
if ranked:
    estimate_data.start_ranking(run.id)
series, adjudicated = charts.accuracy_series(run.id, humans=humans)
# Raw metrics, adjudicated and the estimated true accuracy side by side (the estimate is kept per
# verdict revision: python -m scoring estimate's figures).
# A run nobody has reviewed can show no estimate: its chart is drawn before the figures are computed.
figs = estimate_data.figures(run.id) if humans and estimate_data.may_have_evidence(run.id) else None
# No number before its evidence: with no reviewed row of the random sample, no estimate at all.
evidence = figs is not None and estimate_data.has_evidence(figs)
comparison = figs.estimate.comparison() if figs is not None and evidence else None
# The judge-assisted estimate beside it when the judge has labelled the run (None otherwise).
judged = estimate_data.judged(figs) if figs is not None and evidence else None
judged_table = judged.comparison(figs.estimate.accuracy.table()) if judged is not None and figs is not None else None
figure = charts.accuracy_figure(series, adjudicated)
if comparison is not None:
    estimate_view.add_estimate(figure, comparison)
if judged_table is not None:
    estimate_view.add_judged(figure, judged_table)
# Drawn in its place at the top as soon as its figures are known, before the notes below it.
chart.plotly_chart(figure, key="accuracy_chart")
if humans and figs is None:
    figs = estimate_data.figures(run.id)  # the pilot's plan below (it ranks the rows if not started)
if uploaded:  # just saved (or opened): what to do next, with the buttons
    said = " ".join(line for line in (saved_line, opened_line) if line)
    alert(
        "success" if saved_line else "info",
        f"{said or 'Saved.'} Next: settle the rows the two metrics disagree on (triage), and "
        "review a random sample to estimate the true accuracy (two jobs: the queue's overlap-only "
        "scope, and the audit).",
    )
    for other, label in st.session_state.get("upload_runs", {}).get(run.id, []):  # the file's other models
        st.page_link(
            "views/overview.py",
            label=md_escape(f"Overview of run {label}"),
            query_params={"run": str(other)},
            icon=":material/bar_chart:",
        )
    waiting = estimate_data.overlap_waiting(run.id)
    if st.button(
        f"{waiting:,} rows need a verdict: open the queue",
        key="ov_triage",
        icon=":material/rule:",
        disabled=not waiting,
    ):
        st.switch_page(estimate_view.REVIEW_PAGE, query_params={"scope": "overlap_only", "run": str(run.id)})
if figs is not None and not evidence:
    estimate_view.pilot_prompt(figs, identity.reviewer(), "ov_pilot")
if "Judge" in series or judged_table is not None:
    # One rule for every judge figure here (the judge series, the judge-assisted estimate): name it.
    st.text(judge_state.judge_line(run.id))
combined = {name: rows[-1] for name, rows in series.items()}
cols = st.columns(len(combined) + (comparison is not None) + (judged_table is not None))
for col, (name, row) in zip(cols, combined.items()):
    col.metric(
        f"{name} (combined)",
        percent(row.accuracy),
        help=f"{row.correct} of {row.n}; 95% CI {interval(row.ci_low, row.ci_high)}",
    )
if comparison is not None:
    total = estimate_view.combined_row(comparison)
    if has_interval(total):
        cols[len(combined)].metric(
            "Estimated (combined)",
            percent(total["estimate"]),
            help=f"{estimate_view.ESTIMATE} from {total['reviewed']} reviewed rows of {total['rows']}; 95% CI "
            + interval(total["ci_low"], total["ci_high"]),
        )
    else:  # no figure before its evidence: what to review instead of a number
        cols[len(combined)].metric(
            "Estimated (combined)",
            "not yet",
            help=f"{estimate_view.ESTIMATE}: {total['reviewed']} reviewed rows of {total['rows']} give no 95% "
            "interval yet.",
        )
        st.text(f"Estimated true accuracy: none yet. {total[TO_REVIEW]} (True accuracy plans which rows.)")
    with st.expander(HOW):
        st.caption(
            md_escape(
                f"{estimate_view.ESTIMATE}: {ACCURACY_METHOD} The True accuracy page has the details "
                "and the review planner."
            )
        )
    drawn = figs.estimate.random_sample if figs is not None else None
    if drawn and (drawn["missing"] or drawn["by_hand"]):
        st.text(
            f"In the estimate: {drawn['in_estimate']:,} rows of the random sample; missing from it: "
            f"{drawn['missing']:,}; reviewed by hand, not in the estimate: {drawn['by_hand']:,}."
        )
if judged_table is not None and comparison is not None and has_interval(estimate_view.combined_row(judged_table)):
    j = estimate_view.combined_row(judged_table)
    cols[-1].metric(
        "Judge-assisted (combined)",
        percent(j["judge_estimate"]),
        help=f"95% CI {interval(j['judge_ci_low'], j['judge_ci_high'])}; the judge is worth "
        f"{max(0.0, j['effective_reviews'] - j['reviewed']):,.0f} reviews here",
    )
    st.text(estimate_view.judged_sentence(judged_table, estimate_view.combined_row(comparison)))
    with st.expander(HOW):
        st.caption(
            md_escape(f"{estimate_view.JUDGED} (judge labels: {figs.judge_config if figs else ''}): {PPI_METHOD}")
        )
table = charts.accuracy_frame(series)
columns = [c for c in table.columns if c.endswith("accuracy")]
if adjudicated:
    total = adjudicated[-1]
    st.text(
        f"Adjudicated (human verdicts, else the automatic rule): {total.pending} of {total.n} rows pending; "
        f"{percent(total.accuracy_low)} if every pending row is wrong, "
        f"{percent(total.accuracy_high)} if every one is right.\n{AUTO_RULE_TEXT}"
    )
    table["Adjudicated pending"] = [r.pending for r in adjudicated]
    table["Adjudicated if pending right"] = [round(r.accuracy_high, 4) for r in adjudicated]
    columns.append("Adjudicated if pending right")
else:
    st.info(identity.BLIND_NOTE + " The adjudicated accuracy and the estimated true accuracy are hidden until then.")
if comparison is not None:  # one table: raw metrics, adjudicated and the estimate side by side
    table, added = estimate_view.with_estimate(table, comparison)
    columns += added
if judged_table is not None:
    table, added = estimate_view.with_judged(table, judged_table)
    columns += added
st.subheader("Per domain")
if adjudicated:
    st.caption(
        "Accuracy in percent. Raw metrics: share of rows each passes. Adjudicated: human verdicts and "
        "adjudicators' decisions, else the automatic rule; its accuracy counts pending rows as wrong, "
        "the next column counts them right. Estimated true accuracy: from the reviewed rows only "
        "(a random sample of each scope), with its 95% interval. Headers: % the accuracy, CI its 95% interval; "
        "a header's tooltip gives its full name."
    )
else:
    st.caption("Accuracy in percent.")
show_table(
    charts.percent_style(table, columns), key="accuracy_table", column_config=charts.short_headers(table.columns)
)
languages = state.summary(run.id)
if "accuracy_by_language" in languages:  # a run whose rows are in more than one language: one line
    if comparison is not None and figs is not None and figs.estimate.multilingual:
        st.text(estimate_view.language_sentence(figs.estimate.by_language) + " (True accuracy: per language)")
    else:
        st.text(estimate_view.raw_language_sentence(languages["accuracy_by_language"]))

"""True accuracy: the run's accuracy estimated from the reviewed rows and the next rows to review
lead the page; the rest (the judge-assisted estimate, the metrics against the reviewers, the plan
per stratum, the reviewers' reasons, the "golden answer wrong" report, the what-if rules) sits in
tabs a reader opens on purpose. Every figure is ``python -m scoring estimate``'s.

Withheld whole by app.py, during double-blind review, from a reviewer who may not see the run's
verdicts (:mod:`scoring.review.visibility`). "Every run" leaves such runs out."""

from __future__ import annotations

import streamlit as st

from scoring import review, store
from scoring.core.errors import InputError
from scoring.core.formatting import interval, percent
from scoring.estimate import (
    ACCURACY_METHOD,
    CORRECTED_METHOD,
    RATIO_METHOD,
    SAMPLE_RULE,
    golden_wrong_csv,
    golden_wrong_jsonl,
)
from scoring.estimate.evidence import TO_REVIEW, has_interval
from scoring.estimate.group_estimate import GROUP_METHOD
from scoring.estimate.ppi import PPI_METHOD
from ui import estimate_data, estimate_view, identity, language_plan, run_choice
from ui.charts import percent_style
from ui.display import alert, md_escape
from ui.downloads import download_button
from ui.tables import HOW, show_table

REVIEW_PAGE = "views/review.py"
RUN_CHOICES = ("This run", "Every run")
#: The tabs under the lead, in plain words; the planner's controls move into "Plan" before evidence.
TABS = ("Plan", "Judge-assisted", "Metrics vs reviewers", "Reasons", "Golden answers wrong", "What-if rules")

run = run_choice.require_run()
st.title(md_escape(f"True accuracy: {run.name}"))
st.caption(md_escape(store.run_caption(run)))
reviewer = identity.reviewer()

try:
    figs = estimate_data.figures(run.id)
except InputError as exc:
    alert("error", f"The estimate cannot be computed for this run: {exc}")
    st.stop()
est = figs.estimate
acc = est.accuracy
sample = figs.sample
judged = estimate_data.judged(figs)  # None when the judge labelled no row: the page is as before
judged_table = judged.comparison(acc.table()) if judged is not None else None
reviewed, conflicts = int(sample["reviewed"].sum()), int(sample["conflict"].sum())

# --- the lead: the figure, then the next rows to review -------------------------------------------
st.subheader("Estimated true accuracy")
evidence = estimate_data.has_evidence(figs)  # no number before its evidence: a reviewed row of the sample
if not evidence:
    estimate_view.pilot_prompt(figs, reviewer, "est_pilot")  # the next step until then: the pilot
else:
    total = acc.combined
    # Lead with the figure to act on: the judge-assisted one where the judge narrows the interval, else
    # the human-only one (then said in plain words below).
    lead = judged.estimate.combined if judged is not None and judged.estimate.narrows else total
    conflict_note = f" ({conflicts:,} more in conflict: not counted until adjudicated)" if conflicts else ""
    if has_interval(lead):
        c1, c2, c3 = st.columns(3)
        c1.metric(
            "True accuracy, judge-assisted" if lead is not total else "Estimated true accuracy (combined)",
            percent(lead.estimate),
            help=f"95% CI {interval(lead.ci_low, lead.ci_high)}",
        )
        c2.metric("95% interval, ± points", f"{lead.half_width * 100:.1f}")
        c3.metric("Rows reviewed", f"{reviewed:,} of {len(sample):,}")
        st.text(
            f"Combined: {percent(total.estimate)}, 95% CI {interval(total.ci_low, total.ci_high)}, from "
            f"{reviewed:,} reviewed rows of {len(sample):,}{conflict_note}."
        )
    else:  # no figure before its evidence: what to review instead (the next step below picks the rows)
        st.metric("Rows reviewed", f"{reviewed:,} of {len(sample):,}")
        alert(
            "info",
            f"No estimated true accuracy yet: {reviewed:,} reviewed rows of {len(sample):,}{conflict_note} give "
            f"no 95% interval. {total.as_dict()[TO_REVIEW]} The next step below puts them in the audit scope.",
        )
    if judged is not None and judged_table is not None and has_interval(total):
        st.text(
            estimate_view.judged_sentence(
                judged_table, {"estimate": total.estimate, "ci_low": total.ci_low, "ci_high": total.ci_high}
            )
        )
next_step = st.container(key="est_next")  # the planner's controls, once there is an estimate to narrow
if evidence:
    st.plotly_chart(estimate_view.page_figure(figs, judged_table), key="est_chart")
    show_table(
        percent_style(estimate_view.estimate_frame(acc), ["estimate", "rows in unreviewed buckets"]), key="est_table"
    )
    for note in estimate_view.strata_notes(acc):
        st.text(note)
    if est.multilingual:
        st.subheader("By language")
        st.text(estimate_view.language_sentence(est.by_language))
        languages = estimate_view.language_frame(est.by_language)
        show_table(percent_style(languages, ["exact substring", "word overlap", "estimate"]), key="est_languages")
    with st.expander(HOW):
        st.caption(md_escape(f"Method: {ACCURACY_METHOD}"))
        if est.multilingual:
            st.caption(md_escape(f"By language: {GROUP_METHOD}"))
else:
    st.plotly_chart(estimate_view.page_figure(figs, estimate=False), key="est_chart")
drawn = est.random_sample
st.text(f"Random sample: {SAMPLE_RULE}")
if drawn["missing"]:
    st.text(
        f"Missing from the random sample (skipped, in conflict or waiting): {drawn['missing']:,} rows. The "
        f"interval spans every truth they could have: +{100 * drawn['missing_width']:.1f} points of width. "
        "Settling them narrows it: the queue hands skipped rows to the next reviewer first, rows in "
        "conflict wait on the Adjudication page."
    )
st.text(
    f"Reviewed by hand, not in the estimate: {drawn['by_hand']:,}"
    + (
        " (opened from another page or carried over from another run; their verdicts count everywhere else)."
        if drawn["by_hand"]
        else "."
    )
)
if drawn["by_hand"]:
    with st.container(key="est_by_hand"):
        show_table(estimate_view.by_hand_frame(sample))

plan_tab, judge_tab, metrics_tab, reasons_tab, golden_tab, whatif_tab = st.tabs(TABS)

# --- the planner: its controls lead the page (next step), its per-stratum plan is in "Plan" --------
with next_step if evidence else plan_tab:
    if evidence:
        st.subheader("Next step")
    # The run's kept half-width (its audit scope's, else the +-5-point pilot) until this session asks
    # for another; offered again whenever the run changes or someone plans it anew.
    kept = round(estimate_data.kept_half_width(run.id) * 100, 1)
    if st.session_state.get("est_half_width_for") != (run.id, kept) or "est_half_width" not in st.session_state:
        st.session_state["est_half_width"] = kept
        st.session_state["est_half_width_for"] = (run.id, kept)
    points = st.number_input(
        "Interval half-width wanted (± percentage points)",
        min_value=0.1,
        max_value=25.0,
        step=0.5,
        format="%.1f",
        key="est_half_width",
        help="A run's first plan is a ±5-point pilot; after that the half-width of the plan "
        "last put in the audit scope is offered, in every session.",
    )
    half_width = round(float(points) / 100, 6)
    plan = estimate_data.plan(figs, half_width)
    rows = estimate_data.planned_rows(figs, half_width)
    if rows.is_empty():
        st.text(
            f"Nothing left to review for ±{points:g} points: every planned row is reviewed. Ask for a narrower "
            "interval (a smaller half-width) to plan the next rows."
        )
    else:
        st.text(
            f"Review {len(rows):,} more rows of the random sample for ±{points:g} points: {plan.outcome}. "
            "The Plan tab shows them per stratum."
        )
    in_conflict = int(rows["conflict"].sum())
    if in_conflict:
        st.text(f"{in_conflict} of the rows to review have reviewers in conflict: they need an adjudicator.")
    may_adjudicate = bool(reviewer) and identity.identity_config().may_adjudicate(reviewer)
    any_blind, audit_blind = estimate_data.audit_blind(run.id)
    blind = None
    if may_adjudicate:
        wanted = st.checkbox(
            "Double-blind for the audit scope (each row to two reviewers, claimed in turn)",
            value=any_blind or audit_blind,
            key=f"est_blind_{run.id}",
        )
        blind = wanted if wanted != audit_blind else None

    def _put_in_audit(keys: list[str], blind: bool | None, half_width: float) -> None:
        count = estimate_data.put_in_audit(run.id, keys, reviewer, blind, half_width)
        st.session_state["est_audit_done"] = (run.id, count)

    st.button(
        f"Put these {len(rows):,} rows in the audit scope",
        key="est_audit",
        type="primary",
        disabled=not reviewer or rows.is_empty(),
        on_click=_put_in_audit,
        args=(rows["item_key"].to_list(), blind, half_width),
    )
    if not reviewer:
        st.caption("Type your name in the sidebar (Reviewer name): the audit scope records who planned it.")
    done = st.session_state.get("est_audit_done")
    if done and done[0] == run.id:
        st.success(
            f"The audit scope now holds these {done[1]:,} rows. In the Review queue choose the scope "
            '"Estimate: audit sample" (the link below opens it), and review them in the order '
            "shown."
        )
    held = estimate_data.audit_size(run.id)
    if held:
        planned_for = f", planned for ±{kept:g} points" if estimate_data.planned_half_width(run.id) else ""
        st.page_link(
            REVIEW_PAGE,
            label=f"Review the audit scope ({held:,} rows{planned_for}) in the Review queue",
            icon=":material/rule:",
            query_params={"scope": review.AUDIT, "run": str(run.id)},
        )
    language_plan.language_planner(figs, reviewer, half_width)  # the plan aimed at one language

with plan_tab:
    st.subheader("Review planner")
    st.text(plan.sentence + " Per stratum below.")
    plan_judged = estimate_data.judged(figs, half_width) if judged is not None else None
    if plan_judged is not None and plan_judged.plans:
        with_judge = plan_judged.plan
        st.text(
            f"Planned with the judge's labels: {with_judge.plan.planned:,} rows in all for ±{points:g} points "
            f"({with_judge.plan.remaining:,} remaining); the same interval without its labels needs "
            f"{with_judge.human_planned:,}."
        )
    elif plan_judged is not None:
        c = plan_judged.estimate.combined
        st.text(
            f"The judge has labelled {c.judged:,} of {c.rows:,} rows: planned without it. Judge every row not "
            "yet judged (Judge page) to plan with its labels."
        )
    show_table(estimate_view.plan_frame(plan), key="est_plan")
    st.caption(md_escape(f"Method: {plan.method}."))

# --- the judge-assisted estimate ------------------------------------------------------------------
with judge_tab:
    if evidence and judged is not None and judged_table is not None and has_interval(judged.estimate.combined):
        st.subheader("Judge-assisted estimate")
        j = estimate_view.combined_row(judged_table)
        d1, d2, d3 = st.columns(3)
        d1.metric(
            "Judge-assisted (combined)",
            percent(j["judge_estimate"]),
            help=f"95% CI {interval(j['judge_ci_low'], j['judge_ci_high'])}",
        )
        d2.metric("95% interval, ± points", f"{(j['judge_ci_high'] - j['judge_ci_low']) * 50:.1f}")
        d3.metric(
            "The judge is worth",
            f"{max(0.0, j['effective_reviews'] - j['reviewed']):,.0f} reviews",
            help="Reviews the judge's labels add: the human-only estimate would need "
            f"{j['effective_reviews']:,.0f} reviewed rows for this interval",
        )
        show_table(
            percent_style(estimate_view.judged_frame(judged_table), ["human-only", "judge-assisted"]), key="est_judged"
        )
        st.caption(md_escape(f"Judge labels: {figs.judge_config}."))
        with st.expander(HOW):
            st.caption(md_escape(f"Method: {PPI_METHOD}"))
    elif judged is None:
        st.info("No judge-assisted estimate: the judge has labelled no row of this run (the Judge page runs it).")
    else:
        st.info(
            "No judge-assisted estimate before the reviewed rows of the random sample give the estimate a 95% "
            "interval (the next step above says which rows to review)."
        )

# --- the metrics against the reviewers ------------------------------------------------------------
with metrics_tab:
    st.subheader("The metrics against the reviewers")
    st.text(
        "Estimated for the whole run from the reviewed rows: how often a pass is right (precision), how many "
        "right answers pass (recall), how many wrong ones fail (specificity), and the raw accuracy corrected "
        "for those errors (Rogan-Gladen)."
    )
    metrics, share_columns = estimate_view.metrics_frame(est.metrics)
    show_table(percent_style(metrics, share_columns), key="est_metrics")
    with st.expander(HOW):
        st.caption(md_escape(f"Precision, recall, specificity: {RATIO_METHOD}."))
        st.caption(md_escape(f"Corrected accuracy: {CORRECTED_METHOD}."))

# --- the reviewers' reasons -----------------------------------------------------------------------
with reasons_tab:
    st.subheader("Reviewers' reasons")
    which = st.radio(
        "Runs",
        RUN_CHOICES,
        horizontal=True,
        key="est_reason_runs",
        help="Every run: reasons per language (each run has its language), and the golden-answer "
        "report with every run's response to a flagged question. Reads every run again after each "
        "mark.",
    )
    found = figs.reasons
    if which == RUN_CHOICES[1]:
        run_ids, left_out = estimate_data.visible_runs()
        if left_out:
            st.text(f"{left_out} run(s) under double-blind review are left out (their verdicts are for adjudicators).")
        found = estimate_data.reasons(run_ids)
    if found.counts.is_empty():
        st.info("No reviewer has given a reason yet (the Reason field under a row in the Review queue).")
    else:
        by = st.segmented_control("Chart by", ["Domain", "Language"], default="Domain", key="est_reason_by") or "Domain"
        st.plotly_chart(
            estimate_view.reasons_figure(found.counts, "Domain" if by == "Domain" else "language"),
            key="est_reasons_chart",
        )
        show_table(found.counts.to_pandas(), key="est_reasons")

# --- golden answer wrong --------------------------------------------------------------------------
with golden_tab:
    st.subheader("Golden answer wrong")
    report = found.report
    questions = report.select("question", "answer").unique().height
    st.text(
        f'{questions} question(s) marked "golden answer wrong", with every run\'s response to them '
        f"({report.height} row(s)), for the dataset's maintainers. The Reasons tab chooses this run or every "
        "run."
    )
    show_table(report.to_pandas(), key="est_golden")
    d1, d2 = st.columns(2)
    download_button(
        "Download CSV",
        lambda r=report: golden_wrong_csv(r),
        file_name="golden_answer_wrong.csv",
        mime="text/csv",
        key="est_golden_csv",
        where=d1,
        disabled=report.is_empty(),
    )
    download_button(
        "Download JSONL",
        lambda r=report: golden_wrong_jsonl(r),
        file_name="golden_answer_wrong.jsonl",
        mime="application/jsonl",
        key="est_golden_jsonl",
        where=d2,
        disabled=report.is_empty(),
    )

# --- what-if rules --------------------------------------------------------------------------------
with whatif_tab:
    st.subheader("What-if rules (diagnostic only)")
    st.info(
        "Diagnostic only: the protocols never change. Each candidate normalisation is applied to the reviewed "
        "rows: how many it would turn right (overturns fixed) and wrong (confirmed verdicts broken), and the "
        "metric's estimated pass share and agreement with the reviewers under it."
    )
    whatif, whatif_shares = estimate_view.whatif_frame(estimate_data.what_if_table(figs))
    show_table(percent_style(whatif, whatif_shares), key="est_whatif")

"""The LLM judge: endpoint settings, scope, a preflight, then a cancellable run with progress.

Withheld whole by app.py, during double-blind review, from a reviewer who may not see the run's
verdicts (:mod:`scoring.review.visibility`). The figures over every run leave such runs out."""

from __future__ import annotations

import streamlit as st

from scoring import judge, store
from scoring.core.errors import InputError
from scoring.core.protocols import BUCKETS
from ui import charts, identity, judge_data, run_choice, state
from ui import judge_jobs as jobs
from ui import judge_trust_data as judge_trust
from ui.display import alert, md_escape
from ui.tables import HOW, bucket_option, show_table

REVIEW_PAGE = "views/review.py"

run = run_choice.require_run()

engine = state.engine()
st.title(md_escape(f"Judge: {run.name}"))

defaults = judge.JudgeSettings.from_env()
overrides: dict = st.session_state.setdefault("judge_overrides", {})


def cur(name: str, fallback: float = 0) -> float:
    """The session's override, else the configured value, else ``fallback``."""
    value = overrides.get(name, getattr(defaults, name))
    return fallback if value is None else value


with st.expander("Endpoint and settings", expanded=not (defaults.base_url and defaults.model)):
    with st.form("judge_settings"):
        base_url = st.text_input(
            "Base URL (OpenAI-compatible)",
            value=overrides.get("base_url", defaults.base_url),
            placeholder="http://localhost:8000/v1",
        )
        model = st.text_input("Model", value=overrides.get("model", defaults.model))
        key_hint = "set from secrets or environment" if defaults.api_key else "not set"
        api_key = st.text_input(f"API key ({key_hint}; kept only in this browser session)", type="password")
        c1, c2, c3, c4 = st.columns(4)
        temperature = c1.number_input("Temperature", 0.0, 2.0, float(cur("temperature")))
        seed = c2.number_input("Seed", 0, 2**31 - 1, int(cur("seed")))
        max_tokens = c3.number_input("Max tokens", 1, 32_000, int(cur("max_tokens", 512)))
        timeout = c4.number_input("Timeout (s)", 1.0, 600.0, float(cur("timeout", 60)))
        c5, c6, c7, c8 = st.columns(4)
        concurrency = c5.number_input("Concurrency", 1, 64, int(cur("concurrency", 8)))
        max_retries = c6.number_input("Max retries (SDK)", 0, 10, int(cur("max_retries", 2)))
        price_in = c7.number_input("Price in / M tokens", 0.0, 1000.0, float(cur("price_in_per_m")))
        price_out = c8.number_input("Price out / M tokens", 0.0, 1000.0, float(cur("price_out_per_m")))
        if st.form_submit_button("Use these settings"):
            overrides.update(
                base_url=base_url.strip(),
                model=model.strip(),
                temperature=temperature,
                seed=int(seed),
                max_tokens=int(max_tokens),
                timeout=timeout,
                concurrency=int(concurrency),
                max_retries=int(max_retries),
                price_in_per_m=price_in or None,
                price_out_per_m=price_out or None,
            )
            if api_key:
                overrides["api_key"] = api_key

settings = judge.JudgeSettings.from_env({k: v for k, v in overrides.items() if v is not None})

st.toggle(
    "Let judge labels settle overlap_only rows without a human verdict (final source: judge)",
    key="judge_settles",
    persist_state="session",
)  # read by other pages: must survive a page switch

try:
    settings.check(judge.PAGE_WORDS)  # names this page's fields, not the command line's flags
    configured = True
except InputError as exc:
    alert("warning", str(exc))
    configured = False


# --- the run the estimate needs: every row not yet judged by this model and prompt -----------------
def judge_run_section() -> None:
    """Run the judge: the action the estimate needs first, other scopes beside it. Needs an
    endpoint and a model; the trust section below does not (labels may come from the CLI)."""
    st.subheader("Judge every row not yet judged")
    unjudged = judge_trust.unjudged_items(run.id, settings.model)
    upf = judge_trust.unjudged_preflight(run.id, settings)
    ucost = "no price set" if upf.est_cost is None else f"about {upf.est_cost:.4f}"
    st.text(
        f"Endpoint: {judge.display_url(settings.base_url)}   model: {settings.model}   prompt: {judge.PROMPT_VERSION}\n"
        f"Rows not yet judged by this model and prompt: {upf.rows}   to send: {upf.to_send}   "
        f"identical rows sent once: {upf.shared}   (blank responses are never sent)\n"
        f"Estimated tokens: {upf.est_tokens}   estimated cost: {ucost}"
    )
    st.caption(
        "The estimate's judge-assisted interval needs a label on every row from the configuration it uses: "
        "this sends only the rows that have none yet (rows judged before with other settings are kept)."
    )

    with st.expander("Another scope (the whole run again, one bucket, the rows still pending review)"):
        scope = st.radio("Scope", judge_data.JUDGE_SCOPES, horizontal=True, key="judge_scope")
        bucket = "overlap_only"
        if scope == "One bucket":
            sizes = state.summary(run.id)["buckets"]["combined"]
            bucket = st.selectbox(
                "Bucket",
                list(BUCKETS),
                index=list(BUCKETS).index("overlap_only"),
                key="judge_bucket",
                format_func=lambda b: bucket_option(b, sizes),
            )
        items = judge_data.judge_items(run.id, scope, bucket)
        pf = judge_data.judge_preflight(run.id, scope, bucket, settings)
        cost = "no price set" if pf.est_cost is None else f"about {pf.est_cost:.4f}"
        st.text(
            f"Rows in scope: {pf.rows}   to send: {pf.to_send}   already judged (cached): {pf.cached}   "
            f"identical rows sent once: {pf.shared}   blank (never sent): {pf.blank}\n"
            f"Estimated tokens: {pf.est_tokens}   estimated cost: {cost}"
        )

    def _start(to_judge: list) -> None:
        st.session_state["judge_job"] = jobs.start(engine, settings, to_judge)

    @st.fragment(run_every=1.0)
    def job_view() -> None:
        """Polls the background job; only this fragment reruns while the judge works."""
        job = jobs.get(st.session_state.get("judge_job"))
        if job is None:
            c1, c2 = st.columns(2)
            c1.button(
                f"Judge every row not yet judged ({len(unjudged)})",
                type="primary",
                disabled=not unjudged,
                key="judge_unjudged",
                on_click=_start,
                args=(unjudged,),
            )
            c2.button(
                f"Run the judge on the other scope: {scope.lower()}",
                disabled=not items,
                key="judge_run",
                on_click=_start,
                args=(items,),
            )
            return
        if not job.finished:
            st.progress(job.done / job.total if job.total else 1.0, text=f"Judged {job.done} of {job.total}")
            if st.button("Cancel", key="judge_cancel"):
                job.cancel.set()
            return
        st.session_state.pop("judge_job", None)
        if job.error:
            alert("error", f"The judge run failed: {job.error}")
        elif job.result is not None:
            s = job.result.summary
            msg = (
                f"Done: {s.requests} requests sent, {s.cached} cache hits, {s.prompt_tokens + s.completion_tokens} "
                f"tokens, {s.errors} errors, {s.unparsed} unparsed, {s.cancelled} cancelled."
            )
            if job.result.fatal_error:
                msg += f" Stopped by {job.result.fatal_error}."
            st.session_state["judge_last"] = msg
        st.rerun()

    job_view()
    if "judge_last" in st.session_state:
        st.text(st.session_state["judge_last"])

    st.subheader("Judge accuracy per domain (this model and prompt)")
    judge_table = judge_data.judge_table(run.id, settings.model)
    if not judge_data.has_replies(judge_table):
        st.text(
            'No row has a judge label from this model and prompt yet: press "Judge every row not yet judged" '
            "above. (Blank responses count as incorrect without being sent.)"
        )
    show_table(charts.percent_style(judge_table, ["accuracy", "ci_low", "ci_high"]), key="judge_accuracy")


if configured:
    judge_run_section()


# --- can this judge be trusted? ---------------------------------------------------------------------
st.header("Can this judge be trusted?")
try:
    data = judge_trust.trust_data(run.id)
except InputError as exc:
    alert("warning", f"No estimate for this run, so no random sample to check the judge on: {exc}")
    st.stop()
st.text(f"The estimate uses: {data.in_use}")
st.caption(
    f"On the estimate's random sample: {data.reviewed} reviewed rows. Rows reviewed by hand outside it "
    f"({data.by_hand}) are left out here as in the estimate; they say nothing about how often the judge "
    "is right on the whole run."
)
names = list(data.rows)
default = names.index(data.in_use) if data.in_use in names else 0
shown = names[default]
if len(names) > 1:  # some configuration labelled the run: the label sets to check
    shown = st.selectbox(
        "Judge labels",
        names,
        index=default,
        key="judge_trust_config",
        help="A judge configuration (model, prompt version), or the latest label of any of them.",
    )
overall = judge_trust.combined(data, shown)
missing = judge_trust.nothing_to_compare(data, overall, shown, configured)
if missing:  # nothing judged and reviewed: say what to do, never an agreement or a table of blanks
    st.text(missing)
else:
    show_table(judge_trust.confusion(overall), key="judge_confusion")
    st.text(judge_trust.summary_line(overall))
    st.caption("Kappa alone misleads when nearly every row is correct: read it beside raw agreement and the table.")
    with st.expander(HOW):
        st.caption(f"Kappa's interval: {judge_trust.KAPPA_METHOD}. Agreement's: {judge_trust.AGREEMENT_METHOD}.")
    for title, table in judge_trust.group_tables(data, shown).items():
        st.subheader(title)
        show_table(judge_trust.styled(table), key=f"judge_trust_{title.split()[-1].lower()}")

# Every run whose reviewers' verdicts this viewer may see (the others are under double-blind review).
listed = run_choice.known_runs()
with_language = [(r.id, r.language.strip()) for r in listed if not identity.others_hidden(r.id)]
st.subheader("Per language")
if len(with_language) < len(listed):
    st.text(
        f"{len(listed) - len(with_language)} run(s) under double-blind review are left out (their verdicts are "
        "for adjudicators)."
    )
if st.toggle(
    f"Across the {len(with_language)} runs, each reviewed row under its own language, each run with the judge its "
    "estimate uses",
    key="judge_trust_languages",
):
    show_table(judge_trust.styled(judge_trust.language_table(with_language)))

st.subheader("Rows where the judge and the reviewers disagree")
dis = judge_trust.disagreement_rows(data, shown)
if missing:
    st.text("Nothing to show yet: no reviewed row of the random sample has a verdict from the judge.")
elif dis.is_empty():
    st.text(judge_trust.agreement_line(overall))
else:
    event = show_table(dis.drop("item_key"), on_select="rerun", selection_mode="single-row", key="judge_disagree")
    picked = [i for i in event.selection.rows if 0 <= i < dis.height]
    st.caption(
        "Opening a row in the review queue does not add it to the estimate: a row opened on purpose is "
        "reviewed by hand."
    )
    if picked:
        number = int(dis["row"][picked[0]])
        if st.button(f"Open row {number} in the review queue", key="judge_open", icon=":material/rule:"):
            st.switch_page(REVIEW_PAGE, query_params={"run": str(run.id), "row": str(number)})
    else:
        st.text("Choose a row of the table (the box at its left) to open it in the review queue.")

# --- several configurations: which one should the estimate use? ----------------------------------
st.header("Judge configurations on the same reviewed rows")
table = judge_trust.config_table(data)
if table.is_empty():
    st.text("No judge configuration has labelled this run yet.")
    st.stop()
show_table(judge_trust.styled(table), key="judge_configs")
pairs = judge_trust.pair_table(data)
if not pairs.is_empty():
    show_table(judge_trust.styled(pairs), key="judge_pairs")
    st.caption(
        f"Per pair, on the reviewed rows both judged: only_a = A agrees with the reviewers and B does not; "
        f"difference = agreement A - agreement B with {judge_trust.PAIR_INTERVAL}; p: {judge_trust.PAIR_TEST}"
        "; p_holm: Holm-adjusted across the pairs (more than two configurations)."
    )
options = [judge_trust.DEFAULT_OPTION, *table["configuration"].to_list()]
current = options.index(data.in_use) if data.in_use in options else 0
picked_name = st.selectbox("Use this judge for the estimate", options, index=current, key="judge_choice")
reviewer = identity.reviewer()
if st.button(
    "Use this judge for the estimate",
    key="judge_choose",
    type="primary",
    disabled=not reviewer or options[current] == picked_name,
):
    try:
        judge_trust.choose(run.id, data.configs.get(picked_name), reviewer)
    except (ValueError, store.DatabaseError) as exc:
        alert("error", f"Not saved: {exc}")
    else:
        st.rerun()
if not reviewer:
    st.caption("Type your name in the sidebar to choose the judge the estimate uses (the choice is saved under it).")

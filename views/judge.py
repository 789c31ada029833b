"""The LLM judge: endpoint settings, scope, a preflight, then a cancellable run with progress."""

from __future__ import annotations

import streamlit as st

from scoring import judge
from scoring.core.errors import InputError
from scoring.core.protocols import BUCKETS
from ui import charts, jobs, state
from ui.display import alert, md_escape

run = state.require_run()

engine = state.engine()
st.title(md_escape(f"Judge: {run.name}"))
state.hide_if_blind(run.id)  # the judge's label of a row is hidden from reviewers during double-blind

defaults = judge.JudgeSettings.from_env()
overrides: dict = st.session_state.setdefault("judge_overrides", {})


def cur(name: str, fallback: float = 0) -> float:
    """The session's override, else the configured value, else ``fallback``."""
    value = overrides.get(name, getattr(defaults, name))
    return fallback if value is None else value


with st.expander("Endpoint and settings", expanded=not (defaults.base_url and defaults.model)):
    with st.form("judge_settings"):
        base_url = st.text_input("Base URL (OpenAI-compatible)", value=overrides.get("base_url", defaults.base_url),
                                 placeholder="http://localhost:8000/v1")
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
        price_in = c7.number_input("Price in / M tokens", 0.0, 1000.0,
                                   float(cur("price_in_per_m")))
        price_out = c8.number_input("Price out / M tokens", 0.0, 1000.0,
                                    float(cur("price_out_per_m")))
        if st.form_submit_button("Use these settings"):
            overrides.update(
                base_url=base_url.strip(), model=model.strip(), temperature=temperature, seed=int(seed),
                max_tokens=int(max_tokens), timeout=timeout, concurrency=int(concurrency),
                max_retries=int(max_retries), price_in_per_m=price_in or None, price_out_per_m=price_out or None,
            )  # fmt: skip
            if api_key:
                overrides["api_key"] = api_key

settings = judge.JudgeSettings.from_env({k: v for k, v in overrides.items() if v is not None})

scope = st.radio("Scope", state.JUDGE_SCOPES, horizontal=True, key="judge_scope")
bucket = "overlap_only"
if scope == "One bucket":
    bucket = st.selectbox("Bucket", list(BUCKETS), index=list(BUCKETS).index("overlap_only"), key="judge_bucket")
items = state.judge_items(run.id, scope, bucket)

st.toggle("Let judge labels settle overlap_only rows without a human verdict (final source: judge)",
          key="judge_settles", persist_state="session")  # read by other pages: must survive a page switch

try:
    settings.check()
except InputError as exc:
    alert("warning", str(exc))
    st.stop()

pf = state.judge_preflight(run.id, scope, bucket, settings)
st.subheader("Preflight")
cost = "no price set" if pf.est_cost is None else f"about {pf.est_cost:.4f}"
st.text(
    f"Endpoint: {judge.display_url(settings.base_url)}   model: {settings.model}   prompt: {judge.PROMPT_VERSION}\n"
    f"Rows in scope: {pf.rows}   to send: {pf.to_send}   already judged (cached): {pf.cached}   "
    f"identical rows sent once: {pf.shared}   blank (never sent): {pf.blank}\n"
    f"Estimated tokens: {pf.est_tokens}   estimated cost: {cost}"
)


def _start() -> None:
    st.session_state["judge_job"] = jobs.start(engine, settings, items)


@st.fragment(run_every=1.0)
def job_view() -> None:
    """Polls the background job; only this fragment reruns while the judge works."""
    job = jobs.get(st.session_state.get("judge_job"))
    if job is None:
        st.button("Run the judge", type="primary", disabled=not items, key="judge_run", on_click=_start)
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
        msg = (f"Done: {s.requests} requests sent, {s.cached} cache hits, {s.prompt_tokens + s.completion_tokens} "
               f"tokens, {s.errors} errors, {s.unparsed} unparsed, {s.cancelled} cancelled.")
        if job.result.fatal_error:
            msg += f" Stopped by {job.result.fatal_error}."
        st.session_state["judge_last"] = msg
    st.rerun()


job_view()
if "judge_last" in st.session_state:
    st.text(st.session_state["judge_last"])

st.subheader("Judge accuracy per domain (this model and prompt)")
judge_table = state.judge_table(run.id, settings.model)
st.dataframe(charts.percent_style(judge_table, ["accuracy", "ci_low", "ci_high"]), hide_index=True,
             key="judge_accuracy")

"""Compare's decision plan (issue 37 §3): for the first two runs chosen, per language, how many of
their shared questions to review to tell the two models apart at the smallest difference worth
knowing with the power asked for (:func:`scoring.team_report.decision_scope.decision_plans`), and a
button that puts exactly those rows in each run's audit scope, where the Review queue serves them
(what ``python -m scoring compare --plan --put-in-scope`` does).

Apart from the page so that it calls it in one line; the sentences name runs and languages (the
uploader's text), so they are shown with ``st.text``.
"""

from __future__ import annotations

import streamlit as st

from scoring.core.errors import InputError
from scoring.estimate.decision_plan import DEFAULT_DIFFERENCE, DEFAULT_POWER, DecisionPlan
from scoring.store import database_url
from scoring.team_report.decision_scope import decision_plans, plan_sentence, put_in_scope
from ui import state
from ui.display import md_escape

DONE_KEY = "cmp_plan_done"


def plans_of(run_a: int, run_b: int, difference: float, power: float, revs: tuple[int, int]) -> list[DecisionPlan]:
    """The plans, kept per verdict and judge revision (a new review changes them)."""
    key = ("compare", "decision_plan", database_url(), run_a, run_b, difference, power, revs)
    return state.run_cache().get(key, lambda: decision_plans(state.engine(), run_a, run_b, difference, power))


def _put(run_a: int, run_b: int, plans: list[DecisionPlan], by: str) -> None:
    sizes = put_in_scope(state.engine(), run_a, run_b, plans, by)
    st.session_state[DONE_KEY] = (run_a, run_b, sum(p.remaining for p in plans), sizes)


def decision_planner(run_a: int, run_b: int, revs: tuple[int, int], reviewer: str) -> None:
    """The toggle, the two settings, one sentence per language and the button (see the module)."""
    if not st.toggle("Plan the reviews that tell the first two runs apart", key="cmp_plan"):
        return
    left, right = st.columns(2)
    points = left.number_input(
        "Smallest difference worth knowing (points)", 1.0, 50.0, 100 * DEFAULT_DIFFERENCE, 1.0, key="cmp_plan_points"
    )
    power = right.number_input("Power (%)", 50.0, 99.0, 100 * DEFAULT_POWER, 5.0, key="cmp_plan_power")
    try:
        plans = plans_of(run_a, run_b, float(points) / 100, float(power) / 100, revs)
    except InputError as exc:
        st.warning(md_escape(str(exc)))
        return
    with st.container(key="cmp_plan_sentences"):
        st.text("\n".join(plan_sentence(p) for p in plans))
    remaining = sum(p.remaining for p in plans)
    st.button(
        f"Put these {remaining:,} rows in the two runs' audit scopes",
        key="cmp_plan_put",
        disabled=not reviewer or not remaining,
        on_click=_put,
        args=(run_a, run_b, plans, reviewer),
    )
    st.caption(
        "The Review queue's audit scope serves them: each stratum's first unreviewed rows in the run's own review "
        "order, so each run's reviewed rows stay its random sample."
        + ("" if reviewer else " Type your name in the sidebar to put rows in the audit scopes.")
    )
    done = st.session_state.get(DONE_KEY)
    if done and done[:2] == (run_a, run_b):
        st.success(f"Added {done[2]:,} rows: the audit scopes now hold {done[3][0]:,} and {done[3][1]:,} rows.")

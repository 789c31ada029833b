"""The decision plan of two stored runs (issue 37 §3), per language: how many of the shared
questions to review in each run to tell the two models apart at the smallest difference worth
knowing with the power asked for (:mod:`scoring.estimate.decision_plan`), and those exact rows put
in each run's audit scope (:func:`scoring.store.audit.add_to_audit`), where the Review queue serves
them as it serves the True accuracy page's plan.

The rows are each stratum's first unreviewed rows of the run's own seeded review order, so the
reviews keep each run's random sample random; the head-to-head then reads them
(:mod:`scoring.team_report.head_to_head`). Kept apart from the pure modules: it loads the database.
"""

from __future__ import annotations

import polars as pl
from sqlalchemy import Engine

from scoring.core.errors import InputError
from scoring.estimate.decision_plan import DEFAULT_DIFFERENCE, DEFAULT_POWER, DecisionPlan, plan_decision
from scoring.estimate.group_estimate import LANGUAGE
from scoring.store.audit import add_to_audit
from scoring.team_report.head_to_head import paired_samples
from scoring.team_report.stored_head_to_head import stored_contender
from scoring.team_report.stored_table import asked_runs


def decision_plans(
    engine: Engine,
    run_a: int,
    run_b: int,
    difference: float = DEFAULT_DIFFERENCE,
    power: float = DEFAULT_POWER,
    family: str | None = None,
) -> list[DecisionPlan]:
    """One plan per language of the questions runs ``run_a`` and ``run_b`` share (sorted)."""
    a, b = (stored_contender(engine, info) for info in asked_runs(engine, [run_a, run_b]))
    sa, sb = paired_samples(a, b, family)
    if not sa.height:
        raise InputError(f"{a.label} and {b.label} share no question: nothing to plan.")
    plans = []
    for language in sorted(set(sa[LANGUAGE].to_list())):
        keep = pl.col(LANGUAGE) == language
        plans.append(plan_decision(sa.filter(keep), sb.filter(keep), a.label, b.label, language, difference, power))
    return plans


def put_in_scope(engine: Engine, run_a: int, run_b: int, plans: list[DecisionPlan], by: str) -> tuple[int, int]:
    """Every plan's rows in its run's audit scope; returns both scopes' sizes."""
    keys_a = [k for p in plans for k in p.a.next["item_key"].to_list()]
    keys_b = [k for p in plans for k in p.b.next["item_key"].to_list()]
    return add_to_audit(engine, run_a, keys_a, by), add_to_audit(engine, run_b, keys_b, by)


def plan_sentence(plan: DecisionPlan) -> str:
    """The plan in one sentence."""
    points, power = f"{100 * plan.difference:g}", f"{100 * plan.power:g}%"
    where = f"{plan.scope}: " if plan.scope else ""
    if not plan.reachable:
        return (
            f"{where}even every one of the {plan.questions:,} shared questions reviewed cannot tell {points} points "
            f"apart with {power} power: these questions tell about {100 * plan.smallest_difference:.1f} points "
            "apart; more questions would help, not more reviews."
        )
    return (
        f"{where}review {plan.a.remaining:,} more rows of {plan.a.label} and {plan.b.remaining:,} of {plan.b.label} "
        f"(of {plan.questions:,} shared questions; {plan.a.planned:,} and {plan.b.planned:,} reviewed in all) to tell "
        f"a {points}-point difference with {power} power (expected ±{100 * plan.expected_half_width:.1f} points)."
    )

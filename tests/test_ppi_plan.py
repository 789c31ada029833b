"""The judge-assisted planner (:mod:`scoring.estimate.ppi_plan`): the human-only Neyman allocation
over bucket x domain with each bucket's variance scaled by what the judge leaves of it, top-ups, the
rows it asks for next (the human-only plan's first rows, fewer of them), and a judge that does not
narrow the estimate leaving the plan exactly the human-only one."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scoring.estimate import make_sample, next_rows, plan_review
from scoring.estimate.ppi import judge_assisted
from scoring.estimate.ppi_plan import PPI_PLAN_METHOD, plan_with_judge


def _sample(accuracy: float | None, reviewed: int = 300, n: int = 5000, seed: int = 1):
    rng = np.random.default_rng(seed)
    bucket = rng.choice(["both_pass", "both_fail", "overlap_only"], n, p=[0.6, 0.25, 0.15])
    rate = np.select([bucket == "both_pass", bucket == "both_fail"], [0.95, 0.1], 0.6)
    truth = rng.random(n) < rate
    judge = (bucket == "both_pass") if accuracy is None else np.where(rng.random(n) < accuracy, truth, ~truth)
    verdicts = [bool(t) if i < reviewed else None for i, t in enumerate(truth)]
    return make_sample(bucket.tolist(), rng.choice(["Art", "Sci"], n).tolist(), verdicts, judge_correct=judge.tolist())


def test_a_good_judge_plans_fewer_rows_and_one_that_follows_the_buckets_none() -> None:
    good, useless, buckets = (plan_with_judge(_sample(a), 0.02) for a in (0.9, 0.5, None))
    assert good is not None and useless is not None and buckets is not None
    assert good.plan.method == PPI_PLAN_METHOD and good.plan.half_width == 0.02
    assert good.plan.planned < 0.8 * good.human_planned  # a 90% judge saves over a fifth of the reviews
    assert useless.plan.planned >= 0.9 * useless.human_planned  # a useless judge saves next to nothing
    assert good.plan.expected_half_width <= 0.02 + 1e-9
    assert all(0 < f <= 1 for f in good.factors.values()) and min(good.factors.values()) < 0.8
    # a judge that says what the buckets say: the plan is the human-only one, row for row
    human = plan_review(_sample(None), 0.02)
    assert buckets.plan.planned == buckets.human_planned == human.planned
    assert buckets.plan.strata["planned"].to_list() == human.strata["planned"].to_list()
    assert set(buckets.factors.values()) == {1.0}


def test_the_factor_is_what_the_estimate_keeps_of_the_variance() -> None:
    """One stratum: the factor is the judge-assisted variance over the human-only one, as the
    estimate computes them (so the plan and the estimate tell one story)."""
    n = 2000
    rng = np.random.default_rng(3)
    truth = rng.random(n) < 0.7
    judge = np.where(rng.random(n) < 0.9, truth, ~truth)
    verdicts = [bool(t) if i < 200 else None for i, t in enumerate(truth)]
    sample = make_sample(["overlap_only"] * n, ["Art"] * n, verdicts, judge_correct=judge.tolist())
    plan, est = plan_with_judge(sample), judge_assisted(sample)
    assert plan is not None and est is not None
    ratio = (est.combined.standard_error / est.combined.human_standard_error) ** 2
    assert plan.factors["overlap_only"] == pytest.approx(ratio, rel=1e-9)


def test_the_plan_tops_up_and_the_rows_come_in_the_seeded_order() -> None:
    sample = _sample(0.9)
    judged = plan_with_judge(sample, 0.02)
    assert judged is not None
    plan = judged.plan
    table = plan.strata
    assert "judge" not in table.columns  # bucket x domain, as without the judge
    assert (table["planned"] >= table["reviewed"]).all() and (table["planned"] <= table["size"]).all()
    assert plan.remaining == int(table["remaining"].sum()) == plan.planned - plan.reviewed
    rows = next_rows(sample, plan, seed="s")
    assert rows.height == plan.remaining
    got = rows.group_by("bucket", "Domain").len()
    wanted = dict(zip(zip(table["bucket"], table["Domain"]), table["remaining"]))
    assert {(b, d): n for b, d, n in got.rows()} == {k: v for k, v in wanted.items() if v}
    assert not sample["reviewed"].gather(rows["row_idx"]).any()
    # the same rows the human-only plan would ask for first: a prefix of its rows in each stratum
    human = next_rows(sample, plan_review(sample, 0.02), seed="s")
    for (b, d), part in rows.group_by("bucket", "Domain"):
        theirs = human.filter((pl.col("bucket") == b) & (pl.col("Domain") == d))["row_idx"].to_list()
        assert part.sort("rank")["row_idx"].to_list() == theirs[: part.height]

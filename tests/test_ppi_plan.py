"""The judge-assisted planner (:mod:`scoring.estimate.ppi_plan`): Neyman allocation on the residual
spread, what the judge is worth in reviews, top-ups, and the rows it asks for next."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.core.stats import Z95
from scoring.estimate import make_sample, next_rows
from scoring.estimate.ppi_plan import PLAN_AIM, PPI_PLAN_METHOD, allocate_spread, expected_variance, plan_with_judge


def test_allocation_worked_numbers() -> None:
    """Two strata of 1,000 rows (N = 2,000), residual variances 0.09 and 0.01 (S = 0.3, 0.1), target
    variance 0.000175: n = (sum W S)² / (V + sum W S²/N) = 0.04 / (0.000175 + 0.05/2000) = 200,
    split as S: 150 and 50."""
    size, s2 = np.array([1000.0, 1000.0]), np.array([0.09, 0.01])
    half_width = Z95 * np.sqrt(0.000175)
    n = allocate_spread(size, s2, np.zeros(2), half_width)
    assert n.tolist() == pytest.approx([150, 50], abs=1)
    assert expected_variance(size, s2, n.astype(float)) <= 0.000175 + 1e-12
    assert allocate_spread(size, s2, np.array([400.0, 0.0]), half_width)[0] == 400  # never below what is held
    with pytest.raises(ValueError):
        allocate_spread(size, s2, np.zeros(2), 0.0)


def _sample(accuracy: float, reviewed: int = 300, n: int = 5000, seed: int = 1):
    rng = np.random.default_rng(seed)
    bucket = rng.choice(["both_pass", "both_fail", "overlap_only"], n, p=[0.6, 0.25, 0.15])
    rate = np.select([bucket == "both_pass", bucket == "both_fail"], [0.95, 0.1], 0.6)
    truth = rng.random(n) < rate
    judge = np.where(rng.random(n) < accuracy, truth, ~truth)
    verdicts = [bool(t) if i < reviewed else None for i, t in enumerate(truth)]
    return make_sample(bucket.tolist(), rng.choice(["Art", "Sci"], n).tolist(), verdicts, judge_correct=judge.tolist())


def test_a_good_judge_is_worth_reviews_and_a_useless_one_is_not() -> None:
    good, useless = plan_with_judge(_sample(0.9)), plan_with_judge(_sample(0.5))
    assert good is not None and useless is not None
    assert good.plan.method == PPI_PLAN_METHOD and good.plan.half_width == 0.02
    assert good.saved > 0.2 * good.human_planned  # the judge is worth over a fifth of the reviews here
    assert useless.saved <= 0.05 * useless.human_planned
    assert good.plan.expected_half_width <= 0.02 * PLAN_AIM + 1e-9
    assert good.as_dict()["saved"] == good.saved == good.human_planned - good.plan.planned


def test_the_plan_tops_up_and_the_rows_come_in_the_seeded_order() -> None:
    sample = _sample(0.9)
    judged = plan_with_judge(sample, 0.02)
    assert judged is not None
    plan = judged.plan
    table = plan.strata
    assert (table["planned"] >= table["reviewed"]).all() and (table["planned"] <= table["size"]).all()
    assert plan.remaining == int(table["remaining"].sum()) == plan.planned - plan.reviewed
    rows = next_rows(sample, plan, seed="s")
    assert rows.height == plan.remaining
    assert not sample["reviewed"].gather(rows["row_idx"]).any()
    wide = plan_with_judge(sample, 0.5)
    assert wide is not None and wide.plan.remaining == 0  # a wide interval: what is reviewed suffices


def test_no_judge_labels_means_no_judge_plan() -> None:
    sample = make_sample(["both_pass"] * 10, ["Art"] * 10, [True] * 4 + [None] * 6)
    assert plan_with_judge(sample) is None

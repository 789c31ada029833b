"""The judge-assisted planner (:mod:`scoring.estimate.ppi_plan`): Neyman allocation over bucket x
domain x the judge's label, what the judge is worth in reviews, top-ups, and the rows it asks for
next (per part, in the seeded order)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scoring.estimate import allocate, make_sample, next_rows
from scoring.estimate.ppi_plan import PPI_PLAN_METHOD, plan_with_judge


def test_allocation_worked_numbers_for_parts_split_by_the_label() -> None:
    """A stratum of 2,000 rows split by a judge into 1,000 it calls correct (rate 0.99, S = 0.0995)
    and 1,000 it calls wrong (rate 0.5, S = 0.5): Neyman gives the "wrong" part 0.5/0.0995 = 5.0 times
    the rows of the "correct" one."""
    size, rate = np.array([1000.0, 1000.0]), np.array([0.99, 0.5])
    n = allocate(size, rate, np.sqrt(rate * (1 - rate)), np.zeros(2), 0.02)
    assert n[1] / n[0] == pytest.approx(0.5 / np.sqrt(0.99 * 0.01), rel=0.05)


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
    assert good.saved > 0.4 * good.human_planned  # the judge is worth over two fifths of the reviews here
    assert useless.plan.planned >= 0.85 * useless.human_planned  # a useless judge saves next to nothing
    assert good.plan.expected_half_width <= 0.02 + 1e-9
    assert set(good.plan.strata["judge"]) == {"correct", "wrong"}
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
    labelled = sample.with_row_index("_i").filter(pl.col("_i").is_in(rows["row_idx"].to_list()))
    wanted = dict(zip(zip(table["bucket"], table["judge"], table["Domain"]), table["remaining"]))
    got = labelled.group_by("bucket", pl.when(pl.col("judge_correct")).then(pl.lit("correct")).otherwise(
        pl.lit("wrong")).alias("judge"), "Domain").len()  # fmt: skip
    assert {(b, j, d): n for b, j, d, n in got.rows()} == {k: v for k, v in wanted.items() if v}
    assert not sample["reviewed"].gather(rows["row_idx"]).any()
    wide = plan_with_judge(sample, 0.5)
    assert wide is not None and wide.plan.remaining == 0  # a wide interval: what is reviewed suffices


def test_no_judge_labels_means_no_judge_plan() -> None:
    sample = make_sample(["both_pass"] * 10, ["Art"] * 10, [True] * 4 + [None] * 6)
    assert plan_with_judge(sample) is None

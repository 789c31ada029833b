"""The review planner and the seeded review order (issue 13): worked numbers, which rows come
next, and a simulation of 200 runs with known truth checking width and coverage."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from scoring.core.protocols import BUCKETS
from scoring.core.stats import Z95
from scoring.estimate import (
    PLAN_COLUMNS,
    allocate,
    estimate_accuracy,
    make_sample,
    next_rows,
    plan_review,
    review_order,
    review_priority,
    review_rank,
)

# --------------------------------------------------------------------------- the seeded order


def test_review_order_is_a_permutation_that_depends_on_the_seed_only() -> None:
    keys = [f"item-{i}" for i in range(50)]
    order = review_order(keys, 7)
    assert sorted(order.tolist()) == list(range(50))
    assert order.tolist() != list(range(50))
    assert review_order(keys, 7).tolist() == order.tolist()
    assert review_order(keys, 8).tolist() != order.tolist()
    assert review_order(keys, "7").tolist() == order.tolist()  # the seed is text: 7 and "7" agree
    rank = review_rank(keys, 7)
    assert rank[order].tolist() == list(range(50))
    assert review_order(pl.Series(keys), 7).tolist() == order.tolist()
    assert review_order(np.arange(10), 3).tolist() == review_order([str(i) for i in range(10)], 3).tolist()


def test_review_order_is_the_same_in_another_process() -> None:
    keys = [f"k{i}" for i in range(20)]
    code = f"from scoring.estimate import review_order; print(review_order({keys!r}, 'run-seed').tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == str(review_order(keys, "run-seed").tolist())
    # the priority is sha256 of "<seed>\x1f<key>", not Python's per-process hash()
    assert review_priority(["a"], 1).item() == hashlib.sha256(b"1\x1fa").hexdigest()[:16]


def test_a_sub_scope_in_the_order_is_that_scope_s_own_random_order() -> None:
    keys = np.array([f"item-{i}" for i in range(200)], dtype=object)
    scope = keys[::7]  # a domain, a bucket, an audit stratum...
    whole = keys[review_order(keys, 11)]
    restricted = [k for k in whole if k in set(scope)]
    assert restricted == scope[review_order(scope, 11)].tolist()
    # any prefix of a scope is a simple random sample: over many seeds, each of 4 rows of a scope
    # comes first about a quarter of the time, and one row precedes another half of the time.
    four = ["a", "b", "c", "d"]
    ranks = np.array([review_rank(four, seed) for seed in range(1000)])
    shares = np.bincount(ranks.argmin(axis=1), minlength=4) / 1000
    assert np.all(np.abs(shares - 0.25) < 0.055), shares  # sd 0.0137: 4 sd
    assert 0.44 < np.mean(ranks[:, 0] < ranks[:, 1]) < 0.56  # sd 0.016


# --------------------------------------------------------------------------- the plan


def test_plan_with_no_reviews_uses_the_prior_and_the_closed_form() -> None:
    # One stratum of 20,000 rows, prior 0.5: the estimator's variance 0.25 (1 - n/N)/(n - 1) = V = (h/z)²
    # gives n = (0.25 + V)/(V + 0.25/N) = 0.2501041/(1.04123e-4 + 1.25e-5) = 2144.5 -> 2145.
    plan = plan_review(make_sample(["both_pass"] * 20_000, ["Art"] * 20_000, [None] * 20_000), 0.02)
    assert (plan.planned, plan.reviewed, plan.remaining) == (2145, 0, 2145)
    assert plan.expected_half_width == pytest.approx(0.02, abs=1e-4) and plan.expected_half_width <= 0.02
    assert tuple(plan.strata.columns) == PLAN_COLUMNS
    assert plan.strata.row(0, named=True)["prior"] and plan.strata.row(0, named=True)["rate"] == 0.5
    assert "Neyman" in plan.method


def test_neyman_allocation_worked_numbers() -> None:
    # N = 8000 and 2000 (W 0.8, 0.2), p 0.9 and 0.5 (S 0.3, 0.5). Textbook: n_h ∝ N_h S_h = 2400 : 1000,
    # n = (sum W S)² / (V + sum W S²/N) = 0.34² / ((0.02/1.96)² + 0.122/10000) = 0.1156/1.1633e-4 = 993.7.
    # The estimator's p(1-p)/(n-1) asks a row or two more.
    n = allocate(np.array([8000.0, 2000.0]), np.array([0.9, 0.5]), np.array([0.3, 0.5]), np.array([2.0, 2.0]), 0.02)
    assert n.sum() == pytest.approx(993.7, rel=0.02)
    assert n[0] / n[1] == pytest.approx(2.4, rel=0.02)
    with pytest.raises(ValueError):
        allocate(np.array([10.0]), np.array([0.5]), np.array([0.5]), np.array([0.0]), 0.0)


def test_plan_tops_up_never_undoes_and_caps_at_the_stratum_size() -> None:
    # overlap_only already has 400 of 500 reviewed (more than Neyman would give it); a 3-row stratum
    # cannot take more than 3; a tight target on a small run is a census.
    truth = [True] * 200 + [False] * 200 + [None] * 100 + [None] * 3 + [None] * 9_000
    sample = make_sample(["overlap_only"] * 500 + ["exact_only"] * 3 + ["both_pass"] * 9_000, ["Art"] * 9_503, truth)
    plan = plan_review(sample, 0.02)
    rows = {r["bucket"]: r for r in plan.strata.to_dicts()}
    assert rows["overlap_only"]["planned"] == 400 and rows["overlap_only"]["remaining"] == 0
    assert rows["exact_only"]["planned"] <= 3 and rows["exact_only"]["rate"] == 0.5
    assert rows["both_pass"]["prior"] and rows["both_pass"]["remaining"] == rows["both_pass"]["planned"] > 0
    assert plan.remaining == sum(r["remaining"] for r in rows.values())
    census = plan_review(make_sample(["both_pass"] * 50, ["Art"] * 50, [None] * 50), 0.01)
    assert census.planned == 50 and census.expected_half_width == 0.0


def test_next_rows_are_each_stratum_s_first_unreviewed_rows_in_the_seeded_order() -> None:
    n = 300
    buckets = [BUCKETS[i % 4] for i in range(n)]
    domains = ["Art" if i % 3 else "Sci" for i in range(n)]
    truth = [True if i % 10 == 0 else None for i in range(n)]
    sample = make_sample(buckets, domains, truth).with_columns(conflict=pl.Series([i == 1 for i in range(n)]))
    plan = plan_review(sample, 0.05)
    picked = next_rows(sample, plan, "seed-1")
    assert picked.columns == ["row_idx", "item_key", "bucket", "Domain", "rank", "conflict"]
    assert not sample["reviewed"].gather(picked["row_idx"]).any()
    assert picked["rank"].is_sorted()
    rank = review_rank(sample["item_key"], "seed-1")
    for r in plan.strata.to_dicts():
        mine = picked.filter((pl.col("bucket") == r["bucket"]) & (pl.col("Domain") == r["Domain"]))
        assert mine.height == r["remaining"]
        rows = sample.with_row_index("i").filter(
            (pl.col("bucket") == r["bucket"]) & (pl.col("Domain") == r["Domain"]) & ~pl.col("reviewed")
        )
        expected = sorted(rows["i"].to_list(), key=lambda i: rank[i])[: r["remaining"]]
        assert sorted(mine["row_idx"].to_list()) == sorted(expected)
    assert picked.equals(next_rows(sample, plan, "seed-1", rank=rank))
    assert not picked.equals(next_rows(sample, plan, "seed-2"))
    if 1 in picked["row_idx"].to_list():
        assert picked.filter(pl.col("row_idx") == 1)["conflict"].item()
    # The queue's own ranks (any sortable numbers, e.g. uint64 hashes) may be passed instead.
    queue_rank = rank.astype(np.uint64) * np.uint64(1000) + np.uint64(7)
    assert next_rows(sample, plan, rank=queue_rank)["row_idx"].to_list() == picked["row_idx"].to_list()
    with pytest.raises(ValueError, match="seed"):
        next_rows(sample, plan)


# --------------------------------------------------------------------------- simulation


N_ROWS = 20_000
DOMAINS = ("Art", "Geography", "History", "Science", "Sports")
DOMAIN_SHARES = (0.1, 0.3, 0.25, 0.2, 0.15)
BUCKET_SHARES = {"both_pass": 0.55, "both_fail": 0.25, "exact_only": 0.05, "overlap_only": 0.15}
BUCKET_ACCURACY = {"both_pass": 0.97, "both_fail": 0.06, "exact_only": 0.85, "overlap_only": 0.55}
RUNS = 200
TARGET = 0.02


def test_reviewing_the_planned_rows_gives_the_planned_width_and_covers_the_truth() -> None:
    """200 simulated runs of 20,000 rows (buckets and domains of different accuracies; truth drawn
    per run). Reviewers first do a pilot plan for +-5 points, then the plan for +-2 points; the
    reviewed verdicts are the truth. The interval should be about +-2 points and cover the run's
    true accuracy in about 95% of runs."""
    rng = np.random.default_rng(2026)
    dom = rng.choice(len(DOMAINS), N_ROWS, p=DOMAIN_SHARES)
    buc = rng.choice(len(BUCKETS), N_ROWS, p=[BUCKET_SHARES[b] for b in BUCKETS])
    accuracy = np.array([BUCKET_ACCURACY[b] for b in BUCKETS])[buc] + (dom - 2) * 0.01
    base = make_sample(np.array(BUCKETS)[buc].tolist(), np.array(DOMAINS)[dom].tolist(), [None] * N_ROWS)

    def reviewed(truth: np.ndarray, done: np.ndarray) -> pl.DataFrame:
        return base.with_columns(truth=pl.Series(truth).set(pl.Series(~done), None), reviewed=pl.Series(done))

    covered, widths, planned = [], [], []
    for run in range(RUNS):
        truth = rng.random(N_ROWS) < accuracy
        rank = review_rank(base["item_key"], f"run-{run}")
        done = np.zeros(N_ROWS, dtype=bool)
        sample = reviewed(truth, done)
        for half_width in (0.05, TARGET):
            plan = plan_review(sample, half_width)
            done[next_rows(sample, plan, f"run-{run}", rank=rank)["row_idx"].to_numpy()] = True
            sample = reviewed(truth, done)
        est = estimate_accuracy(sample).combined
        assert est.reviewed == done.sum() == plan.planned
        covered.append(est.ci_low <= truth.mean() <= est.ci_high)
        widths.append(est.half_width)
        planned.append(plan.planned)
    coverage, widths = float(np.mean(covered)), np.array(widths)
    under = float(np.mean(widths <= TARGET))
    line = (
        f"coverage {coverage:.3f}, half-width mean {widths.mean():.4f} median {np.median(widths):.4f} "
        f"[{widths.min():.4f}, {widths.max():.4f}], at or under +-{TARGET}: {under:.3f}, "
        f"rows reviewed mean {np.mean(planned):.0f}"
    )
    print(line)
    assert 0.94 <= coverage <= 0.97, line
    assert under >= 0.90, line  # a finished plan gives what was asked
    assert widths.mean() >= 0.85 * TARGET, line  # and not much more: reviews are not wasted
    assert widths.max() < 1.1 * TARGET, line
    assert np.mean(planned) < 0.5 * (0.25 - TARGET**2) / ((TARGET / Z95) ** 2 + 0.25 / N_ROWS)  # far below worst case

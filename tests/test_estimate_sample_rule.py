"""Only a random sample enters the estimate (issue 18, section 1): rows opened by hand, rows
skipped in the queue and rows left in conflict must not bias it. Simulated runs with a known
truth, through the same rule the stored runs use (:func:`scoring.estimate.sample.random_prefix`),
and the rule end to end through the database and the review loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from estimate_sim import population

from scoring import ingest, review, store
from scoring.core.export_format import to_csv_bytes
from scoring.core.protocols import BUCKETS
from scoring.estimate import estimate_accuracy, make_sample
from scoring.estimate.sample import SAMPLE_RULE, random_prefix
from scoring.estimate.stored_run import stored_estimate
from scoring.review.loop import ReviewLoop
from scoring.store import make_engine
from scoring.verdict_export import build_export

RUNS = 200


def _run(rng: np.random.Generator) -> tuple[pl.DataFrame, np.ndarray, np.ndarray, float]:
    """A 5,000-row run reviewed as the issue tells it: 40 hard (wrong) rows opened from Compare
    and marked wrong, then the queue in review order: 20 hard rows skipped and never reviewed,
    10 left in conflict, 400 marked. Returns (sample with every settled row reviewed, rank,
    served, true accuracy)."""
    size, right = population(rng, 5000, 8)
    cells = size.ravel()
    bucket = np.repeat(np.repeat(np.arange(len(BUCKETS)), size.shape[1]), cells)
    domain = np.repeat(np.tile(np.arange(size.shape[1]), len(BUCKETS)), cells)
    truth = np.concatenate([rng.permutation(np.arange(n) < k) for n, k in zip(cells, right.ravel())])
    rows = len(truth)
    rank = rng.permutation(rows)
    order = np.argsort(rank)
    settled = np.zeros(rows, dtype=bool)
    served = np.zeros(rows, dtype=bool)
    skipped = conflict = marked = 0
    for i in order:  # the queue, in review order
        if marked == 400:
            break
        served[i] = True
        if not truth[i] and skipped < 20 and rng.random() < 0.5:
            skipped += 1  # hard: skipped, never come back to
        elif not truth[i] and conflict < 10 and rng.random() < 0.5:
            conflict += 1  # hard: two reviewers disagree, nobody adjudicates
        else:
            settled[i] = True
            marked += 1
    # Compare's disagreements are rows the metrics disagree on: hard rows of those two buckets
    disputed = np.isin(bucket, [BUCKETS.index("exact_only"), BUCKETS.index("overlap_only")])
    outside = np.flatnonzero(~served & ~truth & disputed)
    opened = rng.choice(outside, size=min(40, len(outside)), replace=False)
    settled[opened] = True  # marked wrong, rightly, from the Compare page
    sample = make_sample(
        np.array(BUCKETS)[bucket].tolist(), [f"d{d}" for d in domain], np.where(settled, truth, None).tolist()
    )
    return sample, rank, served, float(truth.mean())


def test_only_the_random_prefix_counts_and_the_interval_covers_despite_hand_picked_rows() -> None:
    rng = np.random.default_rng(18)
    old_hits, new_hits, old_err, new_err, missing, by_hand = [], [], [], [], [], []
    for _ in range(RUNS):
        sample, rank, served, truth = _run(rng)
        old = estimate_accuracy(sample).combined  # the landed rule: every settled row counts
        ruled = random_prefix(sample, rank, served)
        new = estimate_accuracy(ruled).combined
        old_hits.append(old.ci_low <= truth <= old.ci_high)
        new_hits.append(new.ci_low <= truth <= new.ci_high)
        old_err.append(old.estimate - truth)
        new_err.append(new.estimate - truth)
        missing.append(new.missing)
        by_hand.append(int(ruled["by_hand"].sum()))
    old_cov, new_cov = float(np.mean(old_hits)), float(np.mean(new_hits))
    line = (
        f"coverage with the random-prefix rule {new_cov:.3f} (bias {100 * np.mean(new_err):+.2f} points), "
        f"with every settled row counted {old_cov:.3f} (bias {100 * np.mean(old_err):+.2f} points); "
        f"missing per run {np.mean(missing):.1f}, reviewed by hand and left out {np.mean(by_hand):.1f}"
    )
    print(line)
    assert new_cov >= 0.94, line
    assert old_cov < 0.90, line  # why the rule is needed
    assert np.mean(missing) == pytest.approx(30, abs=3) and np.mean(by_hand) >= 35, line


def test_the_rule_reads_prefix_missing_and_by_hand_per_stratum() -> None:
    # One stratum of 6 rows in rank order r0..r5. The queue served r0..r3 (r2 skipped, r3 in
    # conflict); r5 was opened by hand. Prefix = r0..r3: r0, r1 reviewed; r2, r3 missing; r5 by hand.
    sample = make_sample(["both_pass"] * 6, ["Art"] * 6, [True, False, None, None, None, True])
    ruled = random_prefix(sample, np.array([0, 1, 2, 3, 4, 5]), np.array([True, True, True, True, False, False]))
    assert ruled["reviewed"].to_list() == [True, True, False, False, False, False]
    assert ruled["missing"].to_list() == [False, False, True, True, False, False]
    assert ruled["by_hand"].to_list() == [False, False, False, False, False, True]
    est = estimate_accuracy(ruled).combined
    # 1 of 2 reviewed right, 2 of the 4-row sample missing: the interval spans 1/4 (both wrong)
    # to 3/4 (both right) of the sample's share, widened by sampling.
    assert (est.reviewed, est.correct, est.missing) == (2, 1, 2)
    assert est.estimate == pytest.approx(0.5)
    low = estimate_accuracy(make_sample(["both_pass"] * 6, ["Art"] * 6, [True, False, False, False, None, None]))
    high = estimate_accuracy(make_sample(["both_pass"] * 6, ["Art"] * 6, [True, False, True, True, None, None]))
    # the union of the interval without them and those with them all wrong and all right
    assert est.ci_low <= low.combined.ci_low + 1e-12 and est.ci_high >= high.combined.ci_high - 1e-12
    assert est.missing_width >= 0  # here the two reviewed rows' own interval is wider still
    # 100 rows, the queue served 50: 40 reviewed (30 right), 10 skipped. The missing tenth of the
    # sample costs width: 10 of 50 unknown move the share by up to 0.2 of the sample.
    truth = [True] * 30 + [False] * 10 + [None] * 60
    wide = random_prefix(make_sample(["both_pass"] * 100, ["Art"] * 100, truth), np.arange(100), np.arange(100) < 50)
    est = estimate_accuracy(wide).combined
    assert (est.reviewed, est.missing) == (40, 10) and est.estimate == pytest.approx(0.75)
    assert 0.1 < est.missing_width < 0.25 and est.ci_low < 0.6 and est.ci_high > 0.8
    assert "random sample" in SAMPLE_RULE and "out of order" in SAMPLE_RULE


def test_a_stored_run_counts_queue_rows_and_lists_rows_opened_by_hand(tmp_path: Path) -> None:
    """Through the database and the review loop: rows marked in the queue count, a row opened on
    purpose (``?row=``, Compare, My verdicts) past the queue's reach does not, restored marks do
    not, and every verdict still counts in the adjudicated figures."""
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    body = "question,answer,Domain,response\n" + "".join(f"q{i},a{i},Art,a{i} b\n" for i in range(30))
    run = ingest.save_run(engine, body.encode(), "m_hindi.csv").run
    scope = review.queue_scope(store.load_scored(engine, run.id), None, None, seed=run.review_seed)
    loop = ReviewLoop(run.id)
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    for _ in range(5):  # alice reviews the first five rows the queue serves
        row = review.next_in_queue(scope, engine, "alice")
        screen = loop.show(row, keys[row])
        loop.act(engine, "alice", "correct", screen.number)
    order = [int(r) for r in scope.row_idx]  # the queue's order
    far = order[-1]  # the last row of the order, opened on purpose and marked wrong
    loop.open_row(far)
    screen = loop.show(far, keys[far])
    assert screen.via == review.OPENED
    loop.act(engine, "alice", "wrong", screen.number)
    review.record_marks(
        engine, [{"item_key": keys[order[-2]], "run_id": run.id, "reviewer": "bob", "verdict": "wrong"}]
    )  # (restored from an export)
    stored, figures = stored_estimate(engine, run.id)
    sample = figures.sample
    assert int(sample["reviewed"].sum()) == 5
    assert set(sample.filter(pl.col("by_hand"))["row_idx"].to_list()) == {far, order[-2]}
    assert figures.accuracy.combined.reviewed == 5 and figures.accuracy.combined.estimate == 1.0
    assert len(stored.current) == 7  # every verdict still counts everywhere else (export, kappa)

    # An export restored into a fresh database keeps which rows the queue served (the export's
    # "via") and the order it served them in (the export's review seed; tests/test_restore_estimate.py).
    exported = to_csv_bytes(build_export(engine, run.id))
    fresh = make_engine(f"sqlite:///{tmp_path / 'restored.db'}")
    again = ingest.save_run(fresh, exported, "m_hindi_export.csv").run
    assert again.review_seed == run.review_seed
    assert review.served_keys(fresh, again.id) == review.served_keys(engine, run.id)
    assert keys[far] not in review.served_keys(fresh, again.id)
    fresh.dispose()
    engine.dispose()

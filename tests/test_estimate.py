"""The true-accuracy estimator, the metrics against the reviewers, what-if rules and the reasons
analytics (issue 13), on worked numbers computed by hand in the comments."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import polars as pl
import pytest

from scoring.core import verdict_rules as A
from scoring.core.protocols import bucket, exact_substring, normalize_pair, normalize_text, word_overlap
from scoring.core.stats import (
    Z95,
    rogan_gladen,
    wilson_adjusted_variance,
    wilson_centre,
    wilson_from_share,
    wilson_interval,
)
from scoring.estimate import (
    ACCURACY_METHOD,
    GOLDEN_WRONG,
    REASON_COLUMNS,
    REPORT_COLUMNS,
    SPEC,
    RunRows,
    build_strata,
    estimate_accuracy,
    golden_wrong_csv,
    golden_wrong_jsonl,
    golden_wrong_report,
    make_sample,
    metric_quality,
    reason_counts,
    reviewed_sample,
    run_estimate,
    strip_suffix,
    what_if,
)
from scoring.estimate.strata import model_variances, weights, wilson_variances
from scoring.estimate.whatif import ascii_digits, drop_format, nfc

Z2 = Z95 * Z95  # 3.8415


def cells(*spec: tuple[str, str, int, int, int]) -> pl.DataFrame:
    """A sample from (bucket, domain, rows, reviewed, correct) cells; reviewed rows come first."""
    buckets: list[str] = []
    domains: list[str] = []
    truth: list[bool | None] = []
    for name, domain, size, reviewed, correct in spec:
        buckets += [name] * size
        domains += [domain] * size
        truth += [True] * correct + [False] * (reviewed - correct) + [None] * (size - reviewed)
    return make_sample(buckets, domains, truth)


# --------------------------------------------------------------------------- formulas


def test_wilson_adjusted_variance_and_rogan_gladen_worked_numbers() -> None:
    # 3 of 10 reviewed out of 100: p~ = (3 + 1.9207)/(10 + 3.8415) = 0.35551;
    # 0.35551 x 0.64449 / 13.8415 x (1 - 10/100) = 0.014898.
    assert wilson_centre(3, 10) == pytest.approx(0.355507, abs=1e-6)
    assert wilson_adjusted_variance(3, 10, 100) == pytest.approx(0.014898, abs=1e-6)
    assert wilson_adjusted_variance(10, 10, 10) == 0.0  # a census has no sampling error
    assert wilson_adjusted_variance(0, 10, 1000) > 0  # 0 correct: not zero width
    # raw 0.80, Se 0.90, Sp 0.85 -> (0.80 + 0.85 - 1)/(0.90 + 0.85 - 1) = 0.65/0.75 = 0.8667
    assert rogan_gladen(0.80, 0.90, 0.85) == pytest.approx(0.866667, abs=1e-6)
    assert rogan_gladen(0.99, 0.90, 0.85) == 1.0  # (0.84/0.75 = 1.12) clipped
    assert rogan_gladen(0.05, 0.90, 0.85) == 0.0  # (-0.10/0.75) clipped
    assert rogan_gladen(0.5, 0.5, 0.5) is None  # Se + Sp = 1: no better than chance
    # Wilson on a share and a count agree at integer n: 412/500 -> [0.7882, 0.8549] (the notes)
    assert wilson_from_share(412 / 500, 500) == pytest.approx(wilson_interval(412, 500), abs=1e-12)
    assert wilson_from_share(0.3, 0) == (0.0, 1.0)


def test_vectorised_variance_matches_the_scalar_formula() -> None:
    strata = build_strata(
        cells(("both_pass", "Art", 100, 10, 3), ("both_fail", "Art", 50, 7, 0), ("exact_only", "Art", 4, 4, 4))
    )
    got = wilson_variances(strata, strata.correct)
    assert got.tolist() == pytest.approx(
        [wilson_adjusted_variance(3, 10, 100), wilson_adjusted_variance(0, 7, 50), 0.0]
    )


# --------------------------------------------------------------------------- the estimate


def test_stratified_estimate_worked_example() -> None:
    # both_pass 800 rows, 10 reviewed all correct; overlap_only 200 rows, 10 reviewed, 4 correct.
    # Estimate 0.8 x 1 + 0.2 x 0.4 = 0.88.
    # both_pass: 10 reviewed rows (POOL_FROM = 8 or more), all correct, so its variance is taken at the
    #   Jeffreys share of its bucket's all-correct rows, (10 + 1/2)/11 = 0.954545:
    #   var 0.954545 x 0.045455 / 9 x (1 - 10/800) = 0.0047607
    # overlap_only: bucket share 4.5/11 = 0.409091, p' = 4.409091/11 = 0.400826,
    #   var 0.400826 x 0.599174 / 9 x 0.95 = 0.025351
    # Var = 0.8² x 0.0047607 + 0.2² x 0.025351 = 0.0040609; se 0.063725.
    # Effective n at the same shares, 0.8 x 0.954545 + 0.2 x 0.400826 = 0.843801: 0.843801 x 0.156199
    # / 0.0040609 = 32.456; Wilson(0.88, 32.456) = [0.72668, 0.95289].
    est = estimate_accuracy(cells(("both_pass", "Art", 800, 10, 10), ("overlap_only", "Art", 200, 10, 4)))
    c = est.combined
    assert c.estimate == pytest.approx(0.88)
    assert c.standard_error == pytest.approx(0.063725, abs=1e-6)
    assert (c.ci_low, c.ci_high) == (pytest.approx(0.72668, abs=1e-5), pytest.approx(0.95289, abs=1e-5))
    assert (c.rows, c.reviewed, c.correct, c.unknown_weight, c.missing) == (1000, 20, 14, 0.0, 0)
    assert c.method == ACCURACY_METHOD and "Wilson" in c.method and "(1-n/N)" in c.method
    assert est.fell_back == [] and est.unreviewed == []


def test_all_or_none_correct_does_not_collapse_to_zero_width() -> None:
    # 10 of 10 correct out of 1000: p' = 10.5/11 = 0.954545 (the Jeffreys share of the bucket's
    # all-correct rows), var p'(1-p')/9 x 0.99 = 0.0047727 (se 0.069085), effective n
    # p'(1-p')/var = 9/0.99 = 9.0909: Wilson's lower bound
    # at 10 of 10 is n/(n + z²) = 9.0909/12.9324 = 0.70296. Ten rows all correct leave the true
    # share anywhere above about 0.7, as ten rows should, not [0.96, 1].
    c = estimate_accuracy(cells(("both_pass", "Art", 1000, 10, 10))).combined
    assert (c.estimate, c.ci_high) == (1.0, 1.0)
    assert c.standard_error == pytest.approx(0.069085, abs=1e-6)
    assert c.ci_low == pytest.approx(0.70296, abs=1e-5)
    # 0 of 10: the mirror image, [0, 0.29704]
    c = estimate_accuracy(cells(("both_fail", "Art", 1000, 10, 0))).combined
    assert (c.estimate, c.ci_low) == (0.0, 0.0)
    assert c.ci_high == pytest.approx(0.29704, abs=1e-5)


def test_a_fully_reviewed_run_is_its_adjudicated_accuracy_with_no_interval() -> None:
    sample = cells(("both_pass", "Art", 5, 5, 4), ("both_fail", "Art", 3, 3, 1), ("overlap_only", "Sci", 1, 1, 1))
    est = estimate_accuracy(sample)
    assert est.combined.estimate == pytest.approx(6 / 9)
    assert est.combined.ci_low == est.combined.ci_high == pytest.approx(6 / 9)
    assert est.fell_back == []  # one row, all reviewed: it stands alone
    assert [(d.scope, d.estimate) for d in est.domains] == [("Art", pytest.approx(5 / 8)), ("Sci", 1.0)]


def test_a_thin_stratum_falls_back_to_its_bucket_pooled_across_domains() -> None:
    # both_pass/Art 100 rows, 4 reviewed, 3 correct; both_pass/Science 100 rows, 1 reviewed, wrong.
    # Science has fewer than 2 reviewed rows: its reviewed row counts as it is and its other 99
    # rows take the bucket's pooled share 3/5 = 0.6: 0.99 x 0.6 = 0.594. Combined
    # 0.5 x 0.75 + 0.5 x 0.594 = 0.672. As a linear form in the cells' shares:
    # a_Art = 0.5 + 0.495 x 4/5 = 0.896, a_Science = 0.5 x 1/100 + 0.495 x 1/5 = 0.104.
    # The bucket has one cell standing alone, so the spread between its cells is guessed wide:
    # tau² = p(1-p)/4 at the pooled (3 + 1/2)/6 = 0.58333, 0.060764; Science's 99 unreviewed rows add
    # (99/200)² (0.060764 + 0.58333 x 0.41667/99) = 0.015489 to the variance.
    est = estimate_accuracy(cells(("both_pass", "Art", 100, 4, 3), ("both_pass", "Science", 100, 1, 0)))
    c = est.combined
    assert c.estimate == pytest.approx(0.672)
    w = weights(build_strata(cells(("both_pass", "Art", 100, 4, 3), ("both_pass", "Science", 100, 1, 0))))
    assert list(w.a) == [pytest.approx(0.896), pytest.approx(0.104)]
    strata = build_strata(cells(("both_pass", "Art", 100, 4, 3), ("both_pass", "Science", 100, 1, 0)))
    assert model_variances(strata, strata.correct) == pytest.approx(
        0.495**2 * (0.0607639 + 0.583333 * 0.416667 / 99), rel=1e-5
    )
    assert c.ci_low < 0.3 and c.ci_high > 0.9  # one reviewed row says little of the other 99
    assert est.fell_back == [("both_pass", "Science")]
    assert [(d.scope, d.estimate) for d in est.domains] == [("Art", 0.75), ("Science", pytest.approx(0.594))]
    used = dict(zip(est.strata["Domain"], est.strata["used"]))
    assert used == {"Art": "stratum", "Science": "bucket"}
    assert est.strata.filter(pl.col("Domain") == "Science")["rate"].item() == pytest.approx(0.6)


def test_a_bucket_nobody_reviewed_widens_the_interval_by_its_whole_weight() -> None:
    # both_pass 300 rows, 10 reviewed, 9 correct (weight 0.75); both_fail 100 rows, none reviewed
    # (weight 0.25). Known part 0.75 x 0.9 = 0.675; the unknown quarter counts 0.5: estimate 0.8.
    # The known part's own share 0.9 has p' = (9 + 9.5/11)/11 = 0.89669, var p'(1-p')/9 x (1 - 10/300)
    # = 0.0099495, effective n p'(1-p')/var = 9.3103; Wilson(0.9, 9.3103) = [0.58332, 0.98301];
    # scaled by 0.75 and the unknown quarter added on top: [0.43749, 0.98726].
    est = estimate_accuracy(cells(("both_pass", "Art", 300, 10, 9), ("both_fail", "Art", 100, 0, 0)))
    c = est.combined
    assert c.estimate == pytest.approx(0.8)
    assert c.unknown_weight == pytest.approx(0.25) and not c.complete
    assert c.ci_low == pytest.approx(0.43749, abs=1e-5) and c.ci_high == pytest.approx(0.98726, abs=1e-5)
    assert est.unreviewed == [("both_fail", "Art")]
    # Nothing reviewed at all: the prior, and the whole range.
    c = estimate_accuracy(cells(("both_pass", "Art", 10, 0, 0))).combined
    assert (c.estimate, c.ci_low, c.ci_high) == (0.5, 0.0, 1.0)


# --------------------------------------------------------------------------- from final verdicts


def final_frame() -> pd.DataFrame:
    """Six rows through the real final_verdicts: agreed, conflict, adjudicated conflict, unreviewed."""
    scored = pd.DataFrame(
        {
            "row_idx": range(6),
            "item_key": [f"k{i}" for i in range(6)],
            "question": [f"q{i}" for i in range(6)],
            "answer": ["a"] * 6,
            "response": ["r"] * 6,
            "Domain": ["Art", "Art", "Art", "Sci", "Sci", "Sci"],
            "bucket": ["overlap_only", "overlap_only", "both_pass", "both_fail", "overlap_only", "exact_only"],
            "exact_correct": [False, False, True, False, False, True],
            "overlap_correct": [True, True, True, False, True, False],
        }
    )
    t = pd.Timestamp("2026-01-01", tz="UTC")
    current = pd.DataFrame(
        [
            ("k0", "ann", "correct", "paraphrase", "", t),
            ("k1", "ann", "correct", "", "", t),
            ("k1", "bob", "wrong", "different claim", "", t),
            ("k2", "ann", "wrong", GOLDEN_WRONG, "gold is off", t),
            ("k4", "ann", "correct", "", "", t),
            ("k4", "bob", "wrong", "", "", t),
        ],
        columns=["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at"],
    )
    decisions = pd.DataFrame(
        {"adjudicator": ["carol"], "decision": ["wrong"], "adjudication_note": [""]},
        index=pd.Index(["k4"], name="item_key"),
    )
    labels = {"k0": "CORRECT", "k2": "NOT_ATTEMPTED", "k3": "UNPARSED", "k5": "INCORRECT"}
    return A.final_verdicts(scored, A.human_summary(current), labels, False, decisions)


def test_reviewed_sample_reads_final_verdicts() -> None:
    sample = reviewed_sample(final_frame())
    # k0 agreed correct; k1 conflict (not reviewed); k2 wrong; k3 nobody; k4 adjudicated wrong; k5 nobody.
    assert sample["reviewed"].to_list() == [True, False, True, False, True, False]
    assert sample["truth"].to_list() == [True, None, False, None, False, None]
    assert sample["conflict"].to_list() == [False, True, False, False, False, False]
    assert sample["judge_correct"].to_list() == [True, None, False, None, None, False]
    assert sample["row_idx"].to_list() == list(range(6))
    assert {"answer", "response", "question"} <= set(sample.columns)
    polars_final = pl.from_pandas(final_frame().drop(columns=["reviewed_at"]))
    assert reviewed_sample(polars_final).equals(sample)


def test_a_sample_without_all_text_carries_it_on_settled_rows_and_changes_no_figure() -> None:
    """The estimate's own sample converts the text of settled rows only (a million rows' text is
    not copied again); every other column, and what-if, are those of the full sample."""
    full = reviewed_sample(final_frame())
    for final in (final_frame(), pl.from_pandas(final_frame().drop(columns=["reviewed_at"]))):
        lean = reviewed_sample(final, all_text=False)
        assert lean.columns == full.columns
        text = ["question", "answer", "response"]
        assert lean.drop(text).equals(full.drop(text))
        for column in text:
            settled = [v if r else None for v, r in zip(full[column].to_list(), full["reviewed"].to_list())]
            assert lean[column].to_list() == settled
        assert lean["answer"].null_count() == 3
        assert what_if(lean).equals(what_if(full))
    assert run_estimate(final_frame()).sample["question"].null_count() == 3


def test_run_estimate_puts_raw_adjudicated_and_estimated_side_by_side() -> None:
    figures = run_estimate(final_frame(), half_width=0.05)
    table = figures.comparison()
    assert table["scope"].to_list() == ["Art", "Sci", "combined"]
    art = table.row(0, named=True)
    assert (art["rows"], art["reviewed"], art["raw_exact"], art["raw_overlap"]) == (3, 2, pytest.approx(1 / 3), 1.0)
    # Art adjudicated: k0 correct, k1 pending, k2 wrong -> 1/3 to 2/3
    assert (art["adjudicated_low"], art["adjudicated_high"]) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    # Art estimate: overlap_only 2 rows, 1 reviewed (k0, correct) -> falls back: k0 counts as it is
    # and the other row takes overlap_only pooled over Art and Sci (k0 correct, k4 wrong = 0.5), so
    # the cell is (1 + 0.5)/2 = 0.75; both_pass 1 row, reviewed wrong = 0. (2 x 0.75 + 1 x 0)/3 = 0.5.
    assert figures.accuracy.domains[0].estimate == pytest.approx(0.5)
    # ... but 2 reviewed rows give Art no interval: the table every output reads prints no figure
    # (issue 36), only what to review: Art's 3 rows, one more (10 asked for, 3 is all it has).
    assert (art["estimate"], art["ci_low"], art["ci_high"], art["shown"]) == (None, None, None, False)
    assert art["what_to_review"] == "Review at least 1 more row of the random sample in Art to get an estimate."
    assert ("overlap_only", "Art") in figures.accuracy.fell_back
    assert "raw_judge" in table.columns and figures.has_judge
    # judge: k0 CORRECT, k2 NOT_ATTEMPTED, k5 INCORRECT judged -> raw 1/3 over judged rows
    assert table.row(2, named=True)["raw_judge"] == pytest.approx(1 / 3)
    assert json.dumps(figures.as_dict())  # JSON-ready throughout


# --------------------------------------------------------------------------- metrics vs reviewers


def test_precision_recall_specificity_and_rogan_gladen_worked_numbers() -> None:
    # W = 0.6 both_pass (p 0.9), 0.1 exact_only (0.5), 0.1 overlap_only (0.6), 0.2 both_fail (0.1).
    # exact passes both_pass and exact_only:
    #   TP = 0.6x0.9 + 0.1x0.5 = 0.59, FP = 0.6x0.1 + 0.1x0.5 = 0.11 -> precision 0.59/0.70 = 0.842857
    #   FN = 0.1x0.6 + 0.2x0.1 = 0.08 -> recall 0.59/0.67 = 0.880597
    #   TN = 0.1x0.4 + 0.2x0.9 = 0.22 -> specificity 0.22/0.33 = 0.666667
    #   raw 0.70 -> Rogan-Gladen (0.70 + 0.666667 - 1)/(0.880597 + 0.666667 - 1) = 0.366667/0.547264 = 0.67,
    #   the stratified estimate itself (0.59 + 0.08): a metric constant within buckets gives it back.
    sample = cells(
        ("both_pass", "Art", 600, 10, 9),
        ("exact_only", "Art", 100, 10, 5),
        ("overlap_only", "Art", 100, 10, 6),
        ("both_fail", "Art", 200, 10, 1),
    )
    exact, overlap = metric_quality(sample)
    assert exact.metric == "exact" and exact.raw_accuracy == pytest.approx(0.70)
    assert exact.precision.value == pytest.approx(0.842857, abs=1e-6)
    assert exact.recall.value == pytest.approx(0.880597, abs=1e-6)
    assert exact.specificity.value == pytest.approx(0.666667, abs=1e-6)
    assert exact.corrected.value == pytest.approx(0.67, abs=1e-9)
    assert estimate_accuracy(sample).combined.estimate == pytest.approx(0.67)
    assert exact.agreement == [[14, 6], [7, 13]]
    assert (exact.precision.reviewed, exact.recall.reviewed, exact.specificity.reviewed) == (20, 21, 19)
    for ratio in (exact.precision, exact.recall, exact.specificity):
        assert 0 <= ratio.ci_low < ratio.value < ratio.ci_high <= 1
    # the exact metric's verdict follows the buckets, so Rogan-Gladen is the stratified estimate and
    # takes its interval (the delta method on Se and Sp cancelled to a sliver there)
    stratified = estimate_accuracy(sample).combined
    assert (exact.corrected.ci_low, exact.corrected.ci_high) == (stratified.ci_low, stratified.ci_high)
    # overlap: TP = 0.54 + 0.06 = 0.60, FP = 0.06 + 0.04 = 0.10 -> precision 0.857143
    assert overlap.precision.value == pytest.approx(0.857143, abs=1e-6)
    assert "judge" not in [m.metric for m in (exact, overlap)]


def test_a_ratio_from_one_random_sample_is_the_wilson_interval() -> None:
    # One stratum, exact passes every row: precision = the share correct, 412 of 500 reviewed out of
    # 100,000 rows. At the shrunk share q (the same in the variance and the effective n), Kish
    # n_eff = q(1-q)/(q(1-q)/(n-1) (1 - f)) = (n-1)/(1-f) = 499/0.995 = 501.5 (to 1e-5: the share of
    # passes, 1, is shrunk by one pseudo-row too): Wilson on it is the notes' [0.7882, 0.8549].
    sample = cells(("both_pass", "Art", 100_000, 500, 412))
    precision = metric_quality(sample)[0].precision
    assert precision.value == pytest.approx(0.824)
    assert precision.effective_n == pytest.approx(499 / (1 - 500 / 100_000), rel=1e-5)
    assert (precision.ci_low, precision.ci_high) == (pytest.approx(0.7882, abs=5e-4), pytest.approx(0.8549, abs=5e-4))


def test_all_correct_passes_still_get_an_interval_and_the_judge_counts_only_judged_rows() -> None:
    truth = [True] * 8 + [None] * 92 + [False] * 8 + [None] * 92
    judge = [True] * 6 + [False] * 2 + [None] * 92 + [False] * 7 + [True] + [None] * 92
    sample = make_sample(["both_pass"] * 100 + ["both_fail"] * 100, ["Art"] * 200, truth, judge_correct=judge)
    exact, _, judge_q = metric_quality(sample)
    assert exact.precision.value == 1.0 and exact.precision.ci_low < 0.8  # 8 of 8: not [1, 1]
    assert judge_q.metric == "judge" and judge_q.rows == 16 and judge_q.reviewed == 16
    # judged rows: both_pass 8 (6 CORRECT, all truly correct), both_fail 8 (1 CORRECT, all truly wrong)
    # TP 6, FP 1 per 8+8 reviewed of equal-size strata -> precision 6/7, recall 6/8, specificity 7/8
    assert judge_q.precision.value == pytest.approx(6 / 7)
    assert judge_q.recall.value == pytest.approx(0.75)
    assert judge_q.specificity.value == pytest.approx(0.875)
    assert judge_q.raw_accuracy == pytest.approx(7 / 16)


def test_unreviewed_buckets_widen_the_ratios_to_every_value_their_rows_could_take() -> None:
    # Thirds: both_pass fully reviewed (80 of 100 right), both_fail fully reviewed (10 of 100 right),
    # overlap_only nobody reviewed (exact fails there: 1/3 of the run, truth unknown).
    # Covered: TP 0.8/3, FP 0.2/3, FN 0.1/3, TN 0.9/3 (censuses: no sampling error).
    #   precision 0.8: the unknown rows never pass exact, so nothing to widen: [0.8, 0.8]
    #   recall 0.8/0.9 = 0.8889 over a mass of 0.3; the unknown third may all be right (FN):
    #     low 0.8889 x 0.3/(0.3 + 0.3333) = 0.42105, high 0.8889
    #   specificity 0.9/1.1 = 0.81818 over 0.36667; the unknown third may all be wrong (TN):
    #     low 0.81818, high (0.3 + 0.3333)/(0.36667 + 0.3333) = 0.90476
    #   Rogan-Gladen (1/3 + 0.81818 - 1)/(0.88889 + 0.81818 - 1) = 0.21429; corners:
    #     Se 0.8889, Sp 0.81818 -> 0.21429; Se 0.42105, Sp 0.90476 -> 0.23810/0.32581 = 0.73077
    sample = cells(
        ("both_pass", "Art", 100, 100, 80), ("both_fail", "Art", 100, 100, 10), ("overlap_only", "Art", 100, 0, 0)
    )
    exact = metric_quality(sample)[0]
    assert exact.coverage == pytest.approx(2 / 3)
    assert (exact.precision.value, exact.precision.ci_low, exact.precision.ci_high) == pytest.approx((0.8, 0.8, 0.8))
    assert (exact.recall.ci_low, exact.recall.ci_high) == pytest.approx((0.421053, 0.888889), abs=1e-6)
    assert (exact.specificity.ci_low, exact.specificity.ci_high) == pytest.approx((0.818182, 0.904762), abs=1e-6)
    # Rogan-Gladen of the exact metric (its verdict follows the buckets) is the stratified estimate
    # itself, which a bucket with no reviewed row leaves without an interval: it says so instead
    corrected = exact.corrected
    assert corrected.value == pytest.approx(0.214286, abs=1e-6)
    assert (corrected.ci_low, corrected.ci_high) == (None, None) and corrected.needed == 2


# --------------------------------------------------------------------------- what-if rules


def test_suffix_stripping_is_small_and_documented() -> None:
    assert strip_suffix("किताबों") == "किताब"  # Hindi plural oblique -ों
    assert strip_suffix("किताबें") == "किताब"  # plural -ें
    assert strip_suffix("சென்னையில்") == "சென்னை"  # Tamil locative after a glide
    assert strip_suffix("ঢাকার") == "ঢাকা"  # Bengali genitive -র
    assert strip_suffix("ी") == "ी" and strip_suffix("की") == "की"  # at least two characters stay
    assert strip_suffix("Delhi") == "Delhi"


def test_normalize_steps_compose_to_the_diagnostic() -> None:
    """The what-if steps are the --normalize steps: together they give normalize_text's result."""
    samples = ["क\u093c", "१९४७ में", "a\u200bb\u00ad", "கெ\u200cா", "  Delhi  ", "দ\u09bc"]
    for text in samples:
        assert unicodedata.normalize("NFC", ascii_digits(drop_format(nfc(text)))) == normalize_text(text)
    assert normalize_pair("  x ", "y") == ("x", "y")


def test_what_if_counts_overturns_fixed_and_verdicts_broken() -> None:
    rows = [
        # (answer, response, reviewers' truth); buckets come from the spec's protocols
        ("\u0958लम", "नई क\u093cलम", True),  # precomposed क़ vs क + nukta: NFC fixes this overturn
        ("किताबों", "दो किताबें", True),  # the suffix rule fixes it (both stems किताब)
        ("लड़का", "लड़की", False),  # stays wrong under every rule
        ("१९४७", "1947 में", True),  # native digits fix it
        ("लड़की", "लड़कों", False),  # girl vs boys: the suffix rule breaks this confirmed wrong (लड़क = लड़क)
        ("Delhi", "Delhi", True),
    ]
    buckets = [bucket(exact_substring(a, r), word_overlap(a, r).is_correct) for a, r, _ in rows]
    assert buckets == ["both_fail"] * 5 + ["both_pass"]
    sample = make_sample(
        buckets, ["Hindi"] * len(rows), [r[2] for r in rows], answer=[r[0] for r in rows], response=[r[1] for r in rows]
    )
    got = {(r["rule"], r["metric"]): r for r in what_if(sample).to_dicts()}
    spec = got[(SPEC, "overlap")]
    assert (spec["reviewed"], spec["changed"], spec["fixed"], spec["broken"]) == (6, 0, 0, 0)
    suffix = got[("Indic suffixes", "overlap")]
    assert (suffix["changed"], suffix["fixed"], suffix["broken"]) == (2, 1, 1)
    assert ("Indic suffixes", "exact") not in got  # overlap only
    for metric in ("exact", "overlap"):
        assert (got[("NFC", metric)]["fixed"], got[("NFC", metric)]["broken"]) == (1, 0)
        assert (got[("native digits", metric)]["fixed"], got[("native digits", metric)]["broken"]) == (1, 0)
        assert (got[("--normalize", metric)]["fixed"], got[("--normalize", metric)]["broken"]) == (2, 0)
    # Through the estimator (every row reviewed, weights both_fail 5/6, both_pass 1/6):
    # spec exact agrees with the reviewers on 2 of 5 both_fail rows: 5/6 x 0.4 + 1/6 = 0.5;
    # with native digits on 3 of 5: 5/6 x 0.6 + 1/6 = 0.6667; it passes 1 of 5: 5/6 x 0.2 + 1/6 = 0.3333.
    digits = got[("native digits", "exact")]
    assert got[(SPEC, "exact")]["agreement"] == pytest.approx(0.5)
    assert digits["agreement"] == pytest.approx(2 / 3)
    assert digits["pass_share"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="answer and response"):
        what_if(sample.drop("answer"))


# --------------------------------------------------------------------------- reasons


def test_reason_counts_and_the_golden_answer_report() -> None:
    t = pd.Timestamp("2026-01-01", tz="UTC")
    run_a = pl.DataFrame(
        {
            "item_key": ["a1", "a2", "a3"],
            "question": ["Q1", "Q2", "Q3"],
            "answer": ["G1", "G2", "G3"],
            "Domain": ["Art", "Art", "Sci"],
            "response": ["r1", "=r2", "r3"],
            "final_verdict": ["wrong", "correct", "wrong"],
        }
    )
    run_b = pl.DataFrame(
        {
            "item_key": ["b1", "b3"],
            "question": ["Q1", "Q3"],
            "answer": ["G1", "G3"],
            "Domain": ["Art", "Sci"],
            "response": ["other r1", "other r3"],
        }
    )
    current = pd.DataFrame(
        [
            ("a1", "ann", "wrong", GOLDEN_WRONG, "G1 is outdated", t),
            ("a1", "bob", "wrong", GOLDEN_WRONG, "", t),
            ("a2", "ann", "correct", "paraphrase", "", t),
            ("b3", "ann", "correct", "inflection", "", t),
            ("a3", "ann", "wrong", "", "", t),
        ],
        columns=["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at"],
    )
    runs = [RunRows(1, "model A", "Hindi", run_a), RunRows(2, "model B", "", run_b)]
    counts = reason_counts(current, runs)
    assert tuple(counts.columns) == REASON_COLUMNS
    assert counts.rows() == [
        ("Hindi", "Art", "paraphrase", "correct", 1),
        ("unknown", "Sci", "inflection", "correct", 1),
        ("Hindi", "Art", GOLDEN_WRONG, "wrong", 2),
    ]
    report = golden_wrong_report(current, runs)
    assert tuple(report.columns) == REPORT_COLUMNS
    assert report.select("question", "flags", "flagged_by", "notes", "run_id", "response").rows() == [
        ("Q1", 2, "ann;bob", "ann: G1 is outdated", 1, "r1"),
        ("Q1", 2, "ann;bob", "ann: G1 is outdated", 2, "other r1"),
    ]
    assert report["final_verdict"].to_list() == ["wrong", None]
    csv_text = golden_wrong_csv(report).decode("utf-8")
    assert csv_text.startswith("question,answer,Domain,flags") and "other r1" in csv_text
    lines = golden_wrong_jsonl(report).decode("utf-8").splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["question"] == "Q1" and [r["run_id"] for r in record["responses"]] == [1, 2]


def test_a_golden_answer_report_without_flags_is_empty_with_its_columns_and_types() -> None:
    """No question flagged: the report is empty, typed as a full one (no run's text is converted)."""
    rows = pd.DataFrame({c: ["x", "y"] for c in ("item_key", "question", "answer", "Domain", "response")})
    current = pd.DataFrame(
        [("x", "ann", "wrong", "paraphrase", "", pd.Timestamp("2026-01-01", tz="UTC"))],
        columns=["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at"],
    )
    for run in (rows, pl.from_pandas(rows)):
        report = golden_wrong_report(current, [RunRows(1, "model A", "Hindi", run)])
        assert report.height == 0 and tuple(report.columns) == REPORT_COLUMNS
        assert report.schema["flags"] == pl.Int64 and report.schema["run_id"] == pl.Int64
        assert all(report.schema[c] == pl.String for c in ("question", "response", "final_verdict", "notes"))

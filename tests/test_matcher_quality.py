"""Matchers against people (issue 29): worked numbers for precision, recall, agreement and the
triage queue, the recommendation's rule, and the intervals' coverage by simulation with a known
truth (a few hundred rows, a few dozen reviews, a language of 3% of rows)."""

from __future__ import annotations

import numpy as np
import pytest
from small_runs_sim import proportional

from scoring.core.protocols import BUCKETS
from scoring.estimate import make_sample
from scoring.estimate.matcher_quality import (
    ALL_ROWS,
    MIN_REVIEWED,
    MatcherFigures,
    figures_table,
    matcher_quality,
    outvoted,
    recommend,
    with_matchers,
)
from scoring.estimate.metric_quality import Ratio

TRUTH = [True, True, True, True, True, True, False, False, True, False]
CHRF = [True, True, True, True, False, False, True, False, False, False]


def _census() -> object:
    """Ten rows of one stratum, every one reviewed: the figures are plain ratios, the intervals points."""
    return make_sample(["both_pass"] * 10, ["Art"] * 10, TRUTH, language=["Hindi"] * 10, chrf_correct=CHRF)


def test_worked_precision_recall_agreement_on_a_census() -> None:
    (chrf,) = [f for f in matcher_quality(_census(), ["exact", "chrf"], by_language=False) if f.matcher == "chrf"]
    # chrF passes rows 1-4 and 7: four of the five are right -> precision 4/5
    assert chrf.precision.value == pytest.approx(0.8) and chrf.precision.ci_low == chrf.precision.ci_high
    # people call seven rows right, chrF passes four of them -> recall 4/7
    assert chrf.recall.value == pytest.approx(4 / 7)
    # same verdict on rows 1-4, 8 and 10 -> agreement 6/10
    assert chrf.agreement.value == pytest.approx(0.6)
    assert (chrf.rows, chrf.reviewed, chrf.pass_share) == (10, 10, 0.5)


def test_the_spec_metrics_keep_their_figures_beside_the_matchers() -> None:
    (exact,) = [f for f in matcher_quality(_census(), ["exact", "chrf"], by_language=False) if f.matcher == "exact"]
    assert exact.precision.value == pytest.approx(0.7)  # both_pass: exact passes all ten, seven right
    assert exact.recall.value == pytest.approx(1.0)


def test_a_matcher_is_outvoted_where_the_others_majority_differs_and_on_ties() -> None:
    sample = make_sample(
        ["both_pass", "both_pass", "both_fail", "exact_only"],
        ["Art"] * 4,
        [None] * 4,
        norm_exact_correct=[True, True, False, True],
        stem_overlap_correct=[True, False, False, False],
        chrf_correct=[False, False, True, True],
    )
    queues = outvoted(sample, ["exact", "overlap", "norm_exact", "stem_overlap", "chrf"])
    # row 1: chrF alone fails it; row 2: exact, overlap, norm_exact pass, stem and chrF fail (so
    # each of the three has a 2-2 tie among the others, each of the two a 3-1 majority against it);
    # row 3: chrF alone passes; row 4: exact, norm_exact, chrF pass, overlap, stem fail (3-2).
    assert queues["chrf"].tolist() == [True, True, True, True]  # row 4: a 2-2 tie among the others
    assert queues["exact"].tolist() == [False, True, False, True]
    assert queues["stem_overlap"].tolist() == [False, True, False, True]
    assert queues["overlap"].tolist() == [False, True, False, True]
    two = outvoted(sample, ["exact", "overlap"])  # two matchers: each is outvoted where they differ
    assert two["exact"].tolist() == two["overlap"].tolist() == [False, False, False, True]


def _figure(matcher: str, low: float, high: float, queue: int, reviewed: int = 60) -> MatcherFigures:
    mid = (low + high) / 2
    ratio = Ratio(mid, low, high, reviewed, None)
    return MatcherFigures("Hindi", matcher, 1000, reviewed, 0.5, ratio, ratio, ratio, queue)


def test_the_recommendation_takes_the_fewest_reviews_among_matchers_known_to_be_precise() -> None:
    figures = [
        _figure("exact", 0.96, 0.99, 300),
        _figure("stem_overlap", 0.955, 0.99, 120),
        _figure("chrf", 0.90, 0.99, 40),  # fewer reviews, but its interval spans the target
        _figure("overlap", 0.80, 0.90, 10),  # below the target
    ]
    found = recommend(figures, 0.95)
    assert found.matcher == "stem_overlap" and not found.too_small
    assert found.text.startswith("Use Stemmed word overlap in Hindi: its precision is 97.2%")
    assert "120 of 1,000 rows" in found.text
    assert "Character F-score (chrF) would need fewer, but the sample cannot yet tell" in found.text


def test_too_small_to_tell_and_nothing_precise_enough() -> None:
    few = recommend([_figure("exact", 0.96, 0.99, 3, reviewed=MIN_REVIEWED - 1)], 0.95)
    assert few.matcher is None and few.too_small
    assert few.text == (
        "The sample is too small to tell in Hindi: 29 reviewed rows of its random sample; "
        "review at least 1 more before choosing a matcher."
    )
    spans = recommend([_figure("exact", 0.9, 0.97, 3), _figure("chrf", 0.5, 0.8, 1)], 0.95)
    assert spans.too_small and spans.matcher is None and "Exact substring (spec)" in spans.text
    below = recommend([_figure("exact", 0.5, 0.9, 3)], 0.95)
    assert not below.too_small and below.matcher is None and below.text.startswith("No matcher reaches")


def test_with_matchers_scores_the_sample_rows_and_the_table_names_stemming() -> None:
    sample = make_sample(
        ["exact_only", "exact_only", "exact_only"],
        ["Art"] * 3,
        [True, True, None],
        language=["Hindi", "Bengali", "English"],
        answer=["किताब", "বই", "deul"],
        response=["दो किताबें।", "বইগুলো", "Deula"],
    )
    scored = with_matchers(sample)
    assert scored["stem_overlap_correct"].to_list() == [True, False, False]
    assert scored["norm_exact_correct"].to_list() == [True, True, True]
    table = figures_table(matcher_quality(scored))
    stems = table.filter(table["matcher"] == "stem_overlap")
    assert dict(zip(stems["scope"], stems["stemmed"])) == {
        ALL_ROWS: None,
        "Bengali": False,
        "English": True,
        "Hindi": True,
    }


# ---------------------------------------------------------------- coverage by simulation

LANGS = ("English", "Hindi", "Tamil")
LANG_SHARES = np.array([0.6, 0.37, 0.03])


def _run(rng: np.random.Generator, rows: int, reviews: int) -> tuple[dict, object]:
    """A run with a known truth and a matcher that flips the truth on 15% (English) to 30% (Tamil)
    of rows, its buckets following the truth as the spec's metrics do."""
    language = rng.choice(3, size=rows, p=LANG_SHARES)
    domain = rng.choice(2, size=rows)
    truth = rng.random(rows) < np.array([0.75, 0.6, 0.5])[language]
    exact = np.where(truth, rng.random(rows) < 0.75, rng.random(rows) < 0.12)
    overlap = np.where(truth, rng.random(rows) < 0.7, rng.random(rows) < 0.15)
    bucket = np.where(exact, np.where(overlap, 0, 2), np.where(overlap, 3, 1))
    order = [BUCKETS.index(b) for b in ("both_pass", "both_fail", "exact_only", "overlap_only")]
    bucket = np.array(order)[bucket]
    matcher = np.where(rng.random(rows) < np.array([0.15, 0.2, 0.3])[language], ~truth, truth)
    size = np.zeros((len(BUCKETS), 2), dtype=np.int64)
    np.add.at(size, (bucket, domain), 1)
    take = proportional(size, reviews)
    reviewed = np.zeros(rows, dtype=bool)
    for b in range(len(BUCKETS)):
        for d in range(2):
            members = np.flatnonzero((bucket == b) & (domain == d))
            reviewed[rng.permutation(members)[: take[b, d]]] = True
    sample = make_sample(
        [BUCKETS[b] for b in bucket],
        [f"D{d}" for d in domain],
        [bool(t) if r else None for t, r in zip(truth, reviewed)],
        language=[LANGS[v] for v in language],
        chrf_correct=matcher.tolist(),
    )
    true = {}
    for scope, where in [(ALL_ROWS, np.ones(rows, dtype=bool))] + [(LANGS[v], language == v) for v in range(3)]:
        m, t = matcher[where], truth[where]
        true[scope] = {
            "precision": (m & t).sum() / m.sum() if m.sum() else None,
            "recall": (m & t).sum() / t.sum() if t.sum() else None,
            "agreement": (m == t).mean() if where.any() else None,
        }
    return true, sample


def test_the_intervals_cover_the_known_truth_in_small_runs() -> None:
    rng = np.random.default_rng(29)
    shown: dict[tuple[str, str], int] = {}
    covered: dict[tuple[str, str], int] = {}
    for _ in range(120):
        true, sample = _run(rng, 400, 48)
        for f in matcher_quality(sample, ["exact", "chrf"]):
            if f.matcher != "chrf":
                continue
            for name in ("precision", "recall", "agreement"):
                r, want = getattr(f, name), true[f.scope][name]
                if r.ci_low is None or want is None:
                    continue
                key = (f.scope, name)
                shown[key] = shown.get(key, 0) + 1
                covered[key] = covered.get(key, 0) + int(r.ci_low - 1e-12 <= want <= r.ci_high + 1e-12)
    rates = {key: covered[key] / shown[key] for key in shown}
    for key in sorted(shown):
        print(f"coverage {key[0]:<16} {key[1]:<10} {rates[key]:.3f} ({shown[key]} intervals)")
    big = [k for k in shown if k[0] != "Tamil"]
    assert min(rates[k] for k in big) >= 0.88, rates  # nominal 0.95; 120 runs: +-0.02 of noise
    tamil = [k for k in shown if k[0] == "Tamil"]
    assert tamil and min(rates[k] for k in tamil) >= 0.85, rates  # 3% of 400 rows: a dozen, ~1 reviewed

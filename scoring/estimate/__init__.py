"""True accuracy from a reviewed sample, the review planner, and what the overturns teach (issue
13). Pure functions on polars frames returning dataclasses (no streamlit, no database): the
Overview, the planner's page and ``python -m scoring estimate`` share them. Stored runs load
through :mod:`scoring.estimate.stored_run` (imported by name: it pulls in the database layer).

Typical use::

    sample = reviewed_sample(final)          # final: review.final_verdicts(...) of a run
    est = estimate_accuracy(sample)          # est.combined, est.domains, est.fell_back, est.method
    metric_quality(sample)                   # precision, recall, specificity, Rogan-Gladen per metric
    plan = plan_review(sample, 0.02)         # per stratum: size, planned, reviewed, remaining
    next_rows(sample, plan, seed)            # exactly which rows, in the seeded review order
    what_if(sample)                          # candidate normalisations: fixed, broken, shares
    reason_counts(current, runs); golden_wrong_report(current, runs)
    run_estimate(final, 0.02).comparison()   # raw, adjudicated, estimated side by side
"""

from scoring.core.order import review_order, review_priority, review_rank
from scoring.estimate.estimator import (
    ACCURACY_METHOD,
    ACCURACY_METHOD_SHORT,
    PRIOR,
    AccuracyEstimate,
    Estimate,
    estimate_accuracy,
    estimate_indicator,
    share_estimate,
)
from scoring.estimate.metric_quality import (
    CORRECTED_METHOD,
    METRICS,
    RATIO_METHOD,
    MetricQuality,
    Ratio,
    metric_quality,
)
from scoring.estimate.planner import (
    PLAN_COLUMNS,
    PLAN_METHOD,
    ReviewPlan,
    allocate,
    expected_variance,
    next_rows,
    plan_review,
)
from scoring.estimate.reasons import (
    GOLDEN_WRONG,
    REASON_COLUMNS,
    REPORT_COLUMNS,
    RunRows,
    golden_wrong_csv,
    golden_wrong_jsonl,
    golden_wrong_report,
    reason_counts,
)
from scoring.estimate.sample import SAMPLE_COLUMNS, SAMPLE_RULE, make_sample, random_prefix, reviewed_sample
from scoring.estimate.strata import MIN_REVIEWED, Strata, build_strata
from scoring.estimate.summary import COMPARISON_COLUMNS, RunEstimate, raw_accuracy, run_estimate
from scoring.estimate.whatif import INDIC_SUFFIXES, RULES, SPEC, WHATIF_COLUMNS, Rule, strip_suffix, what_if

__all__ = [
    "ACCURACY_METHOD",
    "ACCURACY_METHOD_SHORT",
    "PRIOR",
    "AccuracyEstimate",
    "Estimate",
    "estimate_accuracy",
    "estimate_indicator",
    "share_estimate",
    "CORRECTED_METHOD",
    "METRICS",
    "RATIO_METHOD",
    "MetricQuality",
    "Ratio",
    "metric_quality",
    "review_order",
    "review_priority",
    "review_rank",
    "PLAN_COLUMNS",
    "PLAN_METHOD",
    "ReviewPlan",
    "allocate",
    "expected_variance",
    "next_rows",
    "plan_review",
    "GOLDEN_WRONG",
    "REASON_COLUMNS",
    "REPORT_COLUMNS",
    "RunRows",
    "golden_wrong_csv",
    "golden_wrong_jsonl",
    "golden_wrong_report",
    "reason_counts",
    "SAMPLE_COLUMNS",
    "SAMPLE_RULE",
    "make_sample",
    "random_prefix",
    "reviewed_sample",
    "MIN_REVIEWED",
    "Strata",
    "build_strata",
    "COMPARISON_COLUMNS",
    "RunEstimate",
    "raw_accuracy",
    "run_estimate",
    "INDIC_SUFFIXES",
    "RULES",
    "SPEC",
    "WHATIF_COLUMNS",
    "Rule",
    "strip_suffix",
    "what_if",
]

"""The Compare page's lead sentence (scoring/compare/answer.py), on worked numbers."""

from __future__ import annotations

from scoring.compare import PairedComparison, paired_table
from scoring.compare.answer import lead_sentences, pair_sentence


def _pair(
    source: str = "exact",
    n: int = 700,
    diff: float | None = 0.064,
    low: float = 0.010,
    high: float = 0.117,
    p: float = 0.023,
    holm: float | None = None,
    a: str = "model_a",
    b: str = "model_b",
) -> PairedComparison:
    return PairedComparison(
        run_a=a,
        run_b=b,
        index_a=0,
        index_b=1,
        source=source,
        n=n,
        excluded=0,
        both_right=0,
        b=0,
        c=0,
        both_wrong=0,
        accuracy_a=None,
        accuracy_b=None,
        difference=diff,
        ci_low=low,
        ci_high=high,
        p_value=p,
        p_holm=holm,
        rows_used="all matched rows",
    )


def test_a_clear_lead_in_one_sentence() -> None:
    assert pair_sentence(_pair().as_dict()) == (
        "model_a is ahead of model_b by 6.4 points, 95% CI 1.0 to 11.7, McNemar p = 0.023, on 700 matched "
        "questions (Exact substring)."
    )


def test_the_run_behind_first_is_said_the_right_way_round() -> None:
    row = _pair(diff=-0.064, low=-0.117, high=-0.010).as_dict()
    assert pair_sentence(row).startswith("model_b is ahead of model_a by 6.4 points, 95% CI 1.0 to 11.7,")


def test_an_interval_across_zero_is_no_clear_difference() -> None:
    row = _pair(diff=0.012, low=-0.021, high=0.045, p=0.48).as_dict()
    assert pair_sentence(row) == (
        "No clear difference between model_a and model_b: model_a − model_b = +1.2 points, 95% CI -2.1 to 4.5, "
        "McNemar p = 0.480, on 700 matched questions (Exact substring)."
    )


def test_holm_p_and_tiny_p() -> None:
    row = _pair(p=0.0001, holm=0.0003).as_dict()
    assert "McNemar p < 0.001, Holm-adjusted" in pair_sentence(row)
    assert "McNemar p = 0.060, Holm-adjusted" in pair_sentence(_pair(p=0.02, holm=0.06).as_dict())


def test_each_pair_reads_its_most_trustworthy_source_with_verdicts() -> None:
    table = paired_table(
        [
            _pair("exact"),
            _pair("overlap", diff=0.2, low=0.1, high=0.3),
            _pair("adjudicated", n=0, diff=None, low=-1.0, high=1.0, p=1.0),  # every row still pending
            _pair("judge", n=650, diff=0.05, low=0.01, high=0.09, p=0.01),
        ]
    )
    assert lead_sentences(table) == [
        "model_a is ahead of model_b by 5.0 points, 95% CI 1.0 to 9.0, McNemar p = 0.010, on 650 matched "
        "questions (LLM judge)."
    ]
    only_pending = paired_table([_pair("adjudicated", n=0, diff=None, low=-1.0, high=1.0, p=1.0)])
    assert lead_sentences(only_pending) == [
        "model_a and model_b cannot be compared: no matched question has a verdict in both (Adjudicated (final "
        "verdict))."
    ]


def test_run_colours_are_not_the_metrics_colours() -> None:
    from ui.charts import SERIES_COLOURS
    from ui.compare_charts import RUN_COLOURS
    from ui.estimate_view import ESTIMATE_COLOUR, JUDGED_COLOUR

    taken = {c.lower() for c in [*SERIES_COLOURS.values(), ESTIMATE_COLOUR, JUDGED_COLOUR]}
    assert not taken & {c.lower() for c in RUN_COLOURS}
    assert len(set(RUN_COLOURS)) == len(RUN_COLOURS)

"""Comparing runs (issue 12): matching, per-run accuracy, paired statistics on worked numbers,
Holm's adjustment, pending adjudicated rows, and the discordant questions."""

from __future__ import annotations

import math

import pandas as pd
import polars as pl
import pytest

from scoring import compare as C
from scoring.core.errors import InputError
from scoring.core.report import accuracy_by_domain, score_table
from scoring.core.stats import holm_adjust, mcnemar_exact, newcombe_paired_interval, paired_phi, wilson_interval
from scoring.core.verdict_rules import adjudicated_accuracy


def frame(rows: list[tuple], extra: dict[str, list] | None = None) -> pl.DataFrame:
    """question, answer, Domain, response (+ extra columns) as a loaded file gives them: text."""
    table = pl.DataFrame(rows, schema=["question", "answer", "Domain", "response"], orient="row")
    return table.with_columns(pl.Series(k, v, dtype=pl.String) for k, v in (extra or {}).items())


def verdict_run(label: str, verdicts: list[bool], domains: list[str] | None = None, **columns: list) -> C.Run:
    """A run whose exact and overlap verdicts are given outright (question q0, q1...)."""
    n = len(verdicts)
    table = pl.DataFrame(
        {
            "question": [f"q{i}" for i in range(n)],
            "answer": ["a"] * n,
            "Domain": domains or ["Art"] * n,
            "response": [f"{label} says {i}" for i in range(n)],
            "exact_correct": verdicts,
            "overlap_correct": verdicts,
            **columns,
        }
    )
    return C.make_run(label, table)


def cells_to_verdicts(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[bool], list[bool]]:
    """Two runs' verdicts laid out so that the paired 2x2 table is exactly these four cells."""
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return a, b


# --------------------------------------------------------------------------- statistics


def test_newcombe_interval_on_fagerland_lydersen_laake_cavo_example() -> None:
    """Published worked numbers: Cavo et al. (2012), complete response before and after
    consolidation therapy, paired table [[59, 6], [16, 80]] (n = 161). Fagerland, Lydersen & Laake,
    *Statistical Analysis of Contingency Tables* (2017), ch. 8, Newcombe square-and-add interval:
    estimate -0.0621, 95% CI -0.1186 to -0.0046 (also asserted by the R package
    contingencytables, tests/testthat/test-ch8.R)."""
    low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert (6 - 16) / 161 == pytest.approx(-0.0621, abs=5e-5)
    assert low == pytest.approx(-0.1186, abs=5e-5)
    assert high == pytest.approx(-0.0046, abs=5e-5)


def test_paired_phi_branches_worked_by_hand() -> None:
    # Cavo: A = 59*80 - 6*16 = 4624 > n/2 = 80.5, so (4624 - 80.5) / sqrt(65*96*75*86) = 4543.5 / 6344.13...
    assert paired_phi(59, 6, 16, 80) == pytest.approx(4543.5 / math.sqrt(65 * 96 * 75 * 86), rel=1e-12)
    assert paired_phi(59, 6, 16, 80) == pytest.approx(0.71617, abs=5e-6)
    assert paired_phi(1, 0, 0, 1) == 0.0  # A = 1 is within [0, n/2 = 1]: corrected to 0
    assert paired_phi(0, 5, 5, 0) == pytest.approx(-1.0)  # A = -25 < 0: -25 / sqrt(5^4), uncorrected
    assert paired_phi(10, 0, 0, 0) == 0.0  # a margin is 0: phi undefined, taken as 0
    assert paired_phi(0, 0, 0, 7) == 0.0


def test_newcombe_edges_are_documented_values() -> None:
    # All right in both runs (margins 0, phi 0): the interval is +-(1 - Wilson lower bound of 10/10).
    low10 = wilson_interval(10, 10)[0]
    assert low10 == pytest.approx(0.7225, abs=5e-5)
    low, high = newcombe_paired_interval(10, 0, 0, 0)
    assert (low, high) == pytest.approx((-(1 - low10), 1 - low10), abs=1e-12)
    assert newcombe_paired_interval(0, 0, 0, 0) == (-1.0, 1.0)  # no rows: nothing known
    assert newcombe_paired_interval(0, 30, 0, 0)[1] == 1.0  # A always right, B never: capped at 1
    low, high = newcombe_paired_interval(0, 30, 0, 0)
    assert 0 < low < 1


def test_mcnemar_on_the_cavo_discordant_counts() -> None:
    """b = 6, c = 16: p = 2 * P(X <= 6), X ~ Bin(22, 1/2) = 2 * (1+22+231+1540+7315+26334+74613) / 2^22."""
    by_hand = 2 * (1 + 22 + 231 + 1540 + 7315 + 26334 + 74613) / 2**22
    assert by_hand == pytest.approx(0.052479, abs=5e-7)
    assert mcnemar_exact(6, 16) == pytest.approx(by_hand, rel=1e-12)


def test_holm_worked_example() -> None:
    """p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005*4 = 0.02; 0.01*3 = 0.03; 0.03*2 = 0.06;
    0.04*1 = 0.04, raised to 0.06 to stay monotone. Back in the input order: 0.03, 0.06, 0.06, 0.02."""
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert holm_adjust([0.5, 0.6]) == [1.0, 1.0]  # 0.5*2 = 1.0; 0.6 raised to 1.0; capped at 1
    assert holm_adjust([0.2, 0.2, 0.2]) == pytest.approx([0.6, 0.6, 0.6])
    assert holm_adjust([0.04]) == [0.04]
    assert holm_adjust([]) == []


# --------------------------------------------------------------------------- matching


def test_match_by_text_ignores_surrounding_space_and_keeps_the_first_runs_order() -> None:
    a = C.scored_run(
        "A", frame([("q1", "Delhi", "Geo", "Delhi"), ("q2", "Ganga", "Geo", "no"), ("q3", "Tagore", "Lit", "Tagore")])
    )
    b = C.scored_run(
        "B",
        frame(
            [("q3", "Tagore", "Lit", "R. Tagore"), (" q1", "Delhi ", "Geo", "Mumbai"), ("q2", "Ganga", "Geo", "Ganga")]
        ),
    )
    match = C.match_runs([a, b])
    assert match.key == ("question", "answer") and not match.by_id
    assert match.matched["question"].to_list() == ["q1", "q2", "q3"]
    assert match.matched[C.run_column("row", 0)].to_list() == [1, 2, 3]
    assert match.matched[C.run_column("row", 1)].to_list() == [2, 3, 1]
    assert match.matched[C.run_column("response", 1)].to_list() == ["Mumbai", "Ganga", "R. Tagore"]
    assert match.matched[C.run_column("exact", 0)].to_list() == [True, False, True]
    assert match.matched[C.run_column("exact", 1)].to_list() == [False, True, True]
    assert match.unmatched.height == 0 and match.shared == {(0, 1): 3}
    assert match.unmatched_counts()["A"]["total"] == 0


def test_duplicates_and_rows_in_one_run_only_are_counted_and_listed() -> None:
    a = C.scored_run(
        "A",
        frame(
            [
                ("q1", "x", "Art", "x"),
                ("q2", "y", "Art", "y"),
                ("q2", "y", "Art", "y?"),
                ("q4", "w", "Art", "w"),
                ("", "", "Art", "blank key"),
            ]
        ),
    )
    b = C.scored_run("B", frame([("q1", "x", "Art", "x"), ("q2", "y", "Art", "y"), ("q3", "z", "Art", "z")]))
    match = C.match_runs([a, b])
    assert match.matched["question"].to_list() == ["q1"]
    rows = {(r["run"], r["row"]): (r["reason"], r["detail"]) for r in match.unmatched.iter_rows(named=True)}
    assert rows == {
        ("A", 2): (C.DUPLICATE, "2 rows of A have this key"),  # every copy listed
        ("A", 3): (C.DUPLICATE, "2 rows of A have this key"),
        ("A", 4): (C.NOT_EVERYWHERE, "not in B"),
        ("A", 5): (C.EMPTY_KEY, "every key cell is blank"),
        ("B", 2): (C.NOT_EVERYWHERE, "duplicated in A"),  # unique here, but which copy of A's to pair?
        ("B", 3): (C.NOT_EVERYWHERE, "not in A"),
    }
    counts = match.unmatched_counts()
    assert counts["A"] == {C.DUPLICATE: 2, C.NOT_EVERYWHERE: 1, C.EMPTY_KEY: 1, "total": 4}
    assert counts["B"] == {C.DUPLICATE: 0, C.NOT_EVERYWHERE: 2, C.EMPTY_KEY: 0, "total": 2}
    # Every row is either matched or listed: nothing silently dropped.
    assert match.n_matched + counts["A"]["total"] == a.n_rows
    assert match.n_matched + counts["B"]["total"] == b.n_rows
    assert match.unmatched.filter((pl.col("run") == "A") & (pl.col("row") == 3))["response"].to_list() == ["y?"]
    assert match.shared == {(0, 1): 1}


def test_three_runs_match_only_keys_present_once_in_every_run() -> None:
    a = C.scored_run("A", frame([("q1", "x", "Art", "x"), ("q2", "y", "Art", "y"), ("q3", "z", "Art", "z")]))
    b = C.scored_run("B", frame([("q1", "x", "Art", "x"), ("q2", "y", "Art", "y")]))
    c = C.scored_run("C", frame([("q1", "x", "Art", "x"), ("q3", "z", "Art", "z"), ("q3", "z", "Art", "z")]))
    match = C.match_runs([a, b, c])
    assert match.matched["question"].to_list() == ["q1"]
    detail = dict(zip(zip(match.unmatched["run"], match.unmatched["row"]), match.unmatched["detail"]))
    assert detail[("A", 2)] == "not in C"
    assert detail[("A", 3)] == "not in B; duplicated in C"
    assert detail[("B", 2)] == "not in C"
    assert match.shared == {(0, 1): 2, (0, 2): 1, (1, 2): 1}


def test_match_by_id_across_languages_and_the_no_shared_questions_advice() -> None:
    english = C.scored_run(
        "en",
        frame(
            [("Capital?", "Delhi", "Geography", "Delhi"), ("River?", "Ganga", "Geography", "Yamuna")],
            {"qid": ["1", "2"]},
        ),
    )
    hindi = C.scored_run(
        "hi", frame([("राजधानी?", "दिल्ली", "भूगोल", "दिल्ली"), ("नदी?", "गंगा", "भूगोल", "गंगा")], {"qid": ["2", "1"]})
    )
    by_text = C.match_runs([english, hindi])
    assert by_text.no_shared_rows and by_text.n_matched == 0
    assert by_text.id_column == "qid"
    assert "share no questions by text (question, answer)" in by_text.advice()
    assert "'qid'" in by_text.advice()
    assert by_text.unmatched_counts()["en"][C.NOT_EVERYWHERE] == 2
    choice = C.default_key([english, hindi])
    assert choice.key == ("qid",) and choice.by_id
    by_id = C.match_runs([english, hindi], choice.key)
    assert by_id.by_id and by_id.key_text() == "id column 'qid'" and by_id.advice() is None
    assert by_id.matched["qid"].to_list() == ["1", "2"]
    assert by_id.matched[C.run_column("answer", 1)].to_list() == ["गंगा", "दिल्ली"]
    assert by_id.matched["Domain"].to_list() == ["Geography", "Geography"]  # the first run's
    assert by_id.matched[C.run_column("Domain", 1)].to_list() == ["भूगोल", "भूगोल"]
    assert by_id.matched[C.run_column("exact", 0)].to_list() == [True, False]
    assert by_id.matched[C.run_column("exact", 1)].to_list() == [True, True]


def test_key_choice_and_key_errors() -> None:
    plain = C.scored_run("plain.csv", frame([("q", "a", "Art", "a")]))
    with_id = C.scored_run("ids.csv", frame([("q", "a", "Art", "a")], {"Question_ID": ["7"]}))
    assert C.shared_id_column([["question", "Question_ID"], ["Question_ID"]]) == "Question_ID"
    assert C.shared_id_column([["id"], ["ID"]]) is None  # the same name in every run
    assert C.default_key([plain, with_id]).key == C.TEXT_KEY
    assert C.default_key([with_id, with_id], prefer_id=False).key == C.TEXT_KEY
    with pytest.raises(InputError, match=r"'Question_ID' is not in plain\.csv"):
        C.match_runs([with_id, plain], ["Question_ID"])
    with pytest.raises(InputError, match="at least two runs"):
        C.match_runs([plain])
    with pytest.raises(InputError, match="must differ"):
        C.match_runs([plain, plain])


def test_readable_matched_names_columns_by_run_label() -> None:
    a, b = verdict_run("A", [True, False]), verdict_run("B", [True, True])
    out = C.readable_matched(C.match_runs([a, b]))
    assert out.columns == [
        "question",
        "answer",
        "Domain",
        "row[A]",
        "response[A]",
        "exact[A]",
        "overlap[A]",
        "row[B]",
        "response[B]",
        "exact[B]",
        "overlap[B]",
    ]
    assert out["exact[B]"].to_list() == [True, True]


def test_unique_labels_tell_repeated_names_apart() -> None:
    assert C.unique_labels(["a.csv", "b.csv", "a.csv", "a.csv"]) == ["a.csv", "b.csv", "a.csv (2)", "a.csv (3)"]
    assert C.unique_labels(["x", "x (2)", "x"]) == ["x", "x (2)", "x (3)"]


# --------------------------------------------------------------------------- verdict sources


def test_scored_run_rescores_a_file_that_already_carries_metrics() -> None:
    table = frame(
        [("q", "Delhi", "Art", "New Delhi")],
        {"bucket": ["both_fail"], "is_blank": ["True"], "exact_correct": ["False"]},
    )
    run = C.scored_run("export.csv", table)
    assert run.table[C.verdict_column(C.EXACT)].to_list() == [True]
    assert run.table["bucket"].to_list() == ["both_pass"]


def test_judge_labels_and_final_verdicts_become_verdicts_with_unknowns() -> None:
    labels = ["CORRECT", " incorrect", "NOT_ATTEMPTED", "UNPARSED", ""]
    finals = ["correct", "wrong", "pending", "correct", "pending"]
    run = verdict_run("R", [True] * 5, judge_label=labels, final_verdict=finals)
    assert run.sources == (C.EXACT, C.OVERLAP, C.JUDGE, C.ADJUDICATED)
    assert run.table[C.verdict_column(C.JUDGE)].to_list() == [True, False, False, None, None]
    assert run.table[C.verdict_column(C.ADJUDICATED)].to_list() == [True, False, None, True, None]
    unjudged = verdict_run("U", [True, False], judge_label=["", "ERROR"])
    assert unjudged.sources == (C.EXACT, C.OVERLAP)  # a judge column with no verdict: no judge source


def test_accuracy_agrees_with_the_score_report_for_the_metrics() -> None:
    table = frame(
        [
            ("q1", "Delhi", "Geo", "Delhi"),
            ("q2", "Ganga", "Geo", "no"),
            ("q3", "Tagore", "Lit", "Tagore"),
            ("q4", "Red Fort", "Art", "fort red"),
            ("q5", "x", "Art", " "),
        ]
    )
    run = C.scored_run("A", table)
    ours = C.accuracy_table([run]).filter(pl.col("source") == C.EXACT)
    theirs = accuracy_by_domain(score_table(table), "exact_correct")
    assert ours["domain"].to_list() == [r.domain for r in theirs]
    assert ours["n"].to_list() == [r.n for r in theirs]
    assert ours["correct"].to_list() == [r.correct for r in theirs]
    assert ours["accuracy_low"].to_list() == pytest.approx([r.accuracy for r in theirs])
    assert ours["ci_low"].to_list() == pytest.approx([r.ci_low for r in theirs])
    assert ours["ci_high"].to_list() == pytest.approx([r.ci_high for r in theirs])
    assert set(C.accuracy_table([run])["source"]) == {C.EXACT, C.OVERLAP}


def test_adjudicated_accuracy_is_a_range_like_adjudicated_row() -> None:
    finals = ["correct", "correct", "pending", "wrong", "pending", "correct"]
    domains = ["Art", "Art", "Art", "Geo", "Geo", "Geo"]
    run = verdict_run("R", [True] * 6, domains, final_verdict=finals)
    ours = [r for r in C.run_accuracy(run, C.ADJUDICATED)]
    theirs = adjudicated_accuracy(pd.DataFrame({"Domain": domains, "final_verdict": finals}))
    assert [r.domain for r in ours] == [r.domain for r in theirs] == ["Art", "Geo", "combined"]
    for mine, ref in zip(ours, theirs):
        assert (mine.n, mine.correct, mine.wrong, mine.unknown) == (ref.n, ref.correct, ref.wrong, ref.pending)
        assert (mine.accuracy_low, mine.accuracy_high) == pytest.approx((ref.accuracy_low, ref.accuracy_high))
        assert (mine.ci_low, mine.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))
    combined = ours[-1]
    assert (combined.accuracy_low, combined.accuracy_high) == pytest.approx((3 / 6, 5 / 6))


# --------------------------------------------------------------------------- paired comparison


def test_paired_comparison_on_the_cavo_table() -> None:
    a, b = cells_to_verdicts(59, 6, 16, 80)
    match = C.match_runs([verdict_run("A", a), verdict_run("B", b)])
    exact = [p for p in C.paired_comparisons(match) if p.source == C.EXACT]
    assert len(exact) == 1
    p = exact[0]
    assert (p.n, p.both_right, p.b, p.c, p.both_wrong, p.excluded) == (161, 59, 6, 16, 80, 0)
    assert p.accuracy_a == pytest.approx(65 / 161) and p.accuracy_b == pytest.approx(75 / 161)
    assert p.difference == pytest.approx(-0.0621, abs=5e-5)
    assert (p.ci_low, p.ci_high) == pytest.approx((-0.1186, -0.0046), abs=5e-5)
    assert p.p_value == pytest.approx(0.052479, abs=5e-7)
    assert p.p_holm is None and p.adjustment is None  # two runs: nothing to adjust for
    assert p.interval_method == C.INTERVAL_METHOD and "method 10" in p.interval_method
    assert "McNemar exact" in p.test_method and p.rows_used == C.ALL_MATCHED
    frame_ = C.paired_table(C.paired_comparisons(match))
    assert frame_.height == 2 and frame_["b"].to_list() == [6, 6] and frame_["source"].to_list() == ["exact", "overlap"]


def test_three_runs_get_holm_adjusted_p_values_per_source() -> None:
    a = [True] * 20 + [False] * 20
    b = [True] * 8 + [False] * 12 + [True] * 2 + [False] * 18  # vs a: b = 12, c = 2
    c = [True] * 20 + [True] * 5 + [False] * 15  # vs a: b = 0, c = 5
    match = C.match_runs([verdict_run("A", a), verdict_run("B", b), verdict_run("C", c)])
    exact = [p for p in C.paired_comparisons(match) if p.source == C.EXACT]
    assert [(p.run_a, p.run_b) for p in exact] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [(p.b, p.c) for p in exact] == [(12, 2), (0, 5), (0, 15)]
    raw = [mcnemar_exact(12, 2), mcnemar_exact(0, 5), mcnemar_exact(0, 15)]
    assert [p.p_value for p in exact] == pytest.approx(raw)
    assert raw[0] == pytest.approx(2 * (1 + 14 + 91) / 2**14)  # b=12, c=2 by hand: 0.012939...
    assert raw[1] == pytest.approx(2 / 2**5)  # 0.0625
    assert [p.p_holm for p in exact] == pytest.approx(holm_adjust(raw))
    assert [p.p_holm for p in exact] == pytest.approx([2 * raw[0], raw[1], 3 * raw[2]])
    assert all(p.adjustment == C.ADJUSTMENT_METHOD for p in exact)


def test_adjudicated_pairs_use_only_rows_decided_in_both_runs() -> None:
    fa = ["correct", "correct", "pending", "wrong", "correct", "wrong"]
    fb = ["wrong", "pending", "correct", "correct", "correct", "wrong"]
    a = verdict_run("A", [True] * 6, final_verdict=fa)
    b = verdict_run("B", [True] * 6, final_verdict=fb)
    match = C.match_runs([a, b])
    adj = next(p for p in C.paired_comparisons(match) if p.source == C.ADJUDICATED)
    # Rows 0, 3, 4, 5 are decided in both: (right, wrong), (wrong, right), (right, right), (wrong, wrong).
    assert (adj.n, adj.excluded) == (4, 2)
    assert (adj.both_right, adj.b, adj.c, adj.both_wrong) == (1, 1, 1, 1)
    assert adj.accuracy_a == pytest.approx(0.5) and adj.difference == pytest.approx(0.0)
    assert adj.rows_used == C.DECIDED_IN_BOTH and "pending" in adj.rows_used
    assert (adj.ci_low, adj.ci_high) == pytest.approx(newcombe_paired_interval(1, 1, 1, 1))
    only_a = verdict_run("B2", [True] * 6)
    assert [p.source for p in C.paired_comparisons(C.match_runs([a, only_a]))] == [C.EXACT, C.OVERLAP]


def test_a_pair_with_no_decided_rows_reports_nothing_known() -> None:
    a = verdict_run("A", [True, False], final_verdict=["pending", "pending"])
    b = verdict_run("B", [True, False], final_verdict=["correct", "wrong"])
    adj = next(p for p in C.paired_comparisons(C.match_runs([a, b])) if p.source == C.ADJUDICATED)
    assert adj.n == 0 and adj.excluded == 2
    assert adj.accuracy_a is None and adj.difference is None
    assert (adj.ci_low, adj.ci_high, adj.p_value) == (-1.0, 1.0, 1.0)


def test_discordant_rows_filter_by_source_and_domain() -> None:
    a = verdict_run(
        "A",
        [True, False, True, True],
        ["Art", "Art", "Geo", "Geo"],
        final_verdict=["correct", "wrong", "pending", "wrong"],
    )
    b = verdict_run(
        "B",
        [False, True, True, False],
        ["Art", "Art", "Geo", "Geo"],
        final_verdict=["correct", "correct", "wrong", "correct"],
    )
    match = C.match_runs([a, b])
    every = C.discordant_rows(match, 0, 1)
    assert every["source"].to_list() == [
        "exact",
        "exact",
        "exact",
        "overlap",
        "overlap",
        "overlap",
        "adjudicated",
        "adjudicated",
    ]
    exact = C.discordant_rows(match, 0, 1, sources=[C.EXACT])
    assert exact["question"].to_list() == ["q0", "q1", "q3"]
    assert exact["right"].to_list() == ["A", "B", "A"] and exact["wrong"].to_list() == ["B", "A", "B"]
    assert exact["response_a"].to_list() == ["A says 0", "A says 1", "A says 3"]
    assert exact["response_b"].to_list() == ["B says 0", "B says 1", "B says 3"]
    assert exact["row_a"].to_list() == [1, 2, 4]
    geo = C.discordant_rows(match, 0, 1, sources=[C.ADJUDICATED], domains=["Geo"])
    assert geo["question"].to_list() == ["q3"]  # q2 is pending in A: not a disagreement
    assert geo["right"].to_list() == ["B"]
    swapped = C.discordant_rows(match, 1, 0, sources=[C.EXACT])
    assert swapped["response_a"].to_list() == ["B says 0", "B says 1", "B says 3"]
    none = C.discordant_rows(match, 0, 1, sources=[C.JUDGE])
    assert none.height == 0 and "source" in none.columns


def test_heat_cells_pool_runs_of_one_model_and_language_and_leave_uncovered_pairs_out() -> None:
    """Two Hindi runs of gpt pool to 3 of 6 (their rows together), llama/Tamil is its own cell,
    a run without a language has no cell, and gpt/Tamil (no run) is simply absent, never 0."""
    runs = [
        verdict_run("gpt_hi_1", [True, False, False]),
        verdict_run("gpt_hi_2", [True, True, False]),
        verdict_run("llama_ta", [True, True, True, True]),
        verdict_run("nolang", [False]),
    ]
    meta = [("gpt", "Hindi"), (" gpt ", "Hindi"), ("llama", "Tamil"), ("gpt", "")]
    cells = {(c.model, c.language): c for c in C.heat_cells(runs, meta, "exact")}
    assert set(cells) == {("gpt", "Hindi"), ("llama", "Tamil")}
    hindi = cells[("gpt", "Hindi")]
    assert (hindi.accuracy.n, hindi.accuracy.correct, hindi.runs) == (6, 3, ("gpt_hi_1", "gpt_hi_2"))
    assert hindi.accuracy.accuracy_low == pytest.approx(0.5)
    assert (cells[("llama", "Tamil")].accuracy.n, cells[("llama", "Tamil")].accuracy.correct) == (4, 4)
    assert C.heat_cells(runs, meta, "judge") == []  # no run has judge verdicts

"""The head-to-head on the estimated truth (issue 37 §2): stored runs compared on their estimated
true accuracies (:mod:`scoring.team_report.head_to_head`), one run per content, Holm over the
pairs compared, the wording ("ahead" only when the interval excludes 0), the share of automatic
verdicts and the clustering note. Real SQLite, real CLI process."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from scoring import ingest
from scoring.compare.answer import pair_sentence
from scoring.compare.compared_runs import Run, make_run
from scoring.estimate import make_sample
from scoring.estimate.difference import estimate_difference
from scoring.store import load_table, make_engine
from scoring.store.audit import audit_keys
from scoring.store.verdict_log import record_mark
from scoring.team_report import language_pairs, team_table
from scoring.team_report.head_to_head import Contender, automatic_sentence, difference_sentence, head_to_head
from scoring.team_report.stored_head_to_head import stored_head_to_head

ROWS = 80


def body(right: set[int], order: list[int] | None = None, latency: bool = False) -> bytes:
    """``ROWS`` questions (ids q0..); the responses of ``right`` hold the answer, every other one
    hedges with the answer inside (so the metrics call it right: an automatic verdict's mistake).
    ``latency``: a column more, so the upload stores a new run (the same rows alone would reopen
    the first: :mod:`scoring.core.content_hash`) whose answers are still the same content."""
    lines = ["question,answer,Domain,response,question_id" + (",latency_ms" if latency else "")]
    for i in order or range(ROWS):
        answer = f"answer{i}"
        response = f"it is {answer}" if i in right else f"not {answer} maybe"
        cells = f"Question {i}?,{answer},{'Art' if i % 2 else 'History'},{response},q{i}"
        lines.append(cells + (f",{100 + i}" if latency else ""))
    return ("\n".join(lines) + "\n").encode()


RIGHT_A = set(range(60))  # 75% true
RIGHT_B = set(range(20, 50))  # 37.5% true


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Runs A and B on the same 80 questions, every row of both reviewed (the truth); C: A's rows
    uploaded again in another order with a latency column (the same answers: the same content)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('h2h') / 'review.db'}"
    engine = make_engine(url)
    ids = []
    for name, right in (("model-a", RIGHT_A), ("model-b", RIGHT_B)):
        run = ingest.save_run(engine, body(right), f"{name}.csv", model=name).run.id
        ids.append(run)
        for i, key in enumerate(load_table(engine, run)["item_key"].to_list()):
            record_mark(engine, key, run, "alice", "correct" if i in right else "wrong")
    again = ingest.save_run(
        engine, body(RIGHT_A, list(reversed(range(ROWS))), latency=True), "model-a-again.csv", model="model-a2"
    )
    ids.append(again.run.id)
    engine.dispose()
    return url


def test_stored_runs_lead_with_the_estimated_truth_and_name_the_duplicate(db: str) -> None:
    engine = make_engine(db)
    try:
        result = stored_head_to_head(engine, [1, 2, 3])
    finally:
        engine.dispose()
    assert [(d.a.label, d.b.label) for d in result.overall] == [("#1 model-a", "#2 model-b")]
    d = result.overall[0]
    assert d.family_size == 1  # the duplicate is not counted in Holm's family
    assert d.a.estimate == pytest.approx(0.75) and d.b.estimate == pytest.approx(0.375)
    assert d.ci_low is not None and d.ci_low > 0 and d.ahead == "#1 model-a"
    sentences = result.sentences()
    assert sentences[0].startswith("#1 model-a is ahead of #2 model-b by 37.5 points (95% CI ")
    assert "estimated true accuracy 75.0% vs 37.5% on 80 shared questions" in sentences[0]
    assert sentences[1] == (
        "#3 model-a-again holds the same rows as #1 model-a: left out of every comparison (one run per content)."
    )


def test_the_cli_prints_the_sentence_and_its_json_fields(db: str, run_cli) -> None:
    out = run_cli("scoring", "compare", "--run", "1", "--run", "2", "--db", db, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    truth = report["estimated_truth"]
    assert truth["overall"][0]["ahead"] == "#1 model-a"
    assert truth["sentences"][0].startswith("#1 model-a is ahead of #2 model-b by 37.5 points")
    text = run_cli("scoring", "compare", "--run", "1", "--run", "2", "--db", db)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("#1 model-a is ahead of #2 model-b by 37.5 points")


def _sample(truth: np.ndarray, reviewed: np.ndarray, family: list[str]) -> pl.DataFrame:
    n = len(truth)
    return make_sample(
        ["both_pass" if i % 3 else "both_fail" for i in range(n)],
        ["Art"] * n,
        [bool(t) if r else None for t, r in zip(truth, reviewed, strict=True)],
        shared_question=[str(i) for i in range(n)],
        question_family=family,
    )


def test_no_clear_difference_is_worded_with_its_interval_and_clustering_is_named() -> None:
    rng = np.random.default_rng(5)
    n = 200
    family = [str(i // 4) for i in range(n)]  # four languages of each question
    hard = np.repeat(rng.random(n // 4) < 0.5, 4)  # a family is easy or hard in every language, for both
    a, b = hard ^ (rng.random(n) < 0.1), hard ^ (rng.random(n) < 0.1)
    reviewed = rng.random(n) < 0.5
    d = estimate_difference(_sample(a, reviewed, family), _sample(b, reviewed, family), "A", "B")
    sentence = difference_sentence(d)
    assert d.ahead is None and sentence.startswith("No clear difference between A and B (95% CI ")
    assert d.clustering_widened and "Clustering by question family (50 families) widened the interval" in sentence


def test_a_verdict_figure_mostly_automatic_says_its_share() -> None:
    assert automatic_sentence("A", 196, 300) == (
        "A: 196 of 300 adjudicated verdicts (65%) are automatic metric verdicts, not a person's: a verdict figure "
        "of it is mostly the metrics' reading, so the lead compares estimated true accuracies instead."
    )
    assert automatic_sentence("A", 100, 300) is None


def test_nothing_reviewed_says_what_to_review_not_a_figure() -> None:
    n = 40
    table = pl.DataFrame(
        {
            "question": [f"q{i}" for i in range(n)],
            "answer": ["x"] * n,
            "Domain": ["Art"] * n,
            "response": ["x"] * n,
            "exact_correct": [True] * n,
            "overlap_correct": [True] * n,
        }
    )
    sample = make_sample(["both_pass"] * n, ["Art"] * n, [None] * n)
    other = table.with_columns(response=pl.lit("y"))
    result = head_to_head([Contender("A", make_run("A", table), sample), Contender("B", make_run("B", other), sample)])
    sentence = result.sentences()[0]
    assert sentence.startswith("No head-to-head of A and B on the estimated true accuracy yet:")
    assert "A: Review at least" in sentence and "B: Review at least" in sentence and "%" not in sentence


def test_a_verdict_sentence_never_says_ahead_beside_a_p_above_005() -> None:
    row = {"run_a": "gemma", "run_b": "llama", "n": 30, "source": "adjudicated", "difference": 0.167}
    sentence = pair_sentence({**row, "ci_low": 0.001, "ci_high": 0.333, "p_value": 0.073, "p_holm": None})
    assert sentence.startswith("No clear difference between gemma and llama") and "p = 0.073" in sentence
    assert pair_sentence({**row, "ci_low": 0.02, "ci_high": 0.3, "p_value": 0.03, "p_holm": None}).startswith(
        "gemma is ahead of llama"
    )


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same two runs, nothing reviewed yet."""
    url = f"sqlite:///{tmp_path_factory.mktemp('plan') / 'review.db'}"
    engine = make_engine(url)
    for name, right in (("model-a", RIGHT_A), ("model-b", RIGHT_B)):
        ingest.save_run(engine, body(right), f"{name}.csv", model=name)
    engine.dispose()
    return url


def test_the_decision_plan_puts_exactly_its_rows_in_each_runs_scope(fresh: str, run_cli) -> None:
    args = ("scoring", "compare", "--run", "1", "--run", "2", "--db", fresh, "--plan", "--difference", "0.3")
    out = run_cli(*args, "--put-in-scope", "lead", "--json")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)["decision_plan"]
    (only,) = plan["plans"]
    assert only["reachable"] and only["power"] == 0.8 and only["questions"] == ROWS
    assert 10 <= only["a"]["remaining"] < ROWS and only["sentence"].startswith("Latin: review ")
    engine = make_engine(fresh)
    try:
        for run, side in ((1, "a"), (2, "b")):
            rows = load_table(engine, run)
            planned = {rows["item_key"][i - 1] for i in only[side]["next_rows"]}
            assert set(audit_keys(engine, run)) == planned  # exactly the plan's rows, nothing else
    finally:
        engine.dispose()
    bad = run_cli(*args[:-2], "--difference", "3")
    assert bad.returncode != 0 and "shares between 0 and 1" in bad.stderr and "Traceback" not in bad.stderr


def test_estimate_against_another_run_prints_the_same_sentence(db: str, run_cli) -> None:
    out = run_cli("scoring", "estimate", "--run", "2", "--against", "1", "--db", db, "--json")
    assert out.returncode == 0, out.stderr
    truth = json.loads(out.stdout)["estimated_truth"]
    assert truth["lead"][0].startswith("#1 model-a is ahead of #2 model-b by 37.5 points (95% CI ")


def _verdict_run(label: str, right: list[bool], order: list[int]) -> Run:
    """A model's rows in ``order`` (question i, its answer, a response naming the model's id for it)."""
    table = pl.DataFrame(
        {
            "question": [f"Question {i}?" for i in order],
            "answer": [f"answer{i}" for i in order],
            "Domain": ["Art"] * len(order),
            "response": [f"{label[0]} says {i}" for i in order],
            "exact_correct": [right[i] for i in order],
            "overlap_correct": [right[i] for i in order],
            "language": ["Hindi"] * len(order),
        }
    )
    return make_run(label, table)


def test_a_reupload_enters_no_verdict_pair_and_is_named() -> None:
    """Model x language's verdict pairs: A ahead of B on 8 discordant questions to 1 (McNemar
    p = 0.039); A's rows uploaded again in reverse order as "a-again" must not turn Holm's family of
    one into three (before: p 0.039 -> Holm 0.117, and "ahead" became "no clear difference")."""
    n = 40
    a = [i < 28 for i in range(n)]  # 20 both right, 8 only A
    b = [i < 20 or i == 39 for i in range(n)]  # 1 only B
    forward, backward = list(range(n)), list(reversed(range(n)))
    runs = [_verdict_run("a", a, forward), _verdict_run("a-again", a, backward), _verdict_run("b", b, forward)]
    found = language_pairs(runs)
    assert [(p.model_a, p.model_b) for p in found.pairs] == [("a", "b")]
    (pair,) = found.pairs
    assert pair.p_value == pytest.approx(0.0391, abs=1e-4) and pair.p_holm is None
    assert pair.sentence.startswith("Hindi: a is ahead of b by 17.5 points")
    assert found.duplicates == [("a-again", "a")]
    assert found.duplicate_sentences() == [
        "a-again holds the same rows as a: left out of every comparison (one run per content)."
    ]


def test_the_team_table_names_the_duplicate_model_and_keeps_it_out_of_the_pairs(db: str) -> None:
    engine = make_engine(db)
    try:
        table = team_table(engine)
    finally:
        engine.dispose()
    assert [(p.model_a, p.model_b, p.p_holm) for p in table.pairs] == [("model-a", "model-b", None)]
    assert table.as_dict()["duplicates"] == [{"model": "model-a2", "same_content_as": "model-a"}]

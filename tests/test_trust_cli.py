"""``python -m scoring judge-trust`` against a real SQLite database built through the store API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring import ingest, review, store
from scoring.cli import main
from scoring.core.stats import mcnemar_exact
from scoring.store import judge_cache, judge_choice, make_engine
from scoring.store.judge_choice import ANY_CONFIG, JudgeConfig


@pytest.fixture
def database(tmp_path: Path):
    """The bundled sample run; 12 rows marked in the queue, one opened by hand; config "m/v"
    labels every row (CORRECT on odd rows), config "n/v" 30 rows (UNPARSED on every third)."""
    url = f"sqlite:///{tmp_path / 'trust.db'}"
    engine = make_engine(url)
    run = ingest.ensure_sample(engine).id
    keys = store.load_scored(engine, run)["item_key"].tolist()
    for i, key in enumerate(keys[:12]):
        review.record_mark(engine, key, run, "ana", "correct" if i % 2 else "wrong")  # as "m" says
    review.record_mark(engine, keys[2], run, "ana", "correct")  # ana changes her mind on row 3: "m" disagrees
    review.record_mark(engine, keys[20], run, "ana", "correct", via="opened")  # by hand, "m" disagrees: left out
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"m{i}",
                "item_key": k,
                "model": "m",
                "prompt_version": "v",
                "label": "CORRECT" if i % 2 else "INCORRECT",
            }
            for i, k in enumerate(keys)
        ],
    )
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"n{i}",
                "item_key": k,
                "model": "n",
                "prompt_version": "v",
                "label": "UNPARSED" if i % 3 == 0 else "CORRECT",
            }
            for i, k in enumerate(keys[:30])
        ],
    )
    yield url, engine, keys, run
    engine.dispose()


def test_the_report_names_the_judge_and_counts_only_the_random_sample(database, capsys) -> None:
    url, engine, keys, run = database
    judge_choice.set_choice(engine, run, JudgeConfig("m", "v"), "ana")
    assert main(["judge-trust", "--run", str(run), "--db", url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["judge_in_use"] == "m (prompt v)" and info["reviewed"] == 12 and info["by_hand_left_out"] == 1
    total = info["confusion"][2]
    assert total["total"] == 12 and total["judge unparsed"] == 0 and total["judge not judged"] == 0
    assert [d["row"] for d in info["disagreements"]] == [3]  # 1-based; row 21 (by hand) is not in the sample
    combined = info["per_bucket"][-1]
    assert (combined["scope"], combined["agree"], combined["judged"]) == ("combined", 11, 12)
    assert combined["kappa_low"] < combined["kappa"] < combined["kappa_high"]
    configs = {c["scope"]: c for c in info["configurations"]}
    assert set(configs) == {"m (prompt v)", "n (prompt v)"} and configs["n (prompt v)"]["unparsed"] == 4
    (pair,) = info["pairs"]
    # On the 8 rows both judged: n says CORRECT everywhere, so it agrees where ana said correct.
    assert pair["n"] == 8 and pair["p_value"] == pytest.approx(mcnemar_exact(pair["only_a"], pair["only_b"]))

    assert main(["judge-trust", "--run", str(run), "--db", url]) == 0
    text = capsys.readouterr().out
    assert text.startswith("The estimate uses: m (prompt v)\nOn the estimate's random sample: 12 reviewed rows")
    assert "Rows where the judge and the reviewers disagree: 1 (rows 3)" in text
    assert "McNemar p = " in text and "Jeffreys-Dirichlet" in text


def test_without_a_choice_the_default_is_named(database, capsys) -> None:
    url, _, _, run = database
    assert main(["judge-trust", "--run", str(run), "--db", url]) == 0
    assert capsys.readouterr().out.startswith(f"The estimate uses: {ANY_CONFIG}\n")


def test_an_unknown_run_is_one_line_and_exit_code_2(database, capsys) -> None:
    url, _, _, run = database
    assert main(["judge-trust", "--run", "99", "--db", url]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["error: No run with id 99."]


def test_by_language_the_judge_is_checked_per_row_language(database, capsys) -> None:
    """The sample run mixes scripts (no language column: rows are named by their script)."""
    url, engine, keys, run = database
    judge_choice.set_choice(engine, run, JudgeConfig("m", "v"), "ana")
    assert main(["judge-trust", "--run", str(run), "--db", url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    per_language = {r["scope"]: r for r in info["per_language"]}
    assert (
        per_language["combined"]["reviewed"]
        == 12
        == sum(r["reviewed"] for s, r in per_language.items() if s != "combined")
    )
    scripts = set(store.load_scored(engine, run)["language"].head(12))
    assert set(per_language) - {"combined"} == scripts and len(scripts) > 1
    assert main(["judge-trust", "--run", str(run), "--db", url, "--by", "language"]) == 0
    text = capsys.readouterr().out
    assert "\nlanguage " in text and all(f"\n{s} " in text for s in scripts)

"""``python -m scoring estimate`` with judge labels: the judge-assisted estimate beside the
human-only one, ``--judge-model``, and a run without labels printing what it printed before."""

from __future__ import annotations

import json

from test_estimate_cli import database  # noqa: F401  (the fixture: a run with three judge labels by model "m")

from scoring import ingest, store
from scoring.cli import main
from scoring.cli.estimate_cmd import HUMAN_ONLY_NOTE
from scoring.core.report import COMBINED
from scoring.estimate.ppi import PPI_METHOD
from scoring.estimate.ppi_plan import PPI_PLAN_METHOD
from scoring.store import judge_cache, make_engine
from scoring.store.judge_choice import ANY_CONFIG


def test_json_prints_both_estimates_side_by_side(database, capsys) -> None:  # noqa: F811
    url, _, run = database
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    judged = info["judge_assisted"]
    assert judged["method"] == PPI_METHOD and judged["model"] == ANY_CONFIG
    assert judged["combined"]["judged"] == 3 and judged["combined"]["rows"] == 14
    rows = {r["scope"]: r for r in judged["comparison"]}
    human = {r["scope"]: r for r in info["comparison"]}
    assert set(rows) == {"Art", "Sci", "combined"}
    for scope, r in rows.items():  # 7 reviewed rows: no scope has an interval, so neither prints a figure
        assert r["human_estimate"] is None and human[scope]["estimate"] is None
        assert (r["judge_estimate"], r["judge_ci_low"], r["judge_ci_high"]) == (None, None, None)
        assert r["what_to_review"] == human[scope]["what_to_review"] and r["what_to_review"].startswith("Review")
        assert r["effective_reviews"] > 0
    assert judged["plan"]["method"] == PPI_PLAN_METHOD
    assert judged["plan"]["human_planned"] >= judged["plan"]["planned"]
    assert set(judged["plan"]["factors"]) == {"both_pass", "both_fail", "exact_only", "overlap_only"}


def test_text_names_the_method_and_what_the_judge_is_worth(database, capsys) -> None:  # noqa: F811
    url, _, run = database
    assert main(["estimate", "--run", str(run.id), "--db", url]) == 0
    out = capsys.readouterr().out
    assert f"Judge-assisted estimate (judge labels: {ANY_CONFIG};" in out
    assert f"method: {PPI_METHOD}" in out and f"method: {PPI_PLAN_METHOD}" in out
    # 7 reviewed rows: no stratum has the 20 the judge needs, so it narrows nothing; and no scope has an
    # interval, so neither estimate prints a figure or a sentence about one (issue 36): what to review.
    assert "The judge's labels do not narrow the interval here" not in out
    assert "the judge is worth" not in out.lower()
    assert out.index("Judge-assisted estimate") < out.index("Metrics against the reviewers")
    block = out[out.index("Judge-assisted estimate") : out.index("method: " + PPI_METHOD)]
    table = [line for line in block.splitlines()[2:] if line.split()]
    assert [line.split()[0] for line in table] == ["Art", "Sci", COMBINED]
    assert all("— Review at least " in line and "% [" not in line for line in table), table
    assert not [line for line in out.splitlines() if line.endswith(HUMAN_ONLY_NOTE)]
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)["judge_assisted"]
    assert judged["combined"]["uses_judge"] is False and judged["combined"]["worth"] == 0


def test_judge_model_picks_one_model_s_labels(database, capsys) -> None:  # noqa: F811
    url, engine, run = database
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    judge_cache.save(
        engine,
        [{"cache_key": "d" * 64, "item_key": keys[1], "model": "other", "prompt_version": "v", "label": "CORRECT"}],
    )
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json", "--judge-model", "other"]) == 0
    judged = json.loads(capsys.readouterr().out)["judge_assisted"]
    assert judged["model"] == "model other, latest label of any prompt version" and judged["combined"]["judged"] == 1
    assert main(["estimate", "--run", str(run.id), "--db", url, "--judge-model", "m"]) == 0
    assert "Judge-assisted estimate (judge labels: model m, latest label" in capsys.readouterr().out
    assert main(["estimate", "--run", str(run.id), "--db", url, "--judge-model", "nobody"]) == 2
    assert capsys.readouterr().err == "error: No stored judge label by model 'nobody' on this run.\n"


def test_a_run_without_judge_labels_prints_no_judge_assisted_part(tmp_path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    engine = make_engine(url)
    run = ingest.save_run(
        engine, b"question,answer,Domain,response\nq1,Delhi,Art,Delhi\nq2,Agra,Art,Pune\n", "plain.csv"
    ).run
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json"]) == 0
    assert "judge_assisted" not in json.loads(capsys.readouterr().out)
    assert main(["estimate", "--run", str(run.id), "--db", url]) == 0
    assert "Judge-assisted" not in capsys.readouterr().out
    engine.dispose()

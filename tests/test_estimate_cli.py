"""``python -m scoring estimate`` against a real SQLite database built through the store API."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from scoring import ingest, review, store
from scoring.cli import main
from scoring.estimate import ACCURACY_METHOD, PLAN_METHOD
from scoring.estimate.stored_run import stored_estimate, stored_final
from scoring.store import judge_cache, make_engine

ROWS = [
    ("a0", "Delhi", "Art", "Delhi"),
    ("a1", "Agra", "Art", "It is Agra"),
    ("a2", "Pune", "Art", "Pune city"),
    ("a3", "Goa", "Art", "Goa."),  # 0-3 both_pass
    ("a4", "red fort", "Art", "the fort red"),
    ("a5", "blue lake", "Art", "lake blue"),  # 4-5 overlap_only
    ("a6", "Kochi", "Art", "Madurai"),
    ("a7", "Surat", "Art", "Rajkot"),  # 6-7 both_fail
    ("s0", "iron", "Sci", "iron"),
    ("s1", "zinc", "Sci", "zinc metal"),
    ("s2", "neon", "Sci", "neon gas"),  # both_pass
    ("s3", "amalak", "Sci", "Amalaka"),  # 11 exact_only
    ("s4", "carbon dioxide", "Sci", "dioxide of carbon"),
    ("s5", "sodium chloride", "Sci", "chloride sodium"),
]
BUCKETS = (
    ["both_pass"] * 4
    + ["overlap_only"] * 2
    + ["both_fail"] * 2
    + ["both_pass"] * 3
    + ["exact_only"]
    + ["overlap_only"] * 2
)


def csv_bytes() -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([("question", "answer", "Domain", "response"), *ROWS])
    return buf.getvalue().encode("utf-8")


@pytest.fixture
def database(tmp_path: Path):
    """Art: both_pass rows 0, 1 correct; overlap_only 4 correct, 5 in conflict then adjudicated
    wrong; both_fail nobody. Sci: both_pass 8 wrong (golden answer wrong); exact_only 11 correct;
    overlap_only 12 in conflict (unresolved), 13 correct. Judge labels on rows 0, 5 and 6."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    run = ingest.save_run(engine, csv_bytes(), "model_hindi.csv").run
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    mark = review.record_mark
    mark(engine, keys[0], run.id, "alice", "correct")
    mark(engine, keys[1], run.id, "alice", "correct")
    mark(engine, keys[4], run.id, "alice", "correct", "paraphrase")
    mark(engine, keys[5], run.id, "alice", "correct")
    mark(engine, keys[5], run.id, "bob", "wrong", "different claim")
    review.record_adjudication(engine, keys[5], run.id, "carol", "wrong")
    mark(engine, keys[8], run.id, "alice", "wrong", "golden answer wrong", "iron is right but the key says Fe")
    mark(engine, keys[11], run.id, "alice", "correct", "inflection")
    mark(engine, keys[12], run.id, "alice", "correct")
    mark(engine, keys[12], run.id, "bob", "wrong")
    mark(engine, keys[13], run.id, "bob", "correct", "paraphrase")
    judge_cache.save(
        engine,
        [
            {"cache_key": c * 64, "item_key": keys[i], "model": "m", "prompt_version": "v", "label": label}
            for c, i, label in (("a", 0, "CORRECT"), ("b", 5, "CORRECT"), ("c", 6, "INCORRECT"))
        ],
    )
    yield url, engine, run
    engine.dispose()


def test_the_stored_run_reads_as_the_fixture_says(database) -> None:
    _, engine, run = database
    final = stored_final(engine, run.id).final
    assert final["bucket"].tolist() == BUCKETS
    assert final["final_source"].tolist()[4:6] == ["human", "adjudicated"]
    assert final["human_verdict"].tolist()[12] == "conflict"


def test_text_report_prints_raw_adjudicated_estimated_metrics_and_plan(database, capsys) -> None:
    url, _, run = database
    assert main(["estimate", "--run", str(run.id), "--db", url, "--half-width", "0.05"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Run #{run.id} model_hindi (Hindi): 14 rows, 7 reviewed, 1 in conflict")
    lines: dict[str, str] = {}
    for line in out.splitlines():  # the first line of each name: the judge-assisted table repeats domains
        if line.split():
            lines.setdefault(line.split()[0], line)
    # Art: raw exact 4/8, overlap 6/8, adjudicated 5/8 (nothing pending). Estimate: both_pass 4 x 1
    # (2 of 2 reviewed right), overlap_only 2 x 0.5 (both reviewed), both_fail 2 x 0.5 (its bucket has
    # no reviewed row: the prior), (4 + 1 + 1)/8 = 75.0%.
    # (judge column: share of judged rows labelled CORRECT, rows 0 and 5 of 0, 5, 6)
    assert lines["Art"].split()[1:7] == ["8", "4", "50.0%", "75.0%", "66.7%", "62.5%"]
    # both_fail has no reviewed row: every figure of the run is a bound, not a 95% interval, so none is
    # printed (issue 36), only what to review: 4 more of Art's 8 rows (10 asked for, 8 is all it has),
    # 2 of them both_fail.
    assert lines["Art"].endswith(
        "— Review at least 4 more rows of the random sample in Art (at least 2 in each of: both_fail) to get an "
        "estimate."
    )
    assert "75.0% [" not in lines["Art"] and lines["Art"].count("%") == 4  # the raw and adjudicated figures only
    _, figures = stored_estimate(make_engine(url), run.id)
    point = {e.scope: e.estimate for e in figures.accuracy.rows}
    assert point["Art"] == pytest.approx(0.75)  # the arithmetic below holds, though no page prints it
    # The random sample: the marks were given through the queue, so each stratum's sample runs up to
    # its last marked row in the run's review order (ranks by the file's seed, fixed): in Art
    # both_pass row 2 (rank 6) comes before row 1 (rank 11) and is missing; in Sci both_pass row 10
    # (rank 1) before row 8 (rank 2); row 12 (in conflict) is missing too. Three missing rows.
    # Sci: adjudicated 4/6 to 5/6 (row 12 pending). Estimate: both_pass has one reviewed row (8,
    # wrong) and falls back: it counts as it is, its two other rows take the bucket's pooled 2/3
    # (rows 0, 1 right, 8 wrong): 4/9; exact_only 1/1; overlap_only falls back likewise: row 13 right
    # and one row at the pooled 2/3 (4, 13 right, 5 wrong): 5/6. (3 x 4/9 + 1 + 2 x 5/6)/6 = 66.7%.
    assert lines["Sci"].split()[1:7] == ["6", "3", "66.7%", "83.3%", "—", "66.7%–83.3%"]
    assert point["Sci"] == pytest.approx(2 / 3)
    assert lines["Sci"].endswith("— Review at least 3 more rows of the random sample in Sci to get an estimate.")
    # combined (6 + 4)/14 = 71.4%, not printed either: 10 reviewed rows asked for, 2 of them both_fail
    assert point["combined"] == pytest.approx(10 / 14)
    assert lines["combined"].endswith(
        "— Review at least 3 more rows of the random sample (at least 2 in each of: both_fail) to get an estimate."
    )
    assert "missing from the random sample (skipped, in conflict or waiting): 3 rows" in out
    assert "random sample: Only a random sample counts" in out
    assert f"method: {ACCURACY_METHOD}" in out
    assert (
        "fell back to their bucket's pooled rate (fewer than 2 reviewed rows): both_pass/Sci, overlap_only/Sci" in out
    )
    assert "no reviewed row in their bucket yet (no estimate until each bucket has some): both_fail/Art" in out
    assert lines["exact"].split()[1:3] == ["14", "7"] and lines["overlap"].split()[1:3] == ["14", "7"]
    # The judge: rows 0, 5, 6 judged (thirds); 0 CORRECT and right, 5 CORRECT but wrong, 6 INCORRECT in
    # both_fail, which nobody reviewed. Precision 1/2 exactly (both passes reviewed, all of their strata);
    # recall 1/1 on the reviewed part, and row 6 may be right: [1/3 / (1/3 + 1/3), 1] = [50%, 100%].
    assert lines["judge"].split()[1:5] == ["3", "2", "66.7%", "50.0%"]
    assert "100.0% [50.0%, 100.0%]" in lines["judge"]
    assert "Rogan-Gladen" in out and "ratios: Stratified ratio" in out
    assert "Review plan for ±5 points:" in out and f"method: {PLAN_METHOD}" in out
    assert "both_fail     Art" in out and "0.5 (prior)" in out


def test_json_report_carries_the_same_figures(database, capsys) -> None:
    url, _, run = database
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["run"]["id"] == run.id and info["run"]["language"] == "Hindi"
    assert (info["reviewed"], info["in_conflict"]) == (7, 1)
    rows = {r["scope"]: r for r in info["comparison"]}
    # No scope has an interval: null figures and what to review instead of 71.4%, 75.0% and 66.7%
    for scope, r in rows.items():
        assert (r["estimate"], r["ci_low"], r["ci_high"], r["shown"]) == (None, None, None, False), scope
        assert r["what_to_review"].startswith("Review at least ") and r["needed"] > 0, scope
    figures = {e["scope"]: e for e in [*info["estimate"]["domains"], info["estimate"]["combined"]]}
    assert all(e["estimate"] is None and e["half_width"] is None for e in figures.values())
    assert info["estimate"]["combined"]["review_buckets"] == ["both_fail"]
    assert rows["Art"]["what_to_review"] == (
        "Review at least 4 more rows of the random sample in Art (at least 2 in each of: both_fail) to get an estimate."
    )
    drawn = info["random_sample"]
    assert (drawn["in_estimate"], drawn["missing"], drawn["by_hand"]) == (7, 3, 0) and drawn["missing_width"] >= 0
    assert rows["Sci"]["raw_judge"] is None and rows["Art"]["raw_judge"] == pytest.approx(2 / 3)
    assert info["estimate"]["unreviewed"] == [["both_fail", "Art"]]
    assert info["estimate"]["combined"]["unknown_weight"] == pytest.approx(2 / 14)
    assert [m["metric"] for m in info["metrics"]] == ["exact", "overlap", "judge"]
    plan = info["plan"]
    assert plan["half_width"] == 0.05 and plan["reviewed"] == 7  # the page's default: +-5 points
    assert plan["sentence"].startswith("Review plan for ±5 points: ")
    assert plan["remaining"] == plan["planned"] - plan["reviewed"] == sum(r["remaining"] for r in plan["strata"])
    assert plan["planned"] <= 14


def test_errors_are_one_line_and_exit_code_2(database, capsys, tmp_path: Path) -> None:
    url, _, run = database
    assert main(["estimate", "--run", "99", "--db", url]) == 2
    assert capsys.readouterr().err == "error: No run with id 99.\n"
    assert main(["estimate", "--run", str(run.id), "--db", url, "--half-width", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 0.02?" in err
    assert main(["estimate", "--run", "1", "--db", f"sqlite:///{tmp_path / 'missing.db'}"]) == 2
    assert "No database at" in capsys.readouterr().err


def test_the_command_runs_as_a_module(database, run_cli) -> None:
    url, _, run = database
    proc = run_cli("scoring", "estimate", "--run", str(run.id), "--db", url)
    assert proc.returncode == 0 and "estimated true accuracy (95%)" in proc.stdout and proc.stderr == ""
    proc = run_cli("scoring", "estimate", "--run", "42", "--db", url)
    assert proc.returncode == 2 and proc.stderr == "error: No run with id 42.\n" and "Traceback" not in proc.stderr

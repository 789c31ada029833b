"""``python -m scoring matchers --run ID``: the matchers report on a stored run with a language
column, its JSON, its figures for the spec's two equal to the estimate's, and its errors."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from scoring import ingest, review, store
from scoring.cli import main
from scoring.core.errors import InputError
from scoring.estimate import metric_quality
from scoring.estimate.matcher_quality import ALL_ROWS
from scoring.estimate.stored_matchers import run_matchers, save_run_matchers, stored_matcher_sample
from scoring.match import MATCHERS
from scoring.store import make_engine

ROWS = [
    ("h0", "किताब", "Art", "दो किताबें।", "Hindi"),
    ("h1", "चोल", "Art", "चोलों ने", "Hindi"),
    ("h2", "गंगा", "Art", "गंगा नदी", "Hindi"),
    ("h3", "दिल्ली", "Art", "आगरा", "Hindi"),
    ("e0", "amalak", "Art", "Amalaka", "English"),
    ("e1", "scroll painting", "Art", "Scroll paintings", "English"),
    ("e2", "Chola ideals", "Art", "Chola and Hoysala ideals", "English"),
    ("e3", "Jalgaon", "Art", "Aurangabad, I believe.", "English"),
    ("t0", "சோழர்", "Art", "சோழர்கள் கட்டினர்", "Tamil"),
    ("t1", "சென்னை", "Art", "மதுரை", "Tamil"),
]
RIGHT = {"h0", "h1", "h2", "e0", "e1", "t0"}


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def database(tmp_path: Path):
    """Every row reviewed by one reviewer: right where a reader would say so."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([("question", "answer", "Domain", "response", "language"), *ROWS])
    run = ingest.save_run(engine, buf.getvalue().encode("utf-8"), "mixed.csv").run
    table = store.load_table(engine, run.id)
    for key, question in zip(table["item_key"].to_list(), table["question"].to_list()):
        review.record_mark(engine, key, run.id, "alice", "correct" if question in RIGHT else "wrong")
    yield url, engine, run
    engine.dispose()


def test_the_report_names_each_language_and_recommends_or_says_too_small(database) -> None:
    url, _, run = database
    code, text, err = _run(["matchers", "--run", str(run.id), "--db", url, "--by", "language"])
    assert code == 0, err
    assert "Matchers against people (target precision 95%; chrF threshold 30)" in text
    for scope in (ALL_ROWS, "English", "Hindi", "Tamil"):
        assert f"  {scope}: The sample is too small to tell" in text  # ten reviewed rows: under 30
    assert "Stemmed word overlap" in text and "stemming: stemmed word overlap stems English, Hindi" in text


def test_the_json_figures_of_the_spec_metrics_are_the_estimates(database) -> None:
    url, engine, run = database
    code, text, _ = _run(["matchers", "--run", str(run.id), "--db", url, "--json", "--target", "0.5"])
    assert code == 0
    found = json.loads(text)
    assert found["target_precision"] == 0.5 and found["chrf_threshold"] == 30.0
    table = {(r["scope"], r["matcher"]): r for r in found["figures"]}
    assert {s for s, _ in table} == {ALL_ROWS}  # without --by language: the whole run only
    _, sample = stored_matcher_sample(engine, run.id)
    exact = next(q for q in metric_quality(sample) if q.metric == "exact")
    assert table[(ALL_ROWS, "exact")]["precision"] == pytest.approx(exact.precision.value)
    # stemmed overlap passes the Hindi and Tamil plurals and scroll paintings: four rows plus the
    # spec's passes (गंगा नदी, Chola and Hoysala ideals) -> 6 of 10, all but Chola right
    stem = table[(ALL_ROWS, "stem_overlap")]
    assert stem["pass_share"] == pytest.approx(0.6) and stem["precision"] == pytest.approx(5 / 6)


def test_bad_targets_and_runs_are_one_line(database) -> None:
    url, _, run = database
    code, text, err = _run(["matchers", "--run", str(run.id), "--db", url, "--target", "95"])
    assert (
        code == 2
        and text == ""
        and err.strip() == "error: --target must be a share between 0 and 1, e.g. 0.95, not 95."
    )
    code, _, err = _run(["matchers", "--run", "999", "--db", url])
    assert code == 2 and err.strip() == "error: No run with id 999."


def test_the_runs_switched_on_matchers_are_the_default_set_and_all_overrides(database) -> None:
    url, engine, run = database
    save_run_matchers(engine, run.id, ["stem_overlap"])
    code, text, _ = _run(["matchers", "--run", str(run.id), "--db", url, "--json"])
    assert code == 0
    found = json.loads(text)
    assert list(found["matchers"]) == ["exact", "overlap", "stem_overlap"]
    assert {r["matcher"] for r in found["figures"]} == {"exact", "overlap", "stem_overlap"}
    code, text, _ = _run(["matchers", "--run", str(run.id), "--db", url])
    assert "Matchers compared: Exact substring (spec), Word overlap (spec), Stemmed word overlap" in text
    assert "Character F-score" not in text.split("Recommendation")[0]
    code, text, _ = _run(["matchers", "--run", str(run.id), "--db", url, "--json", "--matchers", "all"])
    assert {r["matcher"] for r in json.loads(text)["figures"]} == {"exact", "overlap", *MATCHERS}
    code, _, err = _run(["matchers", "--run", str(run.id), "--db", url, "--matchers", "bleu"])
    assert code == 2 and "Unknown matcher 'bleu'" in err
    with pytest.raises(InputError, match="Unknown matcher 'rouge'"):
        save_run_matchers(engine, run.id, ["rouge"])
    assert run_matchers(engine, run.id) == ("stem_overlap",)  # a bad choice is not saved

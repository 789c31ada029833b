"""Issue 36, point 7: no figure before its evidence. The one rule (:mod:`scoring.estimate.evidence`)
that decides whether an estimate may be printed and what to review where it may not; every output
built on it (the estimate's rows and JSON, the Model x language cells, the plan's one sentence);
and ``python -m scoring estimate`` on the bundled sample set, text and JSON, with nothing reviewed
and after 13 triage rows."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.core.report import COMBINED
from scoring.estimate import build_strata, estimate_accuracy, make_sample, metric_quality, plan_review
from scoring.estimate.evidence import MAX_BORROWED, MIN_DOMAIN_REVIEWED, has_interval, printed, shortfall, withhold
from scoring.estimate.strata import MIN_REVIEWED, OWN, weights
from scoring.estimate.wording import plan_outcome, to_get_one
from scoring.store import make_engine
from scoring.team_report import ESTIMATE, cell_text, cells_csv_frame, table_figure, team_table

PERCENT = re.compile(r"\d+(\.\d+)?%")


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


#: 13 triage rows: every reviewed row is overlap-only, the other buckets have none reviewed.
TRIAGED = (
    ("both_pass", "Art", 30, 0, 0),
    ("both_fail", "Art", 20, 0, 0),
    ("exact_only", "Art", 5, 0, 0),
    ("overlap_only", "Art", 10, 7, 4),
    ("both_pass", "Sci", 25, 0, 0),
    ("both_fail", "Sci", 10, 0, 0),
    ("overlap_only", "Sci", 10, 6, 3),
)


# --------------------------------------------------------------------------- the rule


def old_withheld(strata, target) -> int:  # noqa: ANN001
    """The rule before issue 36 (scoring/estimate/estimator.py ``withheld``), kept here to show that
    which figures have an interval did not change: only the reviews asked for did."""
    w = weights(strata, target)
    if w.unknown > 0:
        n_bucket = np.bincount(strata.bucket, weights=strata.reviewed, minlength=strata.groups)
        size = np.bincount(strata.bucket, weights=strata.size, minlength=strata.groups)
        empty = (n_bucket == 0) & (size > 0)
        return max(int(np.sum(np.minimum(MIN_REVIEWED, size[empty]))), 1)
    inside = np.ones(len(strata.size), dtype=bool) if target is None else np.asarray(target, dtype=bool)
    rows, reviewed = float(strata.size[inside].sum()), float(strata.reviewed[inside].sum())
    if rows == 0 or reviewed >= rows:
        return 0
    short = max(0.0, min(MIN_DOMAIN_REVIEWED, rows) - reviewed)
    left = np.where(inside & (w.status != OWN), strata.size - strata.reviewed, 0.0)
    borrowed, extra = float(left.sum()) / rows, 0.0
    for cell in np.argsort(-left):
        if borrowed <= MAX_BORROWED or left[cell] <= 0:
            break
        extra += max(0.0, min(MIN_REVIEWED, strata.size[cell]) - strata.reviewed[cell])
        borrowed -= left[cell] / rows
    return int(np.ceil(max(short, extra)))


def test_thirteen_triage_rows_ask_for_every_bucket_and_the_domain_minimum() -> None:
    strata = build_strata(cells(*TRIAGED))
    domains = strata.cells["Domain"].to_numpy()
    art = shortfall(strata, domains == "Art")
    # Art: 65 rows, 7 reviewed (10 asked for: 3 short); both_pass, both_fail and exact_only have no
    # reviewed row (2 each: 6); 58 of 65 rows borrow or are unknown, past 20%: the largest cells first,
    # 2 rows each (both_pass 30, both_fail 20): 4 rows bring it to 8/65. The most of the three: 6.
    assert art.rows == 6 and art.buckets == ("both_pass", "both_fail", "exact_only")
    run = shortfall(strata)
    # The run: 13 reviewed (10 asked for); three empty buckets, 2 each: 6; 90 of 110 rows unknown, the
    # largest cells to 2 rows each (both_pass/Art 30, both_pass/Sci 25, both_fail/Art 20): 15 left, 14%.
    assert run.rows == 6 and run.buckets == ("both_pass", "both_fail", "exact_only")
    acc = estimate_accuracy(strata)
    assert not has_interval(acc.combined) and acc.combined.needed == 6
    assert acc.combined.review_buckets == ("both_pass", "both_fail", "exact_only")
    # The point estimate exists inside (the prior 0.5 on the unknown buckets), but nothing prints it.
    assert 0 < acc.combined.estimate < 1
    row = acc.combined.as_dict()
    assert (row["estimate"], row["ci_low"], row["ci_high"], row["half_width"]) == (None, None, None, None)
    assert row["what_to_review"] == (
        "Review at least 6 more rows of the random sample (at least 2 in each of: both_pass, both_fail, "
        "exact_only) to get an estimate."
    )
    table = acc.table()
    assert table["estimate"].null_count() == table.height and table["what_to_review"].null_count() == 0


def test_a_reviewed_run_has_its_interval_and_prints_it() -> None:
    sample = cells(
        ("both_pass", "Art", 200, 40, 38),
        ("both_fail", "Art", 100, 20, 2),
        ("overlap_only", "Art", 50, 20, 12),
        ("exact_only", "Art", 50, 20, 11),
    )
    strata = build_strata(sample)
    assert shortfall(strata).rows == 0 and shortfall(strata).buckets == ()
    acc = estimate_accuracy(strata)
    assert has_interval(acc.combined) and acc.combined.needed == 0
    row = acc.combined.as_dict()
    assert row["estimate"] == pytest.approx(acc.combined.estimate) and row["what_to_review"] is None
    assert printed(row) == row["estimate"] and row["ci_low"] <= row["estimate"] <= row["ci_high"]


@pytest.mark.parametrize("seed", range(40))
def test_which_figures_have_an_interval_is_unchanged(seed: int) -> None:
    """On random samples, the new rule withholds exactly what the old one did (so the coverage
    simulations still hold), and never asks for fewer reviews."""
    rng = np.random.default_rng(seed)
    spec = []
    for domain in ("Art", "Sci", "Geo"):
        for name in ("both_pass", "both_fail", "exact_only", "overlap_only"):
            size = int(rng.integers(0, 40))
            if size:
                reviewed = int(rng.integers(0, size + 1)) if rng.random() < 0.6 else 0
                spec.append((name, domain, size, reviewed, int(rng.integers(0, reviewed + 1))))
    if not spec:
        return
    strata = build_strata(cells(*spec))
    domains = strata.cells["Domain"].to_numpy()
    for target in [None, *(domains == d for d in strata.domains)]:
        old, new = old_withheld(strata, target), shortfall(strata, target)
        assert (old == 0) == (new.rows == 0), (spec, old, new)
        assert new.rows >= old
        assert bool(new.buckets) == (weights(strata, target).unknown > 0)


def test_has_interval_reads_every_kind_of_figure() -> None:
    assert has_interval({"shown": True, "needed": 0}) and has_interval({})
    assert not has_interval({"shown": False, "needed": 3}) and not has_interval({"shown": True, "needed": 2})
    assert printed({"shown": False, "needed": 3, "estimate": 0.5}) is None
    kept = withhold({"shown": True, "needed": 0, "estimate": 0.61, "ci_low": 0.5}, "never said")
    assert kept == {"shown": True, "needed": 0, "estimate": 0.61, "ci_low": 0.5, "what_to_review": None}
    dropped = withhold({"shown": False, "needed": 4, "estimate": 0.5, "ci_low": 0.0, "rows": 9}, "Review ...")
    assert dropped == {
        "shown": False,
        "needed": 4,
        "estimate": None,
        "ci_low": None,
        "rows": 9,
        "what_to_review": "Review ...",
    }


def test_a_corrected_accuracy_without_an_interval_prints_no_value() -> None:
    exact, _ = metric_quality(cells(*TRIAGED))
    corrected = exact.corrected
    if corrected.value is not None:  # the stratified estimate, withheld like it
        assert not has_interval(corrected)
    assert exact.as_dict()["corrected"]["value"] is None
    assert (
        exact.as_dict()["corrected"]["what_to_review"] is None
        or "to get an estimate" in (exact.as_dict()["corrected"]["what_to_review"])
    )


def test_the_words_name_the_scope_and_the_buckets() -> None:
    assert to_get_one(COMBINED, 12, ("both_pass", "both_fail")) == (
        "Review at least 12 more rows of the random sample (at least 2 in each of: both_pass, both_fail) to get "
        "an estimate."
    )
    assert to_get_one("Tamil", 1) == "Review at least 1 more row of the random sample in Tamil to get an estimate."


# --------------------------------------------------------------------------- the plan's one sentence


def test_a_plan_never_says_plus_minus_zero_and_says_what_it_assumes() -> None:
    # every row planned: counted, not "expected +-0.00"
    assert (
        plan_outcome(0.0, 40, 40, 13)
        == "that is every row of the run: the accuracy is then counted, with no sampling error"
    )
    assert "0.00" not in plan_outcome(0.0, 40, 40, 0)
    # nothing reviewed: the prior, said in words
    said = plan_outcome(0.0447, 38, 40, 13)
    assert said.startswith("expected interval once they are reviewed ±4.47 points, if the assumed rates hold")
    assert "13 strata whose bucket has no reviewed row yet are assumed at 50%" in said
    plan = plan_review(cells(*TRIAGED))
    assert plan.half_width == 0.05  # the one default: +-5 points, the page's and the CLI's
    assert plan.sentence.startswith(f"Review plan for ±5 points: {plan.planned:,} rows planned in all, 13 reviewed")
    assert "assumed at 50%" in plan.sentence and plan.as_dict()["sentence"] == plan.sentence


# --------------------------------------------------------------------------- Model x language cells


def test_a_cell_without_an_interval_shows_no_figure_in_any_output(tmp_path) -> None:  # noqa: ANN001
    engine = make_engine(f"sqlite:///{tmp_path / 'cells.db'}")
    lines = ["question,answer,Domain,response"] + [
        f"q{i}?,ans{i},{('Art', 'Sci')[i % 2]},{f'it is ans{i}' if i % 3 else f'no {i}'}" for i in range(30)
    ]
    run = ingest.save_run(engine, ("\n".join(lines) + "\n").encode(), "m.csv", model="m", language="Tamil").run
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    for key in keys[:5]:
        review.record_mark(engine, key, run.id, "asha", "correct")
    (cell,) = team_table(engine).cells
    engine.dispose()
    assert cell.kind == ESTIMATE and cell.reviewed > 0 and not has_interval(cell)
    assert (cell.value, cell.ci_low, cell.ci_high) == (None, None, None)
    text = cell_text(cell)
    assert text.startswith(f"no estimate yet · {cell.reviewed} reviewed · Review at least ") and "in Tamil" in text
    assert not PERCENT.search(text)
    frame = cells_csv_frame([cell]).row(0, named=True)
    assert frame["accuracy_pct"] is None and frame["what_to_review"] == cell.what_to_review
    assert json.loads(json.dumps(cell.as_dict()))["value"] is None
    picture = table_figure(["m"], ["Tamil"], [cell], "t").data[0]
    assert picture.z[0][0] is None and not PERCENT.search(picture.text[0][0])
    assert picture.text[0][0].startswith("no estimate yet")  # the label is short; what to review is its hover
    hover = picture.customdata[0][0].replace("<br>", " ")
    assert "to get an estimate." in hover and not PERCENT.search(hover)


# --------------------------------------------------------------------------- the CLI on the sample set


def test_the_cli_on_the_untouched_sample_prints_no_estimate(sample_engine: Engine, run_id: int, run_cli) -> None:
    out = run_cli("scoring", "estimate", "--run", str(run_id))
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.split() and line.split()[0] in ("Art", COMBINED)]
    combined = next(line for line in lines if line.startswith(COMBINED))
    assert combined.endswith(
        "— Review at least 18 more rows of the random sample (at least 2 in each of: both_pass, both_fail, "
        "exact_only, overlap_only) to get an estimate."
    ), combined
    assert "50.0%" not in out.stdout  # the prior is printed nowhere
    plan = next(line for line in out.stdout.splitlines() if line.startswith("Review plan for"))
    assert plan.startswith("Review plan for ±5 points: 38 rows planned in all, 0 reviewed, 38 remaining;"), plan
    assert "±0.00" not in out.stdout and "+-0.00" not in out.stdout
    info = json.loads(run_cli("scoring", "estimate", "--run", str(run_id), "--json").stdout)
    for row in [*info["comparison"], info["estimate"]["combined"], *info["estimate"]["domains"]]:
        assert (row["estimate"], row["ci_low"], row["ci_high"]) == (None, None, None), row["scope"]
        assert row["what_to_review"].startswith("Review at least "), row["scope"]
    assert info["plan"]["half_width"] == 0.05


def test_the_cli_after_thirteen_triage_rows_and_with_a_kept_plan(sample_engine: Engine, run_id: int, run_cli) -> None:
    scored = store.load_scored(sample_engine, run_id)
    info = store.get_run(sample_engine, run_id)
    assert info is not None
    scope = review.queue_scope(scored, "overlap_only", None, seed=info.review_seed)
    keys = list(scope.item_keys)[:13]  # the triage queue has 8 rows in this run: all of them
    for i, key in enumerate(keys):
        review.record_mark(sample_engine, key, run_id, "asha", "correct" if i % 3 else "wrong")
    review.set_audit(sample_engine, run_id, keys[:1], "asha", 0.03)  # a plan kept for +-3 points
    out = run_cli("scoring", "estimate", "--run", str(run_id))
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith(("Art ", "Geography ", COMBINED + " "))]
    assert len(rows) >= 3
    for line in rows[:3]:
        estimated = line.split("  ")[-1]
        assert estimated.startswith("— Review at least ") and not PERCENT.search(estimated), line
    assert "Review plan for ±3 points:" in out.stdout  # the run's kept half-width, as the page offers it
    info = json.loads(run_cli("scoring", "estimate", "--run", str(run_id), "--json").stdout)
    combined = next(r for r in info["comparison"] if r["scope"] == COMBINED)
    assert combined["reviewed"] == len(keys) and combined["estimate"] is None
    assert combined["what_to_review"] == (
        "Review at least 12 more rows of the random sample (at least 2 in each of: both_pass, both_fail, "
        "exact_only) to get an estimate."
    )
    assert info["plan"]["half_width"] == 0.03

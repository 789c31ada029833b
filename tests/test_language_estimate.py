"""The per-language estimate (issue 29 §2): worked numbers, borrowing only within a language,
withholding with "review k more", the run's figures by language, and coverage by simulation in a
few regimes (``tests/bench_languages.py`` runs every regime with 500 runs)."""

from __future__ import annotations

import json

import pytest
from apptest_support import frame_with, open_page
from language_sim import LANGUAGES, PLAN, mixed_database, run_regime

from scoring.estimate import estimate_accuracy, make_sample, run_estimate
from scoring.estimate.group_estimate import NO_LANGUAGE, estimate_groups, stack_runs
from scoring.store import ENV_VAR


def _sample(cells: list[tuple[str, str, str, int, int, int]]):
    """(bucket, domain, language, rows, reviewed, correct) per cell."""
    b, d, t, lang = [], [], [], []
    for bucket, domain, language, rows, reviewed, correct in cells:
        for i in range(rows):
            b.append(bucket)
            d.append(domain)
            lang.append(language)
            t.append((i < correct) if i < reviewed else None)
    return make_sample(b, d, t, language=lang)


WORKED = [
    ("both_pass", "Geography", "Hindi", 20, 12, 11),
    ("both_pass", "Art", "Hindi", 10, 1, 1),  # one reviewed row: borrows Hindi's both_pass rate
    ("both_pass", "Art", "English", 30, 12, 3),
]


def test_a_thin_stratum_borrows_its_own_languages_rate_not_another_languages():
    english, hindi = estimate_groups(_sample(WORKED))
    assert (english.scope, english.rows, english.reviewed, english.correct) == ("English", 30, 12, 3)
    assert english.estimate == pytest.approx(0.25)
    # Hindi: Geography 20 x 11/12; Art keeps its reviewed row and gives its other 9 rows Hindi's
    # pooled both_pass rate 12/13 (pooled over every language it would be 15/25 = 0.6: 0.8244).
    assert hindi.estimate == pytest.approx((20 * 11 / 12 + 1 + 9 * 12 / 13) / 30)
    assert hindi.estimate == pytest.approx(0.921368, abs=1e-6)
    assert hindi.ci_low < hindi.estimate < hindi.ci_high <= 1
    assert english.shown and hindi.shown


def test_a_language_is_estimated_as_a_run_of_its_own_rows():
    sample = _sample(WORKED)
    hindi = estimate_groups(sample)[1]
    alone = estimate_accuracy(sample.filter(sample["language"] == "Hindi")).combined
    assert hindi.estimate == pytest.approx(alone.estimate)
    # its interval uses the domains' t on few degrees of freedom: at least as wide as the run's
    assert hindi.ci_low <= alone.ci_low + 1e-12 and hindi.ci_high >= alone.ci_high - 1e-12


def test_a_language_with_too_few_reviewed_rows_says_how_many_more():
    sample = _sample([("both_pass", "Geography", "Tamil", 40, 4, 4), ("both_pass", "Geography", "Hindi", 60, 20, 18)])
    tamil = {e.scope: e for e in estimate_groups(sample)}["Tamil"]
    assert not tamil.shown and tamil.needed == 6  # 10 reviewed rows of Tamil give an interval


def test_blank_languages_are_one_named_group_and_no_column_gives_none():
    sample = _sample([("both_pass", "Geography", " ", 10, 10, 9), ("both_pass", "Geography", "Hindi", 10, 10, 8)])
    assert [e.scope for e in estimate_groups(sample)] == ["Hindi", NO_LANGUAGE]
    assert estimate_groups(sample.drop("language")) == []


def test_stacked_runs_keep_each_runs_strata_apart():
    one = _sample([("both_pass", "Geography", "Hindi", 10, 10, 10)])
    two = _sample([("both_pass", "Geography", "Hindi", 30, 10, 5)])
    stacked = stack_runs([(1, one), (2, two)])
    assert sorted(set(stacked["Domain"].to_list())) == ["#1 Geography", "#2 Geography"]
    (hindi,) = estimate_groups(stacked)
    assert hindi.estimate == pytest.approx((10 * 1.0 + 30 * 0.5) / 40)


def test_the_runs_figures_carry_a_table_by_language_only_when_mixed():
    sample = _sample(WORKED)
    final = sample.select("item_key", "Domain", "bucket", "exact_correct", "overlap_correct", "language").with_columns(
        human_verdict=sample["truth"].replace_strict({True: "correct", False: "wrong"}, default=None),
        final_verdict=sample["truth"].replace_strict({True: "correct", False: "wrong"}, default="pending"),
        final_source=sample["truth"].is_not_null().replace_strict({True: "human", False: "none"}),
    )
    figures = run_estimate(final)
    table = figures.by_language
    assert table["scope"].to_list() == ["English", "Hindi"]
    assert table["rows"].to_list() == [30, 30] and table["reviewed"].to_list() == [12, 13]
    assert table["estimate"].to_list() == pytest.approx([0.25, 0.921368], abs=1e-6)
    assert table["raw_exact"].to_list() == [1.0, 1.0]  # every row is both_pass
    assert "by_language" in figures.as_dict()
    single = run_estimate(final.filter(final["language"] == "Hindi"))
    assert not single.multilingual and "by_language" not in single.as_dict()


# (rows, reviews, small language's share): the regimes of tests/test_small_runs.py's sizes
REGIMES = [(300, 100, 0.03), (2000, 300, 0.03), (5000, 300, 0.01)]


@pytest.mark.parametrize(("rows", "reviews", "small"), REGIMES)
def test_per_language_intervals_cover_about_95_percent(rows: int, reviews: int, small: float):
    tally = run_regime(rows, reviews, small, runs=120, seed=rows + reviews + round(1000 * small))
    print(
        f"{rows} rows, {reviews} reviews, small language {small:.0%}: coverage {tally.coverage():.3f};",
        ", ".join(
            f"{lang} {tally.coverage(lang):.3f} (withheld {tally.withheld_share(lang):.0%})" for lang in LANGUAGES
        ),
    )
    assert 0.93 <= tally.coverage() <= 0.995
    for lang in LANGUAGES:
        if tally.shown.get(lang, 0) >= 60:
            assert tally.coverage(lang) >= 0.9, lang
    assert tally.shown.get("English", 0) >= 100  # the large language shows its figure nearly always


def test_a_stored_mixed_language_run_reports_each_language(tmp_path, run_cli) -> None:
    """Each language's figures in estimate --by language and --json."""
    url, run_id = mixed_database(tmp_path)
    out = run_cli("scoring", "estimate", "--run", str(run_id), "--db", url, "--by", "language")
    assert out.returncode == 0, out.stderr
    assert "Accuracy by language" in out.stdout
    for language, rows, right in PLAN:
        line = next(x for x in out.stdout.splitlines() if x.startswith(language + " "))
        assert f"{100 * right / rows:.1f}% [" in line and f" {rows} " in line, line
    report = json.loads(run_cli("scoring", "estimate", "--run", str(run_id), "--db", url, "--json").stdout)
    got = {r["scope"]: r["estimate"] for r in report["by_language"]}
    assert got == pytest.approx({language: right / rows for language, rows, right in PLAN})


def test_the_true_accuracy_page_shows_each_language(tmp_path, monkeypatch) -> None:
    url, run_id = mixed_database(tmp_path)
    monkeypatch.setenv(ENV_VAR, url)
    at = open_page("estimate", run_id=run_id)
    table = frame_with(at, "language")
    assert table["language"].tolist() == ["English", "Hindi", "Tamil"]
    assert table["estimate"].tolist() == pytest.approx([right / rows for _, rows, right in PLAN])
    assert table["rows"].tolist() == [rows for _, rows, _ in PLAN]

"""Issue 36, points 3 and 9 in ``scoring``: the queue's address, the language filter, the languages
each reviewer reads and the claim rule that uses them, the scopes with work left, the audit scope
kept through a database outage, and the planner aimed at one language (with its command line).
Real SQLite files through the store API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.cli import main
from scoring.core.errors import InputError
from scoring.estimate import build_strata, plan_review
from scoring.estimate.evidence import MIN_DOMAIN_REVIEWED
from scoring.estimate.language_plan import plan_language
from scoring.estimate.sample import make_sample
from scoring.estimate.stored_run import stored_estimate
from scoring.review import address, my_verdicts, reader_languages
from scoring.review.queue import claim_in_queue, queue_scope
from scoring.review.session import ReviewSession
from scoring.store import make_engine
from scoring.store.engine import DatabaseError, open_engine

LANGUAGES = ("English", "Tamil", "Hindi")


def mixed_csv(n: int = 36, extra: tuple[str, ...] = ()) -> bytes:
    """``n`` overlap_only rows whose language cycles English, Tamil, Hindi (domains Art, History),
    then ``extra`` rows in other spellings of a language (one each, overlap_only too)."""
    lines = ["question,answer,Domain,language,response"]
    for i in range(n):
        lines.append(f"q{i}?,w{i} beta,{('Art', 'History')[i // 3 % 2]},{LANGUAGES[i % 3]},beta w{i}")
    for j, lang in enumerate(extra):
        lines.append(f"x{j}?,x{j} beta,Art,{lang},beta x{j}")
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture
def engine(tmp_path: Path):
    eng = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    yield eng
    eng.dispose()


def stored(engine: Engine, data: bytes):
    run = ingest.save_run(engine, data, "mixed_model_tamil.csv").run
    return run, store.load_scored(engine, run.id)


# --------------------------------------------------------------------------- the address


OFFERED = address.Offered(("both_pass", "overlap_only", review.AUDIT), ("Art", "History"), LANGUAGES)


def test_an_address_reads_back_what_it_writes() -> None:
    place = address.QueueAddress(review.AUDIT, "History", "Tamil", 50, True, True, address.MY_VERDICTS)
    params = place.params()
    assert params == {
        "scope": "audit",
        "domain": "History",
        "language": "Tamil",
        "sample": "50",
        "blind": "on",
        "second": "on",
        "view": "my-verdicts",
    }
    assert address.read_address(params, OFFERED) == (place, [])
    assert address.QueueAddress().params() == {"scope": "overlap_only"}  # defaults stay out of the URL
    assert address.read_address({}, OFFERED) == (address.QueueAddress(), [])
    # Other parameters are not the queue's; a repeated one counts by its last value.
    assert address.queue_params({"run": "4", "reviewer": "a", "scope": ["both_pass", "audit"]}) == {"scope": "audit"}


def test_each_bad_value_is_named_and_its_default_used() -> None:
    bad = {
        "scope": "nope",
        "domain": "Nowhere",
        "language": "Klingon",
        "sample": "-3",
        "blind": "maybe",
        "second": "2",
        "view": "sideways",
    }
    place, problems = address.read_address(bad, OFFERED)
    assert place == address.QueueAddress()
    assert len(problems) == 7
    for name, problem in zip(address.PARAMS, problems, strict=True):
        assert problem.startswith(f"The address's {name}="), problem
    assert "both_pass, overlap_only, audit" in problems[0]
    no_audit = address.Offered(("overlap_only",), (), ())
    _, said = address.read_address({"scope": "audit", "sample": "20000"}, no_audit)
    assert "no audit sample" in said[0] and "10,000" in said[1]
    _, long = address.read_address({"domain": "x" * 500}, OFFERED)
    assert len(long[0]) < 200  # a hand-edited URL is quoted short


# --------------------------------------------------------------------------- the language filter


def test_the_language_filter_narrows_a_scope_and_a_sample_is_drawn_first(engine: Engine) -> None:
    run, scored = stored(engine, mixed_csv())
    seed = run.review_seed
    whole = queue_scope(scored, "overlap_only", seed=seed)
    tamil = queue_scope(scored, "overlap_only", seed=seed, language="Tamil")
    language_of = dict(zip(scored["item_key"], scored["language"], strict=True))
    assert len(tamil) == 12 and {language_of[k] for k in tamil.item_keys} == {"Tamil"}
    assert tamil.language == "Tamil" and set(tamil.languages) == {"Tamil"}
    # The Tamil rows in the scope's own order: a prefix of the language's order is a random sample.
    assert list(tamil.item_keys) == [k for k in whole.item_keys if language_of[k] == "Tamil"]
    sampled = queue_scope(scored, "overlap_only", sample=9, seed=seed, language="Tamil")
    first_nine = queue_scope(scored, "overlap_only", sample=9, seed=seed)
    assert list(sampled.item_keys) == [k for k in first_nine.item_keys if language_of[k] == "Tamil"]
    rows = review.queue(scored, "asha", engine, "overlap_only", "History", seed=seed, language="Hindi")
    assert len(rows) == 6 and set(scored.loc[rows, "language"]) == {"Hindi"}
    table = review.progress(scored, engine, bucket="overlap_only", language="Tamil")
    assert table.iloc[-1]["n"] == 12


# --------------------------------------------------------------------------- who reads what


def test_languages_are_kept_by_name_and_a_row_is_read_by_its_language_or_script(engine: Engine) -> None:
    assert reader_languages.clean_languages([" ta ", "Tamil", "hin", "", "Klingon"]) == ("Hindi", "Klingon", "Tamil")
    with pytest.raises(ValueError, match="not a language's name"):
        reader_languages.clean_languages(["Tamil\x07"])
    rows = np.array(["Tamil", "Tamil script", "Devanagari", "Hindi", "English", "Unknown script", ""], dtype=object)
    assert reader_languages.reads(rows, ("Tamil",)).tolist() == [True, True, False, False, False, True, True]
    assert reader_languages.reads(rows, ("hi",)).tolist() == [False, False, True, True, False, True, True]
    assert reader_languages.reads(rows, ()).all()  # none set: any row
    assert reader_languages.reviewer_languages(engine, "asha") == ()
    assert reader_languages.set_reviewer_languages(engine, "asha", ["tam", "English"]) == ("English", "Tamil")
    assert reader_languages.reviewer_languages(engine, "asha") == ("English", "Tamil")
    assert reader_languages.reviewer_languages(engine, "Asha") == ()  # the name marks are saved under
    reader_languages.set_reviewer_languages(engine, "asha", [])
    assert reader_languages.reviewer_languages(engine, "asha") == ()
    with pytest.raises(ValueError, match="may not contain"):
        reader_languages.set_reviewer_languages(engine, "a;b", ["Tamil"])


def test_team_split_hands_a_reader_only_rows_in_their_languages(engine: Engine) -> None:
    run, scored = stored(engine, mixed_csv(extra=("Tamil script", "Unknown script")))
    scope = queue_scope(scored, "overlap_only", seed=run.review_seed)
    language_of = dict(zip(scored["item_key"], scored["language"], strict=True))
    row_language = dict(zip(scored["row_idx"], scored["language"], strict=True))
    handed = []
    for _ in range(14):  # tara reads Tamil: its rows, its script's, and the row without letters
        row = claim_in_queue(scope, engine, run.id, "tara", languages=("Tamil",))
        if row is None:
            break
        handed.append(row_language[row])
        review.record_mark(engine, scored["item_key"].iloc[row], run.id, "tara", "correct")
    assert sorted(handed) == sorted(["Tamil"] * 12 + ["Tamil script", "Unknown script"])
    assert claim_in_queue(scope, engine, run.id, "tara", languages=("Tamil",)) is None  # none left in hers
    # omar set none: the front of what is left, any language (tara's rows are marked).
    omar = claim_in_queue(scope, engine, run.id, "omar")
    left = [k for k in scope.item_keys if language_of[k] not in ("Tamil", "Tamil script", "Unknown script")]
    assert scored["item_key"].iloc[omar] == left[0]


def test_a_session_hands_out_by_the_modes_languages_and_lets_go_when_they_change(engine: Engine) -> None:
    run, scored = stored(engine, mixed_csv())
    scope = queue_scope(scored, "overlap_only", seed=run.review_seed)
    session = ReviewSession(run.id)
    mode = review.ReviewMode(review.claim_rules.BlindSpec("overlap_only")).chosen(languages=("Hindi",))
    progress = session.progress(engine, scope, "hema", mode)
    turn = session.next_row(engine, scored, scope, "hema", mode, progress)
    assert scored["language"].iloc[turn.screen.row_idx] == "Hindi"
    assert mode.reads_line == "Your languages: Hindi" and review.ReviewMode(mode.scope).reads_line == ""
    held = scored["item_key"].iloc[turn.screen.row_idx]
    english = mode.chosen(languages=("English",))
    turn = session.next_row(engine, scored, scope, "hema", english, session.progress(engine, scope, "hema", english))
    assert scored["language"].iloc[turn.screen.row_idx] == "English"
    assert held not in review.live_claims(engine)  # the Hindi row went back to the pool


# --------------------------------------------------------------------------- scopes with work left


def test_scopes_with_work_left_name_the_audit_first_and_count_by_team_and_language(engine: Engine) -> None:
    run, scored = stored(engine, mixed_csv())
    keys = scored["item_key"].tolist()
    audit = keys[:6]
    for key in keys[:3]:
        review.record_mark(engine, key, run.id, "asha", "correct")
    review.record_mark(engine, keys[3], run.id, "bina", "correct")
    mine = my_verdicts.open_scopes(scored, engine, "asha", audit)
    assert mine.iloc[0].tolist() == [review.AUDIT, "", 3]  # rows 3-5 wait for asha's verdict
    assert mine["remaining"].iloc[1:].sum() == 33
    team = my_verdicts.open_scopes(scored, engine, "asha", audit, team=True)
    assert team.iloc[0].tolist() == [review.AUDIT, "", 2]  # bina marked row 3
    tamil = my_verdicts.open_scopes(scored, engine, "asha", audit, languages=("Tamil",))
    assert tamil.iloc[0].tolist() == [review.AUDIT, "", 1]  # of rows 3-5, row 4 is Tamil
    assert tamil["remaining"].iloc[1:].sum() == 11
    assert my_verdicts.open_scopes(scored, engine, "asha").iloc[0]["bucket"] == "overlap_only"  # no audit


def test_the_audit_scope_stays_offered_through_a_database_outage(engine: Engine, tmp_path: Path) -> None:
    run, scored = stored(engine, mixed_csv(6))
    review.set_audit(engine, run.id, scored["item_key"].tolist()[:2], "lead")
    session = ReviewSession(run.id)
    assert len(session.audit(engine)) == 2

    down = open_engine(f"sqlite:///{tmp_path / 'empty.db'}")  # no tables: every read fails as an outage does
    with pytest.raises(DatabaseError):
        review.audit_keys(down, run.id)
    assert len(session.audit(down)) == 2  # the rows read last, not none (the scope was dropped)
    assert ReviewSession(run.id).audit(down) == set()  # a new session has read none yet


def test_rows_added_to_the_audit_keep_the_scope_and_its_half_width(engine: Engine) -> None:
    run, scored = stored(engine, mixed_csv(6))
    keys = scored["item_key"].tolist()
    review.set_audit(engine, run.id, keys[:3], "lead", 0.05)
    assert review.add_to_audit(engine, run.id, [keys[2], keys[4], keys[4]], "pia") == 4
    assert review.audit_keys(engine, run.id) == {keys[0], keys[1], keys[2], keys[4]}
    assert review.audit_half_width(engine, run.id) == 0.05


# --------------------------------------------------------------------------- the planner per language


def language_sample(n: int = 600, reviewed: int = 0) -> pl.DataFrame:
    """``n`` rows, 4 buckets x 2 domains x 3 languages, the first ``reviewed`` (in rank order) reviewed."""
    bucket = [("overlap_only", "both_pass", "exact_only", "both_fail")[i % 4] for i in range(n)]
    domain = [("Art", "History")[i // 4 % 2] for i in range(n)]
    language = [LANGUAGES[i // 8 % 3] for i in range(n)]
    truth = [(i % 5 != 0) if i < reviewed else None for i in range(n)]
    return make_sample(bucket, domain, truth, language=language, rank=list(range(n)))


def test_a_language_plan_is_the_planner_on_that_languages_rows() -> None:
    sample = language_sample(reviewed=120)
    found = plan_language(sample, "Tamil", 0.05)
    tamil = sample.filter(pl.col("language") == "Tamil")
    assert found.plan.planned == plan_review(build_strata(tamil), 0.05).planned
    assert found.size == 200 and found.plan.reviewed == 40
    assert found.rows.height == found.plan.remaining > 0
    picked = sample.filter(pl.col("item_key").is_in(found.rows["item_key"].implode()))
    assert set(picked["language"]) == {"Tamil"} and not picked["reviewed"].any()
    # Each stratum's first unreviewed Tamil rows, in rank order: a prefix of the language's order.
    for (b, d), part in picked.group_by("bucket", "Domain"):
        cell = tamil.filter((pl.col("bucket") == b) & (pl.col("Domain") == d) & ~pl.col("reviewed"))
        assert part.sort("rank")["item_key"].to_list() == cell.sort("rank")["item_key"].head(part.height).to_list()
    assert found.sentence().startswith(f"Review {found.rows.height} more Tamil rows of the random sample for ±5 points")
    wider = plan_language(sample, "Tamil", 0.10)
    assert wider.rows.height < found.rows.height


def test_a_small_language_is_planned_to_the_rows_its_figure_needs_and_an_unknown_one_is_named() -> None:
    sample = make_sample(
        ["overlap_only"] * 40, ["Art"] * 40, [None] * 40, language=["Tamil"] * 12 + ["Hindi"] * 28, rank=list(range(40))
    )
    found = plan_language(sample, "Tamil", 0.45)  # +-45 points alone would plan fewer than a figure needs
    assert found.plan.planned >= min(MIN_DOMAIN_REVIEWED, 12) and found.half_width == 0.45
    with pytest.raises(InputError, match="No row of this run is in 'Klingon': its languages are Hindi, Tamil"):
        plan_language(sample, "Klingon")
    done = plan_language(
        make_sample(["overlap_only"] * 4, ["Art"] * 4, [True] * 4, language=["Tamil"] * 4, rank=[0, 1, 2, 3]), "Tamil"
    )
    assert done.rows.is_empty() and done.sentence().startswith("Nothing left to review for ±5 points in Tamil")


def test_the_command_line_plans_for_one_language(engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    run, scored = stored(engine, mixed_csv(60))
    url = str(engine.url)
    args = ["estimate", "--run", str(run.id), "--db", url, "--half-width", "0.05", "--plan-language"]
    assert main([*args, "Klingon"]) == 2  # bad input, named
    assert "No row of this run is in 'Klingon': its languages are English, Hindi, Tamil." in capsys.readouterr().err
    assert main([*args, "ta"]) == 0  # a code names the language
    out = capsys.readouterr().out
    _, figures = stored_estimate(engine, run.id, 0.05)
    wanted = plan_language(figures.sample, "Tamil", 0.05)
    assert f"Plan for Tamil: Review {wanted.rows.height} more Tamil rows of the random sample for ±5 points" in out
    assert "rows to review next: " + ", ".join(str(i + 1) for i in wanted.rows["row_idx"].to_list()[:20]) in out
    assert main(["estimate", "--run", str(run.id), "--db", url, "--json", "--plan-language", "Tamil"]) == 0
    plan = json.loads(capsys.readouterr().out)["language_plan"]
    assert plan["language"] == "Tamil" and plan["rows_of_language"] == 20
    assert plan["next_rows"] and set(scored["language"].iloc[[r - 1 for r in plan["next_rows"]]]) == {"Tamil"}

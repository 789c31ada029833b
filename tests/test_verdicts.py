"""Human verdicts: append-only marks, skips and undos; derived verdicts, queue, progress, agreement."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event, func, select

from scoring import ingest, store
from scoring import review as V
from scoring.core.items import item_key
from scoring.core.stats import wilson_interval
from scoring.store import make_engine
from scoring.store.orm_tables import VerdictEvent

# (question, answer, Domain, response) -> bucket noted beside each row
ROWS = [
    ("q0", "Ruru Jataka", "Art", "The Ruru Jataka."),  # both_pass
    ("q1", "amalak", "Art", "Amalaka"),  # exact_only
    ("q2", "Narmada valley", "Geography", "Narmada River valley"),  # overlap_only
    ("q3", "Chola ideals", "Art", "Chola and Hoysala ideals"),  # overlap_only
    ("q4", "Delhi", "Geography", "Mumbai"),  # both_fail
    ("q5", "Ganga delta", "Geography", "delta of the Ganga"),  # overlap_only
    ("q6", "red fort", "History", "fort, red"),  # overlap_only
    ("q7", "deul", "Art", "Deula"),  # exact_only
    ("q8", "Ashoka", "History", "Ashoka"),  # both_pass
    ("q9", "Akbar", "History", ""),  # both_fail (blank)
]
OVERLAP_ONLY = [2, 3, 5, 6]


HEADER = ("question", "answer", "Domain", "response")


def csv_bytes(rows: list[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


@pytest.fixture
def run(engine):
    result = ingest.save_run(engine, csv_bytes(ROWS), "model_english.csv")
    return result.run


@pytest.fixture
def scored(engine, run):
    return store.load_scored(engine, run.id)


def key(scored: pd.DataFrame, row_idx: int) -> str:
    return str(scored.loc[scored["row_idx"] == row_idx, "item_key"].iloc[0])


def n_events(engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(VerdictEvent)).scalar_one())


def test_fixture_buckets_are_as_annotated(scored):
    assert scored.loc[scored["bucket"] == "overlap_only", "row_idx"].tolist() == OVERLAP_ONLY
    assert scored["bucket"].tolist()[:2] == ["both_pass", "exact_only"]


# --------------------------------------------------------------------------- marking


def test_mark_is_stored_with_reason_note_and_time(engine, run, scored):
    before = datetime.now(UTC)
    event_id = V.record_mark(engine, key(scored, 2), run.id, "alice", "correct", "paraphrase", "  word order only ")
    assert isinstance(event_id, int)
    cur = V.current_verdicts(engine)
    assert list(cur.columns) == V.CURRENT_COLUMNS
    assert cur.to_dict("records")[0] | {"reviewed_at": None} == {
        "item_key": key(scored, 2),
        "reviewer": "alice",
        "verdict": "correct",
        "reason": "paraphrase",
        "note": "word order only",
        "reviewed_at": None,
        "run_id": run.id,
    }
    stamp = cur["reviewed_at"].iloc[0]
    assert stamp.tzinfo is not None
    assert before - timedelta(seconds=5) <= stamp.to_pydatetime() <= datetime.now(UTC) + timedelta(seconds=5)


def test_latest_mark_wins_and_history_is_kept(engine, run, scored):
    k = key(scored, 3)
    first = V.record_mark(engine, k, run.id, "alice", "correct")
    second = V.record_mark(engine, k, run.id, "alice", "wrong", "different claim")
    assert second > first
    cur = V.current_verdicts(engine, [k])
    assert cur[["verdict", "reason"]].values.tolist() == [["wrong", "different claim"]]
    assert n_events(engine) == 2


@pytest.mark.parametrize("name", ["", "   ", None, "a;b", "line\nbreak", "x" * 201])
def test_reviewer_name_is_required_and_sane(engine, run, scored, name):
    with pytest.raises(ValueError, match="[Rr]eviewer name"):
        V.record_mark(engine, key(scored, 2), run.id, name, "correct")
    with pytest.raises(ValueError, match="[Rr]eviewer name"):
        V.record_skip(engine, key(scored, 2), run.id, name)
    with pytest.raises(ValueError, match="[Rr]eviewer name"):
        V.undo_last(engine, name)
    assert n_events(engine) == 0


def test_unknown_verdict_and_reason_are_refused(engine, run, scored):
    with pytest.raises(ValueError, match="verdict 'maybe'.*correct, wrong"):
        V.record_mark(engine, key(scored, 2), run.id, "alice", "maybe")
    with pytest.raises(ValueError, match="reason 'vibes'.*paraphrase"):
        V.record_mark(engine, key(scored, 2), run.id, "alice", "correct", reason="vibes")
    with pytest.raises(ValueError, match="item key"):
        V.record_mark(engine, "", run.id, "alice", "correct")
    assert n_events(engine) == 0


def test_reason_and_name_are_normalised(engine, run, scored):
    V.record_mark(engine, key(scored, 2), run.id, "  alice ", "Correct", reason=" Golden Answer Wrong ")
    cur = V.current_verdicts(engine)
    assert cur[["reviewer", "verdict", "reason"]].values.tolist() == [["alice", "correct", "golden answer wrong"]]
    assert set(V.REASONS) == {"paraphrase", "inflection", "different claim", "golden answer wrong", "other"}


# --------------------------------------------------------------------------- undo and skip


def test_undo_appends_and_walks_back(engine, run, scored):
    keys = [key(scored, i) for i in OVERLAP_ONLY[:3]]
    for k in keys:
        V.record_mark(engine, k, run.id, "alice", "correct")
    V.record_mark(engine, keys[0], run.id, "bob", "wrong")
    counts = [n_events(engine)]
    assert V.undo_last(engine, "alice") == keys[2]
    counts.append(n_events(engine))
    assert V.undo_last(engine, "alice") == keys[1]
    counts.append(n_events(engine))
    assert counts == [4, 5, 6]  # append-only: the count only grows
    cur = V.current_verdicts(engine)
    assert sorted(map(tuple, cur[["item_key", "reviewer"]].values.tolist())) == sorted(
        [(keys[0], "alice"), (keys[0], "bob")]
    )
    assert V.undo_last(engine, "alice") == keys[0]
    assert V.undo_last(engine, "alice") is None  # nothing left; nothing written
    assert n_events(engine) == 7
    with engine.connect() as conn:
        marks = conn.execute(select(func.count()).where(VerdictEvent.action == "mark")).scalar_one()
    assert marks == 4  # the retracted marks are still in the history
    assert V.current_verdicts(engine)["reviewer"].tolist() == ["bob"]


def test_undo_restores_the_previous_mark_of_the_same_item(engine, run, scored):
    k = key(scored, 2)
    V.record_mark(engine, k, run.id, "alice", "correct", note="first")
    V.record_mark(engine, k, run.id, "alice", "wrong", note="second")
    assert V.undo_last(engine, "alice") == k
    assert V.current_verdicts(engine)[["verdict", "note"]].values.tolist() == [["correct", "first"]]


def test_undo_is_scoped_to_a_run_when_given(engine, run, scored):
    other = ingest.save_run(engine, csv_bytes([("x", "Narmada valley", "Geo", "valley Narmada")]), "other.csv").run
    other_key = item_key("x", "Narmada valley", "valley Narmada")
    V.record_mark(engine, key(scored, 2), run.id, "alice", "correct")
    V.record_mark(engine, other_key, other.id, "alice", "wrong")
    assert V.undo_last(engine, "alice", run_id=run.id) == key(scored, 2)
    assert V.undo_last(engine, "alice", run_id=run.id) is None
    assert V.current_verdicts(engine)["item_key"].tolist() == [other_key]


def test_skip_and_skipped_keys(engine, run, scored):
    a, b, c = (key(scored, i) for i in OVERLAP_ONLY[:3])
    V.record_skip(engine, a, run.id, "alice")
    V.record_skip(engine, b, run.id, "alice")
    V.record_skip(engine, c, run.id, "bob")
    assert V.skipped_keys(engine, "alice") == {a, b}
    V.record_mark(engine, a, run.id, "alice", "wrong")  # marked since the skip
    assert V.skipped_keys(engine, "alice") == {b}
    assert V.skipped_keys(engine, "alice", item_keys=[a, c]) == set()
    V.undo_last(engine, "alice")  # the mark is retracted: the item is back to skipped
    assert V.skipped_keys(engine, "alice") == {a, b}
    assert V.current_verdicts(engine).empty  # a skip is never a verdict


# --------------------------------------------------------------------------- item keys across runs


def test_verdicts_attach_to_item_key_across_runs(engine, run, scored):
    shared = ROWS[2]
    second = ingest.save_run(engine, csv_bytes([("new", "x", "Art", "y"), shared]), "corrected.csv").run
    V.record_mark(engine, key(scored, 2), run.id, "alice", "wrong", "different claim")
    scored2 = store.load_scored(engine, second.id)
    summary = V.human_summary(V.current_verdicts(engine, scored2["item_key"]))
    final = V.final_verdicts(scored2, summary)
    assert final["human_verdict"].tolist() == ["", "wrong"]
    assert final["final_source"].tolist() == ["auto", "human"]
    assert final.loc[1, "reason"] == "different claim"


# --------------------------------------------------------------------------- summary and final verdicts


def test_human_summary_agreement_conflict_and_per_reviewer_cells(engine, run, scored):
    k2, k3, k5 = key(scored, 2), key(scored, 3), key(scored, 5)
    V.record_mark(engine, k2, run.id, "bob", "correct", "paraphrase", "fine")
    V.record_mark(engine, k2, run.id, "alice", "correct", "paraphrase", "fine")
    V.record_mark(engine, k3, run.id, "alice", "correct", "paraphrase", "ok")
    V.record_mark(engine, k3, run.id, "bob", "wrong", "different claim", "")
    V.record_mark(engine, k5, run.id, "carol", "wrong")
    summary = V.human_summary(V.current_verdicts(engine))
    assert list(summary.columns) == V.SUMMARY_COLUMNS
    assert summary.loc[k2, ["human_verdict", "reviewers", "reason", "note"]].tolist() == [
        "correct",
        "alice;bob",
        "paraphrase",
        "fine",
    ]
    assert summary.loc[k3, "human_verdict"] == "conflict"
    assert summary.loc[k3, "reason"] == "alice: paraphrase\nbob: different claim"
    assert summary.loc[k3, "note"] == "alice: ok\nbob: "
    assert V.split_per_reviewer(summary.loc[k3, "note"], ["alice", "bob"]) == {"alice": "ok", "bob": ""}
    assert V.split_per_reviewer("fine", ["alice", "bob"]) == {"alice": "fine", "bob": "fine"}
    assert summary.loc[k5, ["human_verdict", "reviewers"]].tolist() == ["wrong", "carol"]
    cur = V.current_verdicts(engine)
    assert summary.loc[k3, "reviewed_at"] == cur.loc[cur["item_key"] == k3, "reviewed_at"].max()


def test_split_per_reviewer_keeps_line_breaks_inside_a_note():
    cell = "alice: line one\nline two\nbob: b's note"
    assert V.split_per_reviewer(cell, ["alice", "bob"]) == {"alice": "line one\nline two", "bob": "b's note"}
    assert V.split_per_reviewer("alice: only", ["alice", "bob"]) == {"alice": "alice: only", "bob": "alice: only"}


def test_final_verdict_rules(engine, run, scored):
    V.record_mark(engine, key(scored, 4), run.id, "alice", "correct")  # human overrides both_fail
    V.record_mark(engine, key(scored, 2), run.id, "alice", "correct")  # human settles overlap_only
    V.record_mark(engine, key(scored, 3), run.id, "alice", "correct")  # conflict
    V.record_mark(engine, key(scored, 3), run.id, "bob", "wrong")
    final = V.final_verdicts(scored, V.human_summary(V.current_verdicts(engine)))
    got = final.set_index("row_idx")[["final_verdict", "final_source"]].apply(tuple, axis=1).to_dict()
    assert got == {
        0: ("correct", "auto"),
        1: ("correct", "auto"),
        2: ("correct", "human"),
        3: ("pending", "pending"),
        4: ("correct", "human"),
        5: ("pending", "pending"),
        6: ("pending", "pending"),
        7: ("correct", "auto"),
        8: ("correct", "auto"),
        9: ("wrong", "auto"),
    }
    assert "judge_label" not in final.columns
    assert final["reviewed_at"].isna().sum() == 7
    assert list(final.columns[: len(scored.columns)]) == list(scored.columns)


def test_judge_settles_only_pending_overlap_rows(engine, run, scored):
    V.record_mark(engine, key(scored, 2), run.id, "alice", "wrong")
    V.record_mark(engine, key(scored, 3), run.id, "alice", "correct")
    V.record_mark(engine, key(scored, 3), run.id, "bob", "wrong")
    labels = {
        key(scored, 2): "CORRECT",  # human verdict wins over the judge
        key(scored, 3): "CORRECT",  # reviewers in conflict stay pending
        key(scored, 5): "incorrect",  # settles (labels compared in upper case)
        key(scored, 6): "ERROR",  # not a verdict: stays pending
        key(scored, 4): "CORRECT",  # both_fail is not pending: the auto rule stands
    }
    summary = V.human_summary(V.current_verdicts(engine))
    plain = V.final_verdicts(scored, summary, judge_labels=labels)
    assert plain.set_index("row_idx").loc[5, "final_verdict"] == "pending"
    assert plain.set_index("row_idx").loc[5, "judge_label"] == "incorrect"
    settled = V.final_verdicts(scored, summary, judge_labels=labels, judge_settles=True).set_index("row_idx")
    assert settled.loc[2, ["final_verdict", "final_source"]].tolist() == ["wrong", "human"]
    assert settled.loc[3, ["final_verdict", "final_source"]].tolist() == ["pending", "pending"]
    assert settled.loc[5, ["final_verdict", "final_source"]].tolist() == ["wrong", "judge"]
    assert settled.loc[6, ["final_verdict", "final_source"]].tolist() == ["pending", "pending"]
    assert settled.loc[4, ["final_verdict", "final_source"]].tolist() == ["wrong", "auto"]
    assert settled.loc[0, "judge_label"] == ""


def test_adjudicated_accuracy_range_and_interval(engine, run, scored):
    V.record_mark(engine, key(scored, 2), run.id, "alice", "correct")
    V.record_mark(engine, key(scored, 6), run.id, "alice", "wrong")
    final = V.final_verdicts(scored, V.human_summary(V.current_verdicts(engine)))
    rows = {r.domain: r for r in V.adjudicated_accuracy(final)}
    assert [r.domain for r in V.adjudicated_accuracy(final)] == ["Art", "Geography", "History", "combined"]
    # Art: both_pass, exact_only, overlap_only(pending), exact_only -> 3 correct, 1 pending
    art = rows["Art"]
    assert (art.n, art.correct, art.wrong, art.pending) == (4, 3, 0, 1)
    assert (art.accuracy_low, art.accuracy_high) == (0.75, 1.0)
    assert art.ci_low == pytest.approx(wilson_interval(3, 4)[0])
    assert art.ci_high == pytest.approx(wilson_interval(4, 4)[1])
    # History: overlap_only marked wrong, both_pass, blank -> nothing pending: plain Wilson interval
    hist = rows["History"]
    assert (hist.n, hist.correct, hist.wrong, hist.pending) == (3, 1, 2, 0)
    assert (hist.ci_low, hist.ci_high) == pytest.approx(wilson_interval(1, 3))
    comb = rows["combined"]
    assert (comb.n, comb.correct, comb.wrong, comb.pending) == (10, 5, 3, 2)
    assert comb.accuracy_low == pytest.approx(0.5) and comb.accuracy_high == pytest.approx(0.7)
    assert comb.ci_low <= comb.accuracy_low <= comb.accuracy_high <= comb.ci_high


# --------------------------------------------------------------------------- queue and progress


def test_queue_order_unreviewed_then_skipped_then_reviewed(engine, run, scored):
    plain = V.queue(scored, "alice", engine)
    assert sorted(plain) == OVERLAP_ONLY and V.queue(scored, "", engine) == plain  # no name: plain order
    marked, skipped, bobs = plain[0], plain[1], plain[2]
    V.record_mark(engine, key(scored, marked), run.id, "alice", "correct")
    V.record_skip(engine, key(scored, skipped), run.id, "alice")
    V.record_mark(engine, key(scored, bobs), run.id, "bob", "wrong")  # another reviewer's mark
    rest = [r for r in plain if r not in (marked, skipped)]
    assert V.queue(scored, "alice", engine) == [*rest, skipped, marked]
    assert V.queue(scored, "bob", engine) == [*[r for r in plain if r != bobs], bobs]
    V.record_mark(engine, key(scored, skipped), run.id, "alice", "wrong")  # the skipped row is marked
    assert V.queue(scored, "alice", engine) == [*rest, marked, skipped]  # marked rows in review order


def test_the_review_order_is_a_seeded_permutation_and_any_scope_a_random_order_of_its_rows(engine):
    """60 rows of one bucket in two domains: the order is not the file's, is the same on every
    call and differs with the seed; a domain's order is the bucket's order restricted to it, so a
    prefix of any scope is a simple random sample of it; a sample is the first k of the order."""
    rows = [(f"q{i}", "Ashoka", "History" if i % 3 else "Art", "Ashoka the Great") for i in range(60)]
    run = ingest.save_run(engine, csv_bytes(rows), "order.csv").run
    scored = store.load_scored(engine, run.id)
    order = V.queue(scored, "", engine, bucket="both_pass", seed=run.review_seed)
    assert sorted(order) == list(range(60)) and order != list(range(60))
    assert V.queue(scored, "", engine, bucket="both_pass", seed=run.review_seed) == order
    assert V.queue(scored, "", engine, bucket="both_pass", seed=run.review_seed + 1) != order
    art = V.queue(scored, "", engine, bucket="both_pass", domain="Art", seed=run.review_seed)
    assert art == [r for r in order if r % 3 == 0]
    assert V.queue(scored, "", engine, bucket="both_pass", sample=7, seed=run.review_seed) == order[:7]
    scope = V.queue_scope(scored, "both_pass", "Art", seed=run.review_seed)
    assert scope.row_idx.tolist() == art


def test_queue_continues_after_a_refresh(db_url, engine, run, scored):
    order = V.queue(scored, "alice", engine)
    for idx in order[:2]:
        V.record_mark(engine, key(scored, idx), run.id, "alice", "correct")
    engine.dispose()
    fresh = make_engine(db_url)  # a restart: everything comes from the database
    again = V.queue(store.load_scored(fresh, run.id), "alice", fresh)
    assert again[0] == order[2]
    assert again == [*order[2:], *order[:2]]


def test_queue_scopes_domain_bucket_and_sample(engine, run, scored):
    assert sorted(V.queue(scored, "alice", engine, domain="Geography")) == [2, 5]
    assert sorted(V.queue(scored, "alice", engine, bucket="exact_only")) == [1, 7]
    assert sorted(V.queue(scored, "alice", engine, bucket=None)) == list(range(10))
    with pytest.raises(ValueError, match="Unknown bucket"):
        V.queue(scored, "alice", engine, bucket="nope")
    with pytest.raises(ValueError, match="Sample size"):
        V.queue(scored, "alice", engine, sample=-1)
    assert V.queue(scored, "alice", engine, sample=0) == []
    assert V.queue(scored, "alice", engine, sample=99) == V.queue(scored, "alice", engine)


def test_sample_is_reproducible_and_stays_fixed(engine, tmp_path):
    rows = [(f"q{i}", "Ashoka", "History", "Ashoka the Great") for i in range(60)]
    run = ingest.save_run(engine, csv_bytes(rows), "audit.csv").run
    scored = store.load_scored(engine, run.id)
    first = V.queue(scored, "alice", engine, bucket="both_pass", sample=10, seed=7)
    assert len(first) == 10 and len(set(first)) == 10
    assert first == V.queue(scored, "", engine, bucket="both_pass", seed=7)[:10]  # the first 10 of the order
    assert V.queue(scored, "alice", engine, bucket="both_pass", sample=10, seed=7) == first
    assert V.queue(scored, "alice", engine, bucket="both_pass", sample=10, seed=8) != first
    V.record_mark(engine, key(scored, first[0]), run.id, "alice", "correct")
    after = V.queue(scored, "alice", engine, bucket="both_pass", sample=10, seed=7)
    assert after == [*first[1:], first[0]]


def test_queue_is_one_query_at_100k_rows(engine):
    n = 100_000
    rng = np.random.default_rng(1)
    buckets = np.array(["both_pass", "both_fail", "exact_only", "overlap_only"])[rng.integers(0, 4, n)]
    scored = pd.DataFrame(
        {
            "row_idx": np.arange(n),
            "item_key": [f"k{i:06d}" for i in range(n)],
            "Domain": np.array(["Art", "History", "Geography"])[rng.integers(0, 3, n)],
            "bucket": buckets,
        }
    )
    overlap = scored.loc[scored["bucket"] == "overlap_only", ["row_idx", "item_key"]]
    V.record_marks(
        engine,
        [
            {"item_key": k, "run_id": 1, "reviewer": "alice", "verdict": "correct"}
            for k in overlap["item_key"].iloc[:300]
        ],
    )
    V.record_skip(engine, overlap["item_key"].iloc[300], 1, "alice")
    statements: list[str] = []
    listener = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    try:
        order = V.queue(scored, "alice", engine)
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    # One query (BEGIN and the busy-timeout PRAGMA are connection control); its speed is measured
    # by tests/bench_dashboard.py.
    queries = [s for s in statements if not s.startswith(("BEGIN", "PRAGMA"))]
    assert queries == statements[-1:]
    assert len(queries) == 1
    plain = V.queue(scored, "", engine)  # the bucket in review order
    marked, skipped = set(overlap["row_idx"].iloc[:300]), int(overlap["row_idx"].iloc[300])
    unreviewed = [r for r in plain if r not in marked and r != skipped]
    assert order == [*unreviewed, skipped, *(r for r in plain if r in marked)]


def test_progress_per_domain_by_anyone_or_by_reviewer(engine, run, scored):
    V.record_mark(engine, key(scored, 2), run.id, "alice", "correct")
    V.record_mark(engine, key(scored, 3), run.id, "bob", "wrong")
    V.record_mark(engine, key(scored, 5), run.id, "bob", "wrong")
    V.undo_last(engine, "bob")  # row 5 is unreviewed again
    anyone = V.progress(scored, engine)
    assert list(anyone.columns) == ["domain", "n", "reviewed", "remaining"]
    assert anyone.values.tolist() == [
        ["Art", 1, 1, 0],
        ["Geography", 2, 1, 1],
        ["History", 1, 0, 1],
        ["combined", 4, 2, 2],
    ]
    alice = V.progress(scored, engine, reviewer="alice")
    assert alice.set_index("domain")["reviewed"].to_dict() == {"Art": 0, "Geography": 1, "History": 0, "combined": 1}
    scoped = V.progress(scored, engine, bucket=None, domain="Art", rows=[0, 3])
    assert scoped.values.tolist() == [["Art", 2, 1, 1], ["combined", 2, 1, 1]]
    empty = V.progress(scored, engine, domain="Nowhere")
    assert empty.values.tolist() == [["combined", 0, 0, 0]]


# --------------------------------------------------------------------------- conflicts and agreement


def test_conflicts_list_disagreements_with_each_verdict(engine, run, scored):
    k2, k3 = key(scored, 2), key(scored, 3)
    V.record_mark(engine, k2, run.id, "alice", "correct")
    V.record_mark(engine, k2, run.id, "bob", "correct")
    V.record_mark(engine, k3, run.id, "alice", "correct")
    V.record_mark(engine, k3, run.id, "bob", "wrong")
    V.record_mark(engine, k3, run.id, "carol", "wrong")
    found = V.conflicts(engine, scored["item_key"].tolist())
    assert found["item_key"].tolist() == [k3]
    row = found.iloc[0]
    assert (row["correct_by"], row["wrong_by"]) == ("alice", "bob;carol")
    assert (row["alice"], row["bob"], row["carol"]) == ("correct", "wrong", "wrong")
    V.undo_last(engine, "alice")
    V.record_mark(engine, k3, run.id, "alice", "wrong")
    assert V.conflicts(engine, scored["item_key"].tolist()).empty


def _bulk(engine, table: list[list[int]]) -> None:
    """Record alice/bob verdicts whose 2x2 table (alice rows, bob columns; correct first) is ``table``."""
    marks, i = [], 0
    for a_ok, row in zip((True, False), table):
        for b_ok, count in zip((True, False), row):
            for _ in range(count):
                for name, ok in (("alice", a_ok), ("bob", b_ok)):
                    marks.append(
                        {
                            "item_key": f"item{i}",
                            "run_id": None,
                            "reviewer": name,
                            "verdict": "correct" if ok else "wrong",
                        }
                    )
                i += 1
    V.record_marks(engine, marks)


def test_kappa_worked_numbers_from_the_notes(engine):
    _bulk(engine, [[80, 10], [5, 105]])
    (pair,) = V.reviewer_agreement(V.current_verdicts(engine))
    assert (pair.a, pair.b, pair.n) == ("alice", "bob", 200)
    assert pair.table == [[80, 10], [5, 105]]
    assert pair.kappa == pytest.approx(0.8477, abs=5e-5)
    assert pair.raw_agreement == pytest.approx(0.925)


def test_kappa_paradox_raw_agreement_high_kappa_negative(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path}/k.db")
    _bulk(engine, [[190, 5], [5, 0]])
    (pair,) = V.reviewer_agreement(V.current_verdicts(engine))
    assert pair.raw_agreement == pytest.approx(0.95)
    assert pair.kappa == pytest.approx(-0.026, abs=5e-4)


def test_kappa_undefined_and_pairs_without_shared_items(engine):
    V.record_marks(
        engine,
        [
            {"item_key": "i1", "run_id": None, "reviewer": "alice", "verdict": "correct"},
            {"item_key": "i1", "run_id": None, "reviewer": "bob", "verdict": "correct"},
            {"item_key": "i2", "run_id": None, "reviewer": "alice", "verdict": "correct"},
            {"item_key": "i2", "run_id": None, "reviewer": "bob", "verdict": "correct"},
            {"item_key": "i3", "run_id": None, "reviewer": "carol", "verdict": "wrong"},
        ],
    )
    pairs = V.reviewer_agreement(V.current_verdicts(engine))
    assert [(p.a, p.b) for p in pairs] == [("alice", "bob")]  # carol shares no item
    assert pairs[0].kappa is None and pairs[0].raw_agreement == 1.0
    assert V.reviewer_agreement(V.current_verdicts(engine).iloc[0:0]) == []


def test_human_vs_metric_and_metric_precision(engine, run, scored):
    V.record_mark(engine, key(scored, 2), run.id, "alice", "correct")  # overlap passes, confirmed
    V.record_mark(engine, key(scored, 3), run.id, "alice", "wrong")  # overlap passes, refuted
    V.record_mark(engine, key(scored, 1), run.id, "alice", "correct")  # exact passes, confirmed
    V.record_mark(engine, key(scored, 4), run.id, "alice", "wrong")  # both fail, confirmed
    V.record_mark(engine, key(scored, 5), run.id, "alice", "correct")  # conflict: left out
    V.record_mark(engine, key(scored, 5), run.id, "bob", "wrong")
    final = V.final_verdicts(scored, V.human_summary(V.current_verdicts(engine)))
    overlap = V.human_vs_metric(final, "overlap_correct")
    assert (overlap.a, overlap.b, overlap.n) == ("human", "overlap_correct", 4)
    # rows human, columns metric: human correct & overlap pass = row 2; human correct & fail = row 1
    assert overlap.table == [[1, 1], [1, 1]]
    exact = V.human_vs_metric(final, "exact_correct")
    assert exact.table == [[1, 1], [0, 2]]
    assert V.metric_precision(final) == {"exact_correct": (1, 1, 1.0), "overlap_correct": (1, 2, 0.5)}
    with pytest.raises(ValueError, match="No column"):
        V.human_vs_metric(final, "nope")
    none = V.metric_precision(V.final_verdicts(scored, V.human_summary(V.current_verdicts(engine).iloc[0:0])))
    assert none == {"exact_correct": (0, 0, None), "overlap_correct": (0, 0, None)}


@pytest.mark.parametrize("seed", range(6))
def test_queue_scope_agrees_with_queue_and_progress(engine, seed):
    """The page's cheap path (scope index + reviewer events) gives the same next row and progress."""
    rng = np.random.default_rng(seed)
    n = 60
    scored = pd.DataFrame(
        {
            "row_idx": np.arange(n),
            # a few identical rows share an item key, as identical rows of a run do
            "item_key": [f"k{i % 50:03d}" for i in range(n)],
            "Domain": np.array(["Art", "History", "கலை"])[rng.integers(0, 3, n)],
            "bucket": np.array(["overlap_only", "both_pass"])[rng.integers(0, 2, n)],
        }
    )
    keys = scored["item_key"].tolist()
    for _ in range(40):
        action, key = rng.integers(0, 4), keys[int(rng.integers(0, n))]
        who = ["alice", "bob"][int(rng.integers(0, 2))]
        if action == 0:
            V.record_skip(engine, key, 1, who)
        elif action == 3:
            V.undo_last(engine, who, run_id=1)
        else:
            V.record_mark(engine, key, 1, who, "correct" if action == 1 else "wrong")
    for bucket, domain, sample in [("overlap_only", None, None), ("both_pass", "Art", None), (None, None, 7)]:
        scope = V.queue_scope(scored, bucket, domain, sample, seed=3)
        for who in ["alice", "bob", "carol", ""]:
            order = V.queue(scored, who, engine, bucket=bucket, domain=domain, sample=sample, seed=3)
            mine = set(V.current_verdicts(engine, reviewer=who)["item_key"]) if who else set()
            unfinished = [r for r in order if keys[r] not in mine]
            assert V.next_in_queue(scope, engine, who) == (unfinished[0] if unfinished else None)
            expected = V.progress(scored, engine, reviewer=who or None, bucket=bucket, domain=domain, rows=order)
            pd.testing.assert_frame_equal(V.scope_progress(scope, engine, who or None), expected)
            first, both = V.queue_position(scope, engine, who)
            assert first == V.next_in_queue(scope, engine, who)
            pd.testing.assert_frame_equal(both, expected)

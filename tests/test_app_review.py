"""AppTest tests of the review queue, the reviewers page, final verdicts and export (issue 4).

Each test gets its own SQLite file through ``REVIEW_DB_URL``; the app loads the bundled sample
run into it on the first run. Marks are checked in the database (``scoring.review``), not only
on screen: every mark must be stored the moment it is given.
"""

from __future__ import annotations

import hashlib
import io
import json
import re

import pandas as pd
import pytest
from apptest_support import (
    APP,
    TIMEOUT,
    alerts,
    click,
    download,
    frame_with,
    goto,
    ok,
    open_page,
    page_path,
    progress,
    record_media_managers,
    shown_row,
    text_with,
    texts,
)
from sqlalchemy import Engine, func, select
from streamlit.testing.v1 import AppTest

from scoring import review, store
from scoring import verdict_export as export
from scoring.core.protocols import BUCKETS
from scoring.store.orm_tables import VerdictEvent


@pytest.fixture
def order(sample_engine: Engine, run_id: int, scored: pd.DataFrame) -> list[int]:
    """The overlap_only rows (row_idx) in the order a new reviewer sees them: the run's seeded
    random permutation, not the file's order."""
    info = store.get_run(sample_engine, run_id)
    assert info is not None
    rows = review.queue(scored, "alice", sample_engine, seed=info.review_seed)
    assert len(rows) >= 5, "the sample needs several overlap_only rows for these tests"
    in_file = scored.loc[scored["bucket"] == "overlap_only", "row_idx"].tolist()
    assert sorted(rows) == in_file and rows != in_file
    return rows


def key_of(scored: pd.DataFrame, row_idx: int) -> str:
    return str(scored.loc[scored["row_idx"] == row_idx, "item_key"].iloc[0])


def mine(engine: Engine, reviewer: str = "alice") -> dict[str, str]:
    """Item key -> the reviewer's current verdict, read from the database."""
    current = review.current_verdicts(engine, reviewer=reviewer)
    return dict(zip(current["item_key"], current["verdict"], strict=True))


def event_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(VerdictEvent)).scalar_one())


# --- marking -----------------------------------------------------------------------------------


def test_mark_correct_and_wrong_saves_and_moves_on(
    sample_engine: Engine, scored: pd.DataFrame, order: list[int]
) -> None:
    at = open_page("review")
    assert progress(at) == (0, len(order))
    assert shown_row(at) == order[0]
    assert not any(t.startswith("Your current verdict") for t in texts(at))

    click(at, "q_yes")
    assert mine(sample_engine) == {key_of(scored, order[0]): "correct"}
    assert shown_row(at) == order[1]
    assert progress(at) == (1, len(order))

    click(at, "q_no")
    assert mine(sample_engine) == {key_of(scored, order[0]): "correct", key_of(scored, order[1]): "wrong"}
    assert shown_row(at) == order[2]
    assert progress(at) == (2, len(order))
    current = review.current_verdicts(sample_engine)
    assert set(current["reviewer"]) == {"alice"}


def test_undo_appends_and_shows_the_row_again(sample_engine: Engine, scored: pd.DataFrame, order: list[int]) -> None:
    at = open_page("review")
    click(at, "q_yes")
    click(at, "q_no")
    assert event_count(sample_engine) == 2

    click(at, "q_undo")
    # The last mark (order[1], wrong) is retracted by a new event; nothing is deleted.
    assert event_count(sample_engine) == 3
    assert mine(sample_engine) == {key_of(scored, order[0]): "correct"}
    assert shown_row(at) == order[1]
    assert progress(at) == (1, len(order))

    click(at, "q_undo")
    assert event_count(sample_engine) == 4
    assert mine(sample_engine) == {}
    assert shown_row(at) == order[0]
    assert progress(at) == (0, len(order))

    click(at, "q_undo")
    assert "Nothing to undo in this run." in alerts(at)
    assert event_count(sample_engine) == 4

    # Marking the reopened row again works and moves on.
    click(at, "q_no")
    assert mine(sample_engine) == {key_of(scored, order[0]): "wrong"}
    assert shown_row(at) == order[1]


def test_a_finished_scope_says_so_marks_nothing_and_rows_reopen_on_purpose(
    sample_engine: Engine, scored: pd.DataFrame, order: list[int]
) -> None:
    """Issue 8.3: the queue does not loop back to reviewed rows; revisiting is deliberate."""
    at = open_page("review")
    click(at, "q_no")
    click(at, "q_undo")
    assert shown_row(at) == order[0]
    assert not any(t.startswith("Your current verdict") for t in texts(at))
    for expected in order:
        assert shown_row(at) == expected
        click(at, "q_yes")
    assert progress(at) == (len(order), len(order))
    done = [a for a in alerts(at) if a.startswith("Done: every row of this scope has your verdict")]
    assert done == [
        f"Done: every row of this scope has your verdict ({len(order)} rows: {len(order)} correct, "
        '0 wrong). Open "My verdicts" to revisit one.'
    ], alerts(at)
    assert not [t for t in texts(at) if t.startswith("Row ")], "a finished scope shows no row to mark"
    assert not [b for b in at.button if b.key in ("q_yes", "q_no", "q_skip", "q_undo")]
    before = event_count(sample_engine)
    # Links to the scopes that still have work (the sample has rows in every bucket).
    links = [re.sub(r"\\(.)", r"\1", str(b.label)) for b in at.button if str(b.key).startswith("q_todo_")]  # escaped
    assert any(label.startswith("both_pass, all domains:") for label in links), links
    at.run()
    assert event_count(sample_engine) == before

    # Opening a row on purpose (as the Agreement page and "My verdicts" do) shows its verdict.
    at.query_params["row"] = str(order[2] + 1)
    ok_run = at.run()
    assert not ok_run.exception
    assert shown_row(at) == order[2]
    assert any(t.startswith("Your current verdict: correct.") for t in texts(at)), texts(at)
    click(at, "q_no")
    assert mine(sample_engine)[key_of(scored, order[2])] == "wrong"
    assert event_count(sample_engine) == before + 1
    assert any(a.startswith("Done: every row of this scope") for a in alerts(at))


def test_skip_moves_the_row_behind_the_unreviewed_ones(
    sample_engine: Engine, scored: pd.DataFrame, order: list[int]
) -> None:
    at = open_page("review")
    click(at, "q_skip")
    assert mine(sample_engine) == {}
    assert review.skipped_keys(sample_engine, "alice") == {key_of(scored, order[0])}
    assert shown_row(at) == order[1]
    assert progress(at) == (0, len(order))

    for expected in order[1:]:
        assert shown_row(at) == expected
        click(at, "q_yes")
    # Every unreviewed row is done: the skipped one comes back last.
    assert shown_row(at) == order[0]
    assert progress(at) == (len(order) - 1, len(order))
    assert key_of(scored, order[0]) not in mine(sample_engine)

    click(at, "q_no")
    assert mine(sample_engine)[key_of(scored, order[0])] == "wrong"
    assert review.skipped_keys(sample_engine, "alice") == set()
    assert progress(at) == (len(order), len(order))


def test_reason_and_note_are_stored_and_cleared_for_the_next_row(
    sample_engine: Engine, scored: pd.DataFrame, order: list[int]
) -> None:
    at = open_page("review")
    reason = [s for s in at.selectbox if str(s.key).startswith("q_reason_")]
    note = [t for t in at.text_input if str(t.key).startswith("q_note_")]
    assert len(reason) == 1 and len(note) == 1
    assert list(reason[0].options) == ["Reason (optional)", *review.REASONS]  # "": no reason, shown by its name
    reason[0].set_value("paraphrase")
    note[0].set_value("  same claim, other words  ")
    click(at, "q_no")

    current = review.current_verdicts(sample_engine, reviewer="alice")
    assert len(current) == 1
    row = current.iloc[0]
    assert row["item_key"] == key_of(scored, order[0])
    assert (row["verdict"], row["reason"], row["note"]) == ("wrong", "paraphrase", "same claim, other words")

    # The next row starts with an empty reason and note.
    reason = [s for s in at.selectbox if str(s.key).startswith("q_reason_")]
    note = [t for t in at.text_input if str(t.key).startswith("q_note_")]
    assert reason[0].value == "" and note[0].value == ""
    click(at, "q_yes")
    second = review.current_verdicts(sample_engine, [key_of(scored, order[1])], reviewer="alice").iloc[0]
    assert (second["verdict"], second["reason"], second["note"]) == ("correct", "", "")


def test_no_reviewer_disables_the_buttons_and_warns(sample_engine: Engine, order: list[int]) -> None:
    at = open_page("review", reviewer=None)
    warnings = [str(w.value) for w in at.main.warning]
    assert any("Reviewer name" in w for w in warnings), warnings
    for key in ("q_yes", "q_no", "q_skip", "q_undo"):
        assert at.button(key=key).disabled, key
    # The queue itself still shows, with its progress.
    assert shown_row(at) == order[0]
    assert progress(at) == (0, len(order))
    assert event_count(sample_engine) == 0


def test_a_refresh_continues_where_the_reviewer_left_off(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int]
) -> None:
    first = open_page("review", run_id=run_id)
    click(first, "q_yes")
    click(first, "q_no")
    click(first, "q_skip")
    click(first, "q_yes")
    assert shown_row(first) == order[4]

    # A refresh is a new session: only the URL (?run=&reviewer=) and the database survive.
    again = open_page("review", run_id=run_id)
    assert progress(again) == (3, len(order))
    assert shown_row(again) == order[4]
    assert mine(sample_engine) == {
        key_of(scored, order[0]): "correct",
        key_of(scored, order[1]): "wrong",
        key_of(scored, order[3]): "correct",
    }
    # Another reviewer on the same scope is not handed alice's rows (issue 18): the team's
    # progress is shared, alice holds order[4], and the row she skipped went back to the pool.
    other = open_page("review", reviewer="bob", run_id=run_id)
    assert progress(other) == (3, len(order))
    assert shown_row(other) == order[2]
    assert review.live_claims(sample_engine)[key_of(scored, order[4])] == "alice"


def test_scope_bucket_domain_and_sample(sample_engine: Engine, run_id: int, scored: pd.DataFrame) -> None:
    at = open_page("review")
    at.selectbox(key="q_bucket").set_value("both_pass")
    at.run()
    both_pass = scored[scored["bucket"] == "both_pass"]
    assert progress(at) == (0, len(both_pass))
    seed = store.get_run(sample_engine, run_id).review_seed
    assert shown_row(at) == review.queue(scored, "", sample_engine, bucket="both_pass", seed=seed)[0]
    assert "Bucket: both_pass" in text_with(at, "Bucket: ")

    domain = str(both_pass["Domain"].value_counts().index[0])
    at.selectbox(key="q_domain").set_value(domain)
    at.run()
    in_domain = both_pass[both_pass["Domain"] == domain]
    assert progress(at) == (0, len(in_domain))
    assert f"Domain: {domain}" in text_with(at, "Row ")

    at.selectbox(key="q_domain").set_value("All domains")
    at.number_input(key="q_sample").set_value(3)
    at.run()
    assert progress(at) == (0, 3)
    click(at, "q_yes")
    assert progress(at) == (1, 3)
    sample = review.queue(scored, "", sample_engine, bucket="both_pass", sample=3, seed=seed)
    marked = scored.loc[scored["row_idx"] == sample[0], "item_key"].tolist()
    assert set(mine(sample_engine)) == set(marked)  # the first row of the sample, in the run's review order


def test_blind_review_hides_the_metric_verdicts(order: list[int]) -> None:
    at = open_page("review")
    assert "Exact: " in text_with(at, "Overlap: ")
    at.toggle(key="q_blind").set_value(True)
    at.run()
    assert shown_row(at) == order[0]
    shown = texts(at)
    assert not any("Exact: " in t or "Overlap: " in t or "Bucket: " in t or "Judge suggests" in t for t in shown), shown
    # Marking still works blind.
    click(at, "q_yes")
    assert shown_row(at) == order[1]


def _card_shape(at: AppTest) -> tuple[list[str], list[str]]:
    """The review card with its dataset text taken out: the HTML's tags, classes and styles, and
    the page's text lines other than the row's place and domain."""
    # The keyboard's row marker (screen number, run, item key: no verdict) differs per row by design.
    # A line's tooltip (title) repeats its text, which differs per row like the text itself.
    bodies = [re.sub(r' (data-q-[a-z]+|title)="[^"]*"', "", str(h.proto.body)) for h in at.get("html")]
    shapes = [re.sub(r">[^<]*<", "><", body) for body in bodies]
    lines = [t for t in texts(at) if not t.startswith("Row ")]
    return shapes, lines


def test_blind_review_shows_the_texts_plain_so_no_verdict_can_be_read_off_the_card() -> None:
    """Issue 20: in blind review nothing on the card (classes, colours, captions) differs between a
    row that passes both metrics, one that fails both, and one that passes only one."""
    at = open_page("review")
    at.toggle(key="q_blind").set_value(True)
    ok(at.run())
    seen = {}
    for bucket in BUCKETS:
        at.selectbox(key="q_bucket").set_value(bucket)
        ok(at.run())
        seen[bucket] = _card_shape(at)
    assert seen["both_pass"][0] and all(shape == seen["both_pass"] for shape in seen.values()), seen
    assert "<mark" not in "".join(seen["both_pass"][0]) and "line-through" not in "".join(seen["both_pass"][0])
    at.toggle(key="q_blind").set_value(False)  # not blind: the highlighting tells them apart (the check can fail)
    shapes = {}
    for bucket in ("both_pass", "both_fail"):
        at.selectbox(key="q_bucket").set_value(bucket)
        ok(at.run())
        shapes[bucket] = _card_shape(at)
    assert shapes["both_pass"] != shapes["both_fail"]


# --- several reviewers, final verdicts, export ---------------------------------------------------


def mark_as(reviewer: str, run_id: int, actions: list[str], second_opinion: bool = False) -> AppTest:
    """Mark the rows the queue hands ``reviewer`` through the page (with "Second opinion" on:
    the rows others marked once)."""
    at = open_page("review", reviewer=reviewer, run_id=run_id)
    if second_opinion:
        at.toggle(key="q_second").set_value(True)
        ok(at.run())
    for action in actions:
        click(at, action)
    return at


@pytest.fixture
def disputed(sample_engine: Engine, run_id: int, order: list[int]) -> list[int]:
    """alice reviews the first three rows and bob gives them a second opinion on purpose: they
    disagree on the first only."""
    mark_as("alice", run_id, ["q_yes", "q_yes", "q_no"])
    mark_as("bob", run_id, ["q_no", "q_yes", "q_no"], second_opinion=True)
    return order[:3]


def test_reviewers_page_lists_the_conflict_and_agreement(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, disputed: list[int]
) -> None:
    at = open_page("reviewers", run_id=run_id)
    per_reviewer = frame_with(at, "wrong")
    assert per_reviewer.loc["alice", "correct"] == 2 and per_reviewer.loc["alice", "wrong"] == 1
    assert per_reviewer.loc["bob", "correct"] == 1 and per_reviewer.loc["bob", "wrong"] == 2

    conflicts = frame_with(at, "question")
    assert conflicts["item_key"].tolist() == [key_of(scored, disputed[0])]
    assert conflicts["row_idx"].tolist() == [disputed[0]]
    assert (conflicts.iloc[0]["alice"], conflicts.iloc[0]["bob"]) == ("correct", "wrong")

    # Table [[1, 1], [0, 1]]: raw agreement 2/3; kappa (2/3 - 4/9) / (1 - 4/9) = 0.4.
    assert "alice vs bob: n = 3, raw agreement = 66.7%, Cohen's kappa = 0.400" in texts(at)
    human_vs = [t for t in texts(at) if t.startswith("human vs ")]
    assert len(human_vs) == 2 and all("n = 2," in t for t in human_vs), human_vs
    assert "No item has conflicting verdicts." not in texts(at)


def test_reviewers_page_without_verdicts(sample_engine: Engine, run_id: int) -> None:
    at = open_page("reviewers", run_id=run_id)
    assert any("No human verdicts" in str(i.value) for i in at.main.info)


def test_final_verdicts_on_overview_and_export(
    sample_engine: Engine,
    run_id: int,
    scored: pd.DataFrame,
    order: list[int],
    disputed: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    n, pending = len(scored), len(order) - 2  # two overlap_only rows settled; the conflict stays pending
    at = open_page("overview", run_id=run_id)
    assert f": {pending} of {n} rows pending;" in text_with(at, "Adjudicated (human verdicts")
    table = frame_with(at, "Adjudicated pending")
    assert int(table["Adjudicated pending"].iloc[-1]) == pending
    assert int(table["Adjudicated pending"].sum()) == 2 * pending  # per domain, plus the combined row

    managers = record_media_managers(monkeypatch)
    goto(at, "export")
    counts = frame_with(at, "final source").set_index("final source")["count"].to_dict()
    assert counts == {"auto": n - len(order), "pending": pending, "human": 2}

    built = export.build_export(sample_engine, run_id)
    expected = {
        disputed[0]: ("conflict", "alice;bob", "pending", "pending"),
        disputed[1]: ("correct", "alice;bob", "correct", "human"),
        disputed[2]: ("wrong", "alice;bob", "wrong", "human"),
    }
    cols = ["human_verdict", "reviewers", "final_verdict", "final_source"]
    for row_idx, values in expected.items():
        assert tuple(built.iloc[row_idx][cols]) == values
    assert built["final_source"].value_counts().to_dict() == counts

    # What the "Download CSV" button serves: the same verdicts, read from the database.
    data = download(at, managers, "dl_csv")
    assert not data.startswith(b"\xef\xbb\xbf")
    csv = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    assert len(csv) == n
    assert csv["question"].tolist() == scored["question"].tolist()
    for row_idx, values in expected.items():
        assert tuple(csv.iloc[row_idx][cols]) == values
    assert set(csv.loc[csv["final_source"] == "auto", "bucket"]) <= {"both_pass", "both_fail", "exact_only"}
    jsonl = pd.read_json(io.BytesIO(download(at, managers, "dl_jsonl")), lines=True)
    assert jsonl["final_source"].value_counts().to_dict() == counts


def test_export_download_reads_the_database_at_click_time(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mark given after the Export page rendered is in the file: the callable reads on click."""
    managers = record_media_managers(monkeypatch)
    at = open_page("export", run_id=run_id)
    at.checkbox(key="export_bom").check()
    at.run()
    key = key_of(scored, order[0])
    review.record_mark(sample_engine, key, run_id, "carol", "correct", "inflection", "=cmd note")
    data = download(at, managers, "dl_csv")
    assert data.startswith(b"\xef\xbb\xbf")
    csv = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8-sig")
    row = csv.iloc[order[0]]
    assert (row["human_verdict"], row["reviewers"], row["reason"]) == ("correct", "carol", "inflection")
    assert (row["final_verdict"], row["final_source"]) == ("correct", "human")
    assert row["note"] == "'=cmd note"  # neutralised for spreadsheets
    manifest = json.loads(download(at, managers, "dl_manifest"))
    assert manifest["run"]["id"] == run_id and manifest["rows"] == len(scored)
    assert manifest["counts"]["final_source"]["human"] == 1
    assert manifest["counts"]["human_verdict"]["correct"] == 1


def test_with_sign_in_configured_a_typed_name_is_not_enough(
    sample_engine: Engine, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[auth]`` in secrets: marks need a signed-in user; ``?reviewer=`` alone cannot mark."""
    import ui.identity

    monkeypatch.setattr(ui.identity, "read_secrets", lambda *a, **k: {"auth": {"redirect_uri": "x"}})
    at = open_page("review", reviewer="mallory")
    for key in ("q_yes", "q_no", "q_skip", "q_undo"):
        assert at.button(key=key).disabled, key
    assert event_count(sample_engine) == 0


def test_a_large_run_is_prepared_with_its_phases_then_downloaded(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From export.PREPARE_ROWS rows the page builds the file on "Prepare", showing its phases,
    then offers it: the bytes are the export of the database at that moment, with its manifest."""
    monkeypatch.setattr(export, "PREPARE_ROWS", 1)
    managers = record_media_managers(monkeypatch)
    at = open_page("export", run_id=run_id)
    assert [b.key for b in at.download_button] == []  # nothing to download before preparing
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "carol", "wrong", "", "=2+2")
    at.button(key="prepare_export").click().run()
    assert not at.exception
    assert [(s.label, s.state) for s in at.status] == [(f"CSV export ready: {len(scored):,} rows", "complete")]
    url = at.download_button(key="dl_prepared").proto.url
    data = managers[-1]._storage.get_file(url.rsplit("/", 1)[-1]).content
    assert data == export.to_csv_bytes(export.build_export(sample_engine, run_id))
    csv = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    assert (csv.iloc[order[0]]["final_verdict"], csv.iloc[order[0]]["note"]) == ("wrong", "'=2+2")
    url = at.download_button(key="dl_prepared_manifest").proto.url
    manifest = json.loads(managers[-1]._storage.get_file(url.rsplit("/", 1)[-1]).content)
    assert manifest["rows"] == len(scored) and manifest["format"] == "csv"
    assert manifest["export_sha256"] == hashlib.sha256(data).hexdigest()
    at.checkbox(key="export_bom").check().run()  # another setting: the prepared file no longer applies
    assert [b.key for b in at.download_button] == []


# --- adjudication (issue 11) --------------------------------------------------------------------


def test_an_adjudicator_decides_a_conflict_and_the_reviewers_page_counts_what_waits(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice and bob disagree on two rows: the Reviewers page says 2 wait; a reviewer who is not
    an adjudicator cannot decide; ana decides one: it is final ("adjudicated") and 1 waits."""
    for row in order[:2]:
        review.record_mark(sample_engine, key_of(scored, row), run_id, "alice", "correct")
        review.record_mark(sample_engine, key_of(scored, row), run_id, "bob", "wrong")
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    at = open_page("reviewers", reviewer="alice", run_id=run_id)
    assert any("Waiting for adjudication: 2 item(s)" in t for t in texts(at))
    at = open_page("adjudication", reviewer="alice", run_id=run_id)
    assert any("not an adjudicator" in a for a in alerts(at)) and not at.button
    at = open_page("adjudication", reviewer="ana", run_id=run_id)
    assert any("Waiting for a decision: 2 item(s)" in t for t in texts(at))
    first = min(order[:2])  # the page lists the waiting items in the file's order
    assert at.selectbox(key="adj_row").value == first
    verdicts = frame_with(at, "reviewer")
    assert sorted(verdicts["reviewer"]) == ["alice", "bob"]
    at.text_input(key=f"adj_note_{key_of(scored, first)[:12]}").input("narrower golden answer").run()
    click(at, "adj_wrong")
    assert any("decided wrong by ana" in a for a in alerts(at))
    assert any("Waiting for a decision: 1 item(s)" in t for t in texts(at))
    decided = review.adjudications(sample_engine).loc[key_of(scored, first)]
    assert (decided["adjudicator"], decided["decision"], decided["adjudication_note"]) == (
        "ana",
        "wrong",
        "narrower golden answer",
    )
    final = export.build_export(sample_engine, run_id).iloc[first]
    assert (final["final_verdict"], final["final_source"]) == ("wrong", "adjudicated")
    at = open_page("reviewers", reviewer="ana", run_id=run_id)
    assert any("Waiting for adjudication: 1 item(s)" in t for t in texts(at))


def test_double_blind_hands_two_reviewers_different_rows_and_hides_the_metrics(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adjudicator turns double-blind on for overlap_only: that claims nothing (issue 20) until
    they start reviewing (being a reviewer too, then they are handed the first row); alice and bob,
    in tabs open at once, are shown the next rows, one each, without the metrics; a row marked by
    two reviewers is handed to nobody else; leaving the queue lets a held row go."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    at = open_page("review", reviewer="ana", run_id=run_id)
    at.toggle(key=f"q_double_{run_id}_overlap_only").set_value(True).run()
    assert review.is_blind(sample_engine, run_id, "overlap_only")
    assert "ana" not in review.live_claims(sample_engine).values() and not [
        t for t in texts(at) if t.startswith("Row ")
    ]
    click(at, "q_start")
    assert shown_row(at) == order[0]
    alice = open_page("review", reviewer="alice", run_id=run_id)
    bob = open_page("review", reviewer="bob", run_id=run_id)
    assert (shown_row(alice), shown_row(bob)) == (order[1], order[2])
    assert not any("Exact:" in t for t in texts(alice))  # the metrics are hidden
    assert not [t for t in alice.toggle if t.key == "q_blind"]  # and cannot be shown
    click(alice, "q_yes")
    assert shown_row(alice) == order[3]
    bob = open_page("review", reviewer="bob", run_id=run_id)
    assert shown_row(bob) == order[2]  # a refresh shows bob the row he holds
    click(bob, "q_no")
    assert shown_row(bob) == order[1]  # alice's row needs a second verdict and is free now
    click(bob, "q_yes")
    carol = open_page("review", reviewer="carol", run_id=run_id)
    # Row 1 is ana's, row 2 has its two verdicts, row 3 has bob's only: carol is the second there.
    assert shown_row(carol) == order[2]
    per_item = review.current_verdicts(sample_engine).groupby("item_key")["reviewer"].agg(sorted)
    assert per_item[key_of(scored, order[1])] == ["alice", "bob"]
    assert review.live_claims(sample_engine)[key_of(scored, order[0])] == "ana"
    ok(goto(at, "overview"))  # ana leaves the queue: her row is free for the next reviewer
    assert "ana" not in review.live_claims(sample_engine).values()


def test_reviewers_of_one_scope_get_different_rows_and_a_second_opinion_is_asked_on_purpose(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int]
) -> None:
    """Outside double-blind (issue 18): alice, bob and carol open the queue on one scope and are
    each shown a different row, in the seeded order, and the team's progress counts everyone's
    marks. With "Second opinion" on, bob is handed the row alice marked, never his own, and the
    Reviewers page measures their agreement; a scope whose rows all have a verdict says so."""
    alice = open_page("review", reviewer="alice", run_id=run_id)
    bob = open_page("review", reviewer="bob", run_id=run_id)
    carol = open_page("review", reviewer="carol", run_id=run_id)
    assert [shown_row(at) for at in (alice, bob, carol)] == order[:3]
    assert any("Team review: reviewers of this scope get different rows" in c.value for c in alice.caption)
    click(alice, "q_yes")
    assert shown_row(alice) == order[3]  # not bob's or carol's row
    click(bob, "q_no")
    assert shown_row(bob) == order[4]
    assert progress(bob) == (2, len(order))  # the team's rows, not only bob's
    bob.toggle(key="q_second").set_value(True)
    ok(bob.run())
    assert shown_row(bob) == order[0]  # marked once, by alice
    click(bob, "q_no")
    # order[1] is his own, the others have no verdict: nothing is left for a second opinion.
    assert any("No row of this scope is waiting for a second opinion from you" in i.value for i in bob.info)
    assert not [t for t in texts(bob) if t.startswith("Row ")]
    per_item = review.current_verdicts(sample_engine).groupby("item_key")["reviewer"].agg(sorted)
    assert per_item.to_dict() == {key_of(scored, order[0]): ["alice", "bob"], key_of(scored, order[1]): ["bob"]}
    assert any(t.startswith("alice vs bob: n = 1, raw agreement = 0.0%") for t in texts(open_page("reviewers")))
    # A sample whose two rows both have a verdict: carol is told why she is handed nothing.
    carol.number_input(key="q_sample").set_value(2)
    ok(carol.run())
    assert any("No row of this scope is waiting for a reviewer" in i.value for i in carol.info)
    assert progress(carol) == (2, 2)


def test_under_double_blind_only_adjudicators_see_other_reviewers_verdicts(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With part of the run double-blind, the Reviewers and Export pages (which show or download
    every reviewer's verdict) say so to a reviewer and show nothing; an adjudicator sees them."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "alice", "correct")
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "bob", "wrong")
    for page in ("reviewers", "export"):  # not blind yet: everyone sees the page
        assert not any("Double-blind review is on" in i.value for i in open_page(page, "alice", run_id).info)
    review.set_blind(sample_engine, run_id, "overlap_only", "ana")
    for page in ("reviewers", "export"):
        at = open_page(page, reviewer="alice", run_id=run_id)
        assert any("Double-blind review is on" in i.value for i in at.info), page
        assert not at.dataframe and not at.download_button, page
        at = open_page(page, reviewer="ana", run_id=run_id)
        assert not any("Double-blind review is on" in i.value for i in at.info), page
    tables = open_page("reviewers", reviewer="ana", run_id=run_id).dataframe
    assert any("bob" in df.value.to_csv() for df in tables)  # the adjudicator sees every reviewer


def test_double_blind_for_one_domain_is_blind_there_only(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adjudicator makes one domain of overlap_only double-blind: a reviewer choosing that
    domain is handed a claimed row without the metrics; on the whole bucket the metrics show and a
    caption names the blind scope; the bucket-wide toggle does not claim the domain is blind."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    domain = str(scored.loc[scored["row_idx"] == order[0], "Domain"].iloc[0])
    in_domain = [r for r in order if scored.loc[scored["row_idx"] == r, "Domain"].iloc[0] == domain]
    ana = open_page("review", reviewer="ana", run_id=run_id)
    ana.selectbox(key="q_domain").select(domain).run()
    ana.toggle(key=f"q_double_{run_id}_overlap_only_{domain}").set_value(True).run()
    assert review.blind_scopes(sample_engine, run_id) == [review.BlindSpec("overlap_only", domain)]
    click(ana, "q_start")
    assert shown_row(ana) == in_domain[0]
    alice = open_page("review", reviewer="alice", run_id=run_id)
    assert any("Exact:" in t for t in texts(alice))  # the whole bucket is not blind
    captions = [c.value.replace("\\", "") for c in alice.caption]
    assert any(f"Double-blind elsewhere in this run: overlap_only · {domain}." in c for c in captions)
    ana.selectbox(key="q_domain").select("All domains").run()
    assert not ana.toggle(key=f"q_double_{run_id}_overlap_only").value  # the bucket is not blind
    alice.selectbox(key="q_domain").select(domain).run()
    assert not any("Exact:" in t for t in texts(alice))
    if len(in_domain) > 1:
        assert shown_row(alice) == in_domain[1]  # ana holds the first row of the domain
    assert review.live_claims(sample_engine)[key_of(scored, in_domain[0])] == "ana"


def test_under_double_blind_reviewers_see_no_human_figures_and_no_row_verdicts(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Overview: no Adjudicated series or figures for a reviewer (the metrics' aggregates stay);
    Agreement: the counts stay, the precision on reviewed rows and the row browser go; Judge: the
    page says why it is closed. An adjudicator sees everything."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "bob", "wrong")
    review.set_blind(sample_engine, run_id, review.BlindSpec(None, None, 30), "ana")
    alice = open_page("overview", reviewer="alice", run_id=run_id)
    names = [t.get("name") for t in json.loads(alice.get("plotly_chart")[0].proto.spec)["data"]]
    assert "Adjudicated" not in names and "Exact substring" in names
    assert not any("Adjudicated" in t for t in texts(alice))
    assert any("Double-blind review is on" in i.value for i in alice.info)
    ana = open_page("overview", reviewer="ana", run_id=run_id)
    spec = json.loads(ana.get("plotly_chart")[0].proto.spec)
    assert "Adjudicated" in [t["name"] for t in spec["data"]]
    alice = open_page("agreement", reviewer="alice", run_id=run_id)
    assert alice.get("plotly_chart") and not [s for s in alice.subheader if "Precision" in s.value]
    assert not any(t.startswith("Row ") for t in texts(alice))
    ana = open_page("agreement", reviewer="ana", run_id=run_id)
    assert any(t.startswith("Row ") for t in texts(ana))
    alice = open_page("judge", reviewer="alice", run_id=run_id)
    assert any("Double-blind review is on" in i.value for i in alice.info) and not alice.button


# --- the planner's audit scope (issue 13) --------------------------------------------------------


def test_the_audit_scope_holds_the_planned_rows_in_review_order_and_can_be_replaced(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame
) -> None:
    """No audit set: the queue offers the four buckets only. The planner's rows become the scope
    "audit" (``?scope=audit`` opens it): its rows in the run's review order, progress 0 of n, a
    mark lands; a new plan replaces the set in one go."""
    at = open_page("review", run_id=run_id)
    assert not [o for o in at.selectbox(key="q_bucket").options if o.startswith("Estimate:")]  # triage only
    planned = scored["item_key"].iloc[[3, 11, 17, 30]].tolist()
    assert review.set_audit(sample_engine, run_id, [*planned, planned[0]], "ana") == 4
    assert review.audit_keys(sample_engine, run_id) == set(planned)
    at = open_app_with(run_id, {"scope": review.AUDIT})
    assert at.selectbox(key="q_bucket").value == review.AUDIT
    assert at.selectbox(key="q_bucket").options[-1] == "Estimate: audit sample (4 rows)"
    seed = store.get_run(sample_engine, run_id).review_seed
    order = review.queue(scored, "", sample_engine, bucket=review.AUDIT, seed=seed, keys=set(planned))
    assert sorted(order) == [3, 11, 17, 30]
    assert shown_row(at) == order[0] and progress(at) == (0, 4)
    click(at, "q_yes")
    assert shown_row(at) == order[1] and progress(at) == (1, 4)
    done = scored["item_key"].iloc[order[0]]  # the row alice marked
    assert review.set_audit(sample_engine, run_id, [done], "ana") == 1  # a new plan replaces the set
    assert review.audit_keys(sample_engine, run_id) == {done}
    at = open_app_with(run_id, {"scope": review.AUDIT})
    assert not any(t.startswith("Row ") for t in texts(at))  # the one planned row is done: nothing shown
    assert any("every row of this scope has your verdict" in a for a in alerts(at))


def open_app_with(run_id: int, params: dict[str, str]) -> AppTest:
    """The review page opened with extra query parameters (as a link from another page does)."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"reviewer": "alice", "run": str(run_id), **params})
    ok(at.run())
    at.switch_page(page_path("review"))
    return ok(at.run())


def test_the_overview_counts_an_adjudicators_decision(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, order: list[int]
) -> None:
    """A conflict is pending on the Overview until an adjudicator decides it; then it is settled."""
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "alice", "correct")
    review.record_mark(sample_engine, key_of(scored, order[0]), run_id, "bob", "wrong")
    before = [t for t in texts(open_page("overview", run_id=run_id)) if t.startswith("Adjudicated")]
    review.record_adjudication(sample_engine, key_of(scored, order[0]), run_id, "ana", "correct")
    after = [t for t in texts(open_page("overview", run_id=run_id)) if t.startswith("Adjudicated")]
    pending = [int(t.split(": ")[1].split(" of ")[0]) for t in (*before, *after)]
    assert pending[1] == pending[0] - 1, (before, after)

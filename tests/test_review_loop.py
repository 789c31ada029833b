"""The review loop's rules (issues 8 and 27): a press applies to the row on screen when it was
pressed, exactly once, even after the page has moved on; only a press made while no row was shown
is refused (and said once); a failed write keeps the row open; undo says what it took back. Real
SQLite files; the failing write is a real lock held by another connection.
"""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest
from sqlalchemy import Engine, select

from scoring import ingest, review, store
from scoring.review import my_verdicts
from scoring.review.loop import Press, ReviewLoop
from scoring.store.orm_tables import VerdictEvent

#: ``engine`` (tests/conftest.py) on a SQLite file only: the failing write is SQLite's file lock.
pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _csv(n: int) -> bytes:
    lines = ["question,answer,Domain,response"]
    for i in range(n):
        lines.append(f"Q{i}?,alpha{i} beta,{['Art', 'History'][i % 2]},beta alpha{i}")  # overlap_only
    lines.append("Qx?,gamma,Art,gamma")  # both_pass
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def scored(engine: Engine) -> pd.DataFrame:
    run = ingest.save_run(engine, _csv(6), "loop_model_english.csv").run
    assert run.id == 1
    return store.load_scored(engine, run.id)


def _mine(engine: Engine, who: str = "alice") -> dict[str, str]:
    current = review.current_verdicts(engine, reviewer=who)
    return dict(zip(current["item_key"], current["verdict"], strict=True))


def _nth(scored: pd.DataFrame, k: int) -> int:
    """row_idx of the k-th row of the overlap_only queue (a seeded random order)."""
    return int(review.queue_scope(scored, "overlap_only").row_idx[k])


def _show_next(loop: ReviewLoop, scored: pd.DataFrame, engine: Engine, who: str = "alice") -> int:
    scope = review.queue_scope(scored, "overlap_only")
    pos = loop.opened if loop.opened is not None else review.next_in_queue(scope, engine, who)
    assert pos is not None
    return loop.show(pos, scored["item_key"].iloc[pos]).number


def _press(seq: int, key: str, screen: int | None, **named: object) -> dict:
    return {"seq": seq, "key": key, "screen": screen, **named}


def _events(engine: Engine, who: str = "alice") -> list[tuple[str, str, str | None]]:
    with engine.connect() as conn:
        stmt = (
            select(VerdictEvent.action, VerdictEvent.item_key, VerdictEvent.verdict)
            .where(VerdictEvent.reviewer == who)
            .order_by(VerdictEvent.id)
        )
        return [(str(a), str(k), v) for a, k, v in conn.execute(stmt)]


def test_presses_on_one_screen_each_apply_once_to_its_row(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    first = _show_next(loop, scored, engine)
    key0 = scored["item_key"].iloc[_nth(scored, 0)]
    # Three presses arrive before the next row is drawn: all were pressed on the first row.
    loop.take_presses([_press(1, "n", first), _press(2, "y", first), _press(3, "n", first)], engine, "alice")
    assert _events(engine) == [("mark", key0, "wrong"), ("mark", key0, "correct"), ("mark", key0, "wrong")]
    assert _mine(engine) == {key0: "wrong"}
    assert loop.refused == 0
    row = _nth(scored, 0) + 1
    assert [f.text for f in loop.take_feedback()] == [
        f"Saved: row {row} marked wrong.",
        f"Saved: row {row} marked correct.",
        f"Saved: row {row} marked wrong.",
    ]
    # The browser resends unacknowledged presses: already taken ones change nothing.
    second = _show_next(loop, scored, engine)
    assert second != first
    loop.take_presses([_press(2, "y", first), _press(3, "n", first), _press(4, "y", second)], engine, "alice")
    key1 = scored["item_key"].iloc[_nth(scored, 1)]
    assert _mine(engine) == {key0: "wrong", key1: "correct"}
    assert len(_events(engine)) == 4 and loop.last_seq == 4


def test_a_click_on_a_screen_that_took_a_press_applies_to_its_row_and_an_unknown_screen_is_refused(
    engine: Engine, scored: pd.DataFrame
) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    assert loop.act(engine, "alice", "correct", screen).kind == "saved"
    assert loop.act(engine, "alice", "wrong", screen).kind == "saved"  # the row the click was given on
    assert _mine(engine) == {scored["item_key"].iloc[_nth(scored, 0)]: "wrong"}
    # A screen number the page never showed, or none, names no row: refused.
    assert loop.act(engine, "alice", "wrong", 999).kind == "refused"
    assert loop.act(engine, "alice", "wrong", None).kind == "refused"
    assert loop.refused == 2 and len(_events(engine)) == 2


def test_showing_the_same_row_again_keeps_its_screen_until_it_takes_an_action(
    engine: Engine, scored: pd.DataFrame
) -> None:
    loop = ReviewLoop(1)
    a = _show_next(loop, scored, engine)
    assert _show_next(loop, scored, engine) == a  # a rerun (typing a note) keeps the screen
    loop.act(engine, "alice", "skip", a)
    b = _show_next(loop, scored, engine)
    assert b != a


def test_undo_reopens_the_row_and_says_what_it_took_back_and_the_skips_it_passed(
    engine: Engine, scored: pd.DataFrame
) -> None:
    loop = ReviewLoop(1)
    row_of = {k: i for i, k in reversed(list(enumerate(scored["item_key"])))}.get
    loop.act(engine, "alice", "wrong", _show_next(loop, scored, engine))
    loop.act(engine, "alice", "skip", _show_next(loop, scored, engine))
    loop.act(engine, "alice", "skip", _show_next(loop, scored, engine))
    loop.take_feedback()
    out = loop.act(engine, "alice", "undo", _show_next(loop, scored, engine), row_of=row_of)
    assert out.kind == "saved"
    assert out.text == (
        f"Undone: your 'wrong' on row {_nth(scored, 0) + 1} is taken back; it is shown again. "
        "Undo takes back marks only: the 2 skip(s) you gave after it stay skipped."
    )
    assert loop.opened == _nth(scored, 0)
    assert _show_next(loop, scored, engine) == loop.screen.number and loop.screen.row_idx == _nth(scored, 0)
    assert _mine(engine) == {}
    assert loop.act(engine, "alice", "undo", _show_next(loop, scored, engine)).text == "Nothing to undo in this run."


def test_a_write_that_cannot_get_the_lock_is_reported_and_the_row_stays_open(
    engine: Engine, scored: pd.DataFrame
) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    blocker = sqlite3.connect(str(engine.url.database), isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        loop.take_presses([_press(1, "y", screen), _press(2, "y", screen)], engine, "alice")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    feedback = loop.take_feedback()
    assert feedback[0].kind == "error"
    row = _nth(scored, 0) + 1
    assert feedback[0].text.startswith(f"Row {row} was NOT saved. Not saved: the database could not be written")
    assert "database is locked" in feedback[0].text and "SELECT" not in feedback[0].text
    assert feedback[1].kind == "error"  # the second press of that batch is not retried blindly
    assert feedback[1].text == "1 later key press(es) were not saved either. Press again once the row is saved."
    assert _mine(engine) == {}
    # Same row, same screen: the next press retries and lands.
    assert _show_next(loop, scored, engine) == screen
    loop.take_presses([_press(3, "y", screen)], engine, "alice")
    assert _mine(engine) == {scored["item_key"].iloc[_nth(scored, 0)]: "correct"}


def test_malformed_presses_are_ignored(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    loop.take_presses([{"seq": "x"}, {"key": "y"}, _press(1, "q", screen), _press(2, "Y", screen)], engine, "alice")
    assert Press.parse({"seq": 1, "key": "y"}) is None
    assert _mine(engine) == {scored["item_key"].iloc[_nth(scored, 0)]: "correct"}


def test_no_reviewer_saves_nothing(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    out = loop.act(engine, "", "correct", _show_next(loop, scored, engine, who=""))
    assert out.kind == "error" and review.revision(engine) == 0


def test_my_verdicts_and_open_scopes(engine: Engine, scored: pd.DataFrame) -> None:
    scope = review.queue_scope(scored, "overlap_only", "Art")
    keys = list(scope.item_keys)
    review.record_mark(engine, keys[0], 1, "alice", "correct", "paraphrase", "ok")
    review.record_mark(engine, keys[1], 7, "alice", "wrong")  # given in another run with the row
    review.record_mark(engine, keys[2], 1, "bob", "wrong")
    mine = my_verdicts.my_verdicts(scored, scope, engine, "alice")
    assert list(mine.columns) == my_verdicts.MY_COLUMNS
    assert sorted(mine["row"]) == sorted([int(scope.row_idx[0]) + 1, int(scope.row_idx[1]) + 1])
    assert my_verdicts.verdict_counts(mine) == {"correct": 1, "wrong": 1}
    assert my_verdicts.carried_over(mine, 1).tolist() == (mine["marked_in_run"] == 7).tolist()
    assert int(my_verdicts.carried_over(mine, 1).sum()) == 1
    todo = my_verdicts.open_scopes(scored, engine, "alice")
    art = todo[(todo["bucket"] == "overlap_only") & (todo["Domain"] == "Art")]["remaining"].tolist()
    assert art == [len(scope) - 2]
    assert todo["remaining"].sum() == len(scored) - 2


def test_next_in_queue_ends_when_every_row_has_the_reviewers_verdict(engine: Engine, scored: pd.DataFrame) -> None:
    scope = review.queue_scope(scored, "overlap_only", "History")
    for key in scope.item_keys[:-1]:
        review.record_mark(engine, key, 1, "alice", "correct")
    review.record_skip(engine, scope.item_keys[-1], 1, "alice")
    assert review.next_in_queue(scope, engine, "alice") == int(scope.row_idx[-1])  # the skipped row
    review.record_mark(engine, scope.item_keys[-1], 1, "alice", "wrong")
    assert review.next_in_queue(scope, engine, "alice") is None
    assert review.next_in_queue(scope, engine, "bob") == int(scope.row_idx[0])


def test_a_press_on_a_row_the_page_has_moved_past_applies_to_that_row(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    row_of = {k: i for i, k in reversed(list(enumerate(scored["item_key"])))}.get
    first = _show_next(loop, scored, engine)
    loop.take_presses([_press(1, "y", first)], engine, "alice")
    second = _show_next(loop, scored, engine)  # the server shows the next row ...
    # ... while the browser still showed the first: the next two presses were made on it.
    loop.take_presses(
        [_press(1, "y", first), _press(2, "n", first), _press(3, "s", first)], engine, "alice", row_of=row_of
    )
    key0, key1 = (scored["item_key"].iloc[_nth(scored, k)] for k in (0, 1))
    assert _events(engine) == [("mark", key0, "correct"), ("mark", key0, "wrong"), ("skip", key0, None)]
    # The row now on screen took nothing: it stays, under the same screen, for the next press.
    assert _show_next(loop, scored, engine) == second and loop.screen.item_key == key1
    loop.take_presses([_press(4, "y", second)], engine, "alice")
    assert _mine(engine) == {key0: "wrong", key1: "correct"}
    assert loop.refused == 0


def test_only_a_press_with_no_row_shown_is_refused_and_said_once(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    loop.take_presses([_press(1, "y", None), _press(2, "n", 0)], engine, "alice")
    assert review.revision(engine) == 0 and loop.refused == 2 and loop.last_seq == 2
    feedback = loop.take_feedback()
    assert [(f.kind, f.text) for f in feedback] == [
        ("refused", "2 key press(es) came while no row was shown and were not applied: nothing was saved.")
    ]
    assert loop.take_feedback() == []  # said once, not on every later card
    screen = _show_next(loop, scored, engine)
    loop.take_presses([_press(3, "y", screen)], engine, "alice")
    assert [f.kind for f in loop.take_feedback()] == ["saved"]


def test_a_press_names_its_run_and_row(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    key0 = scored["item_key"].iloc[_nth(scored, 0)]
    # Another run's screen of the same number: left for that run's loop (not taken, not acknowledged).
    loop.take_presses([_press(1, "y", screen, run=2, item=key0)], engine, "alice")
    assert review.revision(engine) == 0 and loop.last_seq == 0 and loop.refused == 0
    # A screen whose row is not the one the page's block named: refused, never applied elsewhere.
    loop.take_presses([_press(2, "y", screen, run=1, item="not-this-row")], engine, "alice")
    assert review.revision(engine) == 0 and loop.refused == 1
    loop.take_presses([_press(3, "n", screen, run=1, item=key0)], engine, "alice")
    assert _mine(engine) == {key0: "wrong"}


def test_a_later_press_on_a_row_keeps_the_note_typed_on_it(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    first = _show_next(loop, scored, engine)
    fields = {first: ("paraphrase", "close enough")}
    loop.take_presses([_press(1, "y", first)], engine, "alice", details=lambda s: fields.get(s, ("", "")))
    _show_next(loop, scored, engine)
    fields.clear()  # the first row's fields have left the page
    loop.take_presses([_press(2, "n", first)], engine, "alice", details=lambda s: fields.get(s, ("", "")))
    current = review.current_verdicts(engine, reviewer="alice")
    assert current[["verdict", "reason", "note"]].values.tolist() == [["wrong", "paraphrase", "close enough"]]

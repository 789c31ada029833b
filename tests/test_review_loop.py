"""The review loop's rules (issue 8): a press applies to the row on screen when it was pressed, at
most once; too-fast presses are dropped and counted; a failed write keeps the row open; undo says
what it took back. Real SQLite files; the failing write is a real lock held by another connection.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import Engine

from scoring import review, store
from scoring.review import my_verdicts
from scoring.review.loop import Press, ReviewLoop
from scoring.store import make_engine


def _csv(n: int) -> bytes:
    lines = ["question,answer,Domain,response"]
    for i in range(n):
        lines.append(f"Q{i}?,alpha{i} beta,{['Art', 'History'][i % 2]},beta alpha{i}")  # overlap_only
    lines.append("Qx?,gamma,Art,gamma")  # both_pass
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return make_engine(f"sqlite:///{tmp_path}/loop.db")


@pytest.fixture
def scored(engine: Engine) -> pd.DataFrame:
    run = store.save_run(engine, _csv(6), "loop_model_english.csv").run
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


def _press(seq: int, key: str, screen: int) -> dict:
    return {"seq": seq, "key": key, "screen": screen}


def test_presses_on_one_screen_apply_once_and_the_rest_are_dropped(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    first = _show_next(loop, scored, engine)
    # Four presses arrive before the next row is drawn: all carry the first screen.
    loop.take_presses([_press(1, "n", first), _press(2, "y", first), _press(3, "y", first), _press(4, "s", first)],
                      engine, "alice")  # fmt: skip
    assert _mine(engine) == {scored["item_key"].iloc[_nth(scored, 0)]: "wrong"}
    assert loop.dropped == 3
    texts = [f.text for f in loop.take_feedback()]
    assert texts[0] == f"Saved: row {_nth(scored, 0) + 1} marked wrong."
    assert texts[1].startswith("Too fast: 3 key press(es) arrived before the next row was shown")
    # The browser resends unacknowledged presses: already taken ones change nothing.
    second = _show_next(loop, scored, engine)
    assert second != first
    loop.take_presses([_press(3, "y", first), _press(4, "s", first), _press(5, "y", second)], engine, "alice")
    keys = scored["item_key"]
    assert _mine(engine) == {keys.iloc[_nth(scored, 0)]: "wrong", keys.iloc[_nth(scored, 1)]: "correct"}
    assert loop.dropped == 3 and loop.last_seq == 5


def test_a_click_from_a_screen_that_already_took_a_press_is_dropped(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    assert loop.act(engine, "alice", "correct", screen).kind == "saved"
    assert loop.act(engine, "alice", "wrong", screen).kind == "dropped"
    assert _mine(engine) == {scored["item_key"].iloc[_nth(scored, 0)]: "correct"}
    # A screen number the page never showed (a stale tab) is dropped too.
    assert loop.act(engine, "alice", "wrong", 999).kind == "dropped"
    assert loop.dropped == 2


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
    assert out.text == (f"Undone: your 'wrong' on row {_nth(scored, 0) + 1} is taken back; it is shown again. "
                        "Undo takes back marks only: the 2 skip(s) you gave after it stay skipped.")  # fmt: skip
    assert loop.opened == _nth(scored, 0)
    assert _show_next(loop, scored, engine) == loop.screen.number and loop.screen.row_idx == _nth(scored, 0)
    assert _mine(engine) == {}
    assert loop.act(engine, "alice", "undo", _show_next(loop, scored, engine)).text == "Nothing to undo in this run."


def test_a_write_that_cannot_get_the_lock_is_reported_and_the_row_stays_open(
    engine: Engine, scored: pd.DataFrame, tmp_path: Path
) -> None:
    loop = ReviewLoop(1)
    screen = _show_next(loop, scored, engine)
    blocker = sqlite3.connect(tmp_path / "loop.db", isolation_level=None)
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
    assert feedback[1].kind == "dropped"  # the second press of that batch is not retried blindly
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

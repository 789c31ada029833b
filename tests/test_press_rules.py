"""The review loop's rules added by issue 36, below the browser: a verdict or skip pressed on a row
painted less than ``REVIEW_MIN_SHOWN_MS`` before stores nothing and says "Row N had just appeared";
undo is never held back; what a batch of presses did stays to be drawn until a page run draws it
(a run cut short by the next press loses nothing); a note goes with a skip and survives an undo,
and the card's fields start from what was typed on the row before. Real SQLite files.
"""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.review.loop import JUST_APPEARED, MIN_SHOWN_SETTING, ReviewLoop, min_shown_ms
from scoring.review.session import ReviewSession
from scoring.store.notes import last_details


@pytest.fixture
def scored(engine: Engine) -> pd.DataFrame:
    lines = ["question,answer,Domain,response"] + [f"Q{i}?,alpha{i} beta,Art,beta alpha{i}" for i in range(5)]
    run = ingest.save_run(engine, ("\n".join(lines) + "\n").encode(), "rules_model_english.csv").run
    return store.load_scored(engine, run.id)


def _show(loop: ReviewLoop, scored: pd.DataFrame, row: int) -> int:
    return loop.show(row, str(scored["item_key"].iloc[row])).number


def _press(seq: int, key: str, screen: int, shown_ms: float | None) -> dict:
    return {"seq": seq, "key": key, "screen": screen, "shown_ms": shown_ms}


def _events(engine: Engine) -> list[tuple[str, str | None, str]]:
    found = review.current_verdicts(engine, reviewer="alice")
    return sorted(zip(found["item_key"], found["verdict"], found["note"], strict=True))


def test_a_verdict_on_a_row_just_painted_stores_nothing_and_says_so(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    screen = _show(loop, scored, 2)
    loop.take_presses(
        [_press(1, "y", screen, 149), _press(2, "s", screen, 3), _press(3, "n", screen, 40)], engine, "alice"
    )
    assert review.revision(engine) == 0, "nothing stored"
    assert [(f.kind, f.text) for f in loop.take_feedback()] == [("refused", JUST_APPEARED.format(row=3))]
    assert loop.screen is not None and loop.screen.number == screen, "the row stays, for the next press"
    # Pressed again once seen (150 ms or more), or by a page that does not time its presses: stored.
    loop.take_presses([_press(4, "n", screen, 150.0)], engine, "alice")
    assert _events(engine) == [(str(scored["item_key"].iloc[2]), "wrong", "")]
    loop.take_presses([_press(5, "y", screen, None)], engine, "alice")
    assert _events(engine) == [(str(scored["item_key"].iloc[2]), "correct", "")]


def test_undo_is_not_held_back_and_zero_turns_the_rule_off(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    first = _show(loop, scored, 0)
    loop.take_presses([_press(1, "y", first, 900)], engine, "alice")
    second = _show(loop, scored, 1)
    loop.take_presses([_press(2, "u", second, 5)], engine, "alice")  # takes back the mark on row 1
    assert _events(engine) == []
    loop.min_shown_ms = 0
    loop.take_presses([_press(3, "n", second, 0)], engine, "alice")
    assert _events(engine) == [(str(scored["item_key"].iloc[1]), "wrong", "")]


def test_the_setting_is_read_and_a_bad_value_is_named() -> None:
    assert min_shown_ms({}, {}) == 150.0
    assert min_shown_ms({MIN_SHOWN_SETTING: 200}, {}) == 200.0
    assert min_shown_ms({MIN_SHOWN_SETTING: 200}, {MIN_SHOWN_SETTING: "0"}) == 0.0
    for bad in ("fast", "-5", "nan"):
        with pytest.raises(ValueError, match=MIN_SHOWN_SETTING):
            min_shown_ms({}, {MIN_SHOWN_SETTING: bad})


def test_what_presses_did_stays_until_a_page_run_draws_it(engine: Engine, scored: pd.DataFrame) -> None:
    loop = ReviewLoop(1)
    screen = _show(loop, scored, 0)
    loop.take_presses([_press(1, "y", screen, 20)], engine, "alice")
    said = [f.text for f in loop.feedback_to_show()]
    assert said == [JUST_APPEARED.format(row=1)]
    # The page run that would draw it is cut short by the next press: it is said with that one.
    loop.take_presses([_press(2, "y", screen, 400)], engine, "alice")
    assert [f.text for f in loop.feedback_to_show()] == [*said, "Saved: row 1 marked correct."]
    loop.feedback_drawn()
    assert len(loop.feedback_to_show()) == 2, "drawn again by a rerun of the same row"
    _show(loop, scored, 1)  # the next row: what was drawn is replaced
    assert loop.feedback_to_show() == []


def test_a_note_goes_with_a_skip_survives_an_undo_and_comes_back_with_its_row(
    engine: Engine, scored: pd.DataFrame
) -> None:
    session = ReviewSession(1)
    loop = session.loop
    keys = [str(k) for k in scored["item_key"]]
    a = _show(loop, scored, 0)
    loop.act(engine, "alice", "skip", a, "", "ask a Tamil reader")
    assert last_details(engine, "alice", keys[0]) == ("", "ask a Tamil reader")
    b = _show(loop, scored, 1)
    loop.act(engine, "alice", "correct", b, review.REASONS[0], "spelling differs")
    c = _show(loop, scored, 2)
    loop.act(engine, "alice", "undo", c, "", "typed on row 3")  # takes back row 2's mark, row 3 leaves
    assert session.typed_before(engine, "alice", keys[1]) == (review.REASONS[0], "spelling differs")
    assert session.typed_before(engine, "alice", keys[2]) == ("", "typed on row 3")
    assert session.typed_before(engine, "alice", keys[0]) == ("", "ask a Tamil reader")
    assert session.typed_before(engine, "alice", keys[3]) == ("", "")
    # Given with its row at last, the draft is the mark's own note from then on.
    c2 = _show(loop, scored, 2)
    loop.act(engine, "alice", "wrong", c2, "", "typed on row 3")
    assert loop.draft(keys[2]) is None and last_details(engine, "alice", keys[2]) == ("", "typed on row 3")

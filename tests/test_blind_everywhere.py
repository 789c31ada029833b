"""Blind means blind everywhere (issue 27, defect 9).

A row under a double-blind scope (the planner's audit, or any blind bucket, domain or sample) is
shown blind wherever the review queue serves it: in an ordinary bucket scope, through a ``?row=N``
link, or reopened from "My verdicts"; and "My verdicts" does not name its bucket. The decision is
one function, :func:`scoring.review.blind_rows`, tested here on its own as well.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from apptest_support import APP, TIMEOUT, click, frame_with, ok, open_page, page_path, shown_row, texts
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import review, store
from scoring.core.highlight import EXACT_STYLE, WORD_STYLE
from scoring.core.protocols import BUCKETS

#: What a card that is not blind shows (captions, the judge, the highlighting's markup and legends).
REVEALING_TEXT = ("Exact:", "Overlap:", "Bucket:", "Judge suggests")
REVEALING_HTML = ("<s>", "<span", EXACT_STYLE, WORD_STYLE, "struck through", "amber", "green")


@pytest.fixture
def run(sample_engine: Engine) -> store.RunInfo:
    return store.list_runs(sample_engine)[0]


def _order(scored: pd.DataFrame, run: store.RunInfo, bucket: str) -> list[int]:
    return [int(i) for i in review.queue_scope(scored, bucket, seed=run.review_seed).row_idx]


def _key(scored: pd.DataFrame, row_idx: int) -> str:
    return str(scored.loc[scored["row_idx"] == row_idx, "item_key"].iloc[0])


def _card_html(at: AppTest) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def assert_blind_card(at: AppTest) -> None:
    shown = texts(at)
    assert not [t for t in shown if any(word in t for word in REVEALING_TEXT)], shown
    body = _card_html(at)
    assert body and not [w for w in REVEALING_HTML if w in body], body
    assert not any(b in t for t in shown for b in BUCKETS), shown


def assert_open_card(at: AppTest) -> None:
    assert any("Exact:" in t and "Bucket:" in t for t in texts(at)), texts(at)
    assert "struck through" in _card_html(at)


def _audit_blind(engine: Engine, run: store.RunInfo, keys: list[str]) -> None:
    review.set_audit(engine, run.id, keys, "ana")
    review.set_blind(engine, run.id, review.BlindSpec(review.AUDIT), "ana")


# --- the decision, on its own ---------------------------------------------------------------------


def test_blind_rows_covers_what_each_blind_scope_holds(scored: pd.DataFrame, run: store.RunInfo) -> None:
    seed = run.review_seed
    overlap = _order(scored, run, "overlap_only")
    audit = {_key(scored, overlap[0]), _key(scored, 0)}
    none = review.blind_rows(scored, [], seed)
    assert not none.hides(_key(scored, overlap[0])) and not none.mask(scored["item_key"]).any()
    chose = review.blind_rows(scored, [], seed, chose_blind=True)  # the viewer's own Blind review switch
    assert chose.hides(_key(scored, overlap[0])) and chose.mask(scored["item_key"]).all()
    by_audit = review.blind_rows(scored, [review.BlindSpec(review.AUDIT)], seed, audit=audit)
    assert by_audit.mask(scored["item_key"]).sum() == len(audit) and all(by_audit.hides(k) for k in audit)
    by_bucket = review.blind_rows(scored, [review.BlindSpec("both_fail")], seed)
    assert (by_bucket.mask(scored["item_key"]) == (scored["bucket"] == "both_fail").to_numpy()).all()
    sample = review.blind_rows(scored, [review.BlindSpec("overlap_only", None, 3)], seed)
    assert {k for k in scored["item_key"] if sample.hides(k)} == {_key(scored, r) for r in overlap[:3]}
    domain = str(scored["Domain"].iloc[0])
    by_domain = review.blind_rows(scored, [review.BlindSpec(None, domain)], seed)
    assert (by_domain.mask(scored["item_key"]) == (scored["Domain"] == domain).to_numpy()).all()
    whole = review.blind_rows(scored, [review.BlindSpec()], seed)
    assert whole.mask(scored["item_key"]).all()


# --- the pages ------------------------------------------------------------------------------------


def test_an_audit_row_is_served_blind_in_an_ordinary_bucket_scope(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame
) -> None:
    """The first row alice is handed in overlap_only is under a blind audit: the card is blind
    (though the scope is not); the next row, not audited, shows the metrics as before."""
    overlap = _order(scored, run, "overlap_only")
    _audit_blind(sample_engine, run, [_key(scored, overlap[0])])
    at = open_page("review", reviewer="alice", run_id=run.id)
    assert shown_row(at) == overlap[0]
    assert_blind_card(at)
    click(at, "q_yes")
    assert shown_row(at) == overlap[1]
    assert_open_card(at)


def test_a_deep_link_to_an_audit_row_shows_it_blind(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame
) -> None:
    """``?row=N`` (Agreement, Compare, My verdicts) to a row under the blind audit, while the
    queue's scope is another bucket: the row is shown blind."""
    target = _order(scored, run, "both_fail")[0]
    _audit_blind(sample_engine, run, [_key(scored, target)])
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"reviewer": "alice", "run": str(run.id), "row": str(target + 1)})
    ok(at.run())
    at.switch_page(page_path("review"))
    ok(at.run())
    assert shown_row(at) == target
    assert_blind_card(at)


def test_my_verdicts_does_not_name_the_bucket_of_a_blind_row_and_reopens_it_blind(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame
) -> None:
    """alice marked an audited row and an ordinary one in overlap_only; My verdicts lists both,
    naming the bucket of the ordinary row only; in the audit scope nothing names a bucket; the
    audited row reopened from the list is shown blind."""
    overlap = _order(scored, run, "overlap_only")
    audited, plain = overlap[0], overlap[1]
    _audit_blind(sample_engine, run, [_key(scored, audited)])
    review.record_mark(sample_engine, _key(scored, audited), run.id, "alice", "correct")
    review.record_mark(sample_engine, _key(scored, plain), run.id, "alice", "wrong")
    at = open_page("review", reviewer="alice", run_id=run.id)
    at.segmented_control(key="q_view").set_value("My verdicts")
    ok(at.run())
    table = frame_with(at, "verdict")
    assert sorted(table["row"].astype(int)) == sorted([audited + 1, plain + 1])
    by_row = {int(r["row"]): r for _, r in table.iterrows()}
    assert "overlap_only" not in " ".join(str(v) for v in by_row[audited + 1].to_numpy())
    assert by_row[plain + 1]["bucket"] == "overlap_only"

    at.selectbox(key="q_bucket").set_value(review.AUDIT)
    ok(at.run())
    table = frame_with(at, "verdict")
    assert list(table["row"].astype(int)) == [audited + 1]
    cells = table.to_csv()
    assert not [b for b in BUCKETS if b in cells], cells
    assert not [t for t in texts(at) if any(b in t for b in BUCKETS)], texts(at)
    # Reopen it from the list: the card is blind.
    click(at, "q_my_open")
    assert shown_row(at) == audited
    assert_blind_card(at)


def test_a_blind_bucket_sample_is_blind_in_the_whole_bucket_too(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only the audit: a double-blind sample of a bucket is blind when its rows come up in the
    bucket's ordinary scope (here, for an adjudicator too, who reviews them like anyone)."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    overlap = _order(scored, run, "overlap_only")
    review.set_blind(sample_engine, run.id, review.BlindSpec("overlap_only", None, 2), "ana")
    at = open_page("review", reviewer="bob", run_id=run.id)
    assert shown_row(at) == overlap[0]
    assert_blind_card(at)
    assert re.search(r"double-blind", " ".join(texts(at)))  # the card says why it is blind

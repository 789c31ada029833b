"""Blind audits by default (issue 27, "The path a new user takes").

A reviewer of the random sample (the planner's audit scope, and a queue scope's reproducible
sample) sees the question, golden answer and response only: no metric verdicts, highlighting or
judge label, unless ``REVIEW_BLIND_AUDIT`` is off. Triage scopes keep them. The decision is
:func:`scoring.review.blind_rows`; the page only calls it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from apptest_support import APP, TIMEOUT, ok, open_page, page_path, shown_row, texts
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest
from test_blind_everywhere import assert_blind_card, assert_open_card

from scoring import review, store
from scoring.review.blind import WHY_BLIND_AUDIT, WHY_DOUBLE_BLIND
from scoring.review.roles import identity
from scoring.store import judge_cache


@pytest.fixture(autouse=True)
def blind_audit_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The setting starts unset: its default is what is tested."""
    monkeypatch.delenv("REVIEW_BLIND_AUDIT", raising=False)


@pytest.fixture
def run(sample_engine: Engine) -> store.RunInfo:
    return store.list_runs(sample_engine)[0]


def _order(scored: pd.DataFrame, run: store.RunInfo, bucket: str) -> list[int]:
    return [int(i) for i in review.queue_scope(scored, bucket, seed=run.review_seed).row_idx]


def _key(scored: pd.DataFrame, row_idx: int) -> str:
    return str(scored.loc[scored["row_idx"] == row_idx, "item_key"].iloc[0])


def _judge(engine: Engine, keys: list[str]) -> None:
    """A stored judge label for each item, so a card that is not blind says "Judge suggests"."""
    judge_cache.save(
        engine,
        [
            {"cache_key": f"t-{k}", "item_key": k, "model": "m", "prompt_version": "v0", "label": "CORRECT"}
            for k in keys
        ],
    )


def _audit_queue(run: store.RunInfo) -> AppTest:
    """alice on the review page opened on the audit scope (as the planner's link does)."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"reviewer": "alice", "run": str(run.id), "scope": review.AUDIT})
    ok(at.run())
    at.switch_page(page_path("review"))
    ok(at.run())
    assert at.selectbox(key="q_bucket").value == review.AUDIT
    return at


# --- the setting ----------------------------------------------------------------------------------


def test_blind_audit_is_on_unless_clearly_turned_off() -> None:
    assert identity({}, {}).blind_audit
    assert not identity({}, {"REVIEW_BLIND_AUDIT": "false"}).blind_audit
    assert not identity({"REVIEW_BLIND_AUDIT": False}, {}).blind_audit
    assert not identity({}, {"REVIEW_BLIND_AUDIT": " Off "}).blind_audit
    assert identity({}, {"REVIEW_BLIND_AUDIT": "flase"}).blind_audit  # a typo keeps the audit blind
    assert identity({"REVIEW_BLIND_AUDIT": False}, {"REVIEW_BLIND_AUDIT": "yes"}).blind_audit  # environment first


def test_the_example_secrets_name_the_setting_and_why() -> None:
    example = (Path(__file__).resolve().parent.parent / ".streamlit" / "secrets.toml.example").read_text("utf-8")
    assert "REVIEW_BLIND_AUDIT" in example and "anchor" in example


# --- the decision ---------------------------------------------------------------------------------


def test_blind_rows_hides_the_random_sample_only_with_the_setting(scored: pd.DataFrame, run: store.RunInfo) -> None:
    seed = run.review_seed
    overlap = _order(scored, run, "overlap_only")
    audit = {_key(scored, overlap[0])}
    three = review.BlindSpec("overlap_only", None, 3)
    off = review.blind_rows(scored, [], seed, audit, blind_audit=False, viewing=three)
    assert not off and not off.mask(scored["item_key"]).any()
    on = review.blind_rows(scored, [], seed, audit, blind_audit=True)
    assert {k for k in scored["item_key"] if on.hides(k)} == audit  # wherever the audit row is served
    assert on.why(_key(scored, overlap[0])) == WHY_BLIND_AUDIT and on.why(_key(scored, overlap[1])) is None
    triage = review.blind_rows(scored, [], seed, audit, blind_audit=True, viewing=review.BlindSpec("overlap_only"))
    assert {k for k in scored["item_key"] if triage.hides(k)} == audit  # a bucket without a sample: triage
    sampled = review.blind_rows(scored, [], seed, (), blind_audit=True, viewing=three)
    assert {k for k in scored["item_key"] if sampled.hides(k)} == {_key(scored, r) for r in overlap[:3]}
    # A row also under a double-blind scope says so (that reason is the stronger one).
    both = review.blind_rows(scored, [review.BlindSpec(review.AUDIT)], seed, audit, blind_audit=True)
    assert both.why(_key(scored, overlap[0])) == WHY_DOUBLE_BLIND


# --- the pages ------------------------------------------------------------------------------------


def test_an_audit_row_is_blind_by_default(sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame) -> None:
    """The audit scope is not double-blind, yet its row shows no verdict, highlighting or judge
    label, and the card says in one line why."""
    rows = _order(scored, run, "overlap_only")[:2]
    keys = [_key(scored, r) for r in rows]
    review.set_audit(sample_engine, run.id, keys, "ana")
    _judge(sample_engine, keys)
    at = _audit_queue(run)
    assert shown_row(at) in rows
    assert_blind_card(at)
    assert WHY_BLIND_AUDIT in texts(at)


def test_an_audit_row_shows_the_verdicts_with_the_setting_off(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEW_BLIND_AUDIT", "false")
    rows = _order(scored, run, "overlap_only")[:2]
    keys = [_key(scored, r) for r in rows]
    review.set_audit(sample_engine, run.id, keys, "ana")
    _judge(sample_engine, keys)
    at = _audit_queue(run)
    assert shown_row(at) in rows
    assert_open_card(at)
    assert any(t.startswith("Judge suggests: CORRECT") for t in texts(at)), texts(at)
    assert WHY_BLIND_AUDIT not in texts(at)


def test_a_triage_row_keeps_the_verdicts_and_a_sampled_scope_is_blind(
    sample_engine: Engine, run: store.RunInfo, scored: pd.DataFrame
) -> None:
    """overlap_only without a sample is triage: its first row (not in the audit) shows the metrics
    and the judge; the same scope's reproducible sample of 3 is shown blind."""
    overlap = _order(scored, run, "overlap_only")
    review.set_audit(sample_engine, run.id, [_key(scored, overlap[-1])], "ana")  # an audit elsewhere in the run
    _judge(sample_engine, [_key(scored, r) for r in overlap[:3]])
    at = open_page("review", reviewer="alice", run_id=run.id)
    assert at.selectbox(key="q_bucket").value == "overlap_only"
    assert shown_row(at) == overlap[0]
    assert_open_card(at)
    assert "Judge suggests: CORRECT" in texts(at)
    at.number_input(key="q_sample").set_value(3)
    ok(at.run())
    assert shown_row(at) in overlap[:3]
    assert_blind_card(at)
    assert WHY_BLIND_AUDIT in texts(at)

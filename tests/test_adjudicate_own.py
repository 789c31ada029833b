"""An adjudicator deciding a row they marked themselves (issue 27, defect 6).

By default it is allowed, and the Adjudication card says so in a plain warning; with
``REVIEW_ADJUDICATE_OWN=false`` the card replaces the Decide buttons by one line saying why, and
:func:`scoring.review.record_adjudication` refuses the decision too, so no other caller (a
command, a script) can bypass the setting. The setting is read as every REVIEW_* setting is:
environment first, then ``.streamlit/secrets.toml``.
"""

from __future__ import annotations

import pandas as pd
import pytest
from apptest_support import alerts, click, open_page
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import review, store
from scoring.review import roles as I  # noqa: N812  (as in tests/test_identity.py)

SETTING = I.ADJUDICATE_OWN_SETTING


@pytest.fixture(autouse=True)
def setting_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The setting (and the adjudicators' list) starts unset; the database is ``sample_engine``."""
    monkeypatch.delenv(SETTING, raising=False)
    monkeypatch.delenv("REVIEW_ADJUDICATORS", raising=False)


@pytest.fixture
def conflict(sample_engine: Engine) -> tuple[int, str, int]:
    """(run id, item key, row_idx) of a row where alice said correct and bob wrong."""
    run = store.list_runs(sample_engine)[0]
    scored = store.load_scored(sample_engine, run.id)
    row = scored[scored["bucket"] == "overlap_only"].iloc[0]
    key = str(row["item_key"])
    review.record_mark(sample_engine, key, run.id, "alice", "correct")
    review.record_mark(sample_engine, key, run.id, "bob", "wrong")
    return run.id, key, int(row["row_idx"])


def decision_of(engine: Engine, key: str) -> tuple[str, str] | None:
    decided = review.adjudications(engine, [key])
    if key not in decided.index:
        return None
    return str(decided.loc[key, "adjudicator"]), str(decided.loc[key, "decision"])


def button_keys(at: AppTest) -> set[str]:
    return {str(b.key) for b in at.button}


# --- the setting ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secrets", "environ", "allowed"),
    [
        ({}, {}, True),  # unset: allowed (with a warning on the card)
        ({}, {SETTING: ""}, True),
        ({}, {SETTING: "true"}, True),
        ({}, {SETTING: " Yes "}, True),
        ({}, {SETTING: "1"}, True),
        ({}, {SETTING: "false"}, False),
        ({}, {SETTING: "OFF"}, False),
        ({}, {SETTING: "0"}, False),
        ({}, {SETTING: "flase"}, False),  # a misspelt restriction restricts
        ({SETTING: False}, {}, False),  # a TOML boolean in secrets
        ({SETTING: "no"}, {}, False),
        ({SETTING: False}, {SETTING: "true"}, True),  # the environment first, as every REVIEW_* setting
    ],
)
def test_the_setting_is_read_like_every_review_setting(secrets: dict, environ: dict, allowed: bool) -> None:
    assert I.identity(secrets, environ).adjudicate_own is allowed


# --- the review layer ----------------------------------------------------------------------------


def test_the_review_layer_refuses_a_partys_decision_when_forbidden_and_writes_nothing(
    sample_engine: Engine, conflict: tuple[int, str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, key, _ = conflict
    monkeypatch.setenv(SETTING, "false")
    assert not review.adjudicate_own_allowed()
    with pytest.raises(review.OwnDecisionRefused, match=f"You marked this row yourself \\(correct\\).*{SETTING}"):
        review.record_adjudication(sample_engine, key, run_id, "alice", "correct", "mine")
    with pytest.raises(review.OwnDecisionRefused, match="yourself \\(wrong\\)"):
        review.record_adjudication(sample_engine, key, run_id, " BOB ", "wrong")  # names ignore case and spaces
    assert decision_of(sample_engine, key) is None
    review.record_adjudication(sample_engine, key, run_id, "carol", "wrong", "not a party")  # anyone else decides
    assert decision_of(sample_engine, key) == ("carol", "wrong")


def test_the_review_layer_lets_a_party_decide_by_default(
    sample_engine: Engine, conflict: tuple[int, str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, key, _ = conflict
    assert review.adjudicate_own_allowed()
    assert review.own_verdict(sample_engine, key, "Alice") == "correct"
    assert review.own_verdict(sample_engine, key, "carol") is None
    review.record_adjudication(sample_engine, key, run_id, "alice", "correct")
    assert decision_of(sample_engine, key) == ("alice", "correct")
    monkeypatch.setenv(SETTING, "true")
    review.record_adjudication(sample_engine, key, run_id, "bob", "wrong")
    assert decision_of(sample_engine, key) == ("bob", "wrong")


def test_own_verdict_in_reads_only_the_adjudicators_current_verdict() -> None:
    verdicts = pd.DataFrame({"reviewer": ["alice", "Bob"], "verdict": ["correct", "wrong"]})
    assert review.own_verdict_in(verdicts, "bob") == "wrong"
    assert review.own_verdict_in(verdicts, "carol") is None
    assert review.own_verdict_in(verdicts.iloc[0:0], "alice") is None
    assert review.party_to("alice;Bob", " bob") and not review.party_to("alice;bob", "")


# --- the Adjudication card -----------------------------------------------------------------------


def test_by_default_the_card_warns_a_party_and_still_lets_them_decide(
    sample_engine: Engine, conflict: tuple[int, str, int]
) -> None:
    run_id, key, row_idx = conflict
    at = open_page("adjudication", reviewer="alice", run_id=run_id)
    assert at.selectbox(key="adj_row").value == row_idx
    assert "(you marked it)" in at.selectbox(key="adj_row").format_func(row_idx)
    warnings = [w for w in alerts(at) if w.startswith("You marked this row yourself")]
    assert warnings == [review.own_warning("correct")]
    assert {"adj_correct", "adj_wrong"} <= button_keys(at)
    click(at, "adj_wrong")
    assert decision_of(sample_engine, key) == ("alice", "wrong")
    assert any("decided wrong by alice" in a for a in alerts(at))

    at = open_page("adjudication", reviewer="carol", run_id=run_id)  # not a party: no warning
    at.toggle(key="adj_decided").set_value(True).run()
    assert not any(a.startswith("You marked this row") for a in alerts(at))
    assert "(you marked it)" not in at.selectbox(key="adj_row").format_func(row_idx)


def test_when_forbidden_the_card_replaces_the_decide_buttons_by_one_line(
    sample_engine: Engine, conflict: tuple[int, str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, key, _ = conflict
    monkeypatch.setenv(SETTING, "false")
    at = open_page("adjudication", reviewer="bob", run_id=run_id)
    assert review.own_refusal("wrong") in alerts(at)
    assert not {"adj_correct", "adj_wrong"} & button_keys(at)
    assert not [t for t in at.text_input if str(t.key).startswith("adj_note_")]
    assert not any(a.startswith("You marked this row yourself:") for a in alerts(at))  # one line, not two

    at = open_page("adjudication", reviewer="carol", run_id=run_id)  # another adjudicator decides it
    assert {"adj_correct", "adj_wrong"} <= button_keys(at)
    assert not any("You marked this row" in a for a in alerts(at))
    click(at, "adj_correct")
    assert decision_of(sample_engine, key) == ("carol", "correct")

"""AppTest tests of the review guidelines (issue 27): an adjudicator writes them on the
Adjudication page, reviewers read them above the queue (opened the first time, collapsed after),
as plain text, and nobody else can edit them. Storage and the manifest: ``test_guidelines.py``.
"""

from __future__ import annotations

import json

import pytest
from apptest_support import (
    alerts,
    click,
    download,
    markdown_texts,
    open_page,
    record_media_managers,
)
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import ingest, review
from scoring import verdict_export as export
from scoring.store import guideline_log as stored

MARKUP = (
    "# Heading\n**bold** [link](http://127.0.0.1:9/x) ![img](http://127.0.0.1:9/p.png) <img src=x onerror=alert(1)>"
)


@pytest.fixture(autouse=True)
def ana_adjudicates(monkeypatch: pytest.MonkeyPatch) -> None:
    """ana is the only adjudicator (of the sample run in ``sample_engine``)."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")


def _editor_key(run_id: int) -> str:
    return f"adj_guidelines_{run_id}"


def _queue_guidelines(at: AppTest) -> list:
    """The guidelines expander(s) on the review queue."""
    return [e for e in at.main.expander if e.label.startswith("Review guidelines")]


def _texts_in(block) -> list[str]:
    return [str(t.value) for t in block.text]


def test_an_adjudicator_writes_guidelines_and_they_are_saved_at_once(sample_engine: Engine, run_id: int) -> None:
    at = open_page("adjudication", reviewer="ana", run_id=run_id)
    area = at.text_area(key=_editor_key(run_id))
    assert area.value == ""
    area.input("Count synonyms as correct.\nA wrong year is wrong.")
    click(at, "adj_guidelines_save")
    assert any(a.startswith("Saved: the guidelines") for a in alerts(at))
    now = stored.current(sample_engine, run_id)
    assert now is not None and now.text == "Count synonyms as correct.\nA wrong year is wrong."
    assert now.written_by == "ana"
    at = open_page("adjudication", reviewer="ana", run_id=run_id)  # a new session starts from the stored text
    assert at.text_area(key=_editor_key(run_id)).value == now.text


def test_too_long_guidelines_get_one_clear_line_and_nothing_is_saved(sample_engine: Engine, run_id: int) -> None:
    at = open_page("adjudication", reviewer="ana", run_id=run_id)
    at.text_area(key=_editor_key(run_id)).input("x" * 20_001)
    click(at, "adj_guidelines_save")
    assert any("too long: 20,001 characters, at most 20,000" in a for a in alerts(at))
    assert stored.current(sample_engine, run_id) is None


def test_reuse_copies_the_last_runs_guidelines_into_this_run(sample_engine: Engine, run_id: int) -> None:
    other = ingest.save_run(sample_engine, b"question,answer,Domain,response\nq,a,D,a\n", "older.csv").run.id
    review.save_guidelines(sample_engine, other, "Rules of the older run.", "ana")
    at = open_page("adjudication", reviewer="ana", run_id=run_id)
    click(at, "adj_guidelines_reuse")
    assert any(f"Copied from run #{other}" in a for a in alerts(at))
    assert at.text_area(key=_editor_key(run_id)).value == "Rules of the older run."
    now = stored.current(sample_engine, run_id)
    assert now is not None and now.text == "Rules of the older run."


def test_a_reviewer_who_is_not_an_adjudicator_cannot_edit(sample_engine: Engine, run_id: int) -> None:
    review.save_guidelines(sample_engine, run_id, "Set by ana.", "ana")
    at = open_page("adjudication", reviewer="alice", run_id=run_id)
    assert any("not an adjudicator" in a for a in alerts(at))
    assert not at.text_area and not at.button  # no editor, no Save, no Reuse
    with pytest.raises(review.GuidelinesRefused):
        review.save_guidelines(sample_engine, run_id, "alice's rules", "alice")
    now = stored.current(sample_engine, run_id)
    assert now is not None and now.text == "Set by ana."


def test_a_reviewer_sees_them_opened_first_then_collapsed(sample_engine: Engine, run_id: int) -> None:
    at = open_page("review", reviewer="alice", run_id=run_id)
    assert _queue_guidelines(at) == []  # none written: nothing shown
    review.save_guidelines(sample_engine, run_id, "Be strict about dates.", "ana")
    at = open_page("review", reviewer="alice", run_id=run_id)
    [box] = _queue_guidelines(at)
    assert box.proto.expanded and "Be strict about dates." in _texts_in(box)
    assert any(t.startswith("Written by ana on ") for t in _texts_in(box))
    at.run()  # the same session, the page drawn again: collapsed, still there
    [box] = _queue_guidelines(at)
    assert not box.proto.expanded and "Be strict about dates." in _texts_in(box)
    at = open_page("review", reviewer="Alice", run_id=run_id)  # a refresh or another device: remembered
    [box] = _queue_guidelines(at)
    assert not box.proto.expanded
    at = open_page("review", reviewer="bob", run_id=run_id)  # another reviewer: their own first read
    assert _queue_guidelines(at)[0].proto.expanded
    review.save_guidelines(sample_engine, run_id, "Be strict about dates and names.", "ana")
    at = open_page("review", reviewer="alice", run_id=run_id)  # changed since alice read them: opened again
    [box] = _queue_guidelines(at)
    assert box.proto.expanded and "Be strict about dates and names." in _texts_in(box)


def test_markdown_and_html_in_guidelines_show_literally(sample_engine: Engine, run_id: int) -> None:
    review.save_guidelines(sample_engine, run_id, MARKUP, "ana")
    at = open_page("review", reviewer="alice", run_id=run_id)
    [box] = _queue_guidelines(at)
    assert MARKUP in _texts_in(box)  # st.text: exactly as typed
    assert not any("http://127.0.0.1:9" in t for t in markdown_texts(at))  # never through Markdown
    assert "onerror" not in "".join(str(h.proto.body) for h in at.main.get("html"))  # nor raw HTML
    at = open_page("adjudication", reviewer="ana", run_id=run_id)  # the editor holds it as a value only
    assert at.text_area(key=_editor_key(run_id)).value == MARKUP
    assert not any("http://127.0.0.1:9" in t for t in markdown_texts(at))


def test_the_export_pages_manifest_carries_them(
    sample_engine: Engine, run_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the Export page's buttons serve (read on click, as in the browser): the manifest and
    the Parquet file's own manifest name the guidelines in force."""
    managers = record_media_managers(monkeypatch)
    review.save_guidelines(sample_engine, run_id, MARKUP, "ana")
    at = open_page("export", reviewer="alice", run_id=run_id)
    manifest = json.loads(download(at, managers, "dl_manifest"))
    assert manifest["review_guidelines"]["text"] == MARKUP and manifest["review_guidelines"]["written_by"] == "ana"
    inside = export.parquet_manifest(download(at, managers, "dl_parquet"))
    assert inside is not None and inside["review_guidelines"]["text"] == MARKUP

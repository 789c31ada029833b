"""Review guidelines of a run (issue 27): storage on both engines, who may write them, when a
reviewer is shown them opened, and the export manifest (the library's, the CLI's).

The pages are driven in ``test_app_guidelines.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring import verdict_export as export
from scoring.cli import main
from scoring.store import guideline_log as stored
from scoring.store import make_engine

CSV = b"question,answer,Domain,response\nq1,a,D,a\nq2,b,D,c\n"
MARKUP = "# Rule 1\n**Bold** [link](http://127.0.0.1:9/x) ![img](http://127.0.0.1:9/p.png) <b>html</b>"


def _run(engine: Engine, name: str = "one.csv", data: bytes = CSV) -> int:
    return ingest.save_run(engine, data, name).run.id


def test_versions_are_appended_and_the_latest_is_in_force(engine: Engine) -> None:
    run = _run(engine)
    assert stored.current(engine, run) is None
    first = stored.save(engine, run, "  Be strict.\r\nCount synonyms.  \n", "ana")
    assert first is not None and first.text == "Be strict.\nCount synonyms."  # endings and edges tidied
    second = stored.save(engine, run, MARKUP, "Bea")
    assert second is not None and second.id > first.id
    now = stored.current(engine, run)
    assert now is not None and (now.id, now.text, now.written_by) == (second.id, MARKUP, "Bea")
    assert stored.save(engine, run, "   ", "ana") is None  # an empty text clears them
    assert stored.current(engine, run) is None


def test_the_size_limit_refuses_with_one_clear_line_and_writes_nothing(engine: Engine) -> None:
    run = _run(engine)
    with pytest.raises(ValueError, match=r"too long: 20,001 characters, at most 20,000") as caught:
        stored.save(engine, run, "x" * 20_001, "ana")
    assert "\n" not in str(caught.value)
    assert stored.current(engine, run) is None
    assert stored.save(engine, run, "x" * 20_000, "ana") is not None  # the limit itself is accepted


def test_reads_are_remembered_per_reviewer_and_version_ignoring_case(engine: Engine) -> None:
    run = _run(engine)
    version = stored.save(engine, run, "v1", "ana")
    assert version is not None
    assert not stored.has_read(engine, version.id, "alice")
    assert stored.mark_read(engine, version.id, "alice") is True
    assert stored.mark_read(engine, version.id, " ALICE ") is False  # the same reader, already remembered
    assert stored.has_read(engine, version.id, "Alice") and not stored.has_read(engine, version.id, "bob")
    newer = stored.save(engine, run, "v2", "ana")
    assert newer is not None and not stored.has_read(engine, newer.id, "alice")


def test_the_last_runs_guidelines_are_found_for_reuse(engine: Engine) -> None:
    one, two = _run(engine), _run(engine, "two.csv", CSV + b"q3,c,E,c\n")
    three = _run(engine, "three.csv", CSV + b"q4,d,E,d\n")
    assert stored.latest_elsewhere(engine, three) is None
    stored.save(engine, one, "from one", "ana")
    stored.save(engine, two, "from two", "ana")
    stored.save(engine, one, "one again", "ana")  # written last: the last run's guidelines
    found = stored.latest_elsewhere(engine, three)
    assert found is not None and (found[0].run_id, found[0].text, found[1]) == (one, "one again", "one")
    stored.save(engine, one, "", "ana")  # cleared: the next most recent in force is two's
    found = stored.latest_elsewhere(engine, three)
    assert found is not None and found[0].text == "from two"
    found = stored.latest_elsewhere(engine, two)  # never the run itself
    assert found is None


def test_deleting_a_run_for_good_removes_its_guidelines_and_reads(engine: Engine) -> None:
    run, other = _run(engine), _run(engine, "two.csv", CSV + b"q3,c,E,c\n")
    version = stored.save(engine, run, "gone with the run", "ana")
    assert version is not None and stored.mark_read(engine, version.id, "alice")
    stored.save(engine, other, "kept", "ana")
    store.archive_run(engine, run)
    store.delete_run(engine, run)
    assert stored.current(engine, run) is None and not stored.has_read(engine, version.id, "alice")
    kept = stored.current(engine, other)
    assert kept is not None and kept.text == "kept"
    assert stored.latest_elsewhere(engine, other) is None


# --- who may write, and what the queue shows (SQLite is enough: no storage differs) -------------


@pytest.fixture
def lite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv(store.ENV_VAR, f"sqlite:///{tmp_path / 'review.db'}")
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    yield engine
    engine.dispose()


def test_only_adjudicators_write_guidelines(lite: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(lite)
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "Ana")
    with pytest.raises(review.GuidelinesRefused, match="alice is not an adjudicator here"):
        review.save_guidelines(lite, run, "my own rules", "alice")
    assert stored.current(lite, run) is None
    assert review.save_guidelines(lite, run, "rules", " ana ").startswith("Saved: the guidelines (5 characters)")
    assert review.save_guidelines(lite, run, "rules\n", "ana") == "Nothing to save: the guidelines are unchanged."
    with pytest.raises(ValueError, match="reviewer name is required"):
        review.save_guidelines(lite, run, "x", "")


def test_reuse_copies_the_last_runs_guidelines(lite: Engine) -> None:
    old, new = _run(lite, "old.csv"), _run(lite, "new.csv", CSV + b"q3,c,E,c\n")
    with pytest.raises(ValueError, match="No other run has guidelines"):
        review.reuse_guidelines(lite, new, "ana")
    assert review.reuse_offer(lite, new) is None
    review.save_guidelines(lite, old, "Old rules", "ana")
    offer = review.reuse_offer(lite, new)
    assert offer is not None and f'run #{old} "old"' in offer
    text, line = review.reuse_guidelines(lite, new, "bea")
    assert text == "Old rules" and line.startswith("Saved:") and f"Copied from run #{old}" in line
    now = stored.current(lite, new)
    assert now is not None and (now.text, now.written_by) == ("Old rules", "bea")
    assert review.reuse_offer(lite, new) is None  # the same text here now: nothing to offer


def test_a_reviewer_is_shown_a_version_opened_once(lite: Engine) -> None:
    run = _run(lite)
    assert review.guidelines_to_show(lite, run, "alice") is None
    review.save_guidelines(lite, run, "v1", "ana")
    first = review.guidelines_to_show(lite, run, "alice")
    assert first is not None and first.expanded and first.text == "v1" and first.byline.startswith("Written by ana")
    again = review.guidelines_to_show(lite, run, "Alice")
    assert again is not None and not again.expanded
    other = review.guidelines_to_show(lite, run, "bob")
    assert other is not None and other.expanded
    anonymous = [review.guidelines_to_show(lite, run, None) for _ in range(2)]
    assert all(s is not None and s.expanded for s in anonymous)  # nothing to remember without a name
    review.save_guidelines(lite, run, "v2", "ana")
    changed = review.guidelines_to_show(lite, run, "alice")
    assert changed is not None and changed.expanded and changed.text == "v2"


# --- the manifest: the library (which the Export page calls) and the CLI ------------------------


def test_the_manifest_carries_the_guidelines(lite: Engine) -> None:
    run = _run(lite)
    frame = export.build_export(lite, run)
    assert export.manifest(lite, run, frame)["review_guidelines"] is None
    review.save_guidelines(lite, run, MARKUP, "ana")
    entry = export.manifest(lite, run, frame)["review_guidelines"]
    assert entry["text"] == MARKUP and entry["written_by"] == "ana" and entry["written_at"].endswith("Z")
    _, info = export.parquet_export(lite, run, export.export_table(lite, run))
    assert info["review_guidelines"] == entry


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_the_cli_export_manifest_carries_the_guidelines(lite: Engine, tmp_path: Path, fmt: str) -> None:
    run = _run(lite)
    review.save_guidelines(lite, run, "Count synonyms as correct.", "ana")
    out = tmp_path / f"out.{fmt}"
    url = str(lite.url)
    assert main(["export", "--run", str(run), "--out", str(out), "--format", fmt, "--db", url]) == 0
    info = json.loads(Path(f"{out}.manifest.json").read_text(encoding="utf-8"))
    assert info["review_guidelines"]["text"] == "Count synonyms as correct."
    if fmt == "parquet":
        assert export.parquet_manifest(out.read_bytes())["review_guidelines"]["written_by"] == "ana"

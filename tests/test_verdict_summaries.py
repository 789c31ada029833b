"""The whole-run summaries from a run's verdict table (:meth:`VerdictTable.summaries`) are the
summary functions on :attr:`VerdictTable.final`, figure for figure, though they read a leaner frame
(:attr:`VerdictTable.summary_frame`: verdicts as categoricals of the rule's outcomes).

A real run on SQLite and PostgreSQL with every kind of row the rule knows: agreed marks of either
verdict, a conflict, a conflict settled by an adjudicator, a decision on a row nobody marked, judge
labels of every kind on some rows and none on others, blank responses, and the judge settling rows
or not.
"""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.core.judge_accuracy import judge_accuracy, judge_comparisons
from scoring.core.judge_labels import CORRECT, ERROR, INCORRECT, NOT_ATTEMPTED, UNPARSED
from scoring.review.verdict_table import SUMMARY_ROW_COLUMNS, SUMMARY_VERDICTS, build
from scoring.store import judge_cache

ROWS = 40
LABELS = [CORRECT, INCORRECT, NOT_ATTEMPTED, UNPARSED, ERROR, "", "correct ", "maybe"]


def _csv() -> bytes:
    lines = ["question,answer,Domain,response"]
    for i in range(ROWS):
        response = ["the a{i} word", "word a{i}", "nothing", "", "xa{i} wordy"][i % 5].format(i=i)
        domain = ["D1", "D2", "<b>D3</b>", "combined"][i % 4]
        lines.append(f"q{i},a{i} word,{domain},{response}")
    return ("\n".join(lines) + "\n").encode()


def _expected(final: pd.DataFrame) -> dict:
    """The summaries as the pages built them before: each function on the per-row frame."""
    return {
        "adjudicated": review.adjudicated_accuracy(final),
        "judge": judge_accuracy(final) if "judge_label" in final.columns else None,
        "precision": review.metric_precision(final),
        "human_vs_metric": {col: review.human_vs_metric(final, col) for col in ("exact_correct", "overlap_correct")},
        "judge_comparisons": judge_comparisons(final),
    }


def _marked_run(engine: Engine, judged: bool) -> int:
    run_id = ingest.save_run(engine, _csv(), "summaries.csv").run.id
    keys = store.load_scored(engine, run_id)["item_key"].tolist()
    for i, key in enumerate(keys[:12]):  # agreed marks of either verdict
        verdict = "correct" if i % 3 else "wrong"
        review.record_mark(engine, key, run_id, "ana", verdict, reason="paraphrase" if i % 2 else "", note="n")
        if i % 4 == 0:
            review.record_mark(engine, key, run_id, "ben", verdict)
    for key in keys[12:16]:  # conflicts, two of them settled
        review.record_mark(engine, key, run_id, "ana", "correct")
        review.record_mark(engine, key, run_id, "ben", "wrong")
    review.record_adjudication(engine, keys[12], run_id, "cy", "correct")
    review.record_adjudication(engine, keys[13], run_id, "cy", "wrong")
    review.record_adjudication(engine, keys[20], run_id, "cy", "wrong")  # a row nobody marked
    if judged:
        rows = [
            {
                "cache_key": key,
                "item_key": key,
                "model": "judge-a",
                "prompt_version": "v1",
                "label": LABELS[i % len(LABELS)],
            }
            for i, key in enumerate(keys)
            if i % 7 != 3  # some rows never judged
        ]
        judge_cache.save(engine, rows)
    return run_id


def _same(found: dict, expected: dict) -> None:
    assert found.keys() == expected.keys()
    for name in expected:
        assert found[name] == expected[name], name


@pytest.mark.parametrize("judged", [False, True], ids=["no judge", "judged"])
@pytest.mark.parametrize("settles", [False, True], ids=["judge advises", "judge settles"])
def test_the_summaries_are_the_summary_functions_on_final(engine: Engine, judged: bool, settles: bool) -> None:
    run_id = _marked_run(engine, judged)
    table = review.verdict_table(engine, run_id, settles)
    expected = _expected(table.final)
    assert expected["adjudicated"][-1].pending > 0 and expected["adjudicated"][-1].correct > 0
    assert (expected["judge"] is not None) == judged
    assert expected["precision"]["overlap_correct"][1] > 0  # reviewed passes: not an empty comparison
    _same(table.summaries(), expected)
    frame = table.summary_frame
    assert len(frame) == len(table.final) == ROWS
    for col in SUMMARY_VERDICTS:
        if col in table.final.columns:  # the same value on every row, only coded
            assert frame[col].astype(object).where(frame[col].notna(), None).tolist() == table.final[col].tolist()


def test_a_table_built_from_the_stored_rows_or_the_pages_frame_sums_alike(engine: Engine) -> None:
    run_id = _marked_run(engine, judged=True)
    rows = store.load_table(engine, run_id)
    from_rows = build(engine, run_id, rows=rows)
    from_pandas = build(engine, run_id, scored=rows.to_pandas())
    assert from_rows.scored is None and from_pandas.loaded is None
    _same(from_rows.summaries(), _expected(from_pandas.final))
    _same(from_pandas.summaries(), _expected(from_rows.final))


def test_a_run_nobody_reviewed_sums_its_automatic_verdicts(engine: Engine) -> None:
    run_id = ingest.save_run(engine, _csv(), "fresh.csv").run.id
    table = review.verdict_table(engine, run_id)
    found = table.summaries()
    _same(found, _expected(table.final))
    rows = pl.from_pandas(store.load_scored(engine, run_id))
    pending = rows.filter(pl.col("bucket") == "overlap_only").height  # the rule leaves these to people
    assert pending and found["adjudicated"][-1].pending == pending
    assert found["judge"] is None and found["judge_comparisons"] == []


def test_a_table_built_from_the_summaries_columns_alone_sums_alike_and_takes_the_rows_later(engine: Engine) -> None:
    """The Overview sums a run just saved from a few of its polars columns; the same build, asked
    again with the pages' rows, carries them (no read), and its rows are the stored ones."""
    run_id = _marked_run(engine, judged=True)
    rows = store.load_table(engine, run_id)
    narrow = rows.select("item_key", "bucket", *SUMMARY_ROW_COLUMNS)
    revs = (101, 202)  # a key of its own: no earlier build is reused
    table = review.verdict_table(engine, run_id, revs=revs, summary_rows=narrow)
    assert table.scored is None and table.loaded is None
    _same(table.summaries(), _expected(build(engine, run_id, rows=rows).final))
    scored = rows.to_pandas()
    again = review.verdict_table(engine, run_id, scored=scored, revs=revs)
    assert again.scored is scored and again.pick is table.pick  # the same build, now with the rows
    assert review.verdict_table(engine, run_id, revs=revs) is again
    _same(again.summaries(), table.summaries())
    assert table.rows.equals(rows)  # read from the database when asked

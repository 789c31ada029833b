"""The pages' copy of a run's rows, converted one column at a time (:func:`ui.state.as_pandas`),
is exactly :func:`scoring.store.load_scored`'s frame."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest
from test_verdicts import ROWS, csv_bytes

from scoring import ingest, store
from ui import state, verdicts


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_column_by_column_equals_the_whole_conversion(engine) -> None:
    header = ("question", "answer", "Domain", "response", "bucket", "note")  # extras, one named like a stored column
    rows = [(*row, f"b{i}", "" if i % 3 else "x") for i, row in enumerate(ROWS)]
    run = ingest.save_run(engine, csv_bytes(rows, header), "extras.csv").run
    table = store.load_table(engine, run.id)
    width = table.width
    converted = state.as_pandas(table)
    pd.testing.assert_frame_equal(converted, store.load_scored(engine, run.id), check_exact=True)
    assert converted.shape == (len(ROWS), width) and table.width == 0  # the polars columns were let go


def test_an_empty_frame_converts_as_a_whole() -> None:
    empty = pl.DataFrame(schema={"item_key": pl.String, "row_idx": pl.Int64})
    pd.testing.assert_frame_equal(state.as_pandas(empty.clone()), empty.to_pandas(), check_exact=True)
    assert state.as_pandas(pl.DataFrame()).shape == (0, 0)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_run_just_saved_reaches_its_first_reader_without_a_read(engine, db_url, monkeypatch) -> None:
    """The Upload page hands the saved rows over; the Overview's first read takes them (the same
    frame a read from the database gives), once, and a later save replaces an untaken one."""
    monkeypatch.setenv(store.ENV_VAR, db_url)
    state.run_cache().clear()
    first = ingest.save_run(engine, csv_bytes(ROWS), "first.csv")
    second = ingest.save_run(engine, csv_bytes(ROWS[:3]), "second.csv")
    expected = store.load_scored(engine, second.run.id)
    state.hand_over_saved(first.run.id, first.rows)
    state.hand_over_saved(second.run.id, second.rows)  # the first was never taken: let go

    def no_read(*_args: object) -> None:
        raise AssertionError("read back from the database")

    monkeypatch.setattr(store, "load_table", no_read)
    pd.testing.assert_frame_equal(state.scored(second.run.id), expected, check_exact=True)
    with pytest.raises(AssertionError, match="read back"):
        state.scored(first.run.id)
    monkeypatch.undo()
    state.run_cache().clear()
    monkeypatch.setenv(store.ENV_VAR, db_url)
    pd.testing.assert_frame_equal(state.scored(second.run.id), expected, check_exact=True)  # read: none held


def _two_languages() -> bytes:
    lines = ["question,answer,Domain,language,response"]
    for i in range(30):
        response = ["the a{i} word", "word a{i}", "nothing", ""][i % 4].format(i=i)
        lines.append(f"q{i},a{i} word,{['D1', 'D2', '<i>D3</i>'][i % 3]},{['Hindi', 'English'][i % 2]},{response}")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_run_just_saved_is_summed_from_its_rows_as_from_its_pandas_copy(engine, db_url, monkeypatch) -> None:
    """The Overview's figures of a run just saved (the metrics, the adjudicated series) come from
    its polars rows, without taking them (the first pandas reader still does), and equal the
    figures of the pandas copy."""
    monkeypatch.setenv(store.ENV_VAR, db_url)
    state.run_cache().clear()
    saved = ingest.save_run(engine, _two_languages(), "two.csv")
    run_id = saved.run.id
    state.hand_over_saved(run_id, saved.rows)
    assert state.just_saved(run_id)

    def no_pandas(*_args: object) -> None:
        raise AssertionError("converted to pandas")

    state._summary.clear()
    verdicts._verdict_summary.clear()
    with monkeypatch.context() as patch:
        patch.setattr(state, "as_pandas", no_pandas)
        from_rows = state.summary(run_id)
        decided = verdicts.verdict_summary(run_id)  # the adjudicated series too
    assert state.just_saved(run_id)  # not taken: the first pandas reader takes them
    assert from_rows["languages"] == ["English", "Hindi"] and "accuracy_by_language" in from_rows
    assert from_rows["domains"] == ["<i>D3</i>", "D1", "D2"]
    state.scored(run_id)  # taken now
    assert not state.just_saved(run_id)
    state._summary.clear()
    verdicts._verdict_summary.clear()
    assert state.summary(run_id) == from_rows  # from the pandas frame
    assert verdicts.verdict_summary(run_id) == decided
    assert decided["adjudicated"][-1].n == 30 and decided["adjudicated"][-1].pending > 0

"""The pages' copy of a run's rows, converted one column at a time (:func:`ui.state.as_pandas`),
is exactly :func:`scoring.store.load_scored`'s frame."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest
from test_verdicts import ROWS, csv_bytes

from scoring import ingest, store
from ui import state


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

"""Issue 37: the verdict export carries the run's model and the row number the pages show ("Row 3
of the run", ``?row=3``), in CSV, JSON lines and Parquet alike, so a reviewer's verdict in a file
names the model and the row a colleague can open; uploading the export restores as before (the two
columns are the export's own, never stored as input), and an export made before them still
restores. Real SQLite databases."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from scoring import ingest, store
from scoring import review as V
from scoring import verdict_export as E
from scoring.store import make_engine

BODY = (
    b"question,answer,Domain,response,model\n"  # an input column named model: kept, as model_input
    b"q1,Delhi,Geo,Delhi it is,typed-by-hand\n"
    b"q2,Agra,Geo,Mumbai,typed-by-hand\n"
    b"q3,Patna,Geo,Patna city,typed-by-hand\n"
)


@pytest.fixture
def exported_run(tmp_path: Path) -> tuple:
    engine = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
    run = ingest.save_run(engine, BODY, "answers.csv", model="gemma-2b", language="English").run
    keys = store.load_table(engine, run.id)["item_key"].to_list()
    V.record_mark(engine, keys[1], run.id, "asha", "wrong", "different claim")
    return engine, run


def test_every_format_names_the_model_and_the_pages_row_number(exported_run: tuple) -> None:
    engine, run = exported_run
    csv_file = E.export_file(engine, run.id, "csv")
    table = pl.read_csv(io.BytesIO(csv_file.data), infer_schema_length=0)
    assert table.columns[:2] == ["row", "model"] and "model_input" in table.columns
    assert table["row"].to_list() == ["1", "2", "3"] and table["model"].to_list() == ["gemma-2b"] * 3
    assert table.filter(pl.col("row") == "2")["human_verdict"].item() == "wrong"  # row 2 as the pages number it
    assert {"row", "model"} <= set(csv_file.manifest["columns"])
    records = [json.loads(line) for line in E.export_file(engine, run.id, "jsonl").data.decode().splitlines()]
    assert [(r["row"], r["model"]) for r in records] == [(1, "gemma-2b"), (2, "gemma-2b"), (3, "gemma-2b")]
    parquet = pd.read_parquet(io.BytesIO(E.export_file(engine, run.id, "parquet").data))
    assert parquet["row"].astype(int).tolist() == [1, 2, 3] and set(parquet["model"]) == {"gemma-2b"}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_the_export_restores_with_its_model_and_stores_neither_column(exported_run: tuple, tmp_path, fmt) -> None:
    engine, run = exported_run
    data = E.export_file(engine, run.id, fmt).data
    fresh = make_engine(f"sqlite:///{tmp_path / 'b.db'}")
    result = ingest.save_run(fresh, data, f"gemma_export.{fmt}")
    assert result.restored == 1 and result.run.model == "gemma-2b"
    assert result.run.extra_columns == ["model_input"]  # row and model are the export's, not input


def test_an_export_made_before_the_two_columns_still_restores(exported_run: tuple, tmp_path) -> None:
    engine, run = exported_run
    old = E.build_export(engine, run.id).drop(columns=["row", "model"]).rename(columns={"model_input": "model"})
    fresh = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    result = ingest.save_run(fresh, E.to_csv_bytes(old), "old_export.csv")
    assert result.restored == 1 and store.load_table(fresh, result.run.id)["response"].to_list()[1] == "Mumbai"
    assert result.run.model == "typed-by-hand"  # the file's model column names the model, as any file's does

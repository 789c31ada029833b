"""Slice-at-a-time work (scoring.core.slices): the same result as one call, in order, whatever
the threads finish first."""

from __future__ import annotations

import random
import time

import polars as pl

from scoring.core import slices
from scoring.core.items import item_key, item_keys
from scoring.core.slices import by_slices


def test_slices_come_back_in_row_order_even_when_a_later_slice_finishes_first() -> None:
    rows = pl.Series("n", range(1_003))

    def slow_first(part: pl.Series) -> pl.Series:
        if part[0] == 0:
            time.sleep(0.2)  # the first slice finishes last
        return part * 2

    assert by_slices(rows, slow_first, size=100).to_list() == [2 * n for n in range(1_003)]


def test_an_empty_input_is_one_empty_slice_of_the_works_type() -> None:
    out = by_slices(pl.DataFrame({"a": []}, schema={"a": pl.String}), lambda part: part["a"].str.len_chars())
    assert out.dtype == pl.UInt32 and out.is_empty()


def test_one_worker_and_many_give_the_same_item_keys(monkeypatch) -> None:
    rng = random.Random(5)
    texts = ["", "a", 'q"uote', "back\\slash", "tab\there", "नमस्ते", "தமிழ்", "\x00", "é"]
    table = pl.DataFrame(
        {col: [rng.choice(texts) + str(i) for i in range(2_500)] for col in ("question", "answer", "response")}
    )
    monkeypatch.setattr(slices, "SLICE_ROWS", 1_000)
    threaded = by_slices(table, lambda part: item_keys(part), size=300)
    monkeypatch.setattr(slices, "SLICE_WORKERS", 1)
    single = by_slices(table, lambda part: item_keys(part), size=300)
    assert threaded.equals(single)
    assert threaded.to_list() == [item_key(*row) for row in table.iter_rows()]

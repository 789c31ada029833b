"""What the reviewers' reasons say: counts per domain and language, and the "golden answer
wrong" report for the dataset's maintainers.

Inputs are reviewers' current verdicts (:func:`scoring.review.current_verdicts`: one row per item
and reviewer, with ``reason`` and ``note``) and the runs' tables as :class:`RunRows` (a run's
language comes from its metadata, :class:`scoring.store.RunInfo`). A row's item key is its
(question, answer, response): the same row in two runs is one item, counted once per language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd
import polars as pl

from scoring.core.export_format import table_csv_bytes, to_jsonl_bytes
from scoring.core.verdict_rules import REASONS

GOLDEN_WRONG = "golden answer wrong"
UNKNOWN_LANGUAGE = "unknown"
REASON_COLUMNS = ("language", "Domain", "reason", "verdict", "count")
REPORT_COLUMNS = (
    "question",
    "answer",
    "Domain",
    "flags",
    "flagged_by",
    "notes",
    "run_id",
    "run",
    "language",
    "response",
    "final_verdict",
)


@dataclass(frozen=True)
class RunRows:
    """One run for the analytics: ``rows`` needs item_key, question, answer, Domain, response;
    a ``final_verdict`` column, when present, goes into the golden-answer report."""

    run_id: int
    name: str
    language: str
    rows: pl.DataFrame | pd.DataFrame


def _polars(frame: pl.DataFrame | pd.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    present = [c for c in columns if c in frame.columns]
    table = (
        frame.select(present)
        if isinstance(frame, pl.DataFrame)
        else pl.from_pandas(frame[present].reset_index(drop=True))
    )
    return table.with_columns(pl.col(c).cast(pl.String) for c in present if c != "run_id")


def _rows(runs: Sequence[RunRows], columns: Sequence[str]) -> pl.DataFrame:
    """Every run's rows stacked, with run_id, run (name) and language."""
    parts = [
        _polars(r.rows, columns).with_columns(
            run_id=pl.lit(r.run_id, dtype=pl.Int64),
            run=pl.lit(r.name),
            language=pl.lit(r.language.strip() or UNKNOWN_LANGUAGE),
        )
        for r in runs
    ]
    if not parts:
        schema = {**{c: pl.String for c in columns}, "run_id": pl.Int64, "run": pl.String, "language": pl.String}
        return pl.DataFrame(schema=schema)
    return pl.concat(parts, how="diagonal_relaxed")


def _marks(verdicts: pd.DataFrame | pl.DataFrame) -> pl.DataFrame:
    table = _polars(verdicts, ["item_key", "reviewer", "verdict", "reason", "note"])
    table = table.with_columns(pl.col("reason", "note").fill_null("")).filter(pl.col("reason") != "")
    return table.unique(["item_key", "reviewer"], keep="last", maintain_order=True)  # several runs' verdicts


def reason_counts(verdicts: pd.DataFrame | pl.DataFrame, runs: Sequence[RunRows]) -> pl.DataFrame:
    """How many reviewers' verdicts gave each reason, per language, domain and verdict (tidy:
    :data:`REASON_COLUMNS`; reasons in the order of :data:`scoring.review.REASONS`). Verdicts
    without a reason are not counted; each reviewer's verdict on an item counts once."""
    marks = _marks(verdicts)
    items = _rows(runs, ["item_key", "Domain"]).filter(pl.col("item_key").is_in(marks["item_key"].implode()))
    counted = (
        marks.join(items.select("item_key", "Domain", "language").unique(), on="item_key", how="inner")
        .group_by("language", "Domain", "reason", "verdict")
        .agg(count=pl.len().cast(pl.Int64))
    )
    order = pl.DataFrame({"reason": list(REASONS), "_o": list(range(len(REASONS)))})
    return (
        counted.join(order, on="reason", how="left")
        .sort("_o", "language", "Domain", "verdict", nulls_last=True)
        .select(*REASON_COLUMNS)
    )


def golden_wrong_report(verdicts: pd.DataFrame | pl.DataFrame, runs: Sequence[RunRows]) -> pl.DataFrame:
    """Every question reviewers marked "golden answer wrong", with the golden answer, who flagged
    it and their notes, and the response of every given run holding the same (question, answer):
    one row per (question, answer, run), :data:`REPORT_COLUMNS`, sorted by question and run id."""
    flagged = _marks(verdicts).filter(pl.col("reason") == GOLDEN_WRONG)
    if flagged.is_empty():  # an empty report: no run's text is converted for it (a million rows' on an Overview)
        runs = [replace(r, rows=r.rows[:0]) for r in runs]
    rows = _rows(runs, ["item_key", "question", "answer", "Domain", "response", "final_verdict"])
    if "final_verdict" not in rows.columns:
        rows = rows.with_columns(final_verdict=pl.lit(None, dtype=pl.String))
    marked = rows.filter(pl.col("item_key").is_in(flagged["item_key"].implode()))
    where = flagged.join(marked.select("item_key", "question", "answer", "Domain").unique("item_key"), on="item_key")
    # Only the flagged questions' rows in every run (a million rows' text is not made unique for a few).
    rows = rows.join(marked.select("question", "answer").unique(), on=["question", "answer"], how="semi")
    note = pl.when(pl.col("note") != "").then(pl.col("reviewer") + ": " + pl.col("note"))
    per_question = (
        where.sort("reviewer")
        .group_by("question", "answer")
        .agg(
            pl.col("Domain").first(),
            flags=pl.len().cast(pl.Int64),
            flagged_by=pl.col("reviewer").unique(maintain_order=True).str.join(";"),
            notes=note.drop_nulls().unique(maintain_order=True).str.join("\n"),
        )
    )
    responses = rows.select("question", "answer", "run_id", "run", "language", "response", "final_verdict").unique(
        ["question", "answer", "run_id", "response"], maintain_order=True
    )
    return (
        per_question.join(responses, on=["question", "answer"], how="left")
        .sort("question", "answer", "run_id")
        .select(*REPORT_COLUMNS)
    )


def golden_wrong_csv(report: pl.DataFrame, bom: bool = False) -> bytes:
    """The report as the export's CSV (UTF-8, formula-like cells neutralised)."""
    return table_csv_bytes(report, bom=bom)


def golden_wrong_jsonl(report: pl.DataFrame) -> bytes:
    """One JSON object per flagged question, its runs' responses nested in ``responses``."""
    grouped = report.group_by("question", "answer", maintain_order=True).agg(
        pl.col("Domain", "flags", "flagged_by", "notes").first(),
        responses=pl.struct("run_id", "run", "language", "response", "final_verdict"),
    )
    frame = pd.DataFrame({c: grouped[c].to_list() for c in grouped.columns})
    return to_jsonl_bytes(frame)

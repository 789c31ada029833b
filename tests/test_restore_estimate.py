"""An export restored into another database gives the same estimate, interval and plan.

The estimate counts, per stratum, the rows of the run's seeded review order up to the last one
the queue served (:mod:`scoring.estimate.sample`). An export says which marks the queue served
(``via``) and now also carries the run's review seed (:mod:`scoring.core.export_order`), so a run
restored from it has the same order and the same random sample. Before, the restored run's order
was seeded from the export file's own bytes: the same marks became a scattered subset of another
order, and the estimate counted most of the run as missing (+-1.77 points became +-42.5).

Here a run is reviewed in SQLite as a team would (the queue's order, a skip, a conflict, a row
opened by hand, then the planner's next rows), exported, restored into an empty PostgreSQL
database, exported from there and restored into a fresh SQLite file: every copy's whole estimate
(random sample, comparison, estimate, metrics, plan) equals the source's, in CSV, JSON lines and
Parquet. An older export without the seed restores its verdicts as reviewed by hand and says so
in one line.
"""

from __future__ import annotations

import csv
import hashlib
import io
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pg_server
import polars as pl
import pytest
from apptest_support import alerts, ok, open_page
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.core.errors import InputError
from scoring.core.export_format import table_csv_bytes, to_jsonl_bytes
from scoring.core.export_order import SEED_COLUMN, SKIPS_COLUMN, unordered_note
from scoring.core.export_parquet import table_parquet_bytes
from scoring.core.order import seed_from_sha
from scoring.estimate import next_rows
from scoring.estimate.stored_run import stored_estimate
from scoring.store import make_engine
from scoring.verdict_export import build_export, export_table, manifest, parquet_export

DOMAINS = ("Art", "History", "Science")
N_ROWS = 1_500
FORMATS = ("csv", "jsonl", "parquet")
NAME = "model_hindi"


def responses_csv(n: int = N_ROWS) -> bytes:
    """``n`` rows in three domains and all four buckets, with an extra input column."""
    rows = []
    for i in range(n):
        kind, domain = i % 7, DOMAINS[i % 3]
        golden = f"ama{i}" if kind == 5 else f"a{i} b{i}"
        response = {
            0: f"x a{i} b{i} y",
            1: f"a{i} b{i}",
            2: f"say a{i} b{i}",
            3: f"b{i} and a{i}",
            4: f"b{i}, a{i}",
            5: f"xama{i}y",
            6: f"nothing {i}",
        }[kind]
        rows.append((f"question {i}", golden, domain, response, f"set {i % 5}"))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([("question", "answer", "Domain", "response", "source"), *rows])
    return buf.getvalue().encode("utf-8")


def truth(key: str) -> str:
    """A reviewer's verdict on an item, fixed by its key (three in four correct)."""
    return "correct" if int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 4 else "wrong"


def review_as_a_team(engine: Engine, run: store.RunInfo) -> None:
    """alice: the whole run's queue (skipping its first row); bob: the overlap_only queue, one
    verdict against alice's (a conflict); carol: a row opened by hand; dave: the planner's next
    rows; alice again: a skip, a mark and a mark undone."""
    scored = store.load_scored(engine, run.id)
    keys = scored["item_key"].tolist()
    everything = review.queue_scope(scored, None, None, seed=run.review_seed)
    review.record_skip(engine, keys[everything.row_idx[0]], run.id, "alice")
    for row in everything.row_idx[1:110]:
        review.record_mark(engine, keys[row], run.id, "alice", truth(keys[row]))
    alice = {keys[row] for row in everything.row_idx[1:110]}
    overlap = review.queue_scope(scored, "overlap_only", None, seed=run.review_seed)
    disagreed = False
    for row in overlap.row_idx[:30]:
        verdict = truth(keys[row])
        if keys[row] in alice and not disagreed:
            verdict, disagreed = ("wrong" if verdict == "correct" else "correct"), True
        review.record_mark(engine, keys[row], run.id, "bob", verdict, "paraphrase", "checked twice")
    assert disagreed
    far = int(everything.row_idx[-1])
    review.record_mark(engine, keys[far], run.id, "carol", "wrong", note="opened from Compare", via=review.OPENED)
    _, figures = stored_estimate(engine, run.id)
    planned = next_rows(figures.sample, figures.plan, run.review_seed)
    for row in planned["row_idx"].to_list()[:80]:
        review.record_mark(engine, keys[row], run.id, "dave", truth(keys[row]))
    # alice comes back to her queue: she agrees with dave where he was first, skips the first row
    # nobody has reviewed, marks the next and takes it back (the queue served both rows left
    # without a verdict: part of the sample, as missing data).
    left = ["skip", "mark", "undo"]
    while left:
        row = review.next_in_queue(everything, engine, "alice")
        if keys[row] in set(review.current_verdicts(engine, [keys[row]])["item_key"]):
            review.record_mark(engine, keys[row], run.id, "alice", truth(keys[row]))
        elif left.pop(0) == "skip":
            review.record_skip(engine, keys[row], run.id, "alice")
        else:
            review.record_mark(engine, keys[row], run.id, "alice", truth(keys[row]))
            assert review.undo_last_mark(engine, "alice", run.id) is not None
            left.pop(0)


def export_bytes(engine: Engine, run_id: int, fmt: str) -> tuple[bytes, str]:
    """The run's export as the CLI and the Export page write it, and its file name."""
    if fmt == "csv":
        return table_csv_bytes(export_table(engine, run_id)), f"{NAME}.csv"
    if fmt == "jsonl":
        return to_jsonl_bytes(build_export(engine, run_id)), f"{NAME}.jsonl"
    data, _ = parquet_export(engine, run_id, export_table(engine, run_id))
    return data, f"{NAME}.parquet"


def estimate_of(engine: Engine, run_id: int) -> dict:
    """Everything ``python -m scoring estimate --json`` reports of the run's estimate (its
    ``as_dict``: random sample, comparison, estimate, metrics, plan) and the run's review order."""
    run, figures = stored_estimate(engine, run_id)
    order = review.queue_scope(store.load_scored(engine, run_id), None, None, seed=run.info.review_seed)
    return {
        "figures": figures.as_dict(),
        "seed": run.info.review_seed,
        "order": order.item_keys.tolist(),
        "served": sorted(review.served_keys(engine, run_id)),
    }


def headline(found: dict) -> str:
    combined = found["figures"]["estimate"]["combined"]
    sample, plan = found["figures"]["random_sample"], found["figures"]["plan"]
    if combined["estimate"] is None:  # no interval, no figure (issue 36): what to review instead
        figure = f"no estimate ({combined['what_to_review']})"
    else:
        half = (combined["ci_high"] - combined["ci_low"]) / 2 * 100
        figure = (
            f"estimate {combined['estimate']:.4f} [{combined['ci_low']:.4f}, {combined['ci_high']:.4f}] "
            f"+-{half:.2f} points"
        )
    return (
        f"{figure}; in estimate {sample['in_estimate']}, missing {sample['missing']}, by hand {sample['by_hand']}; "
        f"plan {plan.get('planned')} rows planned, {plan.get('remaining')} to go"
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, int, dict]]:
    """The reviewed run in SQLite: (engine, run id, its estimate)."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('source') / 'review.db'}")
    run = ingest.save_run(engine, responses_csv(), f"{NAME}.csv").run
    review_as_a_team(engine, run)
    found = estimate_of(engine, run.id)
    sample = found["figures"]["random_sample"]
    assert sample["missing"] >= 3 and sample["by_hand"] == 1 and sample["in_estimate"] > 150  # the rule at work
    assert sorted(review.served_unmarked(engine, run.id).values()) == [["alice"], ["alice"]]
    print(f"\nsource (SQLite): {headline(found)}")
    yield engine, run.id, found
    engine.dispose()


@pytest.fixture
def postgres_engine(postgres: pg_server.PgServer) -> Iterator[Engine]:
    """An empty PostgreSQL database."""
    name, url = postgres.database()
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
        postgres.drop(name)


def restore(engine: Engine, data: bytes, filename: str) -> ingest.SaveResult:
    result = ingest.save_run(engine, data, filename)
    assert result.created and result.unordered == 0
    return result


def plan_rows(found: dict) -> list[tuple]:
    """The plan's rows per stratum: (bucket, domain, planned, remaining)."""
    strata = found["figures"]["plan"]["strata"]
    return [(s.get("bucket"), s.get("Domain"), s.get("planned"), s.get("remaining")) for s in strata]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_restored_elsewhere_and_back_gives_the_same_estimate(
    fmt: str, source: tuple[Engine, int, dict], postgres_engine: Engine, tmp_path: Path
) -> None:
    engine, run_id, expected = source
    marks = len(review.current_verdicts(engine))
    data, filename = export_bytes(engine, run_id, fmt)
    first = restore(postgres_engine, data, filename)
    assert (first.restored, first.skips) == (marks, 2)
    assert first.run.review_seed == expected["seed"] != seed_from_sha(store.sha256_bytes(data))
    in_postgres = estimate_of(postgres_engine, first.run.id)
    print(f"{fmt} -> PostgreSQL: {headline(in_postgres)}")
    assert in_postgres == expected

    again, again_name = export_bytes(postgres_engine, first.run.id, fmt)
    back = make_engine(f"sqlite:///{tmp_path / 'back.db'}")
    try:
        second = restore(back, again, again_name)
        assert second.restored == marks
        in_sqlite = estimate_of(back, second.run.id)
        print(f"{fmt} -> PostgreSQL -> {fmt} -> SQLite: {headline(in_sqlite)}")
        assert in_sqlite == expected
        assert plan_rows(in_sqlite) == plan_rows(expected)  # in the whole dict too: said here for the reader
    finally:
        back.dispose()


def test_restoring_into_the_database_it_came_from_adds_nothing(
    source: tuple[Engine, int, dict], tmp_path: Path
) -> None:
    engine, run_id, expected = source
    data, filename = export_bytes(engine, run_id, "csv")
    copy = tmp_path / "copy.db"
    with closing(sqlite3.connect(str(engine.url.database))) as src, closing(sqlite3.connect(copy)) as dst:
        src.backup(dst)  # the write-ahead log included
    same = make_engine(f"sqlite:///{copy}")
    try:
        before = review.revision(same)
        result = ingest.save_run(same, data, filename)
        assert (result.restored, result.skips, review.revision(same)) == (0, 0, before)
        assert estimate_of(same, run_id) == expected
    finally:
        same.dispose()


def test_every_export_format_and_the_manifest_carry_the_review_order(source: tuple[Engine, int, dict]) -> None:
    engine, run_id, expected = source
    seed = expected["seed"]
    table = export_table(engine, run_id)
    assert table[SEED_COLUMN].unique().to_list() == [str(seed)]
    assert build_export(engine, run_id)[SEED_COLUMN].unique().tolist() == [seed]
    data, info = parquet_export(engine, run_id, table)
    assert pl.read_parquet(io.BytesIO(data))[SEED_COLUMN].unique().to_list() == [str(seed)]
    assert info["run"]["review_seed"] == seed == manifest(engine, run_id, table)["run"]["review_seed"]
    described = manifest(engine, run_id, table)["review_order"]
    assert (described["seed_column"], described["skips_column"]) == (SEED_COLUMN, SKIPS_COLUMN)
    # The rows the queue served that nobody holds a verdict on (alice's skip and her undone mark).
    skips = table.filter(pl.col(SKIPS_COLUMN) != "")
    assert skips[SKIPS_COLUMN].to_list() == ["alice", "alice"] and skips["human_verdicts"].to_list() == ["", ""]
    assert build_export(engine, run_id)[SKIPS_COLUMN].tolist() == table[SKIPS_COLUMN].to_list()


def old_export(engine: Engine, run_id: int, fmt: str) -> tuple[bytes, str]:
    """An export as made before it carried the review order: neither column, and a manifest
    without run.review_seed."""
    if fmt == "csv":
        return table_csv_bytes(export_table(engine, run_id).drop(SEED_COLUMN, SKIPS_COLUMN)), f"{NAME}_old.csv"
    if fmt == "jsonl":
        old = build_export(engine, run_id).drop(columns=[SEED_COLUMN, SKIPS_COLUMN])
        return to_jsonl_bytes(old), f"{NAME}_old.jsonl"
    table = export_table(engine, run_id).drop(SEED_COLUMN, SKIPS_COLUMN)
    info = manifest(engine, run_id, table)
    del info["run"]["review_seed"]
    return table_parquet_bytes(table, {**info, "format": "parquet"}), f"{NAME}_old.parquet"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_older_export_without_the_seed_says_why_the_estimate_leaves_its_marks_out(
    fmt: str, source: tuple[Engine, int, dict], tmp_path: Path
) -> None:
    engine, run_id, expected = source
    data, filename = old_export(engine, run_id, fmt)
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        result = ingest.save_run(fresh, data, filename)
        marks = len(review.current_verdicts(engine))
        assert result.created and result.restored == marks and result.unordered == marks
        assert result.run.review_seed == seed_from_sha(store.sha256_bytes(data))  # an order of its own
        found = estimate_of(fresh, result.run.id)
        print(f"old {fmt} export -> SQLite: {headline(found)}")
        sample = found["figures"]["random_sample"]
        settled = expected["figures"]["random_sample"]["in_estimate"] + expected["figures"]["random_sample"]["by_hand"]
        # Every verdict is kept (they count everywhere else) but none is taken for a random sample:
        # no scattered "prefix" with thousands of missing rows.
        assert found["served"] == [] and sample["in_estimate"] == 0 and sample["missing"] == 0
        assert sample["by_hand"] == settled
    finally:
        fresh.dispose()
    note = unordered_note(result.unordered)
    assert "\n" not in note and f"{marks} restored verdict(s)" in note
    assert "no review seed" in note and "cannot count" in note and "random sample" in note


def test_an_older_parquet_export_rebuilds_the_seed_from_its_manifest(
    source: tuple[Engine, int, dict], tmp_path: Path
) -> None:
    """A Parquet export holds its manifest, which names the run's file sha256; every run's seed was
    derived from it before exports carried the seed, so the order and every restored verdict's
    place in the sample are the source's. Only the rows skipped without a verdict (not carried
    then) are no longer served."""
    engine, run_id, expected = source
    data, filename = old_export(engine, run_id, "parquet")
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        result = restore(fresh, data, filename)
        assert result.run.review_seed == expected["seed"] and result.skips == 0
        found = estimate_of(fresh, result.run.id)
        print(f"old parquet export -> SQLite: {headline(found)}")
    finally:
        fresh.dispose()
    assert found["order"] == expected["order"]
    assert set(expected["served"]) - set(found["served"]) == set(review.served_unmarked(engine, run_id))
    for figure in ("in_estimate", "by_hand"):
        assert found["figures"]["random_sample"][figure] == expected["figures"]["random_sample"][figure]


@pytest.mark.parametrize("cells", [["12", "13"], ["-4"], ["seed"], [str(2**31)]])
def test_a_seed_column_that_is_not_one_seed_refuses_the_upload(
    cells: list[str], source: tuple[Engine, int, dict], tmp_path: Path
) -> None:
    engine, run_id, _ = source
    table = export_table(engine, run_id)
    column = [cells[i % len(cells)] for i in range(table.height)]
    data = table_csv_bytes(table.with_columns(pl.Series(SEED_COLUMN, column)))
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        with pytest.raises(InputError, match=f"Column '{SEED_COLUMN}' of the exported file must hold"):
            ingest.save_run(fresh, data, f"{NAME}.csv")
        assert store.list_runs(fresh) == []  # refused before anything is stored
    finally:
        fresh.dispose()


def test_the_upload_page_says_why_an_older_exports_marks_are_left_out(
    source: tuple[Engine, int, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, run_id, _ = source
    data, filename = old_export(engine, run_id, "csv")
    monkeypatch.setenv(store.ENV_VAR, f"sqlite:///{tmp_path / 'dashboard.db'}")
    at = open_page("upload", reviewer=None)
    at.file_uploader(key="uploads").set_value((filename, data, "text/csv"))
    ok(at.run())  # saved, then the Overview of the new run shows the upload's warnings
    marks = len(review.current_verdicts(engine))
    shown = [a for a in alerts(at) if "no review seed" in a]
    assert shown == [f"{filename}: {unordered_note(marks)}"], alerts(at)

"""Upload beside a reviewer: what saving a large upload costs, and what it does to marks.

Run as ``.venv/bin/python tests/bench_upload.py [--rows N]`` (not collected by pytest). The same
synthetic upload (``bench_dashboard.synthetic_csv``) is saved into a fresh SQLite file holding
the sample run, two ways, while a reviewer thread marks a sample row every 100 ms from the moment
the rows start going in until the save returns:

* baseline: the run and all its stored parts in ONE write transaction (kept here only);
* project: ``ingest.save_run`` (parts in short transactions, :mod:`scoring.store.chunked`).

Since issue 10 a run's rows are stored as one Parquet file in 2 MiB parts, so the write phase is
a few inserts; the baseline shows what one transaction for all of them holds.

Printed per way: the whole save (parse, score, write), the write phase, the number of write
transactions and the longest write-lock hold (BEGIN to COMMIT as timed by the saver, which also
counts the WAL checkpoint SQLite runs after the commit, outside the lock), the longest time a probe
found the lock taken (it tries ``BEGIN IMMEDIATE`` without waiting every millisecond: the hold as
others see it), and the marks' latency p50/p99/max with how many were not saved (marks give up
after ``review.ACTION_BUSY_MS``). Then the same for
a judge batch of 5,000 verdicts. Goal (issue 8): longest hold about 100 ms, mark p99 under 1 s,
no mark lost.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_dashboard import synthetic_csv  # noqa: E402
from sqlalchemy import Engine, insert  # noqa: E402

from scoring import ingest, review, store  # noqa: E402
from scoring.core.loader import load_bytes  # noqa: E402
from scoring.core.row_language import row_languages  # noqa: E402
from scoring.store import judge_cache, make_engine, run_table, runs, writer  # noqa: E402
from scoring.store.orm_tables import Run, RunPart  # noqa: E402

MARK_EVERY_S = 0.1
JUDGE_ROWS = 5_000


# --- the baseline: the old single-transaction save --------------------------------------------


def save_single_transaction(engine: Engine, data: bytes, filename: str, writing: threading.Event) -> list[float]:
    """ingest.save_run without short transactions: parse and score, then the run and every part in
    one write transaction. Returns that transaction's lock hold (a one-element list)."""
    frame = load_bytes(data, filename).table
    extra = [c for c in frame.columns if c not in store.ROW_COLUMNS]
    parts = run_table.to_parts(run_table.scored_rows(frame, extra, row_languages(frame).values))
    writing.set()
    with writer(engine).begin() as conn:
        began = time.perf_counter()
        run_id = conn.execute(
            insert(Run).values(
                name=Path(filename).stem,
                filename=filename,
                sha256=store.sha256_bytes(data),
                n_rows=frame.height,
                extra_columns=json.dumps(extra),
                complete=True,
            )
        ).inserted_primary_key[0]
        conn.execute(insert(RunPart), [{"run_id": run_id, "part": i, "data": d} for i, d in enumerate(parts)])
    return [time.perf_counter() - began]


def save_project(engine: Engine, data: bytes, filename: str, writing: threading.Event) -> list[float]:
    """ingest.save_run, with its write transactions' lock holds taken from the stats it records."""
    holds: list[float] = []
    real = runs._write_parts

    def spy(*args, **kwargs):
        writing.set()
        stats = real(*args, **kwargs)
        holds.extend(stats.holds)
        return stats

    runs._write_parts = spy
    try:
        result = ingest.save_run(engine, data, filename)
    finally:
        runs._write_parts = real
    assert result.created
    return holds


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    save_s: float = 0.0
    write_s: float = 0.0
    holds: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    failed: int = 0
    probe_busy: float = 0.0  # longest stretch the probe found the write lock taken


def probe(path: Path, writing: threading.Event, done: threading.Event, out: Outcome) -> None:
    """Every millisecond, try to take the write lock without waiting (and let go at once); the
    longest run of failures is how long the lock was held in one stretch, as others see it."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    writing.wait()
    busy_since: float | None = None
    while not done.is_set():
        now = time.perf_counter()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError:
            busy_since = now if busy_since is None else busy_since
        else:
            if busy_since is not None:
                out.probe_busy = max(out.probe_busy, now - busy_since)
            busy_since = None
        time.sleep(0.001)
    conn.close()


def reviewer(engine: Engine, key: str, run_id: int, writing: threading.Event, done: threading.Event, out: Outcome):
    """Mark ``key`` every MARK_EVERY_S while the rows are being written."""
    writing.wait()
    started = time.perf_counter()
    j = 0
    while not done.is_set():
        begin = time.perf_counter()
        try:
            review.record_mark(engine, key, run_id, "alice", "correct" if j % 2 else "wrong")
        except Exception:  # noqa: BLE001  (NotSaved, or what a mark raised before NotSaved existed)
            out.failed += 1
        out.latencies.append(time.perf_counter() - begin)
        j += 1
        time.sleep(MARK_EVERY_S)
    out.write_s = time.perf_counter() - started


def measure(save: Callable[[Engine, bytes, str, threading.Event], list[float]], data: bytes) -> Outcome:
    """One save of ``data`` into a fresh database holding the sample run, beside a reviewer."""
    out = Outcome()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        engine = make_engine(f"sqlite:///{path}")
        sample = ingest.ensure_sample(engine)
        assert sample is not None
        key = store.load_scored(engine, sample.id)["item_key"].iloc[0]
        writing, done = threading.Event(), threading.Event()
        threads = [
            threading.Thread(target=reviewer, args=(engine, key, sample.id, writing, done, out)),
            threading.Thread(target=probe, args=(path, writing, done, out)),
        ]
        for thread in threads:
            thread.start()
        begin = time.perf_counter()
        try:
            out.holds = save(engine, data, "bench_upload.csv", writing)
        finally:
            out.save_s = time.perf_counter() - begin
            writing.set()
            done.set()
            for thread in threads:
                thread.join()
        engine.dispose()
    return out


def quantile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def judge_rows(n: int, offset: int) -> list[dict]:
    """``n`` judge verdicts shaped like a real reply (two random-hash keys, a few hundred bytes)."""
    import hashlib

    rows = []
    for i in range(offset, offset + n):
        key = hashlib.sha256(f"c{i}".encode()).hexdigest()
        rows.append(
            {
                "cache_key": key,
                "item_key": hashlib.sha256(key.encode()).hexdigest(),
                "model": "bench",
                "prompt_version": "bench-v1",
                "settings": '{"temperature": 0}',
                "label": "CORRECT",
                "raw": json.dumps({"label": "CORRECT", "reason": "same place " * 30}),
                "prompt_tokens": 400,
                "completion_tokens": 30,
            }
        )
    return rows


def judge_holds(chunked: bool) -> list[float]:
    """Lock holds of saving JUDGE_ROWS verdicts into a table already holding 50,000."""
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'judge.db'}")
        judge_cache.save(engine, judge_rows(50_000, 10**6))
        rows = judge_rows(JUDGE_ROWS, 0)
        if chunked:
            holds: list[float] = []
            real = judge_cache.write_in_chunks

            def spy(*args, **kwargs):
                stats = real(*args, **kwargs)
                holds.extend(stats.holds)
                return stats

            judge_cache.write_in_chunks = spy
            try:
                judge_cache.save(engine, rows)
            finally:
                judge_cache.write_in_chunks = real
        else:
            for row in rows:
                row.setdefault("created_at", judge_cache.utcnow())
            with writer(engine).begin() as conn:  # the old judge_cache.save: one transaction
                began = time.perf_counter()
                conn.execute(insert(judge_cache.JudgeVerdict), rows)
            holds = [time.perf_counter() - began]
        engine.dispose()
    return holds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows in the synthetic upload")
    args = parser.parse_args(argv)
    data = synthetic_csv(args.rows, seed=8)
    print(f"Saving {args.rows:,} rows ({len(data) / 1e6:.1f} MB) beside a reviewer marking every {MARK_EVERY_S:g} s")
    header = (
        f"{'way':<20} {'save s':>7} {'write s':>8} {'txns':>5} {'max hold ms':>12} {'probe ms':>9} "
        f"{'marks':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'not saved':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, save in (("one transaction", save_single_transaction), ("short transactions", save_project)):
        out = measure(save, data)
        lat = out.latencies
        print(
            f"{name:<20} {out.save_s:7.2f} {out.write_s:8.2f} {len(out.holds):5d} {max(out.holds) * 1000:12.0f} "
            f"{out.probe_busy * 1000:9.0f} "
            f"{len(lat):6d} {quantile(lat, 0.5) * 1000:7.0f} {quantile(lat, 0.99) * 1000:7.0f} "
            f"{max(lat, default=float('nan')) * 1000:7.0f} {out.failed:9d}",
            flush=True,
        )
        if name == "short transactions":
            holds = sorted(out.holds)
            print(
                f"{'':<20} write-lock holds: median {statistics.median(holds) * 1000:.0f} ms, "
                f"p99 {quantile(holds, 0.99) * 1000:.0f} ms, {sum(h > 0.1 for h in holds)} over 100 ms "
                "(commit and its WAL checkpoint included)"
            )
    print(f"\nJudge batch of {JUDGE_ROWS:,} verdicts (table already holding 50,000)")
    for name, chunked in (("one transaction", False), ("short transactions", True)):
        holds = judge_holds(chunked)
        longest = max(holds) * 1000
        print(f"{name:<20} {len(holds):5d} transactions, longest hold {longest:6.0f} ms, total {sum(holds):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

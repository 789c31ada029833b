"""Benchmark: the CLI on the same rows as CSV, JSON lines and Parquet (issue 19).

Not collected by pytest (the name does not start with ``test_``). Run it as::

    .venv/bin/python tests/bench_formats.py [--rows N] [--runs R]

It generates N rows (default 1,000,000) with ``tests/bench_scoring.py``'s generator (question,
answer, Domain, response; half English, half Devanagari) and writes the same rows once, in a
temporary directory, as

* CSV: the generator's own bytes;
* JSON lines: one object per line, ``json.dumps(..., ensure_ascii=False)``, every value a JSON
  string (as a team's export would have them, blank responses as ``""``);
* Parquet: polars ``write_parquet`` with every column ``String`` (its default compression).

Then it times the whole command as a process, what a user waits for:
``python -m scoring score --responses F --out G`` from the repository root on each file, wall clock
from start to exit and the child's peak RSS from ``os.wait4``. Each of R rounds (default 3) runs
every format once, the starting format rotating per round, so drift on the machine hits them
alike; the median of the R runs is used.

The command is started through ``bench_scoring.run_child``, whose small launcher reports the
command's own wall time and peak RSS (not this process's generated rows as its floor).

The three ``--out`` files must agree on ``exact_correct`` and ``overlap_correct`` (read with polars
as text) on every row, and hold N rows. It prints a table (format, file MB, median s, ratio to CSV,
peak RSS MiB) and one ``GOAL`` line each (``tests/bench_goals.py``): JSON lines / CSV <= 1.5x and
Parquet / CSV <= 1.5x, and no row differing. Exit status 1 if a goal is short.
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from bench_scoring import VERDICTS, Child, check_child, cli_score_command, generate_csv, run_child  # noqa: E402

SEED = 2  # bench_scoring.py's default: the same rows
GOAL_RATIO = 1.5  # issue 19: JSON lines or Parquet within 1.5x of the same rows as CSV
FORMATS = ("csv", "jsonl", "parquet")


def rows_label(rows: int) -> str:
    """``1M``, ``100k``, or the count itself: the row count in a goal's name."""
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}M"
    if rows % 1_000 == 0:
        return f"{rows // 1_000}k"
    return f"{rows:,}"


def write_files(rows: int, tmp: Path) -> dict[str, Path]:
    """The same generated rows as ``responses.csv``, ``responses.jsonl`` and ``responses.parquet``."""
    t0 = time.perf_counter()
    data = generate_csv(rows, SEED)
    paths = {fmt: tmp / f"responses.{fmt}" for fmt in FORMATS}
    paths["csv"].write_bytes(data)
    print(f"rows: {rows:,} (half Devanagari), generated in {time.perf_counter() - t0:.1f} s")

    # The generator's CSV read back with the module that wrote it: exactly its strings.
    header, *records = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    del data
    if len(records) != rows:
        raise SystemExit(f"the generator gave {len(records):,} rows, not {rows:,}")
    with paths["jsonl"].open("w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(json.dumps(dict(zip(header, record, strict=True)), ensure_ascii=False))
            fh.write("\n")
    columns = {name: pl.Series(name, list(values), dtype=pl.String) for name, values in zip(header, zip(*records))}
    del records
    pl.DataFrame(columns).write_parquet(paths["parquet"])
    del columns
    gc.collect()  # this process's copies gone before the timed children run beside it
    for fmt, path in paths.items():
        print(f"  {fmt:<8} {path.stat().st_size / 1e6:8.1f} MB  {path.name}")
    return paths


def time_formats(paths: dict[str, Path], tmp: Path, runs: int) -> tuple[dict[str, list[Child]], dict[str, Path]]:
    """``runs`` rounds of the CLI on every format, interleaved; each format's ``--out`` file."""
    outs = {fmt: tmp / f"out_{fmt}.csv" for fmt in FORMATS}
    children: dict[str, list[Child]] = {fmt: [] for fmt in FORMATS}
    for round_no in range(runs):
        order = FORMATS[round_no % len(FORMATS) :] + FORMATS[: round_no % len(FORMATS)]
        for fmt in order:
            child = run_child(cli_score_command(paths[fmt], outs[fmt]), tmp / f"stdout_{fmt}.txt")
            check_child(child, f"python -m scoring score on {paths[fmt].name}")
            children[fmt].append(child)
        print(f"  round {round_no + 1}/{runs}: " + ", ".join(f"{fmt} {children[fmt][-1].wall:.2f} s" for fmt in order))
    return children, outs


def disagreements(outs: dict[str, Path], rows: int) -> int:
    """Rows whose verdicts differ between the CSV run's output and another format's (as text; a
    missing column or a row count other than ``rows`` counts every row)."""
    frames = {fmt: pl.read_csv(path, infer_schema=False) for fmt, path in outs.items()}
    worst = 0
    for fmt, frame in frames.items():
        if len(frame) != rows:
            print(f"MISMATCH: {len(frame):,} rows in the {fmt} run's output, expected {rows:,}", file=sys.stderr)
            worst = max(worst, rows, len(frame))
    if worst:
        return worst
    reference = frames["csv"]
    for fmt in FORMATS[1:]:
        other = frames[fmt]
        bad = pl.Series([False] * rows)
        for col in VERDICTS:
            if col not in reference.columns or col not in other.columns:
                print(f"MISMATCH: column {col} missing from the csv or {fmt} run's output", file=sys.stderr)
                return rows
            a, b = reference[col], other[col]
            diff = (a != b).fill_null(True) | (a.is_null() != b.is_null())
            if diff.any():
                first = int(diff.arg_max())
                print(
                    f"MISMATCH in {col}, {fmt} against csv: {int(diff.sum()):,} rows, first row {first}: "
                    f"csv {a[first]!r}, {fmt} {b[first]!r}",
                    file=sys.stderr,
                )
            bad = bad | diff
        worst = max(worst, int(bad.sum()))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="rounds of whole-process runs per format (median used)")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.runs < 1:
        parser.error("--rows and --runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="bench_formats_") as tmp_name:
        tmp = Path(tmp_name)
        paths = write_files(args.rows, tmp)
        print(f"\npython -m scoring score --responses F --out G, {args.runs} round(s), {os.cpu_count()} cores")
        children, outs = time_formats(paths, tmp, args.runs)
        mismatched = disagreements(outs, args.rows)

        medians = {fmt: statistics.median(c.wall for c in children[fmt]) for fmt in FORMATS}
        print(f"\n{'format':<8} {'file MB':>8} {'median s':>9} {'/ csv':>7} {'peak RSS MiB':>13}")
        for fmt in FORMATS:
            peak = max(c.peak for c in children[fmt])
            print(
                f"{fmt:<8} {paths[fmt].stat().st_size / 1e6:8.1f} {medians[fmt]:9.2f} "
                f"{medians[fmt] / medians['csv']:6.2f}x {peak / 1024**2:13.0f}"
            )
        print(f"verdict columns: {'every row agrees' if mismatched == 0 else f'{mismatched:,} rows differ'}")

    label = rows_label(args.rows)
    ok = True
    for fmt in FORMATS[1:]:
        ok &= goal(f"cli score {fmt} / csv ({label} rows)", medians[fmt] / medians["csv"], "<=", GOAL_RATIO, "x")
    ok &= goal("cli score verdicts differing across formats (rows)", mismatched, "==", 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

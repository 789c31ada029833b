"""Benchmark: ``python -m scoring score`` on a million rows with the optional matchers on, against
the spec's two alone (issue 29). Not collected by pytest. Run it as::

    .venv/bin/python tests/bench_matchers.py [--rows N] [--seed S] [--runs R] [--check N]

The rows are ``tests/bench_scoring.py``'s synthetic file (half English, half Devanagari, responses
that contain, rearrange, inflect or miss the golden words) with a ``language`` column added
(English and Hindi, so both stemmers work on every row).

1. Whole processes, what a user waits for: ``score --responses F --out G`` and the same with
   ``--matchers norm_exact,stem_overlap,chrf``, each the median of R runs (default 3). Goal: the
   matchers' run within 2x the spec's (``GOAL`` line, ``tests/bench_goals.py``).
2. Each matcher's column path alone, in this process, on the same rows (printed, not judged),
   with the per-row reference (sacrebleu for chrF) timed on a sample and scaled to the rows.
3. Exactness: on ``--check`` rows (default 20,000) drawn at random from the file, every matcher's
   column of the ``--out`` file equals its per-row function (``GOAL`` line: 0 rows differ).
"""

from __future__ import annotations

import argparse
import random
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
from bench_scoring import check_child, generate_csv, run_child  # noqa: E402

from scoring.match import MATCHER_COLUMNS, MATCHERS  # noqa: E402
from scoring.match.scorers import match_row, score_matchers  # noqa: E402

GOAL_RATIO = 2.0
ALL = ",".join(MATCHERS)
THRESHOLD = 30.0


def write_rows(path: Path, rows: int, seed: int) -> None:
    table = pl.read_csv(generate_csv(rows, seed), infer_schema=False)
    language = pl.when(pl.int_range(pl.len()) % 2 == 1).then(pl.lit("Hindi")).otherwise(pl.lit("English"))
    table.with_columns(language=language).write_csv(path)


def command(responses: Path, out: Path, matchers: bool) -> list[str]:
    cmd = [sys.executable, "-m", "scoring", "score", "--responses", str(responses), "--out", str(out)]
    return [*cmd, "--matchers", ALL] if matchers else cmd


def whole(responses: Path, tmp: Path, runs: int) -> tuple[float, float]:
    """Median wall seconds without and with the matchers (runs alternate, so load hits both)."""
    plain, more = [], []
    for i in range(runs):
        for matchers, into in ((False, plain), (True, more)):
            child = run_child(command(responses, tmp / f"out{int(matchers)}.csv", matchers), tmp / f"stdout{i}.txt")
            check_child(child, f"score (matchers={matchers})")
            into.append(child.wall)
    print(f"whole process, spec's two: {[f'{s:.2f}' for s in plain]} s; with matchers: {[f'{s:.2f}' for s in more]} s")
    return statistics.median(plain), statistics.median(more)


def in_process(responses: Path) -> None:
    table = pl.read_csv(responses, infer_schema=False)
    for name in MATCHERS:
        start = time.perf_counter()
        score_matchers(table, [name], threshold=THRESHOLD)
        took = time.perf_counter() - start
        sample = table.sample(min(2000, table.height), seed=1)
        start = time.perf_counter()
        for a, r, lang in sample.select("answer", "response", "language").iter_rows():
            match_row(name, a, r, lang, THRESHOLD)
        per_row = (time.perf_counter() - start) / sample.height
        print(
            f"{name:<13} column path {took:6.2f} s for {table.height:,} rows; "
            f"per-row function ~{per_row * table.height:7.1f} s (from {sample.height} rows)"
        )


def check(out: Path, rows: int, seed: int) -> int:
    table = pl.read_csv(out, infer_schema=False)
    picked = random.Random(seed).sample(range(table.height), min(rows, table.height))
    part = table[picked]
    wrong = 0
    for record in part.iter_rows(named=True):
        for name, column in MATCHER_COLUMNS.items():
            want = match_row(name, record["answer"] or "", record["response"], record["language"], THRESHOLD)
            wrong += str(want) != record[column]
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--check", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        responses = tmp / "responses.csv"
        write_rows(responses, args.rows, args.seed)
        plain, more = whole(responses, tmp, args.runs)
        ratio = more / plain
        print(f"median: spec's two {plain:.2f} s, with the three matchers {more:.2f} s ({ratio:.2f}x)")
        ok = goal(f"score --matchers {ALL} vs spec's two, {args.rows:,} rows", ratio, "<=", GOAL_RATIO, "x")
        wrong = check(tmp / "out1.csv", args.check, args.seed)
        ok &= goal(f"matcher verdicts differing from per-row ({args.check:,} rows)", wrong, "==", 0)
        in_process(responses)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

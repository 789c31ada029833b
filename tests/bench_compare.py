"""Benchmark: ``python -m scoring compare`` on two runs of 100,000 rows each (issue 12).

Not collected by pytest (the name does not start with ``test_``). Run it as::

    .venv/bin/python tests/bench_compare.py [--rows N] [--seed S] [--repeats R]

Run A is ``bench_scoring.generate_csv`` (half English, half Devanagari); run B holds the same
questions and golden answers with other responses, shuffled, 1% of A's rows left out and 0.5%
duplicated (so the unmatched-row paths do real work). Each file has N rows. The whole process
``python -m scoring compare A B --out F`` is timed as a subprocess from the repository root, wall
clock from start to exit (median of R runs, default 3). Goal: under 2 s. One ``GOAL`` line
(``tests/bench_goals.py``); exit status 1 if the goal is short.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bench_goals import goal  # noqa: E402
from bench_scoring import check_child, generate_csv, run_child  # noqa: E402

GOAL_SECONDS = 2.0


def write_runs(rows: int, seed: int, folder: Path) -> tuple[Path, Path]:
    """Two responses files sharing their questions (see the module docstring)."""
    a = pl.read_csv(io.BytesIO(generate_csv(rows, seed)), infer_schema=False)
    other = pl.read_csv(io.BytesIO(generate_csv(rows, seed + 1)), infer_schema=False)
    b = a.with_columns(response=other["response"]).sample(fraction=1.0, shuffle=True, seed=seed)
    dropped = rows // 100
    b = pl.concat([b.slice(dropped), b.slice(dropped, rows // 200)])  # 1% left out, 0.5% twice
    b = b.head(rows) if b.height > rows else b
    path_a, path_b = folder / "run_a.csv", folder / "run_b.csv"
    a.write_csv(path_a)
    b.write_csv(path_b)
    return path_a, path_b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        path_a, path_b = write_runs(args.rows, args.seed, tmp)
        command = [sys.executable, "-m", "scoring", "compare", str(path_a), str(path_b), "--out", str(tmp / "m.csv")]
        walls = []
        for _ in range(args.repeats):
            child = run_child(command, tmp / "stdout.txt")
            check_child(child, "python -m scoring compare")
            walls.append(child.wall)
        head = (tmp / "stdout.txt").read_text(encoding="utf-8").splitlines()[0]
        matched = pl.read_csv(tmp / "m.csv", infer_schema=False).height
    print(f"{head}")
    print(
        f"rows per file: {args.rows}; matched rows written: {matched}; "
        f"wall per run: {', '.join(f'{w:.2f} s' for w in walls)}"
    )
    met = goal(
        f"compare 2 x {args.rows // 1000}k rows, whole process", statistics.median(walls), "<", GOAL_SECONDS, "s"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())

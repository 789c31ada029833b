"""Benchmark: the spec's one-request-at-a-time judge loop against the project's batch client.

Not collected by pytest (the name does not start with ``test_``). Run it as::

    .venv/bin/python tests/bench_judge.py [--rows 2000] [--latency 0.1] [--concurrency 16]
                                          [--serial-rows N]

Everything runs against tests/openai_stub.py on 127.0.0.1 with ``--latency`` seconds per request,
in one process and one run:

1. serial: the spec script's style, a ``for`` loop calling ``scoring.judge.call_model`` and
   parsing each reply (``--serial-rows`` below ``--rows`` times a prefix and extrapolates, and
   says so);
2. batch: ``scoring.judge.judge_run`` at ``--concurrency`` on a fresh database;
3. cached: the same batch again, which must send 0 requests.

Goal (issue 5): batch >= 12x faster than serial, and the cached run sends 0 requests.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_stub import StubOpenAI  # noqa: E402

from scoring.judge import JudgeItem, JudgeSettings, build_prompt, call_model, judge_run, parse_label  # noqa: E402
from scoring.store import make_engine  # noqa: E402

GOAL_SPEEDUP = 12.0
ANSWERS = ["Ruru Jataka", "amalak", "Narmada valley", "गंगा", "1947", "Konark", "Chola ideals", "Delhi"]


def make_rows(n: int) -> list[JudgeItem]:
    """Distinct rows (so nothing is deduplicated): half contain the golden answer."""
    rows = []
    for i in range(n):
        answer = ANSWERS[i % len(ANSWERS)]
        response = f"The answer is {answer}, as row {i} shows." if i % 2 else f"Probably something else (row {i})."
        rows.append(JudgeItem(f"Question {i}: what is it?", answer, response))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per request at the stub")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serial-rows", type=int, default=None, help="time the serial loop on a prefix only")
    args = parser.parse_args(argv)
    rows = make_rows(args.rows)
    serial_n = min(args.serial_rows or args.rows, args.rows)

    with StubOpenAI(latency=args.latency) as stub, tempfile.TemporaryDirectory() as tmp:
        settings = JudgeSettings(
            base_url=stub.base_url, api_key="sk-bench", model="stub-judge", concurrency=args.concurrency, timeout=30
        )
        print(f"LLM judge benchmark: {args.rows} rows, stub latency {args.latency * 1000:.0f} ms per request")

        # 1. The spec script: one request at a time.
        stub.reset_counts()
        start = time.perf_counter()
        serial_labels = [
            parse_label(call_model(build_prompt(r.question, r.answer, r.response), settings)) for r in rows[:serial_n]
        ]
        serial_s = time.perf_counter() - start
        serial_requests = stub.requests
        serial_full_s = serial_s * args.rows / serial_n
        if serial_n < args.rows:
            print(
                f"serial loop (call_model):  {serial_n} rows timed in {serial_s:.2f} s, EXTRAPOLATED to "
                f"{args.rows} rows: {serial_full_s:.2f} s  ({serial_n / serial_s:.1f} rows/s, "
                f"{serial_requests} requests)"
            )
        else:
            print(
                f"serial loop (call_model):  {serial_s:.2f} s  ({args.rows / serial_s:.1f} rows/s, "
                f"{serial_requests} requests)"
            )

        # 2. The project's client, fresh database.
        engine = make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        stub.reset_counts()
        start = time.perf_counter()
        run = judge_run(engine, settings, rows)
        batch_s = time.perf_counter() - start
        batch_requests = stub.requests
        print(
            f"batch, concurrency {args.concurrency}:     {batch_s:.2f} s  ({args.rows / batch_s:.1f} rows/s, "
            f"{batch_requests} requests, max {stub.max_in_flight} in flight, "
            f"{run.summary.tokens} tokens)"
        )

        # 3. Same rows again: everything cached.
        stub.reset_counts()
        start = time.perf_counter()
        cached = judge_run(engine, settings, rows)
        cached_s = time.perf_counter() - start
        cached_requests = stub.requests
        print(
            f"cached re-run:             {cached_s:.2f} s  ({args.rows / cached_s:.0f} rows/s, "
            f"{cached_requests} requests, {cached.summary.cached} cache hits)"
        )
        engine.dispose()

    speedup = serial_full_s / batch_s
    agree = [r.label for r in run.results[:serial_n]] == serial_labels
    same_cached = [r.label for r in cached.results] == [r.label for r in run.results]
    print(
        f"speed-up batch vs serial:  {speedup:.1f}x (goal >= {GOAL_SPEEDUP:.0f}x)"
        + (" [serial time extrapolated]" if serial_n < args.rows else "")
    )
    print(f"labels agree serial/batch: {agree}; cached labels identical: {same_cached}")
    ok = speedup >= GOAL_SPEEDUP and cached_requests == 0 and agree and same_cached
    print("RESULT:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The dashboard server's memory after a reviewer opens several large runs, with the per-run cache
bounded (``REVIEW_CACHE_MB``) against a budget so large it bounds nothing, side by side.

Run as ``.venv/bin/python tests/bench_memory.py [--runs 5] [--rows 100000] [--budget-mb 256]``
(``make bench`` runs it; not collected by pytest). It saves the runs into a temporary SQLite file,
starts ``streamlit run app.py`` twice (bounded, then unbounded), opens each run's Overview and
Agreement pages in Debian chromium by the sidebar, and prints the server's resident memory
(VmRSS) after the last one. Goal: bounded RSS at most baseline + budget + 300 MiB of overhead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_review_browser import synthetic_csv  # noqa: E402
from browser import launch_chromium, open_nav, settle, start_app  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from scoring import ingest, store  # noqa: E402

UNBOUNDED_MB = 1_000_000


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def server_rss(url: str, run_ids: list[int], budget_mb: int, log: Path) -> tuple[float, float]:
    """(RSS after start, RSS after opening every run) of one server with ``budget_mb``."""
    os.environ["REVIEW_CACHE_MB"] = str(budget_mb)
    app = start_app(url, log)
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(300_000)
            page.goto(app.url, timeout=300_000)
            settle(page, 300_000)
            start = rss_mib(app.process.pid)
            for run_id in run_ids:
                page.goto(f"{app.url}/overview?run={run_id}", timeout=300_000)
                settle(page, 300_000)
                open_nav(page, "Agreement", "Agreement")
                open_nav(page, "Overview", "Overview")
            browser.close()
        return start, rss_mib(app.process.pid)
    finally:
        app.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--budget-mb", type=int, default=256)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_memory_"))
    url = f"sqlite:///{folder / 'review.db'}"
    engine = store.make_engine(url)
    run_ids = [
        ingest.save_run(engine, synthetic_csv(args.rows, seed), f"mem_{seed}.csv").run.id for seed in range(args.runs)
    ]
    engine.dispose()
    bounded = server_rss(url, run_ids, args.budget_mb, folder / "bounded.log")
    unbounded = server_rss(url, run_ids, UNBOUNDED_MB, folder / "unbounded.log")
    print(f"Server memory after opening {args.runs} runs of {args.rows:,} rows (Overview and Agreement each)")
    print(f"{'cache':>22} {'at start MiB':>13} {'after MiB':>10}")
    print(f"{f'bounded {args.budget_mb} MiB':>22} {bounded[0]:>13.0f} {bounded[1]:>10.0f}")
    print(f"{'unbounded (baseline)':>22} {unbounded[0]:>13.0f} {unbounded[1]:>10.0f}")
    goal = bounded[0] + args.budget_mb + 300
    print(
        f"bounded/unbounded growth: {(bounded[1] - bounded[0]) / max(1.0, unbounded[1] - unbounded[0]):.2f}; "
        f"bounded after {bounded[1]:.0f} MiB vs goal <= {goal:.0f}: {'ok' if bounded[1] <= goal else 'short'}"
    )


if __name__ == "__main__":
    main()

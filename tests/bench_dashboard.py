"""Dashboard speed: the time of one user action (a page rerun, ...) on a 1,000- and a 100,000-row run.

Run as ``.venv/bin/python tests/bench_dashboard.py`` (not collected by pytest). Both runs are
synthetic, stored with ``store.save_run`` in a temporary SQLite file, and driven in one process
with AppTest. Each action is prepared and warmed up (caches filled), then timed several times;
the script prints the medians and the 100k/1k ratio per action. Goal: ratio <= 2.

To measure another action (say, marking a row in the review queue), write a function that
returns an :class:`Action` and add it to :func:`actions`.
"""

from __future__ import annotations

import argparse
import builtins
import cProfile
import io
import itertools
import os
import pstats
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import streamlit.runtime.scriptrunner.script_runner as script_runner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from scoring import review, store  # noqa: E402
from scoring.store import ENV_VAR, make_engine  # noqa: E402

APP = ROOT / "app.py"
SIZES = (1_000, 100_000)
GOAL = 2.0  # a page rerun (issue 3)
MARK_GOAL = 1.5  # the review queue's mark action (issue 4)
REVIEWER = "bench"
DOMAINS = ("Art", "Geography", "History", "Literature", "Science", "Polity", "Economy", "Sports")
WORDS = (
    "river temple empire dynasty raga festival mountain treaty novel poet king queen fort "
    "monsoon delta plateau script coin edict stupa valley desert harbour sultan port canal "
    "bronze painting dance drama verse epic battle council reform census railway tea spice"
).split()




# --- synthetic runs ----------------------------------------------------------------------------


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def synthetic_csv(n_rows: int, seed: int) -> bytes:
    """``n_rows`` distinct rows over 8 domains with every agreement bucket and some blanks."""
    rng = random.Random(seed)
    lines = ["question,answer,Domain,response,id"]
    for i in range(n_rows):
        answer_words = rng.sample(WORDS, rng.randint(1, 3))
        answer = " ".join(answer_words)
        kind = rng.random()
        filler = " ".join(rng.sample(WORDS, 4))
        if kind < 0.40:  # both pass
            response = f"It is {answer}, {filler}."
        elif kind < 0.60:  # words present, not as one substring
            response = f"{' and '.join(reversed(answer_words))} {filler}" if len(answer_words) > 1 else answer
        elif kind < 0.72:  # substring only inside a longer word
            response = f"{filler} {answer_words[0]}ness"
            answer = answer_words[0]
        elif kind < 0.99:  # wrong
            response = filler
        else:  # blank
            response = ""
        question = f"Q{i}: which {rng.choice(WORDS)} is linked to {rng.choice(WORDS)} {i % 97}?"
        fields = [question, answer, DOMAINS[i % len(DOMAINS)], response, f"r{i}"]
        lines.append(",".join(_csv_field(f) for f in fields))
    return ("\n".join(lines) + "\n").encode("utf-8")


def seed_verdicts(engine: Any, run_id: int, n_items: int = 300) -> int:
    """Two reviewers' marks on the first ``n_items`` rows, disagreeing on every fifth one, so the
    reviewer, agreement and export pages have real work to do."""
    keys = store.load_scored(engine, run_id)["item_key"].head(n_items).tolist()
    marks = [{"item_key": k, "run_id": run_id, "reviewer": "alice", "verdict": "correct"} for k in keys]
    marks += [
        {"item_key": k, "run_id": run_id, "reviewer": "bob", "verdict": "wrong" if i % 5 == 0 else "correct"}
        for i, k in enumerate(keys[: n_items // 2])
    ]
    return review.record_marks(engine, marks)


# --- measured actions --------------------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One user action: ``prepare`` brings the app to the state before it (not timed), ``act``
    performs it including the rerun it triggers (timed)."""

    name: str
    prepare: Callable[[AppTest], None]
    act: Callable[[AppTest], None]
    goal: float = GOAL  # largest acceptable 100k/1k ratio


def check(at: AppTest, what: str) -> None:
    """A measured run must not have failed."""
    if at.exception:
        raise SystemExit(f"{what}: the app raised: {at.exception[0].message}")


def page_rerun(page: str, title: str) -> Action:
    """A rerun of ``page`` (what any click on that page costs before its own work)."""

    def prepare(at: AppTest) -> None:
        at.switch_page(page)
        at.run()
        check(at, f"open {page}")

    def act(at: AppTest) -> None:
        at.run()

    return Action(f"{title}: rerun", prepare, act)


def review_mark(page: str) -> Action:
    """Mark the current review-queue row Correct (AppTest reruns the whole script on a click)."""

    def prepare(at: AppTest) -> None:
        at.switch_page(page)
        at.run()
        check(at, "open the review queue")
        if at.button(key="q_yes").proto.disabled:
            raise SystemExit("review queue: the Correct button is disabled (no reviewer?)")

    def act(at: AppTest) -> None:
        at.button(key="q_yes").click().run()

    return Action("Review queue: mark Correct", prepare, act, goal=MARK_GOAL)


def agreement_search(page: str) -> Action:
    """Submit a new text search in the Agreement page's row browser (a query not searched before,
    so the search itself runs, over all buckets; the run's search index is built in prepare)."""
    queries = itertools.count()

    def prepare(at: AppTest) -> None:
        at.switch_page(page)
        at.run()
        at.selectbox(key="agree_bucket").set_value("All buckets").run()
        at.text_input(key="agree_search").set_value("q1:").run()  # builds the run's index once
        check(at, "search the agreement rows")

    def act(at: AppTest) -> None:
        at.text_input(key="agree_search").set_value(f"q{next(queries) % 997}: which").run()

    return Action("Agreement: search (new query)", prepare, act)


def actions() -> list[Action]:
    """Every measured action, in the order printed: a rerun of each page in app.py, then marks."""
    pages = re.findall(
        r"""st\.Page\(\s*["']([^"']+\.py)["'][^)]*title=["']([^"']+)["']""", APP.read_text(encoding="utf-8")
    )
    found = [page_rerun(path, title) for path, title in pages]
    found += [review_mark(path) for path, _ in pages if Path(path).stem == "review"]
    found += [agreement_search(path) for path, _ in pages if Path(path).stem == "agreement"]
    return found


# --- timing ------------------------------------------------------------------------------------


def new_app(run_id: int) -> AppTest:
    """A session on ``?run=run_id`` with a reviewer name, after its first run."""
    at = AppTest.from_file(str(APP), default_timeout=600)
    at.query_params["run"] = str(run_id)
    at.query_params["reviewer"] = REVIEWER
    at.run()
    check(at, "first run")
    return at


def measure(run_id: int, action: Action, repeats: int) -> list[float]:
    """Prepare, one warm-up, then ``repeats`` timed executions of the action (seconds)."""
    at = new_app(run_id)
    action.prepare(at)
    action.act(at)
    check(at, f"{action.name} (warm-up)")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action.act(at)
        times.append(time.perf_counter() - start)
        check(at, action.name)
    return times


def profile(run_id: int, action: Action, top: int = 30) -> str:
    """cProfile of one warmed-up execution of the action, by cumulative time.

    The app script runs in AppTest's script thread, so the profiler is switched on around the
    script runner's ``exec`` of app.py (in that thread), not around ``act``.
    """
    at = new_app(run_id)
    action.prepare(at)
    action.act(at)
    prof = cProfile.Profile()

    def profiled_exec(code: Any, namespace: dict[str, Any]) -> None:
        prof.enable()
        try:
            builtins.exec(code, namespace)  # noqa: S102  (the script runner's own exec of app.py)
        finally:
            prof.disable()

    script_runner.exec = profiled_exec  # type: ignore[attr-defined]
    try:
        action.act(at)
    finally:
        del script_runner.exec  # type: ignore[attr-defined]
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed executions per action and size")
    parser.add_argument("--profile", action="store_true", help="profile the 100k run of actions that miss the goal")
    parser.add_argument("--profile-match", default="", help="also profile actions whose name contains this text")
    parser.add_argument("--strict", action="store_true", help="exit 1 when an action misses the goal")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        os.environ[ENV_VAR] = url
        engine = make_engine(url)
        run_ids: dict[int, int] = {}
        print(f"Building runs in {url}")
        for n in SIZES:
            data = synthetic_csv(n, seed=n)
            start = time.perf_counter()
            result = store.save_run(engine, data, f"bench_{n}.csv")
            print(f"  save_run {n:>7,} rows: {time.perf_counter() - start:6.2f} s ({len(data) / 1e6:.1f} MB)")
            run_ids[n] = result.run.id
            seed_verdicts(engine, result.run.id)
        engine.dispose()
        # A configured judge (the page then runs its preflight); rendering a page sends nothing.
        os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        os.environ.setdefault("JUDGE_MODEL", "bench-model")
        print("  each run: 300 items marked by alice, 150 by bob (30 conflicts); judge endpoint configured")

        small, big = SIZES
        print(f"\nMedian of {args.repeats} timed executions after a warm-up (AppTest, seconds)")
        header = f"{'action':<32} {'1k':>8} {'100k':>8} {'ratio':>6}  goal"
        print(header)
        print("-" * len(header))
        missed: list[Action] = []
        for action in actions():
            medians = {n: statistics.median(measure(run_ids[n], action, args.repeats)) for n in SIZES}
            ratio = medians[big] / medians[small]
            verdict = "ok" if ratio <= action.goal else "MISSED"
            figures = f"{medians[small]:8.3f} {medians[big]:8.3f} {ratio:6.2f}"
            print(f"{action.name:<32} {figures}  <= {action.goal:g} {verdict}", flush=True)
            if ratio > action.goal:
                missed.append(action)
        to_profile = [a for a in actions() if args.profile_match and args.profile_match.lower() in a.name.lower()]
        if args.profile:
            to_profile += [a for a in missed if a.name not in {p.name for p in to_profile}]
        for action in to_profile:
            print(f"\nProfile of '{action.name}' on {big:,} rows:\n{profile(run_ids[big], action)}")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

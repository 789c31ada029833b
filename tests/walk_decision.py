"""Issue 37's "done when", tried from outside: two models on the same questions in four languages,
true accuracies known by construction, one file holding both models (a ``model`` column), saved
as the upload does, reviewed on each run's random sample by a reviewer who reads the truth, then
asked who is ahead (the head-to-head on the estimated truth that Compare, Model x language, the
CLI and the report lead with).

Each model's wrong answers often hedge with the golden answer inside, so the metrics call them
right: the adjudicated figures mislead and only the estimate can name the right model.

Run: ``.venv/bin/python tests/walk_decision.py [--seeds 20] [--reviews 150] [--rows 300]``. Prints
how often the lead sentence named the right model when the truths differ by 10 points, how often
it said "ahead" when they are equal, and, for the first seed, checks that the CLI (``compare
--json``, ``report``) says the same as the function the pages call. Exits non-zero when a check
fails: the right model named in under 80% of seeds, a false "ahead" on equal models in more than
10%, the wrong model ever named ahead, or the CLI and the pages disagreeing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import ingest  # noqa: E402
from scoring.estimate.stored_run import stored_final  # noqa: E402
from scoring.store import load_table, make_engine  # noqa: E402
from scoring.store.verdict_log import record_mark  # noqa: E402
from scoring.team_report.stored_head_to_head import stored_head_to_head  # noqa: E402

LANGUAGES = ("English", "Hindi", "Tamil", "Bengali")
DOMAINS = ("Literature", "Geography", "Festivals", "Art")


def dataset(rows: int, truths: dict[str, float], rng: np.random.Generator) -> tuple[bytes, dict[str, set[str]]]:
    """One CSV of both models' answers to ``rows`` questions, and per model the questions it got
    right. A right answer holds the golden answer; a wrong one is, half the time, a hedge that
    holds it too (the metrics pass it), else another answer."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "answer", "Domain", "language", "question_id", "model", "response"])
    right: dict[str, set[str]] = {m: set() for m in truths}
    ability = rng.normal(size=rows)  # some questions are harder for every model (pairing helps)
    for model, truth in truths.items():
        cut = np.quantile(ability, 1 - truth)
        for i in range(rows):
            golden = f"answer{i}"
            correct = ability[i] + rng.normal(scale=0.8) > cut
            if correct:
                right[model].add(f"q{i}")
                response = f"It is {golden}."
            elif rng.random() < 0.5:
                response = f"Either {golden} or answer{i + 1}, not sure."
            else:
                response = f"answer{i + 7}"
            writer.writerow([f"Question {i}?", golden, DOMAINS[i % 4], LANGUAGES[i % 4], f"q{i}", model, response])
    return out.getvalue().encode(), right


def review(engine, run_id: int, right: set[str], reviews: int) -> None:
    """Mark the first ``reviews`` rows of the run's review order (its random sample) by the truth."""
    stored = stored_final(engine, run_id)
    keys = stored.final["item_key"].to_list()
    ids = dict(zip(load_table(engine, run_id)["item_key"].to_list(), load_table(engine, run_id)["question_id"]))
    for idx in np.argsort(stored.rank)[:reviews]:
        key = keys[idx]
        record_mark(engine, key, run_id, "walker", "correct" if ids[key] in right else "wrong")


def one(seed: int, rows: int, reviews: int, gap: float, folder: Path) -> tuple[str, list[str], int, int]:
    """(the lead sentence, the per-language sentences, the two run ids) for one seed."""
    rng = np.random.default_rng(seed)
    truths = {"model-a": 0.647, "model-b": 0.647 - gap}
    data, right = dataset(rows, truths, rng)
    url = f"sqlite:///{folder / f'walk{seed}_{round(gap * 1000)}.db'}"
    engine = make_engine(url)
    try:
        runs = {r.run.model: r.run.id for r in ingest.save_file(engine, data, "both_models.csv")}
        for model, run_id in runs.items():
            review(engine, run_id, right[model], reviews)
        result = stored_head_to_head(engine, [runs["model-a"], runs["model-b"]])
    finally:
        engine.dispose()
    return result.sentences()[0], result.language_sentences(), runs["model-a"], runs["model-b"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--reviews", type=int, default=150)
    parser.add_argument("--rows", type=int, default=300)
    args = parser.parse_args()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for gap, label in ((0.107, "truths 10.7 points apart"), (0.0, "equal truths")):
            named = wrong = ahead = 0
            for seed in range(args.seeds):
                lead, _, a, b = one(seed, args.rows, args.reviews, gap, folder)
                says_ahead = " is ahead of " in lead
                ahead += says_ahead
                named += lead.startswith(f"#{a} ") and says_ahead
                wrong += lead.startswith(f"#{b} ") and says_ahead
                if seed == 0:
                    print(f"{label}, seed 0: {lead}")
            print(
                f"{label}: {args.rows} questions x 2 models, {args.reviews} reviews per model, {args.seeds} seeds: "
                f"'ahead' {ahead}/{args.seeds}, the right model named {named}, the wrong one {wrong}"
            )
            if gap:
                share = named / args.seeds
                verdict = "ok" if share >= 0.8 else "short"
                print(f"GOAL  right model named, {label}  {share:.2f}   goal >= 0.80    {verdict}")
                if wrong:
                    problems.append(f"{label}: the wrong model named ahead {wrong} times")
                if verdict == "short":
                    problems.append(f"{label}: the right model named in {named} of {args.seeds} seeds")
            else:
                share = ahead / args.seeds
                verdict = "ok" if share <= 0.1 else "short"
                print(f"GOAL  'ahead' said, {label}  {share:.2f}   goal <= 0.10    {verdict}")
                if verdict == "short":
                    problems.append(f"equal truths: 'ahead' in {ahead} of {args.seeds} seeds")
        lead, per_language, a, b = one(0, args.rows, args.reviews, 0.107, folder)  # the same runs again
        db = f"sqlite:///{folder / 'walk0_107.db'}"
        out = cli("compare", "--run", str(a), "--run", str(b), "--db", db, "--json")
        shown = json.loads(out.stdout) if out.returncode == 0 else {}
        said = json.dumps(shown.get("estimated_truth", {}), ensure_ascii=False)
        if lead.split(":")[0] not in out.stdout and lead.split(":")[0] not in said:
            problems.append(f"compare --json does not say the page's lead ({out.returncode}): {out.stderr[-300:]}")
        report = folder / "report.html"
        made = cli("report", "--runs", f"{a},{b}", "--db", db, "--out", str(report))
        if made.returncode != 0 or not report.is_file():
            problems.append(f"report failed: {made.stderr[-300:]}")
        print("per language (seed 0):", *per_language, sep="\n  ")
    print("\n".join(f"PROBLEM {p}" for p in problems) or "every check held")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m scoring compare A.csv B.csv [C.csv ...] [--run ID ...]``: runs side by side.

Prints each run's accuracy per domain and verdict source, the paired comparison of every pair on
the matched questions (b, c, n, difference with its interval, McNemar's p, Holm's p with more
than two runs, and the methods' names), the unmatched rows and the key used. Files come first in
the order given, then ``--run`` runs in theirs; stored runs bring their judge labels and final
verdicts. A file holding several models (its model column) is one run per model, so
``compare mixed.csv`` compares them. The database layer is imported only when ``--run`` is given
(a second of imports that comparing two files should not wait for).
"""

from __future__ import annotations

import argparse
import importlib
import json
from dataclasses import replace
from pathlib import Path

import polars as pl

from scoring.cli.common import add_input_flags, guarded, load_for_cli, register, write_csv
from scoring.compare import (
    ADJUSTMENT_METHOD,
    INTERVAL_METHOD,
    SOURCE_TITLES,
    SOURCES,
    TEST_METHOD,
    TEXT_KEY,
    UNKNOWN_RULE,
    MatchResult,
    PairedComparison,
    Run,
    SourceAccuracy,
    accuracy_table,
    check_key,
    match_runs,
    paired_comparisons,
    readable_matched,
    scored_run,
    unique_labels,
)
from scoring.core.errors import InputError
from scoring.core.file_models import models_of
from scoring.core.formatting import p_value, percent
from scoring.core.row_language import LANGUAGE, row_languages
from scoring.team_report import PAIRS_METHOD, language_pairs

#: Unmatched rows printed per run (``--unmatched F`` writes them all).
SHOWN_UNMATCHED = 10


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="responses files (CSV, TSV, JSONL, JSON, Parquet), given together (compared in this order, before "
        "any --run)",
    )
    add_input_flags(parser, responses=False)
    parser.add_argument(
        "--run",
        action="append",
        type=int,
        default=[],
        metavar="ID",
        help="a stored run by database id, after the files (repeat: --run 3 --run 5); "
        "brings its judge labels and adjudicated final verdicts",
    )
    key = parser.add_mutually_exclusive_group()
    key.add_argument("--on", help="comma-separated columns to match rows on (default: question,answer)")
    key.add_argument("--id", metavar="COLUMN", help="match rows on this id column (every run must have it)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--family",
        metavar="COLUMN",
        help="column naming each question's family (the same question in several languages) for the estimated "
        "truth's head-to-head (default: question_family, family, or the question id column)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="with two --run: per language, how many shared questions to review in each run to tell the models "
        "apart (--difference, --power)",
    )
    parser.add_argument(
        "--difference", type=float, default=0.03, help="the smallest difference worth knowing, a share (0.03)"
    )
    parser.add_argument("--power", type=float, default=0.8, help="the power asked of the plan (0.8)")
    parser.add_argument(
        "--put-in-scope",
        metavar="REVIEWER",
        help="with --plan: put the planned rows in each run's audit scope, recorded as added by REVIEWER",
    )
    parser.add_argument(
        "--by",
        choices=("domain", "language"),
        default="domain",
        help="domain (default); language: also every pair per row language (a language column; else the script)",
    )
    parser.add_argument("--out", help="write one row per matched question with every run's verdicts (CSV)")
    parser.add_argument("--unmatched", metavar="FILE", help="write every unmatched row with its reason (CSV)")
    parser.add_argument(
        "--db", help="database URL for --run (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)"
    )


def _key(args: argparse.Namespace) -> tuple[tuple[str, ...], bool]:
    if args.id is not None:
        if not args.id.strip():
            raise InputError("--id needs a column name.")
        return (args.id.strip(),), True
    if args.on is not None:
        cols = tuple(c.strip() for c in args.on.split(",") if c.strip())
        if not cols:
            raise InputError("--on needs at least one column name (e.g. --on question,answer).")
        return cols, len(cols) == 1 and cols[0] not in TEXT_KEY
    return TEXT_KEY, False


def with_row_languages(run: Run) -> Run:
    """``run`` whose rows carry ``language`` under the one rule every command follows
    (:func:`~scoring.core.row_language.row_languages`, as ``score --by language``): a row's own
    cell where not blank, else its script. A blank cell filed under "(no language)" here made its
    matched pairs vanish from the per-language sentences."""
    columns = [c for c in ("question", "answer", LANGUAGE) if c in run.table.columns]
    languages = row_languages(run.table.select(columns)).values
    return replace(run, table=run.table.with_columns(languages.alias(LANGUAGE)))


def load_runs(args: argparse.Namespace) -> list[Run]:
    """The files, scored, then the stored runs; labels are file names and ``#id name``. A file
    whose model column names several models is one run per model (``mixed.csv: A``), as the
    Upload page stores it: their rows are never one run."""
    tables, names = [], []
    for path in args.files:
        table = load_for_cli(path, args.columns, named=True).table
        models = models_of(table)
        several = len(models) > 1
        for model in models:
            tables.append(table.gather(model.rows) if several else table)
            names.append(f"{Path(path).name}: {model.shown}" if several else Path(path).name)
    if len(tables) + len(args.run) < 2:
        raise InputError("Give at least two runs to compare: files, --run ID, or both.")
    stored = []
    if args.run:
        module = importlib.import_module("scoring.compare.database_runs")
        engine = module.open_database(args.db)
        stored = [module.stored_run(engine, run_id) for run_id in args.run]
    labels = unique_labels(names + [r.label for r in stored])
    runs = [scored_run(label, table) for label, table in zip(labels, tables)]
    runs += [Run(label, r.table, r.sources, r.judge) for label, r in zip(labels[len(tables) :], stored)]
    return runs


def report(runs: list[Run], match: MatchResult, comparisons: list[PairedComparison], accuracy: pl.DataFrame) -> dict:
    """Everything the text report prints, as JSON-ready values (``accuracy``: :func:`accuracy_table`)."""
    counts = match.unmatched_counts()
    shown = match.unmatched.filter(pl.int_range(pl.len()).over("run_index") < SHOWN_UNMATCHED)
    return {
        "key": {"columns": list(match.key), "by_id": match.by_id, "text": match.key_text()},
        "matched": match.n_matched,
        "advice": match.advice(),
        "runs": [
            {
                "label": r.label,
                "rows": r.n_rows,
                "sources": list(r.sources),
                "unmatched": counts[r.label],
                **({"judge": r.judge} if r.judge else {}),
            }  # whose judge labels a stored run brings
            for r in runs
        ],
        "shared": [
            {"run_a": match.labels[i], "run_b": match.labels[j], "rows": n} for (i, j), n in match.shared.items()
        ],
        "accuracy_rows": "all rows of each run",
        "accuracy_unknown_rule": UNKNOWN_RULE,
        "accuracy": accuracy.to_dicts(),
        "methods": {
            "interval": INTERVAL_METHOD,
            "test": TEST_METHOD,
            "adjustment": ADJUSTMENT_METHOD if len(runs) > 2 else None,
        },
        "paired": [c.as_dict() for c in comparisons],
        "unmatched_shown": shown.to_dicts(),
    }


def _p(p: float | None) -> str:
    return "—" if p is None else p_value(p).removeprefix("p = ").replace("p < ", "<")


def _accuracy_cell(row: SourceAccuracy) -> str:
    if row.unknown:
        return f"{percent(row.accuracy_low)}–{percent(row.accuracy_high)}"
    return percent(row.accuracy_low)


def _accuracy_lines(runs: list[Run], table: pl.DataFrame) -> list[str]:
    width = max([len("run"), *(len(r.label) for r in runs)])
    lines = [f"Accuracy per run: all rows of each run, 95% Wilson interval; {UNKNOWN_RULE}."]
    for source in SOURCES:
        rows = [SourceAccuracy(**r) for r in table.filter(pl.col("source") == source).to_dicts()]
        if not rows:
            continue
        dwidth = max(len("domain"), *(len(r.domain) for r in rows))
        lines += ["", SOURCE_TITLES[source]]
        lines.append(
            f"{'domain':<{dwidth}}  {'run':<{width}} {'n':>7} {'correct':>8} {'unknown':>8}  {'accuracy':>13}  95% CI"
        )
        for r in sorted(rows, key=lambda r: (r.domain == "combined", r.domain)):
            lines.append(
                f"{r.domain:<{dwidth}}  {r.run:<{width}} {r.n:>7} {r.correct:>8} {r.unknown:>8}  "
                f"{_accuracy_cell(r):>13}  [{percent(r.ci_low)}, {percent(r.ci_high)}]"
            )
    return lines


def _paired_lines(match: MatchResult, comparisons: list[PairedComparison], several: bool) -> list[str]:
    lines = [
        f"Paired comparison on the {match.n_matched} matched questions (difference = accuracy A - B)",
        f"  interval: {INTERVAL_METHOD}",
        f"  test: {TEST_METHOD}",
    ]
    if several:
        lines.append(f"  adjustment: {ADJUSTMENT_METHOD} (p Holm)")
    if not comparisons:
        return [*lines, "  no source is shared by two runs"]
    width = max(len("run A"), *(len(c.run_a) for c in comparisons), *(len(c.run_b) for c in comparisons))
    head = (
        f"{'source':<12} {'run A':<{width}} {'run B':<{width}} {'n':>7} {'b':>6} {'c':>6} {'acc A':>7} "
        f"{'acc B':>7} {'diff':>7}  {'95% CI':<18} {'p':>8}"
    )
    lines += ["", head + (f" {'p Holm':>8}" if several else "")]
    for c in comparisons:
        diff = "—" if c.difference is None else f"{c.difference * 100:+.1f}%"
        line = (
            f"{c.source:<12} {c.run_a:<{width}} {c.run_b:<{width}} {c.n:>7} {c.b:>6} {c.c:>6} "
            f"{percent(c.accuracy_a):>7} {percent(c.accuracy_b):>7} {diff:>7}  "
            f"{f'[{c.ci_low * 100:+.1f}%, {c.ci_high * 100:+.1f}%]':<18} {_p(c.p_value):>8}"
        )
        lines.append(line + (f" {_p(c.p_holm):>8}" if several else ""))
    left_out = [c for c in comparisons if c.excluded]
    for c in left_out:
        lines.append(f"  {c.source} {c.run_a} vs {c.run_b}: {c.excluded} matched rows left out ({c.rows_used})")
    return lines


def _text(
    runs: list[Run], match: MatchResult, comparisons: list[PairedComparison], accuracy: pl.DataFrame, info: dict
) -> str:
    lines = [f"Compared {len(runs)} runs matched on {match.key_text()}: {match.n_matched} matched questions"]
    width = max(len(r.label) for r in runs)
    for r in info["runs"]:
        u = r["unmatched"]
        lines.append(
            f"  {r['label']:<{width}} {r['rows']:>8} rows, {u['total']} unmatched (duplicate key "
            f"{u['duplicate key']}, not in every run {u['not in every run']}, empty key {u['empty key']}); "
            f"sources: {', '.join(r['sources'])}" + (f"; judge: {r['judge']}" if r.get("judge") else "")
        )
    if len(runs) > 2:
        lines += [f"  shared keys {s['run_a']} & {s['run_b']}: {s['rows']}" for s in info["shared"]]
    if info["advice"]:
        hint = f" Try --id {match.id_column}." if match.id_column and not match.by_id else ""
        lines.append(f"note: {info['advice']}{hint}")
    lines += ["", *_accuracy_lines(runs, accuracy), "", *_paired_lines(match, comparisons, len(runs) > 2)]
    if info["unmatched_shown"]:
        lines += ["", f"Unmatched rows (first {SHOWN_UNMATCHED} per run; --unmatched FILE writes them all)"]
        for u in info["unmatched_shown"]:
            key = " / ".join(f"{c} {str(u.get(c, ''))[:40]!r}" for c in match.key)
            lines.append(f"  {u['run']} row {u['row']}: {u['reason']} ({u['detail']}): {key}")
    return "\n".join(lines)


def estimated_truth(args: argparse.Namespace) -> dict | None:
    """The head-to-head of the stored runs on their estimated true accuracies (None with fewer
    than two: a file carries no reviewed random sample), as the Compare page leads with it."""
    if len(args.run) < 2:
        return None
    module = importlib.import_module("scoring.team_report.stored_head_to_head")
    engine = importlib.import_module("scoring.compare.database_runs").open_database(args.db)
    return module.stored_head_to_head(engine, args.run, family=args.family).as_dict()


def decision_plan(args: argparse.Namespace) -> dict | None:
    """``--plan``: the decision plan of the two stored runs per language, and with
    ``--put-in-scope`` its rows in their audit scopes (None without ``--plan``)."""
    if not args.plan:
        if args.put_in_scope:
            raise InputError("--put-in-scope goes with --plan.")
        return None
    if len(args.run) != 2 or args.files:
        raise InputError("--plan needs exactly two stored runs (--run A --run B) and no file.")
    if not (0 < args.difference < 1 and 0 < args.power < 1):
        raise InputError("--difference and --power are shares between 0 and 1 (e.g. 0.03 and 0.8).")
    module = importlib.import_module("scoring.team_report.decision_scope")
    engine = importlib.import_module("scoring.compare.database_runs").open_database(args.db)
    plans = module.decision_plans(engine, args.run[0], args.run[1], args.difference, args.power, args.family)
    out: dict = {"plans": [{**p.as_dict(), "sentence": module.plan_sentence(p)} for p in plans]}
    if args.put_in_scope:
        out["scopes"] = list(module.put_in_scope(engine, args.run[0], args.run[1], plans, args.put_in_scope))
    return out


@register("compare", "compare runs side by side: per-run accuracy, paired tests, unmatched rows", _configure)
def cmd_compare(args: argparse.Namespace) -> int:
    """``python -m scoring compare``; see the module docstring."""

    def body() -> None:
        key, by_id = _key(args)
        runs = load_runs(args)
        check_key(runs, key, "--id column" if args.id is not None else "Key column")
        match = match_runs(runs, key, by_id=by_id)
        comparisons = paired_comparisons(match)
        if args.out:
            write_csv(readable_matched(match), args.out)
        if args.unmatched:
            write_csv(match.unmatched, args.unmatched)
        accuracy = accuracy_table(runs)
        info = report(runs, match, comparisons, accuracy)
        pairs = language_pairs([with_row_languages(r) for r in runs]) if args.by == "language" else None
        if pairs is not None:
            info["by_language"] = {
                "pairs": [p.as_dict() for p in pairs.pairs],
                "duplicates": [{"run": dup, "same_content_as": first} for dup, first in pairs.duplicates],
                "method": PAIRS_METHOD,
            }
        truth = estimated_truth(args)
        info["estimated_truth"] = truth
        plan = decision_plan(args)
        if plan is not None:
            info["decision_plan"] = plan
        if args.json:
            print(json.dumps(info, ensure_ascii=False, indent=2))
            return
        if truth is not None:
            several = truth["language_sentences"] if len(truth["by_language"]) > 1 else []
            print("\n".join(truth["lead"] + several + truth["automatic_sentences"]))
            print(f"method: {truth['method']}\n\nOn verdicts (not the estimated truth):")
        print(_text(runs, match, comparisons, accuracy, info))
        if plan is not None:
            print("\nDecision plan\n" + "\n".join(p["sentence"] for p in plan["plans"]))
            if plan.get("scopes"):
                print("Put in the audit scopes (now holding {} and {} rows).".format(*plan["scopes"]))
        if pairs is not None:
            print("\nPer language (each pair on the questions both answered in that language)")
            print("\n".join(p.sentence for p in pairs.pairs) or "No pair of runs shares a question in any language.")
            for line in pairs.duplicate_sentences():
                print(line)
            print(f"method: {PAIRS_METHOD}")

    return guarded(body)

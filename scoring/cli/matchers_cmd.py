"""``python -m scoring matchers --run ID [--by language] [--json]``: which matcher agrees with people.

For the run as a whole (and each language with ``--by language``): the spec's two metrics and the
optional matchers (normalised exact, stemmed word overlap, chrF) against the reviewed random
sample: precision, recall and agreement with their 95% intervals, the rows a human must see if that
matcher triaged, and the recommended matcher at the team's precision target (or "the sample is too
small to tell"). Method: :mod:`scoring.estimate.matcher_quality`.
"""

from __future__ import annotations

import argparse
import json

from scoring.cli.common import guarded, register
from scoring.core.errors import InputError
from scoring.core.formatting import percent
from scoring.core.metric_names import METRIC_COLUMNS
from scoring.estimate.matcher_quality import (
    ALL_ROWS,
    METHOD,
    NAMES,
    figures_table,
    matcher_quality,
    recommendations,
)
from scoring.estimate.stored_matchers import report_set, stored_matcher_sample
from scoring.match import CHRF_PARAMS, MATCHERS, NOT_STEMMED_NOTE, chrf_threshold, parse_matchers, target_precision
from scoring.store import open_database


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, type=int, help="id of the stored run")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--by", choices=["language"], help="also one block per row language")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--matchers",
        metavar="LIST",
        help="which optional matchers to compare beside the spec's two, comma-separated, or 'all' "
        "(default: those switched on for the run on the Matchers page; every one if none was saved)",
    )
    parser.add_argument(
        "--target",
        type=float,
        metavar="P",
        help="the precision (a share, e.g. 0.95) the recommended matcher must reach "
        "(default: MATCH_TARGET_PRECISION, 0.95)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        metavar="T",
        help="chrF score (0-100) from which chrF calls a row correct (default: MATCH_CHRF_THRESHOLD, 30). "
        "Stemmed word overlap stems English, Hindi, Tamil and Nepali only; other languages are NOT stemmed",
    )


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "—"
    if low is None or high is None:
        return f"{percent(value)} (no interval)"
    return f"{percent(value)} [{percent(low)}, {percent(high)}]"


def text_report(head: str, table: list[dict], recs: list[dict], target: float, threshold: float) -> str:
    """The report as the command prints it (also the page's download)."""
    lines = [head, f"Matchers against people (target precision {target:.0%}; chrF threshold {threshold:g})"]
    width = max(len("scope"), *(len(r["scope"]) for r in table))
    lines.append(
        f"{'scope':<{width}} {'matcher':<28} {'rows':>7} {'reviewed':>8} {'passes':>7}  {'precision (95%)':<24} "
        f"{'recall (95%)':<24} {'agreement (95%)':<24} {'to review':>9}  stemmed"
    )
    for r in table:
        stem = "" if r["stemmed"] is None else ("yes" if r["stemmed"] else "no")
        lines.append(
            f"{r['scope']:<{width}} {r['title']:<28} {r['rows']:>7} {r['reviewed']:>8} {percent(r['pass_share']):>7}  "
            f"{_interval(r['precision'], r['precision_low'], r['precision_high']):<24} "
            f"{_interval(r['recall'], r['recall_low'], r['recall_high']):<24} "
            f"{_interval(r['agreement'], r['agreement_low'], r['agreement_high']):<24} {r['queue']:>9}  {stem}"
        )
    lines += ["", "Recommendation"] + [f"  {r['scope']}: {r['text']}" for r in recs]
    params = ", ".join(f"{k}={v}" for k, v in CHRF_PARAMS.items())
    lines += ["", f"method: {METHOD}", f"stemming: {NOT_STEMMED_NOTE}", f"chrF: sacrebleu sentence chrF ({params})"]
    return "\n".join(lines)


@register("matchers", "the spec's metrics and the optional matchers against people, per language", _configure)
def cmd_matchers(args: argparse.Namespace) -> int:
    """``python -m scoring matchers --run ID``; see the module docstring."""

    def body() -> None:
        target = target_precision() if args.target is None else args.target
        if not 0 < target <= 1:
            raise InputError(f"--target must be a share between 0 and 1, e.g. 0.95, not {target:g}.")
        threshold = chrf_threshold() if args.threshold is None else args.threshold
        if not 0 <= threshold <= 100:
            raise InputError(f"--threshold must be a chrF score between 0 and 100, not {threshold:g}.")
        engine = open_database(args.db)
        if args.matchers is None:
            names = report_set(engine, args.run)
        else:
            chosen = MATCHERS if args.matchers.strip() == "all" else parse_matchers(args.matchers)
            names = [*METRIC_COLUMNS, *chosen]
        run, sample = stored_matcher_sample(engine, args.run, threshold)
        figures = matcher_quality(sample, names, by_language=args.by == "language")
        table = figures_table(figures).to_dicts()
        recs = [r.as_dict() for r in recommendations(figures, target)]
        info = run.info
        if args.json:
            out = {
                "run": {"id": info.id, "name": info.name, "model": info.model, "rows": info.n_rows},
                "target_precision": target,
                "chrf_threshold": threshold,
                "chrf_params": CHRF_PARAMS,
                "matchers": {m: NAMES[m] for m in names},
                "figures": table,
                "recommendations": recs,
                "method": METHOD,
                "stemming": NOT_STEMMED_NOTE,
                "all_rows_scope": ALL_ROWS,
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))
            return
        reviewed = int(sample["reviewed"].sum())
        head = f"Run #{info.id} {info.name}: {info.n_rows:,} rows, {reviewed:,} reviewed rows of its random sample"
        head += f"\nMatchers compared: {', '.join(NAMES[m] for m in names)}"
        print(text_report(head, table, recs, target, threshold))

    return guarded(body)

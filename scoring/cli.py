"""Command-line front ends with the spec scripts' flags.

Reports go to stdout, warnings to stderr, and bad input ends with one line on stderr and exit
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from scoring.errors import InputError
from scoring.formatting import p_value
from scoring.loader import LoadedRun, load_path
from scoring.report import (
    METRICS,
    accuracy_by_domain,
    bucket_counts,
    format_accuracy,
    mcnemar,
    score_frame,
)

EXIT_BAD_INPUT = 2
NORMALIZE_LABEL = "DIAGNOSTIC --normalize: NFC, format characters removed, digits folded; not the spec protocol"
METRIC_TITLES = {"exact_substring": "Exact substring", "word_overlap": "Word overlap"}
OUT_COLUMNS = {
    "exact_substring": {"exact_correct": "is_correct", "is_blank": "is_blank"},
    "word_overlap": {
        "overlap_correct": "is_correct",
        "is_blank": "is_blank",
        "matching_words": "matching_words",
        "total_golden_words": "total_golden_words",
    },
}
SCORE_OUT = ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket"]


def fail(message: str) -> int:
    """One clear line on stderr; the caller returns the exit code."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--responses", required=True, help="CSV/TSV with answer and response columns")
    parser.add_argument("--out", help="write per-row verdicts to this CSV (UTF-8)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--normalize", action="store_true", help="diagnostic: NFC, strip format chars, fold digits")


def load_for_cli(path: str) -> LoadedRun:
    run = load_path(path)
    for warning in run.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return run


def write_csv(frame: pd.DataFrame, out: str) -> None:
    """UTF-8, input order, booleans as True/False."""
    try:
        frame.to_csv(Path(out), index=False, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"Cannot write {out!r}: {exc.strerror or exc}.") from None


def metric_report(scored: pd.DataFrame, metric: str, normalized: bool) -> dict:
    rows = accuracy_by_domain(scored, METRICS[metric])
    return {
        "metric": metric,
        "normalized": normalized,
        "rows": len(scored),
        "domains": [r.as_dict() for r in rows[:-1]],
        "combined": rows[-1].as_dict(),
    }


def _flips(raw: pd.DataFrame, normed: pd.DataFrame, col: str) -> int:
    return int((raw[col] != normed[col]).sum())


def run_metric(metric: str, argv: Sequence[str] | None = None) -> int:
    """``python -m scoring.exact_substring`` / ``scoring.word_overlap``."""
    parser = argparse.ArgumentParser(
        prog=f"python -m scoring.{metric}", description=f"{METRIC_TITLES[metric]} accuracy per domain."
    )
    add_common_flags(parser)
    args = parser.parse_args(argv)

    def body() -> None:
        run = load_for_cli(args.responses)
        scored = score_frame(run.frame, normalize=args.normalize)
        report = metric_report(scored, metric, args.normalize)
        if args.normalize:
            report["diagnostic"] = NORMALIZE_LABEL
            raw = score_frame(run.frame)
            report["flipped_by_normalize"] = _flips(raw, scored, METRICS[metric])
        if args.out:
            cols = OUT_COLUMNS[metric]
            out = run.frame.copy()
            for src, dst in cols.items():
                out[dst] = scored[src]
            write_csv(out, args.out)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
            return
        if args.normalize:
            print(NORMALIZE_LABEL)
        print(f"{METRIC_TITLES[metric]}: {len(scored)} rows")
        print(format_accuracy(accuracy_by_domain(scored, METRICS[metric])))
        if args.normalize:
            print(f"verdicts flipped by normalisation: {report['flipped_by_normalize']}")

    return guarded(body)


def guarded(body: Callable[[], None]) -> int:
    """Run a command body, turning input errors into one stderr line and exit code 2."""
    try:
        body()
    except InputError as exc:
        return fail(str(exc))
    except BrokenPipeError:
        return 0
    return 0


def score_report(scored: pd.DataFrame, normalized: bool) -> dict:
    test = mcnemar(scored)
    return {
        "normalized": normalized,
        "rows": len(scored),
        "metrics": {m: metric_report(scored, m, normalized) for m in METRICS},
        "buckets": bucket_counts(scored),
        "mcnemar": {"exact_only": test.exact_only, "overlap_only": test.overlap_only, "p_value": test.p_value},
    }


def cmd_score(args: argparse.Namespace) -> int:
    def body() -> None:
        run = load_for_cli(args.responses)
        scored = score_frame(run.frame, normalize=args.normalize)
        report = score_report(scored, args.normalize)
        if args.normalize:
            report["diagnostic"] = NORMALIZE_LABEL
            raw = score_frame(run.frame)
            report["flipped_by_normalize"] = {m: _flips(raw, scored, c) for m, c in METRICS.items()}
        if args.out:
            write_csv(scored[[*run.frame.columns, *SCORE_OUT]], args.out)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
            return
        if args.normalize:
            print(NORMALIZE_LABEL)
        for metric, col in METRICS.items():
            print(f"{METRIC_TITLES[metric]}: {len(scored)} rows")
            print(format_accuracy(accuracy_by_domain(scored, col)))
            print()
        print("Agreement buckets")
        buckets = pd.DataFrame(report["buckets"]).T
        buckets.index.name = "domain"
        print(buckets.to_string())
        m = report["mcnemar"]
        print(
            f"\nMcNemar exact test (exact_only={m['exact_only']}, overlap_only={m['overlap_only']}): "
            f"{p_value(m['p_value'])}"
        )
        if args.normalize:
            flips = report["flipped_by_normalize"]
            print(
                f"verdicts flipped by normalisation: exact {flips['exact_substring']}, "
                f"overlap {flips['word_overlap']}"
            )

    return guarded(body)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def register(name: str, help_text: str, configure: Callable[[argparse.ArgumentParser], None]):
    """Decorator: add a subcommand to ``python -m scoring`` (later modules add export, compare)."""

    def wrap(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = (help_text, configure, func)
        return func

    return wrap


register("score", "both metrics, agreement buckets and McNemar's test", add_common_flags)(cmd_score)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring <command>``."""
    import scoring.commands  # noqa: F401  (registers the subcommands that live elsewhere)

    parser = argparse.ArgumentParser(prog="python -m scoring", description="Answer-review scoring tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, configure, _) in COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return COMMANDS[args.command][2](args)

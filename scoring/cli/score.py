"""``python -m scoring.exact_substring``, ``python -m scoring.word_overlap`` and
``python -m scoring score``: the spec's deterministic scorers as command lines."""

import argparse
import contextlib
import importlib
import json
import sys
import threading
from collections.abc import Sequence

import polars as pl

from scoring.cli.common import add_common_flags, guarded, load_for_cli, register, write_csv
from scoring.core.file_models import models_line, models_of
from scoring.core.formatting import p_value
from scoring.core.loader import LoadedRun
from scoring.core.metric_names import SPEC_NAMES, TITLES
from scoring.core.report import (
    METRICS,
    AccuracyRow,
    accuracy_by_domain,
    bucket_counts,
    format_accuracy,
    format_buckets,
    mcnemar,
    score_table,
)
from scoring.core.row_language import LANGUAGE, row_languages
from scoring.match import (
    CHRF_PARAMS,
    MATCHER_COLUMNS,
    MATCHERS,
    NOT_STEMMED_NOTE,
    chrf_threshold,
    parse_matchers,
    stemming_by_language,
)
from scoring.match import TITLES as MATCHER_TITLES

NORMALIZE_LABEL = "DIAGNOSTIC --normalize: NFC, format characters removed, digits folded; not the spec protocol"
METRIC_TITLES = {SPEC_NAMES[key]: TITLES[key] for key in SPEC_NAMES}
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


def scored_table(run: LoadedRun, normalize: bool = False) -> pl.DataFrame:
    """The loaded rows with both verdicts, on polars; ``--normalize`` takes the Python path."""
    return score_table(run.table, normalize=normalize)


def metric_report(scored: pl.DataFrame, metric: str, normalized: bool) -> dict:
    rows = accuracy_by_domain(scored, METRICS[metric])
    return {
        "metric": metric,
        "normalized": normalized,
        "rows": len(scored),
        "domains": [r.as_dict() for r in rows[:-1]],
        "combined": rows[-1].as_dict(),
    }


def _flips(raw: pl.DataFrame, normed: pl.DataFrame, col: str) -> int:
    return int((raw[col] != normed[col]).sum())


def run_metric(metric: str, argv: Sequence[str] | None = None) -> int:
    """``python -m scoring.exact_substring`` / ``scoring.word_overlap``."""
    parser = argparse.ArgumentParser(
        prog=f"python -m scoring.{metric}", description=f"{METRIC_TITLES[metric]} accuracy per domain."
    )
    add_common_flags(parser)
    args = parser.parse_args(argv)

    def body() -> None:
        run = load_for_cli(args.responses, args.columns)
        models = models_of(run.table)
        if len(models) > 1:  # the spec's script pools every row, as specified: say so, on stderr only
            print(
                f"warning: the file holds {models_line([m.named for m in models])}; these figures pool them "
                "(python -m scoring score reports each model).",
                file=sys.stderr,
            )
        scored = scored_table(run, args.normalize)
        report = metric_report(scored, metric, args.normalize)
        if args.normalize:
            report["diagnostic"] = NORMALIZE_LABEL
            raw = scored_table(run)
            report["flipped_by_normalize"] = _flips(raw, scored, METRICS[metric])
        if args.out:
            cols = OUT_COLUMNS[metric]
            write_csv(run.table.with_columns(scored[src].alias(dst) for src, dst in cols.items()), args.out)
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


def score_report(scored: pl.DataFrame, normalized: bool) -> dict:
    test = mcnemar(scored)
    return {
        "normalized": normalized,
        "rows": len(scored),
        "metrics": {m: metric_report(scored, m, normalized) for m in METRICS},
        "buckets": bucket_counts(scored),
        "mcnemar": {"exact_only": test.exact_only, "overlap_only": test.overlap_only, "p_value": test.p_value},
    }


MATCHERS_LABEL = "Optional matchers (not the spec's protocols; --matchers)"


def configure_score(parser: argparse.ArgumentParser) -> None:
    add_common_flags(parser)
    parser.add_argument(
        "--by",
        choices=("domain", "language"),
        default="domain",
        help="domain (default), or language: each row's language column, else its script (never guessed as a "
        "language); the report and --json group by it",
    )
    parser.add_argument(
        "--matchers",
        metavar="LIST",
        help=f"also score with these optional matchers, comma-separated: {', '.join(MATCHERS)} (a verdict "
        "column each beside the spec's two; off by default). norm_exact: exact substring after NFC, "
        "ZWJ/ZWNJ/soft hyphen removed, nukta folded, edge punctuation stripped, casefold; stem_overlap: word "
        "overlap on Snowball stems, for English, Hindi, Tamil and Nepali only (other languages, or a "
        "script name, are NOT stemmed), the language read from a language column; chrf: sacrebleu's "
        "default sentence chrF >= MATCH_CHRF_THRESHOLD (default 30)",
    )


def warm_up_matchers() -> threading.Thread:
    """Load the matchers' code (numba, the compiled kernels, the character tables: most of a
    second) on a thread while the main one reads and scores the file, which mostly runs outside
    the GIL in polars. A failure here is left for the real call to report."""

    def run() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module("scoring.match.scorers").warm_up()

    thread = threading.Thread(target=run, name="matchers-warm-up", daemon=True)
    thread.start()
    return thread


def with_matchers(scored: pl.DataFrame, names: tuple[str, ...], normalized: bool) -> pl.DataFrame:
    """``scored`` with one verdict column per matcher; the matchers read the raw pair (they
    normalise in their own way), so the spec's overlap may spare the stemmer only when raw."""
    overlap = None if normalized else scored["overlap_correct"]
    scorers = importlib.import_module("scoring.match.scorers")  # sacrebleu and numba: only when asked for
    return scored.hstack(scorers.score_matchers(scored, names, overlap=overlap))


def matchers_report(scored: pl.DataFrame, names: tuple[str, ...]) -> dict:
    """Each matcher's accuracy per domain, and what it did: chrF's parameters and threshold, and
    which languages the stemmer stemmed."""
    out = {}
    for name in names:
        rows = accuracy_by_domain(scored, MATCHER_COLUMNS[name])
        entry = {
            "title": MATCHER_TITLES[name],
            "domains": [r.as_dict() for r in rows[:-1]],
            "combined": rows[-1].as_dict(),
        }
        if name == "chrf":
            entry |= {"threshold": chrf_threshold(), "params": CHRF_PARAMS}
        if name == "stem_overlap":
            languages = scored["language"] if "language" in scored.columns else pl.Series([""])
            entry |= {"stemmed": stemming_by_language(languages), "note": NOT_STEMMED_NOTE}
        out[name] = entry
    return out


def print_matchers(report: dict) -> None:
    print(f"\n{MATCHERS_LABEL}")
    for entry in report.values():
        print(f"{entry['title']}: {entry['combined']['n']} rows")
        print(format_accuracy([*map(_row, entry["domains"]), _row(entry["combined"])]))
        if "threshold" in entry:
            params = ", ".join(f"{key}={value}" for key, value in entry["params"].items())
            print(f"chrF: sacrebleu's sentence chrF ({params}), correct when >= {entry['threshold']:g}")
        if "stemmed" in entry:
            said = ", ".join(
                f"{lang or '(no language)'}: {'yes' if yes else 'no'}" for lang, yes in entry["stemmed"].items()
            )
            print(f"stemmed: {said}")
        print()


def _row(values: dict) -> AccuracyRow:
    return AccuracyRow(**values)


def by_language(scored: pl.DataFrame, run: LoadedRun) -> dict:
    """Each metric's accuracy and the buckets per row language (:func:`row_languages`)."""
    keyed = scored.with_columns(row_languages(run.table, "", run.language_from).values.alias(LANGUAGE))
    return {
        "metrics": {m: [r.as_dict() for r in accuracy_by_domain(keyed, METRICS[m], LANGUAGE)] for m in METRICS},
        "buckets": bucket_counts(keyed, LANGUAGE),
    }


def print_by_language(report: dict) -> None:
    for metric, rows in report["metrics"].items():
        print(f"{METRIC_TITLES[metric]} by language")
        print(format_accuracy([_row(r) for r in rows], "language"))
        print()
    print("Agreement buckets by language")
    print(format_buckets(report["buckets"], "language"))


def full_report(
    run: LoadedRun, scored: pl.DataFrame, raw: pl.DataFrame | None, args: argparse.Namespace, names: tuple[str, ...]
) -> dict:
    """``score``'s report of ``run``'s rows (``scored``: their verdicts; ``raw``: without
    ``--normalize``, when it was given)."""
    report = score_report(scored, args.normalize)
    if getattr(args, "by", "domain") == "language":
        report["by_language"] = by_language(scored, run)
    if names:
        report["matchers"] = matchers_report(scored, names)
    if raw is not None:
        report["diagnostic"] = NORMALIZE_LABEL
        report["flipped_by_normalize"] = {m: _flips(raw, scored, c) for m, c in METRICS.items()}
    return report


def model_runs(run: LoadedRun) -> list[tuple[str, LoadedRun, pl.Series]]:
    """Each model's rows of ``run`` as a run of its own, with their places in the file: one entry
    for a file of one model (:func:`scoring.core.file_models.models_of`)."""
    models = models_of(run.table)
    if len(models) == 1:
        return [(models[0].model, run, models[0].rows)]
    out = []
    for model in models:
        table = run.table.gather(model.rows)
        out.append((model.shown, LoadedRun(table, format=run.format, language_from=run.language_from), model.rows))
    return out


def cmd_score(args: argparse.Namespace) -> int:
    def body() -> None:
        names = parse_matchers(args.matchers)
        if names:
            warm_up_matchers()
        run = load_for_cli(args.responses, args.columns)
        scored = scored_table(run, args.normalize)
        if names:
            scored = with_matchers(scored, names, args.normalize)
        raw = scored_table(run) if args.normalize else None
        if args.out:
            write_csv(scored.select(*run.table.columns, *SCORE_OUT, *(MATCHER_COLUMNS[n] for n in names)), args.out)
        parts = model_runs(run)
        if len(parts) == 1:
            report = full_report(run, scored, raw, args, names)
            if args.json:
                print(json.dumps(report, ensure_ascii=False, indent=2))
            else:
                print_report(report, scored, args, names)
            return
        # Several models in one file: a report per model, never their rows pooled.
        reports = []
        for model, part, rows in parts:
            own = scored.gather(rows)
            reports.append(
                (model, own, full_report(part, own, raw.gather(rows) if raw is not None else None, args, names))
            )
        if args.json:
            said = [{"model": model, **report} for model, _, report in reports]
            print(json.dumps({"models": said}, ensure_ascii=False, indent=2))
            return
        print(f"{models_line([m.named for m in models_of(run.table)])}; a report for each\n")
        for model, own, report in reports:
            print(f"=== Model {model}: {len(own)} rows ===")
            print_report(report, own, args, names)
            print()

    return guarded(body)


def print_report(report: dict, scored: pl.DataFrame, args: argparse.Namespace, names: tuple[str, ...]) -> None:
    """``score``'s report as text."""
    if args.normalize:
        print(NORMALIZE_LABEL)
    for metric, col in METRICS.items():
        print(f"{METRIC_TITLES[metric]}: {len(scored)} rows")
        print(format_accuracy(accuracy_by_domain(scored, col)))
        print()
    print("Agreement buckets")
    print(format_buckets(report["buckets"]))
    m = report["mcnemar"]
    print(
        f"\nMcNemar exact test (exact_only={m['exact_only']}, overlap_only={m['overlap_only']}): "
        f"{p_value(m['p_value'])}"
    )
    if args.normalize:
        flips = report["flipped_by_normalize"]
        print(f"verdicts flipped by normalisation: exact {flips['exact_substring']}, overlap {flips['word_overlap']}")
    if names:
        print_matchers(report["matchers"])
    if "by_language" in report:
        print()
        print_by_language(report["by_language"])


register("score", "both metrics, agreement buckets and McNemar's test", configure_score)(cmd_score)

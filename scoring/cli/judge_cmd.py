"""``python -m scoring.llm_judge --responses F [--limit N] [--out F] [--json] [--model M]
[--base-url U] [--concurrency K] [--bucket overlap_only]``.

Judge accuracy per domain and combined, like the other scorers, with a tqdm bar on stderr and a
summary of requests sent, cache hits, tokens and failures. Verdicts are cached in the review
database (``REVIEW_DB_URL``, same default as the dashboard), so a re-run sends nothing new.

Exit codes: 0 every row judged; 1 some requests failed (ERROR rows, reported and left out of the
accuracy: re-run to retry them); 2 bad input or configuration (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import pandas as pd
from sqlalchemy.exc import SQLAlchemyError
from tqdm import tqdm

from scoring.cli.common import add_input_flags, fail, load_for_cli, write_csv
from scoring.core.errors import InputError
from scoring.core.protocols import BUCKETS
from scoring.core.report import score_frame
from scoring.judge import (
    ERROR,
    PROMPT_VERSION,
    JudgeRun,
    JudgeSettings,
    format_judge_accuracy,
    items_from_frame,
    judge_accuracy,
    judge_run,
    redact,
)
from scoring.store import database_url, display_url, make_engine

EXIT_FAILURES = 1
OUT_COLUMNS = ["judge_label", "judge_raw", "is_correct", "is_blank"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scoring.llm_judge",
        description="LLM-judge accuracy per domain (any OpenAI-compatible endpoint; verdicts cached).",
        epilog=(
            "Endpoint, key and model come from the flags, else OPENAI_BASE_URL, OPENAI_API_KEY and "
            "JUDGE_MODEL (environment or .streamlit/secrets.toml). Exit codes: 0 all judged, "
            "1 some requests failed, 2 bad input or configuration."
        ),
    )
    add_input_flags(parser)
    parser.add_argument("--limit", type=int, help="judge only the first N rows (after --bucket)")
    parser.add_argument("--out", help="write per-row verdicts to this CSV (UTF-8)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--model", help="judge model (default: JUDGE_MODEL)")
    parser.add_argument("--base-url", dest="base_url", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--concurrency", type=int, help="requests in flight at once (default 8)")
    parser.add_argument("--bucket", choices=BUCKETS, help="judge only rows of this agreement bucket")
    return parser


def _engine_for_cli():
    url = database_url()
    try:
        return make_engine(url)
    except SQLAlchemyError as exc:
        raise InputError(f"Cannot open the review database {display_url(url)}: {type(exc).__name__}.") from None


def _out_frame(original: pd.DataFrame, scored: pd.DataFrame, run: JudgeRun) -> pd.DataFrame:
    out = original.loc[scored.index].copy()
    out["judge_label"] = [r.label for r in run.results]
    out["judge_raw"] = [f"error: {r.error_class}" if r.label == ERROR else r.raw for r in run.results]
    # Unscored rows (UNPARSED, ERROR, CANCELLED) get an empty is_correct, never a silent False.
    out["is_correct"] = pd.array([r.is_correct for r in run.results], dtype="boolean")
    out["is_blank"] = [r.is_blank for r in run.results]
    return out


def _summary_line(run: JudgeRun) -> str:
    s = run.summary
    cost = f", cost ${s.cost:.4f}" if s.cost is not None else ""
    failures = ", ".join(f"{name} x{count}" for name, count in s.error_classes.items()) or "none"
    return (
        f"requests sent: {s.requests} (SDK retries {s.retries}); cache hits: {s.cached} rows; "
        f"identical rows sent once: {s.shared}; blank (not sent): {s.blank}; "
        f"tokens: {s.prompt_tokens} prompt + {s.completion_tokens} completion{cost}; "
        f"unparsed: {s.unparsed}; failures: {s.errors} ({failures})"
    )


def run_cli(args: argparse.Namespace, settings: JudgeSettings) -> int:
    """The command body; raises InputError for anything the user must fix."""
    settings.check()
    if args.limit is not None and args.limit < 0:
        raise InputError(f"--limit must be 0 or more (got {args.limit}).")
    loaded = load_for_cli(args.responses, args.columns)
    scored = score_frame(loaded.frame)
    if args.bucket:
        scored = scored[scored["bucket"] == args.bucket]
    if args.limit is not None:
        scored = scored.head(args.limit)
    engine = _engine_for_cli()
    items = items_from_frame(scored)
    with tqdm(total=len(items), file=sys.stderr, unit="row", desc="judge", dynamic_ncols=True) as bar:
        run = judge_run(engine, settings, items, progress=lambda done, _total: bar.update(done - bar.n))
    if run.fatal_error:
        raise InputError(
            f"The judge endpoint refused the request ({run.fatal_error}): check the base URL "
            f"{settings.public()['base_url']!r}, the model {settings.model!r} and the API key."
        )
    judged = scored.copy()
    judged["judge_label"] = [r.label for r in run.results]
    rows = judge_accuracy(judged)
    if args.out:
        write_csv(_out_frame(loaded.frame, scored, run), args.out)
    summary = run.summary
    if args.json:
        report = {
            "metric": "llm_judge",
            "judge": settings.public(),
            "rows": len(judged),
            "bucket": args.bucket,
            "domains": [r.as_dict() for r in rows[:-1]],
            "combined": rows[-1].as_dict(),
            "summary": summary.as_dict(),
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        scope = f", bucket {args.bucket}" if args.bucket else ""
        print(f"LLM judge (model {settings.model}, prompt {PROMPT_VERSION}{scope}): {len(judged)} rows")
        print(format_judge_accuracy(rows))
        print(_summary_line(run))
    if summary.unparsed:
        print(
            f"warning: {summary.unparsed} reply(ies) held no single label: UNPARSED, left out of accuracy.",
            file=sys.stderr,
        )
    if summary.errors:
        print(
            f"warning: {summary.errors} request(s) failed after the SDK's retries "
            f"({', '.join(summary.error_classes)}): ERROR, left out of accuracy; re-run to retry them.",
            file=sys.stderr,
        )
        return EXIT_FAILURES
    return EXIT_FAILURES if summary.cancelled else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; input and configuration errors become one stderr line and exit code 2."""
    args = build_parser().parse_args(argv)
    secret = ""
    try:
        settings = JudgeSettings.from_env(
            {"model": args.model, "base_url": args.base_url, "concurrency": args.concurrency}
        )
        secret = settings.api_key
        return run_cli(args, settings)
    except InputError as exc:
        return fail(redact(str(exc), secret))
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("error: interrupted; verdicts received so far are saved, re-run to continue.", file=sys.stderr)
        return 130

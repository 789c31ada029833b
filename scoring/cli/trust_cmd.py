"""``python -m scoring judge-trust --run ID``: can this run's judge be trusted?

On the estimate's random sample (the rows ``python -m scoring estimate`` counts), the judge
labels the estimate uses against the reviewers: the confusion matrix (with unparsed and
not-judged rows), raw agreement and Cohen's kappa with 95% intervals, per bucket and per domain;
the rows where they disagree; then every judge configuration that labelled the run side by side,
with McNemar's exact p and Newcombe's interval per pair. ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import json

import polars as pl

from scoring.cli.common import guarded, register
from scoring.core.formatting import percent
from scoring.estimate.judge_trust import (
    AGREEMENT_METHOD,
    KAPPA_METHOD,
    Trust,
    compare_configs,
    confusion_frame,
    disagreements,
    trust,
    trust_by,
    trust_frame,
    with_languages,
)
from scoring.estimate.stored_run import stored_estimate
from scoring.estimate.stored_trust import TrustData, trust_data
from scoring.store import judge_choice, open_database
from scoring.store.judge_choice import ANY_CONFIG

MAX_ROWS_LISTED = 20  #: disagreement rows named in the text report (all of them in --json)


#: Said by --by language when every reviewed row is in one language.
ONE_LANGUAGE = "By language: the reviewed rows are all in one language."


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, type=int, help="id of the stored run")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--by",
        choices=("domain", "language"),
        default="domain",
        help="domain (default); language: also the judge against the reviewers per row language",
    )


def _fixed(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _scope_line(row: dict, width: int) -> str:
    return (
        f"{row['scope']:<{width}} {row['reviewed']:>8} {row['judged']:>6} {percent(row['agreement']):>9} "
        f"[{percent(row['agreement_low'])}, {percent(row['agreement_high'])}]  {_fixed(row['kappa']):>6} "
        f"[{_fixed(row['kappa_low'])}, {_fixed(row['kappa_high'])}]  {row['unparsed']:>8} {row['not_judged']:>10}"
    )


def _table(frame: pl.DataFrame, title: str) -> list[str]:
    rows = frame.to_dicts()
    width = max(len(title), *(len(r["scope"]) for r in rows))
    head = (
        f"{title:<{width}} {'reviewed':>8} {'judged':>6} {'agreement':>9} {'(95%)':<16} {'kappa':>6} "
        f"{'(95%)':<16} {'unparsed':>8} {'not judged':>10}"
    )
    return [head, *(_scope_line(r, width) for r in rows)]


def report(data: TrustData, sample: pl.DataFrame | None = None) -> dict:
    """Everything the text report prints, as JSON-ready values; ``per_language`` when the
    ``sample``'s rows are in more than one language."""
    rows = data.in_use_rows()
    overall = trust(rows)
    names = [n for n in data.rows if n != ANY_CONFIG]
    keyed = with_languages(rows, sample) if sample is not None else rows
    multilingual = "language" in keyed.columns and keyed["language"].n_unique() > 1
    by_language = {"per_language": trust_frame(trust_by(keyed, "language")).to_dicts()} if multilingual else {}
    return {
        "judge_in_use": data.in_use,
        "reviewed": data.reviewed,
        "by_hand_left_out": data.by_hand,
        "confusion": confusion_frame(overall).to_dicts(),
        "per_bucket": trust_frame(trust_by(rows, "bucket")).to_dicts(),
        "per_domain": trust_frame(trust_by(rows, "Domain")).to_dicts(),
        **by_language,
        "disagreements": disagreements(rows).to_dicts(),
        "configurations": trust_frame([trust(data.rows[n], n) for n in names]).to_dicts(),
        "pairs": [p.as_dict() for p in compare_configs({n: data.rows[n] for n in names})],
        "kappa_method": KAPPA_METHOD,
        "agreement_method": AGREEMENT_METHOD,
    }


def _text(info: dict, overall: Trust, by_language: bool = False) -> str:
    lines = [
        f"The estimate uses: {info['judge_in_use']}",
        f"On the estimate's random sample: {info['reviewed']} reviewed rows "
        f"({info['by_hand_left_out']} reviewed by hand left out)",
        "",
        "Confusion matrix (reviewers by judge)",
    ]
    conf = pl.DataFrame(info["confusion"])
    lines += [f"{'human':<8} " + " ".join(f"{c:>17}" for c in conf.columns[1:])]
    lines += [f"{r[0]:<8} " + " ".join(f"{v:>17}" for v in r[1:]) for r in conf.iter_rows()]
    lines += [
        "",
        *_table(pl.DataFrame(info["per_bucket"]), "bucket"),
        "",
        *_table(pl.DataFrame(info["per_domain"]), "domain"),
    ]
    if by_language:
        per_language = info.get("per_language")
        lines += ["", *_table(pl.DataFrame(per_language), "language")] if per_language else ["", ONE_LANGUAGE]
    lines += [f"kappa: {KAPPA_METHOD}; agreement: {AGREEMENT_METHOD}"]
    if overall.judged == 0:
        lines.append("No reviewed row of the sample has a judge verdict.")
    dis = info["disagreements"]
    listed = ", ".join(str(d["row"]) for d in dis[:MAX_ROWS_LISTED]) + (" ..." if len(dis) > MAX_ROWS_LISTED else "")
    lines += ["", f"Rows where the judge and the reviewers disagree: {len(dis)}" + (f" (rows {listed})" if dis else "")]
    if info["configurations"]:
        lines += ["", *_table(pl.DataFrame(info["configurations"]), "configuration")]
    for p in info["pairs"]:
        diff = "—" if p["difference"] is None else f"{p['difference'] * 100:+.1f} points"
        holm = "" if p["p_holm"] is None else f", Holm p = {p['p_holm']:.4f}"
        lines.append(
            f"{p['config_a']} - {p['config_b']}: n = {p['n']}, only A agrees {p['only_a']}, only B "
            f"{p['only_b']}, difference {diff} [{p['ci_low'] * 100:+.1f}, {p['ci_high'] * 100:+.1f}], "
            f"McNemar p = {p['p_value']:.4f}{holm}"
        )
    return "\n".join(lines)


@register(
    "judge-trust", "the judge against the reviewers on the estimate's random sample, per configuration", _configure
)
def cmd_judge_trust(args: argparse.Namespace) -> int:
    """``python -m scoring judge-trust --run ID``; see the module docstring."""

    def body() -> None:
        engine = open_database(args.db)
        run, figures = stored_estimate(engine, args.run)
        configs = judge_choice.configs_of(engine, run.final["item_key"])
        data = trust_data(engine, args.run, figures.sample, configs)
        info = report(data, figures.sample)
        if args.json:
            print(json.dumps(info, ensure_ascii=False, indent=2))
            return
        print(_text(info, trust(data.in_use_rows()), by_language=args.by == "language"))

    return guarded(body)

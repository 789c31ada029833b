"""``python -m scoring estimate --run ID``: a stored run's true accuracy from its reviewed rows.

Prints, per domain and combined, each metric's raw accuracy, the adjudicated figure (pending
rows as a range) and the estimated true accuracy with its 95% interval, naming the method and the
strata that fell back to their bucket; then precision, recall, specificity and the Rogan-Gladen
corrected accuracy of each metric (and the judge, when labels are stored) against the reviewers;
then the review plan for ``--half-width`` (default: the half-width the run's audit scope was last
planned for, else 0.05, i.e. +-5 points: the True accuracy page's plan). A figure without a 95%
interval prints no number, only what to review to get one (:mod:`scoring.estimate.evidence`);
in the JSON its figures are null and ``what_to_review`` says it. When the judge has
labelled the run (or ``--judge-model M`` names a model whose stored labels to use), the
judge-assisted estimate (stratified by the judge's label) beside the human-only one, with the effective number of
reviews, and its plan with what the judge is worth in reviews. ``--json`` prints the same as JSON
(``judge_assisted`` only when there are judge labels).
"""

from __future__ import annotations

import argparse
import json

from scoring.cli.common import guarded, register
from scoring.core.errors import InputError
from scoring.core.formatting import percent
from scoring.estimate import MetricQuality, Ratio, RunEstimate
from scoring.estimate.evidence import TO_REVIEW, has_interval
from scoring.estimate.group_estimate import GROUP_METHOD
from scoring.estimate.judged import JudgeFigures, judge_figures, with_labels
from scoring.estimate.language_plan import language_plan_text, plan_language
from scoring.estimate.sample import SAMPLE_RULE
from scoring.estimate.stored_run import StoredRun, planned_half_width, stored_estimate
from scoring.estimate.wording import bracket, judge_sentence
from scoring.store import judge_cache, open_database, run_language_label
from scoring.team_report.stored_head_to_head import stored_head_to_head


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, type=int, help="id of the stored run")
    parser.add_argument("--db", help="database URL (default: REVIEW_DB_URL, .streamlit/secrets.toml, data/review.db)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--half-width",
        type=float,
        default=None,
        metavar="H",
        help="plan the reviews for a 95%% interval of +-H (a share: 0.05 is +-5 points; default: the run's last "
        "plan, else 0.05, as on the True accuracy page)",
    )
    parser.add_argument(
        "--by",
        choices=("domain", "language"),
        default="domain",
        help="domain (default): figures per domain; language: also per row language (each as a run of its own rows)",
    )
    parser.add_argument(
        "--judge-model",
        metavar="M",
        help="use model M's stored judge labels for the judge-assisted estimate (default: the run's)",
    )
    parser.add_argument(
        "--against",
        type=int,
        action="append",
        default=[],
        metavar="ID",
        help="also compare this run with stored run ID on the estimated true accuracy (repeatable), as "
        "Compare leads with it",
    )
    parser.add_argument(
        "--plan-language",
        metavar="L",
        help="also plan the reviews for +-H points in the row language L alone (e.g. Tamil): how many more of "
        "its rows of the random sample, and which",
    )


def _check_half_width(value: float) -> float:
    if not 0 < value < 0.5:
        hint = f" (did you mean {value / 100:g}?)" if 1 <= value < 50 else ""
        raise InputError(f"--half-width must be a share between 0 and 0.5, e.g. 0.05 for +-5 points{hint}.")
    return value


def report(run: StoredRun, figures: RunEstimate, judged: JudgeFigures | None = None) -> dict:
    """Everything the text report prints, as JSON-ready values."""
    info = run.info
    out = {
        "run": {"id": info.id, "name": info.name, "model": info.model, "language": info.language, "rows": info.n_rows},
        "reviewed": int(figures.sample["reviewed"].sum()),
        "in_conflict": int(figures.sample["conflict"].sum()),
        **figures.as_dict(),
    }
    if judged is not None:
        side_by_side = judged.comparison(figures.accuracy.table()).to_dicts()
        out["judge_assisted"] = {**judged.as_dict(), "comparison": side_by_side}
    return out


def judged_figures(
    engine,
    run: StoredRun,
    figures: RunEstimate,
    model: str | None,  # noqa: ANN001
    half_width: float,
) -> JudgeFigures | None:
    """The judge-assisted figures from the run's judge labels (its chosen configuration, else the
    latest of any), or model ``model``'s stored ones."""
    sample = figures.sample
    if model is None:
        return judge_figures(sample, half_width, model=run.judge_config)
    found = judge_cache.latest_labels(engine, sample["item_key"].to_list(), model)
    if not found:
        raise InputError(f"No stored judge label by model {model!r} on this run.")
    sample = with_labels(sample, found)
    return judge_figures(sample, half_width, model=f"model {model}, latest label of any prompt version")


#: After a domain's row where the judge does not narrow the interval.
HUMAN_ONLY_NOTE = "  (the judge does not narrow it)"
#: In place of an estimated figure that has no 95% interval yet (what to review follows it).
NO_FIGURE = "—"


def estimated(row: dict) -> str:
    """An estimate's cell: "61.5% [56.2%, 66.2%]", or no figure and what to review to get one
    (:func:`scoring.estimate.evidence.has_interval`, the rule every surface reads)."""
    if has_interval(row):
        return bracket(row["estimate"], row["ci_low"], row["ci_high"])
    return f"{NO_FIGURE} {row[TO_REVIEW]}"


def _judged_lines(figures: RunEstimate, judged: JudgeFigures) -> list[str]:
    table = judged.comparison(figures.accuracy.table())
    width = max(len("domain"), *(len(s) for s in table["scope"]))
    lines = [
        f"Judge-assisted estimate (judge labels: {judged.model}; corrected by the reviewed random sample)",
        f"{'domain':<{width}} {'rows':>8} {'judged':>8} {'reviewed':>8}  {'human-only (95%)':<24} "
        f"{'judge-assisted (95%)':<24} effective reviews",
    ]
    for r in table.to_dicts():
        if has_interval(r):
            human = bracket(r["human_estimate"], r["human_ci_low"], r["human_ci_high"])
            ppi = bracket(r["judge_estimate"], r["judge_ci_low"], r["judge_ci_high"])
        else:
            human, ppi = NO_FIGURE, f"{NO_FIGURE} {r[TO_REVIEW]}"
        note = "" if r["uses_judge"] or not has_interval(r) else HUMAN_ONLY_NOTE
        lines.append(
            f"{r['scope']:<{width}} {r['rows']:>8} {r['judged']:>8} {r['reviewed']:>8}  {human:<24} "
            f"{ppi:<24} {r['effective_reviews']:,.0f}{note}"
        )
    combined = judged.estimate.combined.as_dict()
    human = figures.accuracy.combined
    if has_interval(human):
        lines.append(
            judge_sentence(combined, {"estimate": human.estimate, "ci_low": human.ci_low, "ci_high": human.ci_high})
        )
    lines.append(f"method: {judged.method}")
    plan = judged.plan
    points = f"±{plan.plan.half_width * 100:g} points"
    lines.append(
        f"Plan with the judge for {points}: {plan.plan.planned:,} rows planned, {plan.plan.remaining:,} "
        f"remaining (without its labels {plan.human_planned:,})"
    )
    lines.append(f"method: {plan.plan.method}")
    return lines


def _ratio(r: Ratio) -> str:
    if r.value is None or not has_interval(r):  # a corrected accuracy too thinly reviewed: no figure
        return NO_FIGURE
    return f"{percent(r.value)} [{percent(r.ci_low)}, {percent(r.ci_high)}]"


def _comparison_lines(figures: RunEstimate) -> list[str]:
    table = figures.comparison()
    width = max(len("domain"), *(len(s) for s in table["scope"]))
    judge = "raw_judge" in table.columns
    head = f"{'domain':<{width}} {'rows':>8} {'reviewed':>8} {'exact':>7} {'overlap':>7}"
    head += (f" {'judge':>7}" if judge else "") + f"  {'adjudicated':<15}  estimated true accuracy (95%)"
    lines = ["Accuracy: raw metrics, adjudicated (pending rows as a range), estimated from the reviewed rows", head]
    for r in table.to_dicts():
        adjudicated = (
            percent(r["adjudicated_low"])
            if r["adjudicated_low"] == r["adjudicated_high"]
            else (f"{percent(r['adjudicated_low'])}–{percent(r['adjudicated_high'])}")
        )
        lines.append(
            f"{r['scope']:<{width}} {r['rows']:>8} {r['reviewed']:>8} {percent(r['raw_exact']):>7} "
            f"{percent(r['raw_overlap']):>7}"
            + (f" {percent(r['raw_judge']):>7}" if judge else "")
            + f"  {adjudicated:<15}  {estimated(r)}"
        )
    acc = figures.accuracy
    lines.append(f"method: {acc.method}")
    lines.append(f"random sample: {SAMPLE_RULE}")
    drawn = figures.random_sample
    if drawn["missing"]:
        lines.append(
            f"missing from the random sample (skipped, in conflict or waiting): {drawn['missing']:,} rows, "
            f"+{100 * drawn['missing_width']:.1f} points of interval width"
        )
    if drawn["by_hand"]:
        shown = ", ".join(str(r) for r in drawn["by_hand_rows"][:20]) + (", ..." if drawn["by_hand"] > 20 else "")
        lines.append(f"reviewed by hand, not in the estimate: {drawn['by_hand']:,} (rows {shown})")
    if acc.fell_back:
        lines.append(
            "fell back to their bucket's pooled rate (fewer than 2 reviewed rows): "
            + ", ".join(f"{b}/{d}" for b, d in acc.fell_back)
        )
    if acc.unreviewed:
        lines.append(
            "no reviewed row in their bucket yet (no estimate until each bucket has some): "
            + ", ".join(f"{b}/{d}" for b, d in acc.unreviewed)
        )
    return lines


def _language_lines(figures: RunEstimate) -> list[str]:
    """Per language: raw metrics and the estimate (:attr:`RunEstimate.by_language`)."""
    table = figures.by_language
    if table.height < 2:
        only = table["scope"].to_list()
        return [f"By language: every row is in one language ({only[0] if only else 'none given'})."]
    width = max(len("language"), *(len(s) for s in table["scope"]))
    lines = [
        "Accuracy by language: raw metrics, estimated from each language's reviewed rows",
        f"{'language':<{width}} {'rows':>8} {'reviewed':>8} {'exact':>7} {'overlap':>7}  estimated true accuracy (95%)",
    ]
    for r in table.to_dicts():
        lines.append(
            f"{r['scope']:<{width}} {r['rows']:>8} {r['reviewed']:>8} {percent(r['raw_exact']):>7} "
            f"{percent(r['raw_overlap']):>7}  {estimated(r)}"
        )
    lines.append(f"method: {GROUP_METHOD}")
    return lines


def _metric_lines(metrics: list[MetricQuality]) -> list[str]:
    lines = [
        "Metrics against the reviewers (estimated for the whole run from the reviewed rows)",
        f"{'metric':<8} {'rows':>8} {'reviewed':>8} {'raw':>7}  {'precision':<24} {'recall':<24} "
        f"{'specificity':<24} {'Rogan-Gladen corrected':<24}",
    ]
    for m in metrics:
        lines.append(
            f"{m.metric:<8} {m.rows:>8} {m.reviewed:>8} {percent(m.raw_accuracy):>7}  {_ratio(m.precision):<24} "
            f"{_ratio(m.recall):<24} {_ratio(m.specificity):<24} {_ratio(m.corrected):<24}"
        )
    if metrics:
        lines += [f"ratios: {metrics[0].method}", f"corrected: {metrics[0].corrected_method}"]
    return lines


def _plan_lines(figures: RunEstimate) -> list[str]:
    plan = figures.plan
    lines = [plan.sentence]
    rows = plan.strata.to_dicts()
    width = max(len("domain"), *(len(r["Domain"]) for r in rows)) if rows else len("domain")
    lines.append(
        f"{'bucket':<13} {'domain':<{width}} {'size':>8} {'reviewed':>8} {'planned':>8} {'remaining':>9}  assumed rate"
    )
    for r in rows:
        rate = "0.5 (prior)" if r["prior"] else percent(r["rate"])
        lines.append(
            f"{r['bucket']:<13} {r['Domain']:<{width}} {r['size']:>8} {r['reviewed']:>8} {r['planned']:>8} "
            f"{r['remaining']:>9}  {rate}"
        )
    lines.append(f"method: {plan.method}")
    return lines


def _text(
    run: StoredRun, figures: RunEstimate, info: dict, judged: JudgeFigures | None = None, by_language: bool = False
) -> str:
    r = run.info
    shown = run_language_label(r)  # a mixed run: its rows' languages
    language = f" ({shown})" if shown else ""
    conflicts = f", {info['in_conflict']} in conflict (not counted as reviewed)" if info["in_conflict"] else ""
    head = f"Run #{r.id} {r.name}{language}: {r.n_rows:,} rows, {info['reviewed']:,} reviewed{conflicts}"
    parts = [[head], _comparison_lines(figures), _metric_lines(figures.metrics), _plan_lines(figures)]
    if by_language:
        parts.insert(2, _language_lines(figures))
    if judged is not None:
        parts.insert(2, _judged_lines(figures, judged))
    return "\n\n".join("\n".join(p) for p in parts)


@register("estimate", "true accuracy from the reviewed rows, metrics against reviewers, review plan", _configure)
def cmd_estimate(args: argparse.Namespace) -> int:
    """``python -m scoring estimate --run ID``; see the module docstring."""

    def body() -> None:
        asked = None if args.half_width is None else _check_half_width(args.half_width)
        engine = open_database(args.db)
        half_width = asked if asked is not None else planned_half_width(engine, args.run)
        run, figures = stored_estimate(engine, args.run, half_width)
        judged = judged_figures(engine, run, figures, args.judge_model, half_width)
        info = report(run, figures, judged)
        aimed = plan_language(figures.sample, args.plan_language, half_width) if args.plan_language else None
        if aimed is not None:
            info["language_plan"] = aimed.as_dict()
        truth = stored_head_to_head(engine, [args.run, *args.against]).as_dict() if args.against else None
        if truth is not None:
            info["estimated_truth"] = truth
        if args.json:
            print(json.dumps(info, ensure_ascii=False, indent=2))
            return
        print(_text(run, figures, info, judged, by_language=args.by == "language"))
        if aimed is not None:
            print("\n" + language_plan_text(aimed))
        if truth is not None:
            several = truth["language_sentences"] if len(truth["by_language"]) > 1 else []
            print("\n" + "\n".join(truth["lead"] + several + truth["automatic_sentences"]))

    return guarded(body)

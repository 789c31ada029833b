"""The Judge page's data for "can this judge be trusted": the rows a configuration has not judged
yet, the configurations that labelled the run, and each one against the humans on the estimate's
random sample. Cached in the server's per-run cache, keyed on the verdict and judge revisions
(the judge revision changes with every judge batch and every judge choice)."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import TypeVar

import pandas as pd
import polars as pl
from pandas.io.formats.style import Styler

from scoring import judge, store
from scoring.compare.paired import INTERVAL_METHOD as PAIR_INTERVAL
from scoring.compare.paired import TEST_METHOD as PAIR_TEST
from scoring.core.formatting import percent
from scoring.core.language_names import one_language
from scoring.core.row_language import from_file
from scoring.estimate import stored_trust
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
from scoring.estimate.stored_trust import TrustData
from scoring.store import database_url, judge_cache, judge_choice
from ui import estimate_data, judge_state, state

T = TypeVar("T")
DEFAULT_OPTION = judge_choice.ANY_CONFIG  #: the choice that puts the default back
SHARES = (
    "agreement",
    "agreement_low",
    "agreement_high",
    "agreement_a",
    "agreement_b",
    "difference",
    "ci_low",
    "ci_high",
)
STATS = ("kappa", "kappa_low", "kappa_high")
P_VALUES = ("p_value", "p_holm")
__all__ = ["AGREEMENT_METHOD", "KAPPA_METHOD", "PAIR_INTERVAL", "PAIR_TEST"]
#: The tables the page shows per scope: column of the sample -> the heading.
GROUPS = {"bucket": "Per bucket", "Domain": "Per domain"}


def _cached(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    return state.run_cache().get(("judge_trust", database_url(), *key), compute)


def unjudged_items(run_id: int, model: str, prompt_version: str = judge.PROMPT_VERSION) -> list[judge.JudgeItem]:
    """Rows of the run with no reply yet from ``model`` under ``prompt_version`` (any settings),
    blank responses left out (never sent: incorrect by rule). Judging these is what the estimate
    needs: every row labelled by the configuration it uses."""

    def compute() -> list[judge.JudgeItem]:
        frame = state.scored(run_id)
        keys = frame["item_key"].tolist()
        found = judge_cache.latest_by_item(state.engine(), keys, model=model, prompt_version=prompt_version)
        replied = {k for k, v in found.items() if v.label != judge_cache.ERROR}
        keep = [k not in replied and not blank for k, blank in zip(keys, frame["is_blank"].astype(bool))]
        return judge.items_from_frame(frame[keep])

    return _cached(("unjudged", run_id, model, prompt_version, judge_state.judge_revision()), compute)


def unjudged_preflight(run_id: int, settings: judge.JudgeSettings) -> judge.Preflight:
    """The cost preflight of judging :func:`unjudged_items` with ``settings`` (sends nothing)."""
    key = json.dumps(
        {
            "model": settings.model,
            **settings.output_settings(),
            "prices": [settings.price_in_per_m, settings.price_out_per_m],
        },
        sort_keys=True,
    )
    items = unjudged_items(run_id, settings.model)
    return _cached(
        ("unjudged_preflight", run_id, key, judge_state.judge_revision()),
        lambda: judge.preflight(state.engine(), settings, items),
    )


def configs(run_id: int) -> dict[judge_choice.JudgeConfig, int]:
    """The configurations with a reply on some row of the run, and on how many rows."""
    return _cached(
        ("configs", run_id, judge_state.judge_revision()),
        lambda: judge_choice.configs_of(state.engine(), state.scored(run_id)["item_key"]),
    )


def trust_data(run_id: int) -> TrustData:
    """Every label set of the run on the estimate's random sample (the True accuracy page's)."""
    fig = estimate_data.figures(run_id)
    return _cached(
        ("trust", run_id, *fig.revs),
        lambda: stored_trust.trust_data(state.engine(), run_id, fig.sample, configs(run_id)),
    )


def group_tables(data: TrustData, name: str) -> dict[str, pl.DataFrame]:
    """Heading -> the per-scope trust table of label set ``name`` (:data:`GROUPS`)."""
    rows = data.rows[name]
    return {title: trust_frame(trust_by(rows, column)) for column, title in GROUPS.items()}


def config_table(data: TrustData) -> pl.DataFrame:
    """One line per configuration (not the "any" label set): its trust on the reviewed rows."""
    names = [n for n in data.rows if n != judge_choice.ANY_CONFIG]
    frame = trust_frame([trust(data.rows[n], n) for n in names])
    return frame.rename({"scope": "configuration"}).with_columns(
        in_use=pl.Series([n == data.in_use for n in names], dtype=pl.Boolean)
    )


def pair_table(data: TrustData) -> pl.DataFrame:
    """Every pair of configurations on the reviewed rows both judged (Compare's paired statistics)."""
    names = [n for n in data.rows if n != judge_choice.ANY_CONFIG]
    pairs = compare_configs({n: data.rows[n] for n in names})
    columns = [
        "config_a",
        "config_b",
        "n",
        "both",
        "only_a",
        "only_b",
        "neither",
        "agreement_a",
        "agreement_b",
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "p_holm",
    ]
    schema = {
        c: pl.String
        if c.startswith("config")
        else (pl.Int64 if c in ("n", "both", "only_a", "only_b", "neither") else pl.Float64)
        for c in columns
    }
    return pl.DataFrame([{c: p.as_dict()[c] for c in columns} for p in pairs], schema=schema)


def choose(run_id: int, config: judge_choice.JudgeConfig | None, by: str) -> None:
    """Store the run's judge for the estimate (None: back to the default)."""
    judge_choice.set_choice(state.engine(), run_id, config, by)


def combined(data: TrustData, name: str) -> Trust:
    """Label set ``name`` against the humans on every reviewed row of the sample."""
    return trust(data.rows[name])


def confusion(item: Trust) -> pd.DataFrame:
    """The confusion matrix (human rows by judge outcome, with unparsed and not judged), for the page."""
    return confusion_frame(item).to_pandas()


def _fixed(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def summary_line(item: Trust) -> str:
    """Agreement and kappa with their intervals in one line; "—" where nothing is known."""
    if item.judged == 0:
        return f"{item.reviewed} reviewed rows, none judged: no agreement or kappa to show."
    low_a, high_a = item.agreement_ci or (None, None)
    low_k, high_k = item.kappa_ci or (None, None)
    kappa = "undefined (one label only)" if item.kappa is None else _fixed(item.kappa)
    return (
        f"{item.judged} of {item.reviewed} reviewed rows judged: agreement {percent(item.agreement)} "
        f"[{percent(low_a)}, {percent(high_a)}], Cohen's kappa {kappa} [{_fixed(low_k)}, {_fixed(high_k)}] (95%)"
    )


#: How to get judge labels, by whether the page has an endpoint and a model to run the judge with.
RUN_THE_JUDGE = {
    True: 'press "Judge every row not yet judged" above',
    False: 'type the Base URL and the Model under "Endpoint and settings" above, then press "Judge every row '
    'not yet judged"',
}
REVIEW_THE_SAMPLE = (
    "review rows in the Review queue (the rows it serves, in its random order, are the sample the judge is checked on)"
)


def nothing_to_compare(data: TrustData, item: Trust, name: str, configured: bool) -> str | None:
    """What is missing before label set ``name`` can be checked against the reviewers, and what to
    do, in one line; None when some reviewed row of the sample has the judge's verdict."""
    if item.judged:
        return None
    labelled = len(data.rows) > 1  # some configuration replied on some row of the run
    if not labelled:
        then = f", then {REVIEW_THE_SAMPLE}" if not data.reviewed else ""
        return f"No row has a judge label yet: {RUN_THE_JUDGE[configured]}{then}."
    if not data.reviewed:
        return f"No judged row has a reviewer's verdict yet: {REVIEW_THE_SAMPLE}."
    n_unparsed = item.counts[0][2] + item.counts[1][2]  # OUTCOMES: correct, wrong, unparsed, not judged
    unparsed = f" ({n_unparsed} unparsed)" if n_unparsed else ""
    return (
        f"The {data.reviewed} reviewed rows of the random sample have no judge label yet{unparsed} ({name}): "
        f"{RUN_THE_JUDGE[configured]}, or choose other judge labels."
    )


def agreement_line(item: Trust) -> str:
    """The sentence for no disagreement: on how many rows, and how many reviewed rows have no verdict."""
    line = (
        f"The judge and the reviewers agree on all {item.judged} reviewed rows of the random sample it gave a "
        "verdict on"
    )
    missing = item.reviewed - item.judged
    return line + (f" ({missing} reviewed rows have no verdict from the judge)." if missing else ".")


def styled(table: pl.DataFrame) -> Styler:
    """A trust or comparison table for ``st.dataframe``: shares as percentages, kappa with three
    decimals, p-values with four; the cells stay numbers."""
    frame = table.to_pandas()
    formats = {c: percent for c in SHARES if c in frame.columns}
    formats |= {c: _fixed for c in STATS if c in frame.columns}
    formats |= {c: (lambda v: _fixed(v, 4)) for c in P_VALUES if c in frame.columns}
    return frame.style.format(formats)


def disagreement_rows(data: TrustData, name: str) -> pl.DataFrame:
    """Reviewed rows of the sample where label set ``name`` and the reviewers disagree."""
    return disagreements(data.rows[name])


def language_table(runs: list[tuple[int, str]]) -> pl.DataFrame:
    """Per language (sorted; a language with no reviewed row too) and combined, over ``runs``
    ((run id, run language)): each run's random sample against the labels its own estimate uses,
    each reviewed row counted under its own language (the run's where the rows carry none)."""
    per: dict[str, list[pl.DataFrame]] = {}
    for run_id, language in runs:
        data = trust_data(run_id)
        rows = data.in_use_rows()
        if from_file(store.language_source(state.engine(), run_id)) or not one_language(language):
            rows = with_languages(rows, estimate_data.figures(run_id).sample, language)
        else:  # the rows follow the run's language as it is now (a cached sample may predate a rename)
            rows = rows.with_columns(language=pl.lit(one_language(language), dtype=pl.String))
        keyed = rows.with_columns(pl.col("language").fill_null(language))
        values = set(keyed["language"].to_list()) or ({language} if language else set())  # none reviewed: a 0 row
        for value in values:
            part = keyed.filter(pl.col("language") == value)
            per.setdefault(value, []).append(part.select("item_key", "bucket", "Domain", "human", "judge"))
    frames = {language: pl.concat(parts) for language, parts in per.items()}
    items = [trust(frames[language], language) for language in sorted(frames)]
    every = pl.concat(list(frames.values())) if frames else pl.DataFrame()
    return trust_frame([*items, trust(every)])

"""What the team's report holds, gathered once for its HTML and Markdown files: the model x
language table (cells and per-language pairs, :func:`~scoring.team_report.stored_table.team_table`),
each model's figure per domain, the method in plain words, and each run's provenance.

Why provenance: a figure a team sends must be recomputable by someone else. Each run is named by
the sha256 of the file as uploaded, the sha256 of its rows (the ordered item keys: question,
golden answer and response of every row, which an export restored elsewhere keeps while the file's
bytes change), its review seed (the random sample's order), who reviewed it and how many rows; with
the tool's version and the time the report was made. Restoring each run's export and running
``python -m scoring report`` over them gives the same figures.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine

import scoring
from scoring.estimate.sample import reviewed_sample
from scoring.estimate.stored_run import stored_final
from scoring.review.verdict_table import verdict_table
from scoring.store import RunInfo, run_language_label
from scoring.team_report.stored_table import TeamTable, model_of, team_table
from scoring.team_report.table_words import table_title

TIME_FORMAT = "%Y-%m-%d %H:%M UTC"

#: The method, in the words of someone who has not read the code; the technical statements
#: (``cell_method``, ``pairs_method``) follow them in the report, verbatim.
PLAIN_METHOD = (
    "Each cell is one model in one language. Where people reviewed rows of that model in that language drawn "
    "from the run's random sample, the cell is the estimated true accuracy: what share of all its rows a "
    "reviewer would call correct, estimated from the reviewed ones, with a 95% interval (the range that holds "
    "the true share 95 times in 100). Until the reviews there are enough for an interval, the cell shows no "
    "figure and says what to review.",
    "Where nobody reviewed rows there, the cell is an automatic verdict's accuracy: the LLM judge's where it "
    "labelled the rows, else exact substring's (the golden answer appears in the response). That is a "
    "metric, not the truth (a hedge naming the right answer passes exact substring), so such a cell is marked "
    "with its metric and its interval says only how precisely the metric was measured.",
    "The sentences compare two models in one language on the questions both answered, and say a model is "
    "ahead only when the interval of the difference leaves out zero.",
    "The charts give each model's figure per domain under the same rule as the cells (an estimate where "
    "reviewed, else the metric, in grey).",
)
RECOMPUTE = (
    "To recompute these figures: export each run below with its verdicts (Export page, or python -m scoring "
    "export --run ID --out F), upload the exports into a database in the order of their run numbers, lowest "
    "first (a verdict on a row two runs share is restored with the first export that holds it), then run "
    "python -m scoring report --runs IDS --out report.html there. The verdicts and the review seed come back, "
    "so each random sample is the same, and the rows' sha256 is unchanged."
)


@dataclass(frozen=True)
class RunSource:
    """One run's provenance in the report."""

    id: int
    name: str
    model: str
    language: str
    filename: str
    rows: int
    file_sha256: str
    rows_sha256: str
    review_seed: int
    uploaded_at: str
    reviewers: tuple[str, ...]
    #: rows of the random sample reviewed in this run (what the estimates read)
    sample_reviewed: int
    #: rows with a reviewer's verdict, wherever given (a verdict belongs to the question, golden
    #: answer and response, so a row reviewed in another run with the same three counts here)
    with_verdict: int
    #: its reviewers' verdicts are withheld from whoever made the report (double-blind review)
    withheld: bool = False


@dataclass(frozen=True)
class TeamReport:
    """The table, per-domain cells and provenance of a report, and when and by what it was made."""

    table: TeamTable
    runs: tuple[RunSource, ...]
    made_at: str
    tool_version: str = scoring.__version__
    plain_method: tuple[str, ...] = PLAIN_METHOD
    recompute: str = RECOMPUTE
    notes: tuple[str, ...] = field(default=())

    @property
    def title(self) -> str:
        """What the table's cells hold (:func:`~scoring.team_report.table_words.table_title`)."""
        return table_title(self.table.cells)

    def as_dict(self) -> dict:
        return {
            **self.table.as_dict(),
            "title": self.title,
            "domains": [c.as_dict() for c in self.table.domains],
            "provenance": [asdict(r) | {"reviewers": list(r.reviewers)} for r in self.runs],
            "made_at": self.made_at,
            "tool_version": self.tool_version,
            "plain_method": list(self.plain_method),
            "recompute": self.recompute,
        }


def rows_sha256(item_keys: Sequence[str]) -> str:
    """The sha256 of a run's rows: its item keys in upload order, one a line."""
    return hashlib.sha256("\n".join(item_keys).encode("utf-8")).hexdigest()


def run_source(engine: Engine, info: RunInfo, withheld: bool = False) -> RunSource:
    """``info``'s provenance; a run whose verdicts are withheld names no reviewer and no count."""
    table = verdict_table(engine, info.id)
    current = table.current
    hidden = withheld or current.empty
    reviewers = () if hidden else tuple(sorted({str(r) for r in current["reviewer"]}))
    with_verdict = 0 if hidden else int(current["item_key"].nunique())
    sample = 0
    if not hidden:
        stored = stored_final(engine, info.id, table=table)
        sample = int(reviewed_sample(stored.final, stored.rank, stored.served)["reviewed"].sum())
    return RunSource(
        id=info.id,
        name=info.name,
        model=model_of(info),
        language=run_language_label(info),  # a mixed run: its rows' languages
        filename=info.filename,
        rows=info.n_rows,
        file_sha256=info.sha256,
        rows_sha256=rows_sha256(table.keys["item_key"].to_list()),
        review_seed=info.review_seed,
        uploaded_at=info.uploaded_at.strftime(TIME_FORMAT) if info.uploaded_at else "",
        reviewers=reviewers,
        sample_reviewed=sample,
        with_verdict=with_verdict,
        withheld=withheld,
    )


def team_report(
    engine: Engine,
    run_ids: Sequence[int] | None = None,
    strict: Collection[int] = (),
    withheld: Collection[int] = (),
    now: datetime | None = None,
) -> TeamReport:
    """The report over ``run_ids`` (default: every listed run), under the table's rules
    (``strict``, ``withheld``: :func:`~scoring.team_report.stored_table.team_table`'s)."""
    table = team_table(engine, run_ids, strict=strict, withheld=withheld, by_domain=True)
    runs = tuple(run_source(engine, info, info.id in table.withheld) for info in table.runs)
    made = (now or datetime.now(UTC)).astimezone(UTC).strftime(TIME_FORMAT)
    notes = tuple(f"Left out: run #{info.id} {info.name}: {why}" for info, why in table.skipped)
    return TeamReport(table, runs, made, notes=notes)

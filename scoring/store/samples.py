"""The bundled sample set: two models x two languages sharing question ids, so every page (Compare's
heatmap and paired table included) shows real content before anyone uploads; and the one rule
that keeps samples out of a team's way.

Samples are for a first look. They are loaded on a database's first start only where that database
is the embedded default, the SQLite file ``data/review.db`` a person gets with no configuration
(:func:`samples_on_first_start`; ``REVIEW_SAMPLES`` says otherwise either way): a team database,
named by ``REVIEW_DB_URL``, starts empty and holds the team's runs only. Loading them is
:func:`scoring.ingest.ensure_sample`'s job, on a database that has never held a run
(:func:`ever_held_runs`), so removed samples do not come back.

A sample is marked in the store (``runs.sample``, revision 0018), not recognised by its bytes: an
upload of the same file while the sample is there is the same run (a sample); the same file
uploaded into a database without the samples is the team's own run. Every run list and table shows
runs through :func:`shown_runs`: once the database holds a run of the team's own, samples are left
out unless asked for. :func:`remove_samples` deletes them all for good in one action.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, exists, select, update
from sqlalchemy.orm import Session

from scoring.core.language_names import languages_label
from scoring.core.script_names import SCRIPTS, UNKNOWN_SCRIPT
from scoring.core.settings import lookup
from scoring.store.archive import DeleteSummary, archive_run, delete_run
from scoring.store.engine import ENV_VAR, PROJECT_ROOT, writer
from scoring.store.orm_tables import Run
from scoring.store.runs import RunInfo, run_info, select_visible_runs

SAMPLE_DIR = PROJECT_ROOT / "sample_data"
MIXED = "English, Hindi, Tamil, Bengali"  # the first sample's rows are mostly English, a few Indic
#: The setting that says whether a new database gets the samples (unset: the embedded default only).
SAMPLES_SETTING = "REVIEW_SAMPLES"
_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class SampleRun:
    """One bundled file and the run details it is loaded with."""

    filename: str
    name: str
    model: str
    language: str

    @property
    def path(self) -> Path:
        return SAMPLE_DIR / self.filename


#: In loading order: the last is the newest run, so the one every page shows first ("Sample run",
#: the 40 rows whose edge cases the README walks through).
SAMPLE_SET: tuple[SampleRun, ...] = (
    SampleRun("hindi_model_b.csv", "Sample, Hindi, model B", "sample-model-b", "Hindi"),
    SampleRun("hindi_model_a.csv", "Sample, Hindi, model A", "sample-model-a", "Hindi"),
    SampleRun("sample_run_model_b.csv", "Sample run, model B", "sample-model-b", MIXED),
    SampleRun("sample_run.csv", "Sample run", "sample-model-a", MIXED),
)
SAMPLE_PATH = SAMPLE_SET[-1].path
SAMPLE_MARK = "sample"  #: shown beside a sample run's name in every run list


#: The names a row without a language gets from its script (:mod:`scoring.core.row_language`).
SCRIPT_NAMES = frozenset({*SCRIPTS, UNKNOWN_SCRIPT})


def is_sample(run: RunInfo) -> bool:
    """Whether ``run`` is a bundled sample the tool loaded (its mark in the store)."""
    return run.sample


def samples_on_first_start(root: Path = PROJECT_ROOT) -> bool:
    """Whether a database's first start loads the samples: ``REVIEW_SAMPLES`` when it says yes or
    no, else only on the embedded default (no ``REVIEW_DB_URL``). A team database starts empty: a
    team names its database to hold its own runs, and four runs it did not make would sit in its
    every table until someone removed them."""
    said = lookup(SAMPLES_SETTING, root=root)
    if isinstance(said, bool):
        return said
    text = str(said or "").strip().lower()
    if text in _YES or text in _NO:
        return text in _YES
    return not lookup(ENV_VAR, root=root)


def ever_held_runs(engine: Engine) -> bool:
    """Whether the database has ever held a run: any ``runs`` row, a deleted run's placeholder
    (:mod:`scoring.store.archive`) or an upload still writing included. Only a database that never
    did gets the samples, so samples removed (or every run deleted) stay removed."""
    with engine.connect() as conn:
        return bool(conn.execute(select(exists().where(Run.id.is_not(None)))).scalar())


def mark_samples(engine: Engine, run_ids: Sequence[int]) -> None:
    """Mark ``run_ids`` as bundled samples (what :func:`scoring.ingest.load_samples` loaded)."""
    if run_ids:
        with writer(engine).begin() as conn:
            conn.execute(update(Run).where(Run.id.in_(list(run_ids))).values(sample=True))


def sample_runs(engine: Engine) -> list[RunInfo]:
    """Every sample run in the database, archived ones included, oldest first."""
    with Session(engine) as session:
        query = select_visible_runs().where(Run.sample.is_(True)).order_by(Run.id)
        return [run_info(r) for r in session.scalars(query)]


def shown_runs(runs: Sequence[RunInfo], show_samples: bool = False) -> list[RunInfo]:
    """The runs every run list and table offers, in their order: all of them while the database
    holds nothing but samples (a first look) or when ``show_samples``; else the team's own only.
    The one rule: the pages' run picker, Compare, Model x language, True accuracy's every-run
    views, the Judge and the ``table`` command all take their runs through it."""
    own = [r for r in runs if not r.sample]
    return list(runs) if show_samples or not own else own


def remove_samples(engine: Engine) -> list[DeleteSummary]:
    """Delete every sample run for good (archived first, as deleting asks): their rows and details
    go; verdicts given in them stay in the verdict log, as for any deleted run. The runs' placeholder
    rows keep the database from loading the samples again (:func:`ever_held_runs`)."""
    removed = []
    for info in sample_runs(engine):
        archive_run(engine, info.id)
        removed.append(delete_run(engine, info.id))
    return removed


def removed_sentence(removed: Sequence[DeleteSummary]) -> str:
    """What removing the samples did, for the page and the command (ids only: no dataset text)."""
    if not removed:
        return "No sample runs in this database: nothing removed."
    ids = ", ".join(f"#{s.run.id}" for s in removed)
    kept = sum(s.log_events for s in removed)
    return (
        f"Removed the {len(removed)} sample runs ({ids}) for good; they will not be loaded again. "
        f"The {kept:,} verdicts and skips given in them stay in the verdict log."
    )


def run_language_label(run: RunInfo) -> str:
    """A run's language as pages and commands print it: the run's own when it has one, else its
    rows' (``English, Hindi, Tamil``, ``5 languages``: a mixed run), else "". A script name
    ("Latin", "Devanagari": rows without a language) is not a language: it is not named here."""
    return run.language.strip() or languages_label([v for v in run.languages if v not in SCRIPT_NAMES])


def run_caption(run: RunInfo) -> str:
    """A page's line under its title: ``Run #3 · 40 rows · model m · language Hindi`` (``?`` when unknown)."""
    return f"Run #{run.id} · {run.n_rows} rows · model {run.model or '?'} · language {run_language_label(run) or '?'}"


def run_label(run: RunInfo) -> str:
    """How every run list names a run: ``#3 name · model · language (40 rows)``, and ``· sample``."""
    parts = [run.name, run.model, run_language_label(run), SAMPLE_MARK if is_sample(run) else ""]
    return f"#{run.id} " + " · ".join(p for p in parts if p) + f" ({run.n_rows} rows)"

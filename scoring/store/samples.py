"""The bundled sample set a first start loads: two models x two languages sharing question ids,
so every page (Compare's heatmap and paired table included) shows real content before anyone
uploads. Samples are runs like any other (archived, restored, deleted the same way); they are
known by their bytes (:func:`is_sample`), so no column marks them and an upload of the same file
is the same run. Loading them on a first start is :func:`scoring.ingest.ensure_sample`'s job."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from scoring.core.language_names import languages_label
from scoring.core.script_names import SCRIPTS, UNKNOWN_SCRIPT
from scoring.store.engine import PROJECT_ROOT
from scoring.store.runs import RunInfo, sha256_bytes

SAMPLE_DIR = PROJECT_ROOT / "sample_data"
MIXED = "English, Hindi, Tamil, Bengali"  # the first sample's rows are mostly English, a few Indic


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


@cache
def sample_hashes() -> frozenset[str]:
    """The sha256 of every bundled sample file (read once per process)."""
    return frozenset(sha256_bytes(s.path.read_bytes()) for s in SAMPLE_SET if s.path.exists())


#: The names a row without a language gets from its script (:mod:`scoring.core.row_language`).
SCRIPT_NAMES = frozenset({*SCRIPTS, UNKNOWN_SCRIPT})


def is_sample(run: RunInfo) -> bool:
    """Whether ``run`` is one of the bundled samples (the same bytes)."""
    return run.sha256 in sample_hashes()


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

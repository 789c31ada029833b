"""The bundled sample set (:data:`scoring.store.samples.SAMPLE_SET`) loaded into a database: on the
first start of the embedded default (:func:`ensure_sample`, where
:func:`scoring.store.samples_on_first_start` says so), or on request (:func:`load_samples`:
``python -m scoring runs add-samples``). Loaded runs are marked as samples in the store."""

from __future__ import annotations

from sqlalchemy import Engine

from scoring.ingest.save_run import save_run
from scoring.store import SAMPLE_SET, RunInfo, ever_held_runs, get_run, mark_samples


def load_samples(engine: Engine) -> list[RunInfo]:
    """Store every bundled sample (a sample already there is found by its bytes, as any upload
    is) and mark them as samples; returns them in loading order, the one shown first last."""
    ids = [
        save_run(
            engine,
            sample.path.read_bytes(),
            sample.filename,
            name=sample.name,
            model=sample.model,
            language=sample.language,
        ).run.id
        for sample in SAMPLE_SET
    ]
    mark_samples(engine, ids)
    return [info for info in (get_run(engine, i) for i in ids) if info is not None]


def ensure_sample(engine: Engine) -> RunInfo | None:
    """On a database that has never held a run, load the sample set; returns the run shown first
    (None when the database has held a run: removing or archiving every sample, or deleting every
    run, does not bring them back)."""
    if ever_held_runs(engine):
        return None
    loaded = load_samples(engine)
    return loaded[-1] if loaded else None

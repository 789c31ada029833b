"""The bundled sample set (:data:`scoring.store.samples.SAMPLE_SET`) loaded on a first start."""

from __future__ import annotations

from sqlalchemy import Engine

from scoring.ingest.save_run import save_run
from scoring.store import SAMPLE_SET, RunInfo, count_runs


def ensure_sample(engine: Engine) -> RunInfo | None:
    """On an empty database, load the sample set; returns the run shown first (None when the
    database already held a run: archiving every sample does not bring them back)."""
    if count_runs(engine):
        return None
    loaded = None
    for sample in SAMPLE_SET:
        loaded = save_run(
            engine,
            sample.path.read_bytes(),
            sample.filename,
            name=sample.name,
            model=sample.model,
            language=sample.language,
        ).run
    return loaded

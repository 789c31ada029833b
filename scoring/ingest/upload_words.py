"""What an upload did, in the Upload page's words: the run it became, or the run it opened and
why (the same bytes, or the same rows in another encoding or order), for each model a file holds.

The page shows these sentences, and the Overview it opens says them again (the page is gone by
the time anyone reads it); they are plain text, the file's and the runs' names included.
"""

from __future__ import annotations

from typing import Literal

from scoring.core.file_models import NO_MODEL, models_line
from scoring.ingest.save_upload import ModelRun, UploadOutcome

Kind = Literal["success", "info"]
#: Why a run holding the same rows was opened, though the bytes differ.
OTHER_BYTES = "in another encoding, order or format"


def run_sentence(made: ModelRun) -> str:
    """``saved as run #5 (300 rows)``, or which stored run was opened and why."""
    run = made.run
    if made.found == "created":
        return f"saved as run #{run.id} ({run.n_rows:,} rows)"
    archived = "the archived " if made.unarchived else ""
    opened = "restored from the archive and opened" if made.unarchived else "opened it"
    if made.found == "identical":
        return f"the same bytes as {archived}run #{run.id} '{run.name}': {opened}, nothing stored"
    return f"the same rows as {archived}run #{run.id} '{run.name}' ({OTHER_BYTES}): {opened}, nothing stored"


def outcome_sentence(name: str, outcome: UploadOutcome) -> tuple[Kind, str]:
    """The sentence for the upload of the file ``name``: a success when a run was saved, else
    the run (or runs) it opened. A file of several models lists them first: ``2 models: A (300
    rows), B (300 rows)``, then each model's run."""
    made = outcome.runs or (ModelRun(outcome.run, "created" if outcome.opened == "created" else "identical"),)
    kind: Kind = "success" if any(m.found == "created" for m in made) else "info"
    if len(made) == 1:
        return kind, f"{name}: {run_sentence(made[0])}."
    listed = models_line([(m.model or "", m.file_rows) for m in made])
    each = "; ".join(f"{m.model or NO_MODEL}: {run_sentence(m)}" for m in made)
    return kind, f"{name}: {listed}, a run for each. {each}."

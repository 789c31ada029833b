"""Ingesting a file into a run, the public names: reading the upload
(:mod:`scoring.ingest.read_upload`), guessing the model and language from its name
(:mod:`scoring.ingest.run_names`), scoring and storing it (:mod:`scoring.ingest.save_run`),
restoring an uploaded export's human work (:mod:`scoring.ingest.restore_export`), the Upload
page's action (:mod:`scoring.ingest.save_upload`) and the sample set a first start loads
(:mod:`scoring.ingest.load_samples`). Uses :mod:`scoring.store` (the tables) and
:mod:`scoring.core`.

Pages, commands and tests use ``from scoring import ingest`` and ``ingest.save_run(...)``.
"""

from scoring.ingest.load_samples import ensure_sample, load_samples
from scoring.ingest.read_upload import ReadUpload, read_upload
from scoring.ingest.restore_export import Restored, restore_export
from scoring.ingest.run_names import LANGUAGES, guess_model_language
from scoring.ingest.save_run import Preview, Progress, SaveResult, save_run
from scoring.ingest.save_upload import UploadOutcome, save_upload

__all__ = [
    "LANGUAGES",
    "Preview",
    "Progress",
    "ReadUpload",
    "Restored",
    "SaveResult",
    "UploadOutcome",
    "ensure_sample",
    "guess_model_language",
    "load_samples",
    "read_upload",
    "restore_export",
    "save_run",
    "save_upload",
]

"""Ingesting a file into a run, the public names: reading the upload
(:mod:`scoring.ingest.read_upload`), guessing the model and language from its name
(:mod:`scoring.ingest.run_names`), scoring and storing it (:mod:`scoring.ingest.save_run`),
restoring an uploaded export's human work (:mod:`scoring.ingest.restore_export`), the Upload
page's action (:mod:`scoring.ingest.save_upload`) and the sample set a first start loads
(:mod:`scoring.ingest.load_samples`); a file holding several models is cut into one run per
model (:mod:`scoring.ingest.file_parts`), a run holding the same rows is found by
:mod:`scoring.ingest.same_rows`, and :mod:`scoring.ingest.upload_words` says what an upload
did. Uses :mod:`scoring.store` (the tables) and :mod:`scoring.core`.

Pages, commands and tests use ``from scoring import ingest`` and ``ingest.save_run(...)``.
"""

from scoring.ingest.file_parts import SeveralModels
from scoring.ingest.load_samples import ensure_sample, load_samples
from scoring.ingest.read_upload import ReadUpload, read_upload
from scoring.ingest.restore_export import Restored, restore_export
from scoring.ingest.run_names import LANGUAGES, guess_model_language
from scoring.ingest.save_run import Preview, Progress, SaveResult, save_file, save_run
from scoring.ingest.save_upload import ModelRun, UploadOutcome, save_upload
from scoring.ingest.upload_words import outcome_sentence

__all__ = [
    "LANGUAGES",
    "ModelRun",
    "Preview",
    "Progress",
    "ReadUpload",
    "Restored",
    "SaveResult",
    "SeveralModels",
    "UploadOutcome",
    "ensure_sample",
    "guess_model_language",
    "load_samples",
    "outcome_sentence",
    "read_upload",
    "restore_export",
    "save_file",
    "save_run",
    "save_upload",
]

"""The database and nothing else: where it is (``engine``), the tables and their migrations, the
stored runs, the reviewers' verdict log and the judge's cache. Depends on :mod:`scoring.core` only;
what goes into a run (reading, scoring, restoring an export) is :mod:`scoring.ingest`'s.

The names below are the runs' public API (``store.list_runs``, ``store.get_run``...) and opening
the database (``make_engine``); the other modules are imported by name.
"""

from scoring.core.settings import read_secrets
from scoring.store.archive import (
    ArchivedRun,
    DeleteSummary,
    UnknownRun,
    all_runs,
    archive_prompt,
    archive_run,
    archived_at,
    archived_runs,
    confirms_delete,
    delete_run,
    delete_summary,
    delete_warning,
    listed_runs,
    restore_run,
)
from scoring.store.database import make_engine, open_database, open_existing
from scoring.store.engine import (
    ENV_VAR,
    LOCK_WAIT_SETTING,
    PROJECT_ROOT,
    DatabaseError,
    database_url,
    default_sqlite_path,
    display_url,
    writer,
)
from scoring.store.failures import Failure
from scoring.store.failures import describe as describe_failure
from scoring.store.run_table import DamagedRun
from scoring.store.runs import (
    ROW_COLUMNS,
    NewRun,
    RunInfo,
    count_runs,
    find_run_by_sha,
    get_run,
    insert_run,
    language_source,
    list_runs,
    load_scored,
    load_table,
    remembered_columns,
    run_column_map,
    sha256_bytes,
    update_run_meta,
)
from scoring.store.samples import (
    SAMPLE_MARK,
    SAMPLE_PATH,
    SAMPLE_SET,
    is_sample,
    run_caption,
    run_label,
    run_language_label,
)

__all__ = [
    "ArchivedRun",
    "DeleteSummary",
    "UnknownRun",
    "all_runs",
    "archive_prompt",
    "archive_run",
    "archived_at",
    "archived_runs",
    "confirms_delete",
    "delete_run",
    "delete_summary",
    "delete_warning",
    "listed_runs",
    "restore_run",
    "ENV_VAR",
    "LOCK_WAIT_SETTING",
    "DamagedRun",
    "DatabaseError",
    "Failure",
    "describe_failure",
    "NewRun",
    "PROJECT_ROOT",
    "ROW_COLUMNS",
    "SAMPLE_MARK",
    "SAMPLE_PATH",
    "SAMPLE_SET",
    "RunInfo",
    "count_runs",
    "database_url",
    "default_sqlite_path",
    "display_url",
    "find_run_by_sha",
    "get_run",
    "insert_run",
    "is_sample",
    "language_source",
    "list_runs",
    "load_scored",
    "load_table",
    "make_engine",
    "open_database",
    "open_existing",
    "read_secrets",
    "remembered_columns",
    "run_column_map",
    "run_caption",
    "run_label",
    "run_language_label",
    "sha256_bytes",
    "update_run_meta",
    "writer",
]
